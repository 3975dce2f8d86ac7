#include "tune/scratch_buffers.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>

#include "tilecraft/runtime/device.hpp"
#include "tune/host_values.hpp"

namespace tilecraft::tune {
namespace {

constexpr int kPoolSize = 4096;

double uniform(uint64_t& state) { return (splitmix(state) >> 11) * 0x1.0p-53 * 2.0 - 1.0; }

uint8_t poison_byte(DataType type) { return is_integer(type) ? 0x7F : 0xFF; }

size_t span_bytes(const TensorView& t) {
  return static_cast<size_t>(span_elements(t)) * storage_bytes(t.dtype);
}

// The relative error of one product as the kernel forms it: f32 operands on tf32 tensor cores
// lose their low mantissa bits; narrower types multiply exactly in the accumulator.
double product_roundoff(DataType kernel_element) {
  switch (kernel_element) {
    case DataType::tf32:
      return std::ldexp(1.0, -10);
    case DataType::f32:
      return std::ldexp(1.0, -24);
    case DataType::f64:
      return std::ldexp(1.0, -53);
    default:
      return 0;
  }
}

}  // namespace

int64_t span_elements(const TensorView& t) {
  int64_t span = 1;
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] == 0) return 0;
    span += (t.shape[d] - 1) * t.strides[d];
  }
  return span;
}

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double ScratchBuffer::at(int64_t element) const { return value_in(host, dtype, element); }

ScratchBuffers::~ScratchBuffers() {
  for (auto& buffer : buffers_) cudaFree(buffer->device);
}

Result<const ScratchBuffer*> ScratchBuffers::allocate(TensorView* view, bool fill, uint64_t seed) {
  auto buffer = std::make_unique<ScratchBuffer>();
  buffer->dtype = view->dtype;
  const int element = storage_bytes(view->dtype);
  // At least one element, so that an empty view still points at memory of the tuner's own.
  const size_t bytes = std::max<size_t>(span_bytes(*view), element);
  TILECRAFT_RETURN_IF_ERROR(
      cuda_status(cudaMalloc(&buffer->device, bytes), "cudaMalloc (tuning operands)"));
  buffers_.push_back(std::move(buffer));
  ScratchBuffer& b = *buffers_.back();
  if (fill) {
    std::vector<uint8_t> pool(static_cast<size_t>(kPoolSize) * element);
    uint64_t state = seed;
    const double range = view->dtype == DataType::u8 ? 32 : is_integer(view->dtype) ? 16 : 1;
    for (int i = 0; i < kPoolSize; ++i) {
      double v = uniform(state) * range;
      if (view->dtype == DataType::u8) v = std::fabs(v);
      encode_value(v, view->dtype, pool.data() + static_cast<size_t>(i) * element);
    }
    b.host.resize(bytes);
    for (size_t at = 0; at < bytes; at += element) {
      std::memcpy(b.host.data() + at,
                  pool.data() + (splitmix(state) % kPoolSize) * static_cast<size_t>(element),
                  element);
    }
    TILECRAFT_RETURN_IF_ERROR(
        cuda_status(cudaMemcpy(b.device, b.host.data(), bytes, cudaMemcpyHostToDevice),
                    "copying tuning operands"));
  }
  view->data = b.device;
  view->device = DeviceKind::kCuda;
  return &b;
}

Status poison(const TensorView& view, void* stream) {
  return cuda_status(cudaMemsetAsync(view.data, poison_byte(view.dtype), span_bytes(view),
                                     static_cast<cudaStream_t>(stream)),
                     "poisoning the tuning output");
}

Result<std::vector<uint8_t>> download(const TensorView& view) {
  std::vector<uint8_t> host(span_bytes(view));
  if (host.empty()) return host;
  TILECRAFT_RETURN_IF_ERROR(
      cuda_status(cudaMemcpy(host.data(), view.data, host.size(), cudaMemcpyDeviceToHost),
                  "copying the tuning output"));
  return host;
}

double value_in(const std::vector<uint8_t>& host, DataType dtype, int64_t element) {
  return decode_value(host.data() + element * storage_bytes(dtype), dtype);
}

bool is_poisoned(const std::vector<uint8_t>& host, DataType dtype, int64_t element) {
  const int bytes = storage_bytes(dtype);
  const uint8_t* at = host.data() + element * bytes;
  for (int i = 0; i < bytes; ++i) {
    if (at[i] != poison_byte(dtype)) return false;
  }
  return true;
}

double activate(Activation a, double x, const std::vector<double>& args) {
  switch (a) {
    case Activation::identity:
      return x;
    case Activation::relu:
      return x > 0 ? x : 0;
    case Activation::leaky_relu:
      return x > 0 ? x : x * (args.empty() ? 0.0 : args[0]);
    case Activation::tanh:
      return std::tanh(x);
    case Activation::sigmoid:
      return 1 / (1 + std::exp(-x));
    case Activation::silu:
      return x / (1 + std::exp(-x));
    case Activation::hardswish:
      return x * std::fmin(std::fmax(x + 3, 0.0), 6.0) / 6;
    case Activation::gelu:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Activation::gelu_tanh:
      return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case Activation::clamp:
      return args.size() < 2 ? x : std::fmin(std::fmax(x, args[0]), args[1]);
  }
  return x;
}

RoundingBound::RoundingBound(const api::KernelMetadata& kernel, DataType out) {
  // Fast accumulation, and fp8 promotion intervals longer than CUTLASS's default, keep partial
  // sums in the tensor cores' narrower accumulator for longer: the fast bound covers both.
  const bool fast_accum = kernel.kernel_name.find("fastaccum") != std::string::npos ||
                          kernel.design.mma_promotion_interval > 0;
  u_acc_ = fast_accum ? std::ldexp(1.0, -10) : unit_roundoff(kernel.operands.accumulator);
  u_product_ = 2 * product_roundoff(kernel.operands.A.dtype);
  u_out_ = unit_roundoff(out);
  integer_out_ = is_integer(out);
}

double RoundingBound::operator()(double products, int64_t terms, double addend,
                                 double expected) const {
  const double slope = 1.5;  // the steepest activation (hardswish) at its steepest
  const double sum =
      products * (u_product_ + u_acc_ * (4 * std::sqrt(double(terms)) + 16)) + 4 * u_acc_ * addend;
  return slope * sum + 2 * u_out_ * std::fabs(expected) + u_out_ * 1e-3 +
         (integer_out_ ? 1.0 : 0.0);
}

}  // namespace tilecraft::tune
