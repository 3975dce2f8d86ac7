// Arguments of SM80 kernels with an epilogue graph (CUTLASS's 2.x epilogue visitor): the modes
// the visitor kernel cannot run are refused by name before anything is staged or compiled
// (these run without a GPU: the checks precede any device work).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emit/evt_test_graphs.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;

std::shared_ptr<GemmOperation> graph_operation() {
  EpilogueGraph g;
  g.store(g.activation(Activation::relu, g.accumulator()), "D", f16);
  const GemmDescription d = emit::testing::sm80_graph_gemm(g);
  return GemmOperation::make_with_epilogue_graph(d.arch, d.tile, d.A, d.B, d.C, g, d.swizzle)
      .value();
}

// Host f16 tensors: A row-major (M, K), B column-major (K, N), D row-major (M, N).
struct HostProblem {
  std::vector<uint16_t> a, b, d;
  GemmProblem problem;

  HostProblem(int m, int n, int k) : a(size_t(m) * k), b(size_t(k) * n), d(size_t(m) * n) {
    problem.problem_size = {m, n, k};
    problem.A = TensorView::host_contiguous(a.data(), f16, {int64_t{m}, int64_t{k}});
    problem.B = TensorView::host_contiguous(b.data(), f16, {int64_t{k}, int64_t{n}});
    problem.B.strides = {1, k, 0, 0};  // column-major
    problem.D = TensorView::host_contiguous(d.data(), f16, {int64_t{m}, int64_t{n}});
    problem.output_op = {1.0, 0.0, {}};
  }
};

void expect_refused(const GemmProblem& problem, const std::string& words) {
  auto made = GemmArguments::make(*graph_operation(), problem);
  ASSERT_FALSE(made) << "expected a refusal mentioning '" << words << "'";
  EXPECT_NE(made.status().message().find(words), std::string::npos) << made.status().message();
}

TEST(Sm80GraphArguments, SplitKIsRefused) {
  HostProblem p(128, 128, 256);
  p.problem.split_k_slices = 2;
  expect_refused(p.problem,
                 "split_k_slices: SM80 kernels with an epilogue graph (CUTLASS's 2.x epilogue "
                 "visitor) do not split K; expected 1, got 2");
}

TEST(Sm80GraphArguments, ParallelSplitKAndArrayModesAreRefused) {
  HostProblem p(128, 128, 256);
  p.problem.mode = GemmMode::GemmSplitKParallel;
  p.problem.split_k_slices = 2;
  expect_refused(p.problem,
                 "gemm_mode: SM80 kernels with an epilogue graph (CUTLASS's 2.x epilogue visitor) "
                 "run Gemm and Batched; got GemmSplitKParallel");
  p.problem.mode = GemmMode::Array;
  p.problem.split_k_slices = 1;
  expect_refused(p.problem, "run Gemm and Batched; got Array");
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
