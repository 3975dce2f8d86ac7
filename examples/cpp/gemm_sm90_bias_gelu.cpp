// A Hopper GEMM with a fused epilogue through the C++ API alone: D = gelu(A @ B + bias) in bf16,
// with a per-column bias (torch's addmm bias), one CUTLASS 3.x kernel. Describes, compiles (or
// loads from the cache), runs and checks every element against a float64 reference.
// Without a Hopper GPU it compiles the kernel and says there is nothing to run it on.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "tilecraft/tilecraft.hpp"

namespace tc = tilecraft;

namespace {

// bf16 is the upper half of a float; the values used here are exact in bf16.
uint16_t to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return static_cast<uint16_t>(bits >> 16);
}

double from_bf16(uint16_t value) {
  const uint32_t bits = static_cast<uint32_t>(value) << 16;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

}  // namespace

int main() {
  using tc::DataType;
  using tc::Layout;
  auto math =
      tc::MathInstruction::make({64, 128, 16}, DataType::bf16, DataType::bf16, DataType::f32,
                                tc::OpClass::TensorOp, tc::MathOperation::multiply_add)
          .value();
  auto tile = tc::TileDescription::make_sm90({128, 128, 64}, 0, {1, 1, 1}, math).value();
  auto A = tc::TensorDescription::make(DataType::bf16, Layout::RowMajor, 8).value();
  auto B = tc::TensorDescription::make(DataType::bf16, Layout::ColumnMajor, 8).value();
  auto C = tc::TensorDescription::make(DataType::bf16, Layout::RowMajor, 8).value();
  tc::EpilogueFusion fusion;
  fusion.bias = tc::BiasKind::per_column;
  fusion.element_bias = DataType::bf16;
  auto epilogue = tc::EpilogueFunctor::linear_combination_generic(
                      tc::Activation::gelu, DataType::bf16, 8, DataType::f32, DataType::f32)
                      .value()
                      .with_fusion(fusion)
                      .value();
  auto operation =
      tc::GemmOperation::make(90, tile, A, B, C, epilogue, tc::Swizzle::IdentitySwizzle1).value();
  std::printf("operation: %s\n", operation->procedural_name().c_str());

  tc::throw_if_error(tc::compile_operations({operation}));
  std::printf("compiled (cache: %s)\n", tc::settings().cache_dir.c_str());

  if (tc::Status gpu = tc::cuda_device_available(); !gpu) {
    std::printf(
        "no GPU here (%s): the kernel is compiled and cached, but there is nothing to "
        "run it on.\n",
        gpu.message().c_str());
    return 0;
  }
  const auto device = tc::current_device_info().value();
  if (device.compute_capability != 90) {
    std::printf("%s has compute capability %d; this sm_90a kernel needs a Hopper GPU (9.0)\n",
                device.name.c_str(), device.compute_capability);
    return 0;
  }

  const tc::GemmCoord size{300, 512, 264};  // M is not a multiple of the tile
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> small(-8, 8);
  // Eighths of small integers: products and sums are exact in the f32 accumulator.
  auto random_bf16 = [&](size_t count) {
    std::vector<uint16_t> v(count);
    for (auto& x : v) x = to_bf16(small(rng) / 8.0f);
    return v;
  };
  std::vector<uint16_t> hA = random_bf16(size_t(size.m) * size.k);  // row-major M x K
  std::vector<uint16_t> hB = random_bf16(size_t(size.n) * size.k);  // column-major K x N
  std::vector<uint16_t> hBias = random_bf16(size.n);
  std::vector<uint16_t> hD(size_t(size.m) * size.n, 0x7fc0);  // poisoned with NaN

  std::vector<void*> buffers;
  auto upload = [&](const std::vector<uint16_t>& host) {
    void* device_ptr = nullptr;
    tc::throw_if_error(tc::cuda_status(cudaMalloc(&device_ptr, host.size() * 2), "cudaMalloc"));
    tc::throw_if_error(tc::cuda_status(
        cudaMemcpy(device_ptr, host.data(), host.size() * 2, cudaMemcpyHostToDevice),
        "cudaMemcpy"));
    buffers.push_back(device_ptr);
    return device_ptr;
  };
  void* dA = upload(hA);
  void* dB = upload(hB);
  void* dBias = upload(hBias);
  void* dD = upload(hD);

  tc::GemmProblem problem;
  problem.problem_size = size;
  problem.A = tc::TensorView::cuda_contiguous(dA, DataType::bf16, {size.m, size.k});
  problem.B = tc::TensorView::cuda_contiguous(dB, DataType::bf16, {size.n, size.k});
  problem.B.shape = {size.k, size.n};  // the logical K x N matrix, column-major
  problem.B.strides = {1, size.k};
  problem.D = tc::TensorView::cuda_contiguous(dD, DataType::bf16, {size.m, size.n});
  problem.bias = tc::TensorView::cuda_contiguous(dBias, DataType::bf16, {size.n});
  problem.output_op = operation->epilogue_type(1.0, 0.0).value();
  auto arguments = tc::GemmArguments::make(*operation, problem).value();
  tc::throw_if_error(operation->run(*arguments));
  tc::throw_if_error(arguments->sync());
  tc::throw_if_error(tc::cuda_status(
      cudaMemcpy(hD.data(), dD, hD.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy"));

  long mismatches = 0;
  double worst = 0;
  for (int i = 0; i < size.m; ++i) {
    for (int j = 0; j < size.n; ++j) {
      double z = from_bf16(hBias[j]);
      for (int k = 0; k < size.k; ++k) {
        z += from_bf16(hA[size_t(i) * size.k + k]) * from_bf16(hB[size_t(j) * size.k + k]);
      }
      const double ref = 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));
      const double got = from_bf16(hD[size_t(i) * size.n + j]);
      // bf16 keeps 8 significant bits: one ulp of the result, plus f32 erf's error.
      const double tolerance = std::ldexp(std::fabs(ref), -7) + 1e-5;
      const double error = std::fabs(got - ref);
      if (!(error <= tolerance)) ++mismatches;
      if (error > worst || std::isnan(got)) worst = std::isnan(got) ? INFINITY : error;
    }
  }
  for (void* p : buffers) cudaFree(p);
  std::printf(
      "ran %s gelu(A @ B + bias) on %s: %ld mismatches of %d elements (largest error "
      "%.3g) against the float64 reference\n",
      tc::to_string(size).c_str(), device.name.c_str(), mismatches, size.m * size.n, worst);
  return mismatches == 0 ? 0 : 1;
}
