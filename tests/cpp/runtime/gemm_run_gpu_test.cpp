// The C++ runtime path on a GPU: describe, compile, stage, run, sync, verify every element.
// Skipped, with the reason, where no CUDA device is usable.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "tilecraft/tilecraft.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

std::shared_ptr<GemmOperation> simt_f32(Layout layout_b) {
  using enum DataType;
  auto math =
      MathInstruction::make({1, 1, 1}, f32, f32, f32, OpClass::Simt, MathOperation::multiply_add)
          .value();
  auto tile = TileDescription::make({64, 64, 8}, 4, {2, 2, 1}, math).value();
  auto row = TensorDescription::make(f32, Layout::RowMajor, 1).value();
  auto b = TensorDescription::make(f32, layout_b, 1).value();
  auto epilogue = EpilogueFunctor::linear_combination(f32, 1, f32, f32).value();
  return GemmOperation::make(80, tile, row, b, row, epilogue, Swizzle::IdentitySwizzle1).value();
}

class GemmRunGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Status status = cuda_device_available(); !status) {
      GTEST_SKIP() << "no GPU: " << status.message();
    }
  }
};

// Host (staged) operands, column-major B, ragged sizes, serial split-K.
TEST_F(GemmRunGpu, HostOperandsRaggedColumnMajorB) {
  auto op = simt_f32(Layout::ColumnMajor);
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> values(-4, 4);
  for (GemmCoord size : {GemmCoord{1, 1, 1}, GemmCoord{37, 91, 13}, GemmCoord{130, 67, 129}}) {
    for (int slices : {1, 3}) {
      if (slices > size.k) continue;
      std::vector<float> A(size.m * size.k), B(size.k * size.n), C(size.m * size.n),
          D(size.m * size.n, std::nanf(""));
      for (auto* v : {&A, &B, &C}) {
        for (float& x : *v) x = static_cast<float>(values(rng));
      }
      GemmProblem problem;
      problem.problem_size = size;
      problem.A = TensorView::host_contiguous(A.data(), DataType::f32, {size.m, size.k});
      // Column-major K x N: a 1-D packed tensor with leading dimension K.
      problem.B = TensorView::host_contiguous(B.data(), DataType::f32, {int64_t(size.k) * size.n});
      problem.C = TensorView::host_contiguous(C.data(), DataType::f32, {size.m, size.n});
      problem.D = TensorView::host_contiguous(D.data(), DataType::f32, {size.m, size.n});
      problem.output_op = op->epilogue_type(1.5, -0.5).value();
      problem.split_k_slices = slices;
      auto args = GemmArguments::make(*op, problem);
      ASSERT_TRUE(args) << args.status().message();
      ASSERT_TRUE(op->run(**args)) << to_string(size);
      Status synced = (*args)->sync();
      ASSERT_TRUE(synced) << synced.message();
      int mismatches = 0;
      for (int i = 0; i < size.m; ++i) {
        for (int j = 0; j < size.n; ++j) {
          double ref = 0;
          for (int k = 0; k < size.k; ++k) ref += double(A[i * size.k + k]) * B[j * size.k + k];
          ref = 1.5 * ref - 0.5 * C[i * size.n + j];
          if (double(D[i * size.n + j]) != ref) ++mismatches;
        }
      }
      EXPECT_EQ(mismatches, 0) << to_string(size) << " split_k_slices=" << slices;
    }
  }
}

TEST(GemmArguments, BadInputIsRejectedBeforeAnyCudaWork) {
  auto op = simt_f32(Layout::RowMajor);
  std::vector<float> A(64), B(64), D(64, 7.0f);
  GemmProblem problem;
  problem.problem_size = {8, 8, 8};
  problem.A = TensorView::host_contiguous(A.data(), DataType::f32, {8, 8});
  problem.B = TensorView::host_contiguous(B.data(), DataType::f16, {8, 8});
  problem.D = TensorView::host_contiguous(D.data(), DataType::f32, {8, 8});
  problem.output_op = op->epilogue_type(1.0, 0.0).value();
  auto args = GemmArguments::make(*op, problem);
  ASSERT_FALSE(args);
  EXPECT_EQ(args.status().message().rfind("B: expected float32", 0), 0u) << args.status().message();
  for (float x : D) EXPECT_EQ(x, 7.0f);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

// Device pointers are never dereferenced before validation passes, so a mismatch of devices is
// caught (and can be tested) without a GPU.
TEST(GemmArguments, OperandsOnDifferentDevicesAreRejected) {
  auto op = simt_f32(Layout::RowMajor);
  auto* fake = reinterpret_cast<void*>(uintptr_t{1} << 20);
  GemmProblem problem;
  problem.problem_size = {8, 8, 8};
  problem.A = TensorView::cuda_contiguous(fake, DataType::f32, {8, 8}, 0);
  problem.B = TensorView::cuda_contiguous(fake, DataType::f32, {8, 8}, 1);
  problem.D = TensorView::cuda_contiguous(fake, DataType::f32, {8, 8}, 0);
  problem.output_op = op->epilogue_type(1.0, 0.0).value();
  auto args = GemmArguments::make(*op, problem);
  ASSERT_FALSE(args);
  EXPECT_EQ(args.status().message(),
            "B: expected a tensor on cuda:0 like the other operands, got cuda:1");
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
