// Grouped GEMM descriptions: what the grouped kernels take, and their names.
#include <gtest/gtest.h>

#include <string>

#include "emit/emit_test_descriptions.hpp"
#include "emit/sm90_test_descriptions.hpp"
#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

Result<GemmDescription> grouped(const GemmDescription& d, SchedulerMode mode) {
  return GemmDescription::make_grouped(d.arch, d.tile, d.A, d.B, d.C, d.epilogue, d.swizzle, mode);
}

void expect_refused(const Result<GemmDescription>& made, const std::string& words) {
  ASSERT_FALSE(made) << "expected a refusal mentioning '" << words << "'";
  EXPECT_NE(made.status().message().find(words), std::string::npos) << made.status().message();
}

TEST(GroupedRules, Sm80BothSchedulersNameTheirKind) {
  const GemmDescription base = emit::testing::tensorop_f16_tn();
  auto device = grouped(base, SchedulerMode::Device);
  auto host = grouped(base, SchedulerMode::Host);
  ASSERT_TRUE(device) << device.status().message();
  ASSERT_TRUE(host) << host.status().message();
  EXPECT_TRUE(device->is_grouped());
  EXPECT_NE(device->procedural_name().find("gemm_grouped_"), std::string::npos);
  EXPECT_NE(host->procedural_name().find("gemm_grouped_host_"), std::string::npos);
  EXPECT_NE(device->procedural_name(), base.procedural_name());
  EXPECT_NE(device->procedural_name(), host->procedural_name());
  EXPECT_FALSE(*device == base);
}

TEST(GroupedRules, RefusesWhatGroupedKernelsDoNotTake) {
  GemmDescription interleaved = emit::testing::int8_interleaved();
  expect_refused(grouped(interleaved, SchedulerMode::Device), "RowMajor or ColumnMajor");

  GemmDescription horizontal = emit::testing::tensorop_f16_tn();
  horizontal.swizzle = Swizzle::HorizontalSwizzle;
  expect_refused(grouped(horizontal, SchedulerMode::Device), "swizzling_functor");

  // A per-column (N) bias is a bias per problem; per-row and aux outputs are refused.
  const GemmDescription sm90 = sm90_test::bf16_tn_coop_bias_gelu();
  EXPECT_TRUE(grouped(sm90, SchedulerMode::Device));
  GemmDescription per_row = sm90;
  per_row.epilogue.fusion.bias = BiasKind::per_row;
  expect_refused(grouped(per_row, SchedulerMode::Device), "per-row");

  using enum DataType;
  const MathInstruction m = sm90_test::wgmma({64, 128, 16}, bf16, bf16, f32);
  const GemmDescription plain =
      sm90_test::gemm(sm90_test::tile({128, 128, 64}, m), sm90_test::tma(bf16, Layout::RowMajor),
                      sm90_test::tma(bf16, Layout::ColumnMajor),
                      sm90_test::tma(bf16, Layout::RowMajor), sm90_test::epilogue(bf16, f32));
  ASSERT_TRUE(grouped(plain, SchedulerMode::Device));
  expect_refused(grouped(plain, SchedulerMode::Host), "SchedulerMode.Device");

  const GemmDescription stream_k = sm90_test::gemm(
      sm90_test::tile({128, 128, 64}, m, 0, {1, 1, 1}, KernelSchedule::Auto,
                      TileScheduler::StreamK),
      sm90_test::tma(bf16, Layout::RowMajor), sm90_test::tma(bf16, Layout::ColumnMajor),
      sm90_test::tma(bf16, Layout::RowMajor), sm90_test::epilogue(bf16, f32));
  expect_refused(grouped(stream_k, SchedulerMode::Device), "StreamK");

  const GemmDescription basic = sm90_test::gemm(
      sm90_test::tile({64, 128, 64}, m, 0, {1, 1, 1}, KernelSchedule::TmaWarpSpecialized),
      sm90_test::tma(bf16, Layout::RowMajor), sm90_test::tma(bf16, Layout::ColumnMajor),
      sm90_test::tma(bf16, Layout::RowMajor), sm90_test::epilogue(bf16, f32));
  expect_refused(grouped(basic, SchedulerMode::Device), "persistent");
}

TEST(GroupedRules, OutOfRangeSchedulerModeIsNamed) {
  expect_refused(grouped(emit::testing::tensorop_f16_tn(), static_cast<SchedulerMode>(7)),
                 "precompute_mode");
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
