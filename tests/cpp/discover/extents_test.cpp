// 64-bit extents (issue 27, TRUNC-1) on the CPU: tensors are checked in 64 bits when arguments
// are made, what no kernel's 32-bit index can hold is refused naming the tensor and dimension,
// and supports() refuses (and get_kernels() leaves out) the kernels that cannot index a problem.
// TensorViews point at fake device addresses: nothing is launched or dereferenced.
#include "tilecraft/core/extents.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fake_device_views.hpp"
#include "tilecraft/core/conv_problem_size.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/discover/conv_api.hpp"
#include "tilecraft/discover/grouped_api.hpp"

namespace tilecraft::api {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;
using testing::cuda;

constexpr int64_t kTwo31 = int64_t{1} << 31;
constexpr int64_t kTwo32 = int64_t{1} << 32;

void expect_refused(const Status& status, const std::string& words) {
  ASSERT_FALSE(status) << "expected a refusal mentioning '" << words << "'";
  EXPECT_NE(status.message().find(words), std::string::npos) << status.message();
}

template <typename T>
Status status_of(const Result<T>& r) {
  return r ? Status::ok() : r.status();
}

// ---- TensorView in 64 bits ----------------------------------------------------------------------

TEST(TensorExtents, NegativeExtentsAndStridesAreRefusedByDimension) {
  TensorView t = cuda(f16, {4, 8});
  t.shape[0] = -4;
  expect_refused(check_tensor_extents("A", t).status(), "A: extent -4 of dimension 0 is negative");
  t = cuda(f16, {4, 8});
  t.strides[0] = -8;
  expect_refused(check_tensor_extents("A", t).status(), "A: stride -8 of dimension 0 is negative");
  // A stride never moves along an extent of 1; an empty tensor addresses nothing.
  t = cuda(f16, {1, 8});
  t.strides[0] = -8;
  EXPECT_TRUE(check_tensor_extents("A", t));
  t = cuda(f16, {0, kTwo31 * kTwo31});
  EXPECT_TRUE(check_tensor_extents("A", t));
  EXPECT_EQ(check_tensor_extents("A", t)->elements, 0);
}

TEST(TensorExtents, ProductsThatOverflowSixtyFourBitsAreRefused) {
  TensorView t = cuda(f16, {4, 8});
  t.strides[0] = std::numeric_limits<int64_t>::max() / 2;
  expect_refused(check_tensor_extents("B", t).status(),
                 "B: stride 4611686018427387903 of dimension 0 (extent 4) addresses elements "
                 "beyond 64-bit offsets");
  t = cuda(f16, {kTwo32, kTwo32});
  expect_refused(check_tensor_extents("out", t).status(),
                 "out: shape (4294967296, 4294967296) holds more than 2^63 - 1 elements");
  t = cuda(f32, {int64_t{1} << 62});
  expect_refused(check_tensor_extents("C", t).status(), "address more than 2^63 - 1 bytes");
  t = cuda(f32, {64});
  t.data = reinterpret_cast<void*>(std::numeric_limits<uintptr_t>::max() - 16);
  expect_refused(check_tensor_extents("bias", t).status(), "run past the end of the address space");
  const auto fine = check_tensor_extents("A", cuda(bf16, {3, 5}));
  ASSERT_TRUE(fine);
  EXPECT_EQ(fine->elements, 15);
  EXPECT_EQ(fine->span, 15);
  EXPECT_EQ(fine->bytes, 30);
}

TEST(TensorExtents, ElementCountsSaturateInsteadOfWrapping) {
  TensorView t = cuda(f16, {kTwo32, kTwo32});
  EXPECT_EQ(t.numel(), std::numeric_limits<int64_t>::max());
}

// ---- GEMM: arguments and kernels ---------------------------------------------------------------

Status gemm(const TensorView& A, const TensorView& B, const TensorView& out, bool fast = false) {
  return status_of(GemmArguments::make(A, B, out, f32, {}, fast));
}

TEST(ExtentsGemm, ExtentsBeyond32BitsAreRefusedNamingTheTensorAndDimension) {
  const int64_t big = kTwo31 + 8;
  expect_refused(gemm(cuda(bf16, {big, 8}), cuda(bf16, {8, 8}), cuda(bf16, {big, 8})),
                 "A: extent 2147483656 of dimension 0 (M) exceeds the kernel's 32-bit index (at "
                 "most 2147483647)");
  expect_refused(gemm(cuda(bf16, {8, kTwo32 + 8}), cuda(bf16, {kTwo32 + 8, 8}), cuda(bf16, {8, 8})),
                 "A: extent 4294967304 of dimension 1 (K) exceeds the kernel's 32-bit index");
  expect_refused(gemm(cuda(bf16, {8, 8}), cuda(bf16, {8, big}), cuda(bf16, {8, big})),
                 "B: extent 2147483656 of dimension 1 (N) exceeds the kernel's 32-bit index");
  expect_refused(gemm(cuda(bf16, {2, big, 8}), cuda(bf16, {2, 8, 8}), cuda(bf16, {2, big, 8})),
                 "A: extent 2147483656 of dimension 1 (M)");
  expect_refused(
      gemm(cuda(bf16, {70000, 8, 8}), cuda(bf16, {70000, 8, 8}), cuda(bf16, {70000, 8, 8})),
      "A: extent 70000 of dimension 0 (batch L) exceeds the 65535 batches");
  TensorView negative = cuda(bf16, {2, 8, 8});
  negative.strides[0] = -64;
  expect_refused(gemm(negative, cuda(bf16, {2, 8, 8}), cuda(bf16, {2, 8, 8})),
                 "A: stride -64 of dimension 0 is negative");
  TensorView huge = cuda(bf16, {8, 8});
  huge.strides[0] = std::numeric_limits<int64_t>::max() / 4;
  expect_refused(gemm(huge, cuda(bf16, {8, 8}), cuda(bf16, {8, 8})),
                 "A: stride 2305843009213693951 of dimension 0 (extent 8) addresses elements "
                 "beyond 64-bit offsets");
  TensorView empty_m = cuda(bf16, {8, 8});
  empty_m.shape[0] = -8;
  expect_refused(gemm(empty_m, cuda(bf16, {8, 8}), cuda(bf16, {8, 8})),
                 "A: extent -8 of dimension 0 is negative");
}

// The first kernel of get_kernels(nullptr) that `pick` chooses.
Kernel first_of(const MetadataFilter& pick, int cc = 90) {
  auto kernels = get_kernels(nullptr, pick, cc);
  if (kernels.empty()) throw Error(Status::invalid("no such kernel in the space"));
  return kernels.front();
}

bool is_f16_tn(const KernelMetadata& m, Layout b_layout) {
  return m.operands.A.dtype == f16 && m.operands.B.dtype == f16 && m.operands.out.dtype == f16 &&
         m.operands.accumulator == f32 && m.operands.A.layout == Layout::RowMajor &&
         m.operands.B.layout == b_layout && m.operands.out.layout == Layout::RowMajor &&
         m.operands.A.alignment == 8 && m.operands.B.alignment == 8 &&
         m.operands.out.alignment == 8;
}

TEST(ExtentsGemm, KernelsWhoseTilesOverrunThe32BitIndexAreNeitherSupportedNorListed) {
  // M fits 32 bits, but rounded up to whole tiles of 128 it does not.
  const int64_t m = kTwo31 - 104;  // a multiple of 8
  const auto args =
      GemmArguments::make(cuda(f16, {m, 64}), cuda(f16, {64, 64}), cuda(f16, {m, 64}), f32).value();
  const auto listed = get_kernels(&args, {}, 90);
  ASSERT_FALSE(listed.empty());
  for (const Kernel& kernel : listed) {
    const int64_t tile = kernel.metadata().design.tile_shape[0];
    EXPECT_LE((m + tile - 1) / tile * tile, kMaxIndex32) << kernel.metadata().kernel_name;
    EXPECT_TRUE(kernel.supports(args)) << kernel.metadata().kernel_name;
  }
  for (int arch : {80, 90}) {
    const Kernel wide = first_of([&](const KernelMetadata& k) {
      return k.min_cc == arch && is_f16_tn(k, Layout::RowMajor) && k.design.tile_shape[0] == 128;
    });
    expect_refused(wide.supports(args),
                   "A: M (extent of dimension 0) = 2147483544, rounded up to whole tiles of 128 "
                   "(the kernel's tile along it), is 2147483648: beyond the kernel's 32-bit index");
  }
}

TEST(ExtentsGemm, Sm80GridLimitsAreCheckedAsTheSwizzleComputesThem) {
  // N = 8,000,000: 125,000 tiles of 64 columns; swizzled by 8, 15,625 threadblocks in y.
  const int64_t n = 8'000'000;
  const auto args =
      GemmArguments::make(cuda(f16, {64, 64}), cuda(f16, {64, n}), cuda(f16, {64, n}), f32).value();
  const auto pick = [](Swizzle swizzle) {
    return first_of(
        [swizzle](const KernelMetadata& k) {
          return k.min_cc == 80 && is_f16_tn(k, Layout::RowMajor) && k.design.tile_shape[1] == 64 &&
                 k.design.swizzle == swizzle;
        },
        80);
  };
  expect_refused(pick(Swizzle::IdentitySwizzle1).supports(args),
                 "B: N (extent of dimension 1) = 8000000 makes 125000 tiles of 64, a grid of "
                 "125000 threadblocks in y: the kernel's launch takes at most 65535");
  EXPECT_TRUE(pick(Swizzle::IdentitySwizzle8).supports(args));
  bool swizzled_listed = false;
  for (const Kernel& kernel : get_kernels(&args, {}, 80)) {
    const KernelMetadata& m = kernel.metadata();
    const int64_t tiles = (n + m.design.tile_shape[1] - 1) / m.design.tile_shape[1];
    if (m.design.swizzle == Swizzle::IdentitySwizzle1) {
      EXPECT_LE(tiles, 65535) << m.kernel_name;
    }
    swizzled_listed = swizzled_listed || (m.design.swizzle == Swizzle::IdentitySwizzle8 &&
                                          m.design.tile_shape[1] == 64);
  }
  EXPECT_TRUE(swizzled_listed);
}

TEST(ExtentsGemm, Sm90KernelsRefuseStridesATmaDescriptorCannotHold) {
  TensorView A = cuda(f16, {2, 64});
  A.strides[0] = int64_t{1} << 40;  // 2 TiB between rows
  const auto args = GemmArguments::make(A, cuda(f16, {64, 64}), cuda(f16, {2, 64}), f32).value();
  const auto listed = get_kernels(&args, {}, 90);
  ASSERT_FALSE(listed.empty());  // SM80 kernels address 64-bit strides
  for (const Kernel& kernel : listed) EXPECT_EQ(kernel.metadata().min_cc, 80);
  const Kernel sm90 = first_of(
      [](const KernelMetadata& k) { return k.min_cc == 90 && is_f16_tn(k, Layout::RowMajor); });
  expect_refused(sm90.supports(args),
                 "A: stride of dimension 0 is 1099511627776 elements of 2 bytes (2199023255552 "
                 "bytes): SM90 kernels read operands through TMA descriptors, whose strides are "
                 "below 2^40 bytes");
}

// ---- grouped GEMM ------------------------------------------------------------------------------

TEST(ExtentsGrouped, ListExtentsBeyond32BitsAreRefused) {
  const int64_t big = kTwo31 + 8;
  const auto made = GroupedGemmArguments::make({cuda(bf16, {big, 8})}, {cuda(bf16, {8, 8})},
                                               {cuda(bf16, {big, 8})}, f32);
  expect_refused(status_of(made),
                 "A[0]: extent 2147483656 of dimension 0 (M) exceeds the kernel's 32-bit index");
  const auto wide_n = GroupedGemmArguments::make(
      {cuda(bf16, {8, 8}), cuda(bf16, {8, 8})}, {cuda(bf16, {8, 8}), cuda(bf16, {8, kTwo32 + 4})},
      {cuda(bf16, {8, 8}), cuda(bf16, {8, kTwo32 + 4})}, f32);
  expect_refused(status_of(wide_n), "B[1]: extent 4294967300 of dimension 1 (N)");
  TensorView negative = cuda(bf16, {8, 8});
  negative.shape[1] = -8;
  expect_refused(status_of(GroupedGemmArguments::make({cuda(bf16, {8, 8})}, {negative},
                                                      {cuda(bf16, {8, 8})}, f32)),
                 "B[0]: extent -8 of dimension 1 is negative");
}

TEST(ExtentsGrouped, StackedShapeErrorsNameOut) {
  alignas(16) static int32_t ends[1] = {8};
  const TensorView offsets = TensorView::host_contiguous(ends, s32, {1});
  const auto made = GroupedGemmArguments::make_stacked(cuda(bf16, {8, 8}), cuda(bf16, {1, 8, 8}),
                                                       cuda(bf16, {8, 16}), offsets, f32);
  expect_refused(status_of(made), "out: expected (8, 8) for A's rows and B's N");
  TensorView bad_offsets = offsets;
  bad_offsets.strides[0] = -1;
  bad_offsets.shape[0] = 2;
  expect_refused(
      status_of(GroupedGemmArguments::make_stacked(cuda(bf16, {8, 8}), cuda(bf16, {2, 8, 8}),
                                                   cuda(bf16, {8, 8}), bad_offsets, f32)),
      "offsets: stride -1 of dimension 0 is negative");
}

TEST(ExtentsGrouped, KernelsNumberingMoreTilesThan32BitsAreNeitherSupportedNorListed) {
  const int64_t side = int64_t{1} << 30;
  const auto huge = GroupedGemmArguments::make({cuda(f16, {side, 64})}, {cuda(f16, {64, side})},
                                               {cuda(f16, {side, side})}, f32)
                        .value();
  EXPECT_TRUE(get_kernels(huge, {}, 90).empty());
  const auto small = GroupedGemmArguments::make({cuda(f16, {64, 64})}, {cuda(f16, {64, 64})},
                                                {cuda(f16, {64, 64})}, f32)
                         .value();
  const auto kernels = get_kernels(small, {}, 90);
  ASSERT_FALSE(kernels.empty());
  for (const Kernel* kernel : {&kernels.front(), &kernels.back()}) {
    expect_refused(kernel->supports(huge), "out[0]: problems 0 to 0 have ");
    expect_refused(kernel->supports(huge),
                   "the grouped kernel numbers its tiles with a 32-bit index");
  }
}

// ---- convolution -------------------------------------------------------------------------------

// A (N, C, H, W) view in torch.channels_last memory (strides H*W*C, 1, W*C, C).
TensorView channels_last(DataType type, int64_t n, int64_t c, int64_t h, int64_t w) {
  TensorView t = cuda(type, {n, h, w, c});
  t.shape = {n, c, h, w};
  t.strides = {h * w * c, 1, w * c, c};
  return t;
}

Status conv(const TensorView& x, const TensorView& w, const TensorView& y, int pad = 1) {
  Conv2dGeometry g;
  g.padding = {pad, pad, pad, pad};
  return status_of(Conv2dArguments::make(ConvKind::Fprop, x, w, y, f32, g));
}

TEST(ExtentsConv, FilterCountsBeyond32BitsAreRefusedNotTruncated) {
  // The audit's case: 2^32 + 4 filters were read as 4.
  expect_refused(conv(channels_last(f32, 1, 4, 8, 8), channels_last(f32, kTwo32 + 4, 4, 3, 3),
                      channels_last(f32, 1, 4, 8, 8)),
                 "B (w): extent 4294967300 of dimension 0 exceeds the kernel's 32-bit index");
  expect_refused(conv(channels_last(f16, 1, 8, 1 << 15, 1 << 15), channels_last(f16, 8, 8, 1, 1),
                      channels_last(f16, 1, 8, 1 << 15, 1 << 15), 0),
                 "A (x): 8589934592 elements exceed the kernels' 32-bit implicit-GEMM index");
  TensorView x = channels_last(f32, 1, 4, 8, 8);
  x.strides[2] = -32;
  expect_refused(conv(x, channels_last(f32, 4, 4, 3, 3), channels_last(f32, 1, 4, 8, 8)),
                 "A: stride -32 of dimension 2 is negative");
}

TEST(ExtentsConv, ProblemSizesWhoseElementCountsOverflowAreRefused) {
  // N*H*W*C = 2^22 * 2^21 * 2^21 * 1 = 2^64 wrapped to 0 in 64 bits and was accepted.
  const auto made = Conv2dProblemSize::make({1 << 22, 1 << 21, 1 << 21, 1}, {1, 1, 1, 1},
                                            {0, 0, 0, 0}, {1, 1}, {1, 1});
  expect_refused(status_of(made), "problem_size: the activation tensor has");
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::api
