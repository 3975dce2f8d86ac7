// 64-bit extents on the operation-first path (issue 27, TRUNC-1): GemmArguments,
// GroupedGemmArguments and Conv2dArguments check every tensor in 64 bits and refuse, by name and
// before any device work, what the operation's kernel cannot index. No GPU: the refusals precede
// the device checks; the views point at fake device addresses that are never dereferenced.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "discover/fake_device_views.hpp"
#include "emit/emit_test_descriptions.hpp"
#include "emit/sm90_test_descriptions.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/runtime/grouped_gemm_arguments.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;
using api::testing::cuda;
using api::testing::transposed;

void expect_refused(const Status& status, const std::string& words) {
  ASSERT_FALSE(status) << "expected a refusal mentioning '" << words << "'";
  EXPECT_NE(status.message().find(words), std::string::npos) << status.message();
}

template <typename T>
Status status_of(const Result<T>& r) {
  return r ? Status::ok() : r.status();
}

// SM80 f16 TN, 128x128x32 tiles, f16 out.
std::shared_ptr<GemmOperation> f16_tn() {
  return GemmOperation::make(emit::testing::tensorop_f16_tn()).value();
}

GemmProblem tn_problem(int m, int n, int k) {
  GemmProblem p;
  p.problem_size = {m, n, k};
  p.A = cuda(f16, {m, k});
  p.B = transposed(cuda(f16, {n, k}));
  p.D = cuda(f16, {m, n});
  p.output_op = {1.0, 0.0, {}};
  return p;
}

TEST(ExtentsArguments, TilePaddedExtentsBeyond32BitsAreRefusedBeforeAnyDeviceWork) {
  const int m = static_cast<int>((int64_t{1} << 31) - 104);
  expect_refused(status_of(GemmArguments::make(*f16_tn(), tn_problem(m, 64, 64))),
                 "problem_size: M = 2147483544, rounded up to whole tiles of 128 (the kernel's "
                 "tile along it), is 2147483648: beyond the kernel's 32-bit index");
}

TEST(ExtentsArguments, Sm80GridLimitsAreRefusedByName) {
  // 70,000 tiles of 128 columns under IdentitySwizzle1: 70,000 threadblocks in y.
  expect_refused(status_of(GemmArguments::make(*f16_tn(), tn_problem(64, 128 * 70000, 64))),
                 "problem_size: N = 8960000 makes 70000 tiles of 128, a grid of 70000 "
                 "threadblocks in y: the kernel's launch takes at most 65535");
}

TEST(ExtentsArguments, StridesWhoseProductsOverflowAreRefused) {
  GemmProblem p = tn_problem(64, 64, 64);
  p.A.strides[0] = std::numeric_limits<int64_t>::max() / 4;
  expect_refused(status_of(GemmArguments::make(*f16_tn(), p)),
                 "A: stride 2305843009213693951 of dimension 0 (extent 64) addresses elements "
                 "beyond 64-bit offsets");
  p = tn_problem(64, 64, 64);
  p.D.shape[1] = -64;
  expect_refused(status_of(GemmArguments::make(*f16_tn(), p)),
                 "D: extent -64 of dimension 1 is negative");
  // A batch of matrices whose element count overflows 64 bits, given as one flat tensor.
  p = tn_problem(64, 64, 64);
  p.problem_size = {1 << 30, 64, 1 << 30};
  p.mode = GemmMode::Batched;
  p.batch = 1 << 30;
  p.A = cuda(f16, {int64_t{1} << 40});
  expect_refused(status_of(GemmArguments::make(*f16_tn(), p)),
                 "A: the element count of 1073741824 x (1073741824, 1073741824) is beyond 64-bit "
                 "offsets");
}

TEST(ExtentsArguments, Sm90StridesBeyondTmaAreRefused) {
  const auto op = GemmOperation::make(sm90_test::tf32_tn_stages4_cluster1x2()).value();
  GemmProblem p;
  p.problem_size = {2, 64, 64};
  p.A = cuda(f32, {2, 64});
  p.A.strides[0] = int64_t{1} << 40;
  p.B = transposed(cuda(f32, {64, 64}));
  p.D = cuda(f32, {2, 64});
  p.output_op = {1.0, 0.0, {}};
  expect_refused(status_of(GemmArguments::make(*op, p)),
                 "A: leading dimension is 1099511627776 elements of 4 bytes (4398046511104 "
                 "bytes): SM90 kernels read operands through TMA descriptors");
}

TEST(ExtentsArguments, GroupedTileCountsBeyond32BitsAreRefused) {
  const GemmDescription d = emit::testing::tensorop_f16_tn();
  const auto op = GemmOperation::make_grouped(d.arch, d.tile, d.A, d.B, d.C, d.epilogue, d.swizzle,
                                              SchedulerMode::Device)
                      .value();
  const int64_t side = int64_t{1} << 30;
  GroupedGemmProblem p;
  p.problem_sizes = {{1 << 30, 1 << 30, 64}};
  p.A = {cuda(f16, {side, 64})};
  p.B = {transposed(cuda(f16, {side, 64}))};
  p.D = {cuda(f16, {side, side})};
  p.output_op = {1.0, 0.0, {}};
  expect_refused(status_of(GroupedGemmArguments::make(*op, p)),
                 "D[0]: problems 0 to 0 have 70368744177664 output tiles of 128x128: the grouped "
                 "kernel numbers its tiles with a 32-bit index");
  p.problem_sizes = {{64, 64, 64}};
  p.A = {cuda(f16, {64, 64})};
  p.B = {transposed(cuda(f16, {64, 64}))};
  p.D = {cuda(f16, {64, 64})};
  p.D[0].strides[0] = -64;
  expect_refused(status_of(GroupedGemmArguments::make(*op, p)),
                 "D[0]: stride -64 of dimension 0 is negative");
}

TEST(ExtentsArguments, StackedGroupsAreCheckedInSixtyFourBits) {
  alignas(16) static int32_t ends[2] = {4, 8};
  StackedGroupedGemmProblem p;
  p.A = cuda(f16, {8, 64});
  p.B = cuda(f16, {2, 64, 64});
  p.D = cuda(f16, {8, 64});
  p.offsets = TensorView::host_contiguous(ends, s32, {2});
  p.B = cuda(f16, {3, 64, 64});
  p.B.strides[0] = std::numeric_limits<int64_t>::max() / 2;
  expect_refused(status_of(p.split()),
                 "B: strides (4611686018427387903, 64, 1) for shape (3, 64, 64) address elements "
                 "beyond 64-bit offsets");
  p.B = cuda(f16, {int64_t{1} << 40, 64, 64});  // more groups than one launch takes
  TensorView many = p.offsets;
  many.shape[0] = int64_t{1} << 40;
  many.strides[0] = 0;
  p.offsets = many;
  expect_refused(status_of(p.split()), "B: at most 1048576 groups (problems) in one launch");
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
