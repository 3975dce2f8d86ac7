// supports() and get_kernels() agree over the whole space (issue 27, deliverable 8): for sampled
// arguments, a kernel of either architecture is listed by get_kernels(args) exactly when
// supports(args) is ok. fp8 arguments with and without fast accumulation included: a kernel that
// accumulates fp8 without promoting is supported and listed only for arguments that allow it.
// TensorViews point at fake device addresses: nothing is launched or dereferenced.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "fake_device_views.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/discover/performance_model.hpp"

namespace tilecraft::api {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;
using testing::cuda;
using testing::transposed;

// Every GEMM kernel of both architectures, described once for all the cases.
const std::vector<Kernel>& whole_space() {
  static const std::vector<Kernel> kernels = get_kernels(nullptr, {}, 90);
  return kernels;
}

// Counts the disagreements (and names the first few) between supports() and the listing.
void expect_agreement(const GemmArguments& args, int* supported_out = nullptr) {
  std::set<std::string> listed;
  for (const Kernel& kernel : get_kernels(&args, {}, 90)) {
    const Status status = kernel.supports(args);
    EXPECT_TRUE(status) << kernel.metadata().kernel_name
                        << " is listed but not supported: " << status.message();
    // Variants derived for these arguments (K slices, fp8 promotion intervals, tiles fitted to
    // N) are no kernels of the space of their own.
    const DesignMetadata& d = kernel.metadata().design;
    if (d.split_k_slices > 1 || d.mma_promotion_interval > 0 ||
        (d.arch == 90 && !discover::is_space_tile_n(d.tile_shape[1]))) {
      continue;
    }
    listed.insert(kernel.metadata().kernel_name);
  }
  int disagreements = 0, supported = 0;
  for (const Kernel& kernel : whole_space()) {
    const bool ok = kernel.supports(args).is_ok();
    supported += ok ? 1 : 0;
    const bool in_list = listed.count(kernel.metadata().kernel_name) != 0;
    if (ok != in_list && ++disagreements <= 5) {
      ADD_FAILURE() << kernel.metadata().kernel_name
                    << (ok ? " is supported but not listed" : " is listed but not supported")
                    << (ok ? std::string() : ": " + kernel.supports(args).message());
    }
  }
  EXPECT_EQ(disagreements, 0);
  EXPECT_EQ(static_cast<size_t>(supported), listed.size());
  if (supported_out) *supported_out = supported;
}

GemmArguments fp8(bool fast_accum, DataType b = e4m3, DataType out = bf16) {
  return GemmArguments::make(cuda(e4m3, {256, 128}), transposed(cuda(b, {256, 128})),
                             cuda(out, {256, 256}), f32, {}, fast_accum)
      .value();
}

TEST(SpaceAgreement, Fp8WithoutFastAccumulationListsAndSupportsOnlyPromotingKernels) {
  const GemmArguments args = fp8(false);
  int supported = 0;
  expect_agreement(args, &supported);
  EXPECT_GT(supported, 0);
  for (const Kernel& kernel : get_kernels(&args, {}, 90)) {
    EXPECT_FALSE(kernel.metadata().operands.fast_accum) << kernel.metadata().kernel_name;
  }
  // The kernel of the failing GPU run's kind: fast accumulation, arguments that did not ask.
  const auto fast = get_kernels(
      nullptr,
      [](const KernelMetadata& m) {
        return m.operands.fast_accum && m.operands.A.dtype == e4m3 && m.operands.B.dtype == e4m3 &&
               m.operands.out.dtype == bf16 && m.operands.B.layout == Layout::ColumnMajor;
      },
      90);
  ASSERT_FALSE(fast.empty());
  const Status status = fast.front().supports(args);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.message(),
            "Accumulation is unsupported: Expected arguments that allow fast accumulation "
            "(use_fast_accum=True) for this fp8 kernel, which accumulates without promoting to "
            "f32; got use_fast_accum=False");
  EXPECT_TRUE(fast.front().supports(fp8(true)));
}

TEST(SpaceAgreement, Fp8WithFastAccumulationListsAndSupportsBothKinds) {
  const GemmArguments args = fp8(true, e5m2, f16);
  expect_agreement(args);
  bool fast = false, promoting = false;
  for (const Kernel& kernel : get_kernels(&args, {}, 90)) {
    (kernel.metadata().operands.fast_accum ? fast : promoting) = true;
  }
  EXPECT_TRUE(fast);
  EXPECT_TRUE(promoting);
}

TEST(SpaceAgreement, Fp8WithScales) {
  EpilogueArguments e;
  e.scale_a.given = true;
  e.scale_a.value = 0.5;
  const auto args = GemmArguments::make(cuda(e4m3, {128, 64}), transposed(cuda(e4m3, {128, 64})),
                                        cuda(f32, {128, 128}), f32, e, true)
                        .value();
  expect_agreement(args);
}

TEST(SpaceAgreement, HalfPrecisionInEveryLayout) {
  expect_agreement(GemmArguments::make(cuda(f16, {2, 256, 64}), cuda(f16, {2, 64, 96}),
                                       cuda(f16, {2, 256, 96}), f32)
                       .value());
  expect_agreement(GemmArguments::make(transposed(cuda(bf16, {64, 200})), cuda(bf16, {64, 48}),
                                       transposed(cuda(f32, {48, 200})), f32)
                       .value());
  expect_agreement(
      GemmArguments::make(cuda(f32, {33, 17}), cuda(f32, {17, 9}), cuda(f32, {33, 9}), f32)
          .value());
  expect_agreement(GemmArguments::make(cuda(s8, {64, 64}), transposed(cuda(s8, {64, 64})),
                                       cuda(s32, {64, 64}), s32)
                       .value());
}

TEST(SpaceAgreement, ProblemsAtTheEdgeOfThe32BitIndex) {
  // Tiles of 128 overrun 2^31 - 1 rows; tiles of 64 do not.
  const int64_t m = (int64_t{1} << 31) - 104;
  expect_agreement(
      GemmArguments::make(cuda(f16, {m, 64}), cuda(f16, {64, 64}), cuda(f16, {m, 64}), f32)
          .value());
  // 125,000 tiles of 64 columns: SM80 kernels need a swizzle (or wider tiles) to fit the grid.
  const int64_t n = 8'000'000;
  expect_agreement(
      GemmArguments::make(cuda(f16, {64, 64}), cuda(f16, {64, n}), cuda(f16, {64, n}), f32)
          .value());
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::api
