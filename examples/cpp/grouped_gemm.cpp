// A grouped GEMM through the C++ API alone (seed 002's GemmOperationGrouped): six problems of
// their own sizes, one empty and one of a single row, in one launch of a CUTLASS 2.x GemmGrouped
// kernel on the Host scheduler; host tensors are staged to the GPU and D comes back in sync().
// Checked against a float64 reference. Without a GPU it compiles the kernel and says there is
// nothing to run it on.
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
  auto row = tc::TensorDescription::make(DataType::f32, Layout::RowMajor, 1).value();
  auto epilogue =
      tc::EpilogueFunctor::linear_combination(DataType::f32, 1, DataType::f32, DataType::f32)
          .value();
  auto operation =
      tc::GemmOperation::make_grouped(80, tile, row, row, row, epilogue,
                                      tc::Swizzle::IdentitySwizzle1, tc::SchedulerMode::Host)
          .value();
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

  const std::vector<tc::GemmCoord> sizes = {{256, 128, 64}, {37, 96, 136}, {0, 64, 32},
                                            {1, 256, 256},  {513, 44, 24}, {130, 200, 8}};
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> value(-4, 4);
  std::vector<std::vector<float>> hA, hB, hC, hD;
  tc::GroupedGemmProblem problem;
  for (const tc::GemmCoord& s : sizes) {
    auto filled = [&](int64_t count) {
      std::vector<float> v(count);
      for (float& x : v) x = float(value(rng));
      return v;
    };
    hA.push_back(filled(int64_t{s.m} * s.k));
    hB.push_back(filled(int64_t{s.k} * s.n));
    hC.push_back(filled(int64_t{s.m} * s.n));
    hD.emplace_back(size_t(s.m) * s.n, std::nanf(""));
  }
  for (size_t g = 0; g < sizes.size(); ++g) {
    const tc::GemmCoord& s = sizes[g];
    const int64_t m = s.m, n = s.n, k = s.k;
    problem.A.push_back(tc::TensorView::host_contiguous(hA[g].data(), DataType::f32, {m, k}));
    problem.B.push_back(tc::TensorView::host_contiguous(hB[g].data(), DataType::f32, {k, n}));
    problem.C.push_back(tc::TensorView::host_contiguous(hC[g].data(), DataType::f32, {m, n}));
    problem.D.push_back(tc::TensorView::host_contiguous(hD[g].data(), DataType::f32, {m, n}));
  }
  const double alpha = 1.0, beta = 0.5;
  problem.problem_sizes = sizes;
  problem.output_op = operation->epilogue_type(alpha, beta).value();
  auto arguments = tc::GroupedGemmArguments::make(*operation, problem).value();
  tc::throw_if_error(operation->run(*arguments));
  tc::throw_if_error(arguments->sync());

  long mismatches = 0, elements = 0;
  for (size_t g = 0; g < sizes.size(); ++g) {
    const tc::GemmCoord& s = sizes[g];
    for (int i = 0; i < s.m; ++i) {
      for (int j = 0; j < s.n; ++j) {
        double ref = 0;
        for (int k = 0; k < s.k; ++k) ref += double(hA[g][i * s.k + k]) * hB[g][k * s.n + j];
        ref = alpha * ref + beta * hC[g][i * s.n + j];
        if (double(hD[g][i * s.n + j]) != ref) ++mismatches;
        ++elements;
      }
    }
  }
  std::printf(
      "ran %zu problems in one launch on %s: %ld mismatches of %ld elements against the "
      "float64 reference\n",
      sizes.size(), tc::current_device_info()->name.c_str(), mismatches, elements);
  return mismatches == 0 ? 0 : 1;
}
