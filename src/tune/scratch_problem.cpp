#include "tune/scratch_problem.hpp"

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>

#include "tilecraft/runtime/device.hpp"
#include "tune/host_values.hpp"
#include "tune/text.hpp"

namespace tilecraft::tune {
namespace {

constexpr int kPoolSize = 4096;
constexpr int kRandomSamples = 251;

uint64_t splitmix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double uniform(uint64_t& state) { return (splitmix(state) >> 11) * 0x1.0p-53 * 2.0 - 1.0; }

int64_t span_elements(const TensorView& t) {
  int64_t span = 1;
  for (int d = 0; d < t.rank; ++d) span += (t.shape[d] - 1) * t.strides[d];
  return span;
}

// Element (l, row, col) of a matrix operand, rank 2 (no batch) or 3.
int64_t offset(const TensorView& t, int64_t l, int64_t row, int64_t col) {
  if (t.rank == 3) return l * t.strides[0] + row * t.strides[1] + col * t.strides[2];
  return row * t.strides[0] + col * t.strides[1];
}

double value_at(const std::vector<uint8_t>& host, DataType type, int64_t element) {
  return decode_value(host.data() + element * storage_bytes(type), type);
}

uint8_t poison_byte(DataType type) { return is_integer(type) ? 0x7F : 0xFF; }

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

ScratchProblem::~ScratchProblem() {
  for (auto& buffer : buffers_) cudaFree(buffer->device);
}

Result<ScratchProblem::Buffer*> ScratchProblem::allocate(TensorView* view, bool fill,
                                                         uint64_t seed) {
  auto buffer = std::make_unique<Buffer>();
  const int element = storage_bytes(view->dtype);
  buffer->bytes = static_cast<size_t>(span_elements(*view)) * element;
  TILECRAFT_RETURN_IF_ERROR(
      cuda_status(cudaMalloc(&buffer->device, buffer->bytes), "cudaMalloc (tuning operands)"));
  if (fill) {
    std::vector<uint8_t> pool(static_cast<size_t>(kPoolSize) * element);
    uint64_t state = seed;
    const double range = view->dtype == DataType::u8 ? 32 : is_integer(view->dtype) ? 16 : 1;
    for (int i = 0; i < kPoolSize; ++i) {
      double v = uniform(state) * range;
      if (view->dtype == DataType::u8) v = std::fabs(v);
      encode_value(v, view->dtype, pool.data() + static_cast<size_t>(i) * element);
    }
    buffer->host.resize(buffer->bytes);
    for (size_t at = 0; at < buffer->bytes; at += element) {
      std::memcpy(buffer->host.data() + at,
                  pool.data() + (splitmix(state) % kPoolSize) * static_cast<size_t>(element),
                  element);
    }
    TILECRAFT_RETURN_IF_ERROR(cuda_status(
        cudaMemcpy(buffer->device, buffer->host.data(), buffer->bytes, cudaMemcpyHostToDevice),
        "copying tuning operands"));
  }
  view->data = buffer->device;
  view->device = DeviceKind::kCuda;
  buffers_.push_back(std::move(buffer));
  return buffers_.back().get();
}

Result<std::unique_ptr<ScratchProblem>> ScratchProblem::make(const api::GemmArguments& like,
                                                             uint64_t seed) {
  std::unique_ptr<ScratchProblem> p(new ScratchProblem());
  p->a_ = like.A();
  p->b_ = like.B();
  p->out_ = like.out();
  const api::EpilogueArguments& e = like.epilogue();
  api::EpilogueArguments epilogue = e;
  auto a = p->allocate(&p->a_, true, seed * 4 + 1);
  if (!a) return a.status();
  p->a_host_ = *a;
  auto b = p->allocate(&p->b_, true, seed * 4 + 2);
  if (!b) return b.status();
  p->b_host_ = *b;
  auto out = p->allocate(&p->out_, false, 0);
  if (!out) return out.status();
  if (e.C.data) {
    p->c_ = e.C;
    auto c = p->allocate(&p->c_, true, seed * 4 + 3);
    if (!c) return c.status();
    p->c_host_ = *c;
    epilogue.C = p->c_;
  }
  if (e.bias.data) {
    p->bias_ = e.bias;
    auto bias = p->allocate(&p->bias_, true, seed * 4 + 4);
    if (!bias) return bias.status();
    p->bias_host_ = *bias;
    epilogue.bias = p->bias_;
  }
  for (ScaleArgument* scale : {&epilogue.scale_a, &epilogue.scale_b}) {
    if (scale->given) *scale = ScaleArgument{true, 1.0, {}};
  }
  auto args = api::GemmArguments::make(p->a_, p->b_, p->out_, like.accumulator_type(), epilogue,
                                       like.use_fast_accum());
  if (!args) return args.status();
  p->args_ = std::move(*args);
  return p;
}

Status ScratchProblem::poison_output(void* stream) const {
  return cuda_status(
      cudaMemsetAsync(out_.data, poison_byte(out_.dtype),
                      static_cast<size_t>(span_elements(out_)) * storage_bytes(out_.dtype),
                      static_cast<cudaStream_t>(stream)),
      "poisoning the tuning output");
}

double ScratchProblem::reference(int64_t l, int64_t i, int64_t j, double* magnitude) const {
  const api::GemmArguments& g = *args_;
  double sum = 0, abs_sum = 0;
  for (int64_t k = 0; k < g.k(); ++k) {
    const double x = value_at(a_host_->host, a_.dtype, offset(a_, l, i, k));
    const double y = value_at(b_host_->host, b_.dtype, offset(b_, l, k, j));
    sum += x * y;
    abs_sum += std::fabs(x * y);
  }
  *magnitude = abs_sum;
  return sum;
}

Status ScratchProblem::check_output(const api::KernelMetadata& kernel) const {
  const api::GemmArguments& g = *args_;
  const api::EpilogueArguments& e = g.epilogue();
  const int element = storage_bytes(out_.dtype);
  std::vector<uint8_t> host(static_cast<size_t>(span_elements(out_)) * element);
  TILECRAFT_RETURN_IF_ERROR(
      cuda_status(cudaMemcpy(host.data(), out_.data, host.size(), cudaMemcpyDeviceToHost),
                  "copying the tuning output"));
  const std::vector<uint8_t> poison(element, poison_byte(out_.dtype));
  for (int64_t l = 0; l < g.batch(); ++l) {
    for (int64_t i = 0; i < g.m(); ++i) {
      for (int64_t j = 0; j < g.n(); ++j) {
        const int64_t at = offset(out_, l, i, j) * element;
        if (std::memcmp(host.data() + at, poison.data(), element) == 0) {
          return Status::invalid("output element (" + std::to_string(l) + ", " + std::to_string(i) +
                                 ", " + std::to_string(j) + ") was never written");
        }
      }
    }
  }
  const double scale = e.alpha * (e.scale_a.given ? e.scale_a.value : 1.0) *
                       (e.scale_b.given ? e.scale_b.value : 1.0);
  const bool fast_accum = kernel.kernel_name.find("fastaccum") != std::string::npos;
  const double u_acc =
      fast_accum ? std::ldexp(1.0, -10) : unit_roundoff(kernel.operands.accumulator);
  const double u_product = 2 * product_roundoff(kernel.operands.A.dtype);
  const double u_out = unit_roundoff(out_.dtype);
  const double slope = 1.5;  // the steepest activation (hardswish) at its steepest
  uint64_t state = 0x5eed;
  std::vector<std::array<int64_t, 3>> samples;
  for (int64_t l : {int64_t{0}, g.batch() - 1}) {
    for (int64_t i : {int64_t{0}, g.m() - 1}) {
      for (int64_t j : {int64_t{0}, g.n() - 1}) samples.push_back({l, i, j});
    }
  }
  for (int s = 0; s < kRandomSamples; ++s) {
    samples.push_back({static_cast<int64_t>(splitmix(state) % g.batch()),
                       static_cast<int64_t>(splitmix(state) % g.m()),
                       static_cast<int64_t>(splitmix(state) % g.n())});
  }
  for (const auto& [l, i, j] : samples) {
    double magnitude = 0;
    double x = scale * reference(l, i, j, &magnitude);
    double tolerance =
        std::fabs(scale) * magnitude * (u_product + u_acc * (4 * std::sqrt(double(g.k())) + 16));
    if (c_host_) {
      const double c = e.beta * value_at(c_host_->host, c_.dtype, offset(c_, l, i, j));
      x += c;
      tolerance += 4 * u_acc * std::fabs(c);
    }
    if (bias_host_) {
      const int64_t index = e.bias_per_row ? i : j;
      const int64_t at = bias_.rank == 2 ? l * bias_.strides[0] + index * bias_.strides[1]
                                         : index * bias_.strides[0];
      x += value_at(bias_host_->host, bias_.dtype, at);
    }
    const double expected = activate(e.activation, x, e.activation_args);
    tolerance = slope * tolerance + 2 * u_out * std::fabs(expected) + u_out * 1e-3 +
                (is_integer(out_.dtype) ? 1.0 : 0.0);
    const double got = value_at(host, out_.dtype, offset(out_, l, i, j));
    if (!(std::fabs(got - expected) <= tolerance)) {
      Text message;
      message << "output element (" << l << ", " << i << ", " << j << ") is " << got
              << ", expected " << expected << " (tolerance " << tolerance << ")";
      return Status::invalid(message.str());
    }
  }
  return Status::ok();
}

}  // namespace tilecraft::tune
