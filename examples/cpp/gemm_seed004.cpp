// The seed 004 example (a SIMT f32 GEMM, 512x256x128) through the C++ API alone: describe,
// compile (or load from the cache), run and verify against a float64 reference.
// Without a GPU it compiles the kernel and says there is nothing to run it on.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "tilecraft/tilecraft.hpp"

namespace tc = tilecraft;

int main() {
  using tc::DataType;
  using tc::Layout;
  auto math = tc::MathInstruction::make({1, 1, 1}, DataType::f32, DataType::f32, DataType::f32,
                                        tc::OpClass::Simt, tc::MathOperation::multiply_add)
                  .value();
  auto tile = tc::TileDescription::make({128, 128, 8}, 4, {2, 4, 1}, math).value();
  auto A = tc::TensorDescription::make(DataType::f32, Layout::RowMajor, 1).value();
  auto B = tc::TensorDescription::make(DataType::f32, Layout::RowMajor, 1).value();
  auto C = tc::TensorDescription::make(DataType::f32, Layout::RowMajor, 1).value();
  auto epilogue =
      tc::EpilogueFunctor::linear_combination(DataType::f32, 1, DataType::f32, DataType::f32)
          .value();
  auto operation =
      tc::GemmOperation::make(80, tile, A, B, C, epilogue, tc::Swizzle::IdentitySwizzle1).value();
  std::printf("operation: %s\n", operation->procedural_name().c_str());

  tc::throw_if_error(tc::compile_operations({operation}));
  std::printf("compiled (cache: %s)\n", tc::settings().cache_dir.c_str());

  if (tc::Status gpu = tc::cuda_device_available(); !gpu) {
    std::printf(
        "no GPU here (%s): the kernel is compiled and cached, but there is nothing to run "
        "it on.\n",
        gpu.message().c_str());
    return 0;
  }
  const tc::GemmCoord size{512, 256, 128};
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<float> dist(-8.5f, 7.5f);
  auto fill = [&](std::vector<float>& v) {
    for (float& x : v) x = std::ceil(dist(rng));
  };
  std::vector<float> hA(size.m * size.k), hB(size.k * size.n), hC(size.m * size.n),
      hD(size.m * size.n, std::nanf(""));
  fill(hA);
  fill(hB);
  fill(hC);
  const double alpha = 1.0, beta = 0.5;

  float *dA, *dB, *dC, *dD;
  for (auto [ptr, host] : {std::pair{&dA, &hA}, {&dB, &hB}, {&dC, &hC}, {&dD, &hD}}) {
    tc::throw_if_error(
        tc::cuda_status(cudaMalloc(reinterpret_cast<void**>(ptr), host->size() * 4), "cudaMalloc"));
    tc::throw_if_error(tc::cuda_status(
        cudaMemcpy(*ptr, host->data(), host->size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy"));
  }
  tc::GemmProblem problem;
  problem.problem_size = size;
  problem.A = tc::TensorView::cuda_contiguous(dA, DataType::f32, {size.m, size.k});
  problem.B = tc::TensorView::cuda_contiguous(dB, DataType::f32, {size.k, size.n});
  problem.C = tc::TensorView::cuda_contiguous(dC, DataType::f32, {size.m, size.n});
  problem.D = tc::TensorView::cuda_contiguous(dD, DataType::f32, {size.m, size.n});
  problem.output_op = operation->epilogue_type(alpha, beta).value();
  auto arguments = tc::GemmArguments::make(*operation, problem).value();
  tc::throw_if_error(operation->run(*arguments));
  tc::throw_if_error(arguments->sync());
  tc::throw_if_error(tc::cuda_status(
      cudaMemcpy(hD.data(), dD, hD.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy"));

  long mismatches = 0;
  for (int i = 0; i < size.m; ++i) {
    for (int j = 0; j < size.n; ++j) {
      double ref = 0;
      for (int k = 0; k < size.k; ++k) ref += double(hA[i * size.k + k]) * hB[k * size.n + j];
      ref = alpha * ref + beta * hC[i * size.n + j];
      if (static_cast<double>(hD[i * size.n + j]) != ref) ++mismatches;
    }
  }
  for (float* p : {dA, dB, dC, dD}) cudaFree(p);
  std::printf("ran %s on %s: %ld mismatches of %d elements against the float64 reference\n",
              tc::to_string(size).c_str(), tc::current_device_info()->name.c_str(), mismatches,
              size.m * size.n);
  return mismatches == 0 ? 0 : 1;
}
