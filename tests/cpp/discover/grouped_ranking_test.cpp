// Ranking of grouped kernels: what get_kernels(GroupedGemmArguments) lists and how it estimates.
// No GPU: the arguments only describe tensors (their memory is never touched here).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tilecraft/discover/grouped_api.hpp"
#include "tilecraft/discover/performance_model.hpp"

namespace tilecraft::api {
namespace {
namespace TILECRAFT_TEST_FILE {

alignas(256) char g_memory[256];

// bf16 problems of the given rows, each (rows x k) @ (k x n) with a column-major B.
GroupedGemmArguments problems(const std::vector<int>& rows, int64_t k, int64_t n) {
  std::vector<TensorView> A, B, D;
  for (int m : rows) {
    A.push_back(TensorView::cuda_contiguous(g_memory, DataType::bf16, {m, k}));
    TensorView b = TensorView::cuda_contiguous(g_memory, DataType::bf16, {k, n});
    b.strides = {1, k, 0, 0};
    B.push_back(b);
    D.push_back(TensorView::cuda_contiguous(g_memory, DataType::bf16, {m, n}));
  }
  return GroupedGemmArguments::make(A, B, D, DataType::f32).value();
}

TEST(GroupedRanking, ListsOnlyGroupedKernelsOfTheOperands) {
  const auto kernels = get_kernels(problems({128, 0, 512, 1}, 4096, 4096), {}, 90);
  ASSERT_FALSE(kernels.empty());
  for (const Kernel& kernel : kernels) {
    const KernelMetadata& m = kernel.metadata();
    EXPECT_NE(m.kernel_class.find("GroupedGemmKernel"), std::string::npos) << m.kernel_name;
    EXPECT_EQ(m.operands.A.dtype, DataType::bf16);
    EXPECT_EQ(m.operands.B.layout, Layout::ColumnMajor);
    if (m.design.arch == 80) {
      EXPECT_EQ(m.design.swizzle, Swizzle::IdentitySwizzle1);
    }
  }
  for (size_t i = 1; i < kernels.size(); ++i) {
    if (kernels[i - 1].metadata().facts.spills() == kernels[i].metadata().facts.spills()) {
      EXPECT_GE(kernels[i - 1].metadata().score, kernels[i].metadata().score);
    }
  }
}

// Many small problems read one K x N matrix each: no estimate beats DRAM delivering them all.
TEST(GroupedRanking, ManySmallProblemsAreBoundByReadingEveryMatrix) {
  std::vector<int> rows;
  for (int g = 0; g < 64; ++g) rows.push_back(1 + (g * 37) % 64);
  const int64_t k = 4096, n = 4096;
  double flops = 0;
  for (int m : rows) flops += 2.0 * m * double(n) * double(k);
  const double bound_tflops =
      flops /
      (64.0 * double(k) * double(n) * 2.0 / (discover::DeviceTraits{}.dram_bandwidth_gbps * 1e9)) /
      1e12;
  const auto kernels = get_kernels(problems(rows, k, n), {}, 90);
  ASSERT_FALSE(kernels.empty());
  for (const Kernel& kernel : kernels) {
    EXPECT_LE(kernel.metadata().score, bound_tflops * 1.0001) << kernel.metadata().kernel_name;
  }
  EXPECT_GT(kernels.front().metadata().score, 0.5 * bound_tflops);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::api
