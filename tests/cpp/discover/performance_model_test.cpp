// The analytic performance model: the rankings it must get right, its efficiencies on shapes
// whose answer is known, and that it takes every description the other tests build.
#include "tilecraft/discover/performance_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "emit/emit_test_descriptions.hpp"
#include "emit/sm90_test_descriptions.hpp"

namespace tilecraft::discover {
namespace {
namespace TILECRAFT_TEST_FILE {

using sm90_test::epilogue;
using sm90_test::gemm;
using sm90_test::tile;
using sm90_test::tma;
using sm90_test::wgmma;

const DeviceTraits kH100;

// A bf16 TN kernel with f32 accumulation and bf16 output; the wgmma N is the tile's N.
GemmDescription bf16_kernel(std::array<int, 3> shape,
                            TileScheduler scheduler = TileScheduler::Persistent,
                            std::array<int, 3> cluster = {1, 1, 1}) {
  using enum DataType;
  const MathInstruction m = wgmma({64, shape[1], 16}, bf16, bf16, f32);
  return gemm(tile(shape, m, 0, cluster, KernelSchedule::Auto, scheduler),
              tma(bf16, Layout::RowMajor), tma(bf16, Layout::ColumnMajor),
              tma(bf16, Layout::RowMajor), epilogue(bf16, f32));
}

std::vector<GemmDescription> every_test_description() {
  return {sm90_test::bf16_tn_coop_bias_gelu(), sm90_test::tf32_tn_stages4_cluster1x2(),
          sm90_test::fp8_scaled_fast_accum(),  sm90_test::fp8_out_e4m3_e5m2_relu(),
          sm90_test::int8_tn_s8_out(),         sm90_test::f16_aux_gelu_tanh(),
          sm90_test::bf16_nt_stream_k(),       sm90_test::f16_acc_pingpong_clamp(),
          emit::testing::simt_f32_seed(),      emit::testing::tensorop_f16_tn(),
          emit::testing::int8_interleaved()};
}

void expect_sane(const PerformanceEstimate& e) {
  EXPECT_GT(e.score, 0) << e.explain();
  EXPECT_TRUE(std::isfinite(e.score)) << e.explain();
  EXPECT_GT(e.seconds, 0) << e.explain();
  EXPECT_TRUE(std::isfinite(e.seconds)) << e.explain();
  EXPECT_GT(e.tile_efficiency, 0) << e.explain();
  EXPECT_LE(e.tile_efficiency, 1) << e.explain();
  EXPECT_GT(e.wave_efficiency, 0) << e.explain();
  EXPECT_LE(e.wave_efficiency, 1) << e.explain();
  EXPECT_GT(e.instruction_efficiency, 0) << e.explain();
  EXPECT_LE(e.instruction_efficiency, 1) << e.explain();
  EXPECT_GT(e.arithmetic_intensity, 0) << e.explain();
}

TEST(PerformanceModel, LargeCooperativeTileBeatsSmallPingPongOnLargeSquare) {
  const GemmShape shape{8192, 8192, 8192};
  const GemmDescription cooperative = bf16_kernel({128, 256, 64});
  const GemmDescription ping_pong = bf16_kernel({64, 64, 64});
  ASSERT_EQ(cooperative.tile.kernel_schedule, KernelSchedule::TmaWarpSpecializedCooperative);
  ASSERT_EQ(ping_pong.tile.kernel_schedule, KernelSchedule::TmaWarpSpecializedPingpong);
  const PerformanceEstimate big = estimate(cooperative, shape, kH100);
  const PerformanceEstimate small = estimate(ping_pong, shape, kH100);
  EXPECT_GT(big.score, small.score) << big.explain() << " vs " << small.explain();
  EXPECT_GT(big.instruction_efficiency, small.instruction_efficiency);
  // A large square bf16 GEMM runs near the top of the prior, below the device's peak.
  EXPECT_GT(big.score, 0.6 * kH100.peak_tensor_tflops_16bit) << big.explain();
  EXPECT_LT(big.score, kH100.peak_tensor_tflops_16bit) << big.explain();
}

TEST(PerformanceModel, ACustomEpilogueCostsTheTensorsItMoves) {
  // D = gelu(acc) + R, Z stored too: a full bf16 input and two bf16 stores per element, where
  // the plain kernel writes D alone. A cooperative kernel pays each tile's epilogue, a ping-pong
  // one hides all but the last behind the other warpgroup's mainloop.
  using enum DataType;
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int residual = g.tensor("R", bf16);
  const int z = g.activation(Activation::gelu, acc);
  g.store(g.add(z, residual), "D", bf16);
  g.store(z, "Z", bf16);
  const GemmShape shape{4096, 4096, 1024};
  const GemmDescription cooperative = bf16_kernel({128, 128, 64});
  GemmDescription ping_pong = cooperative;
  ping_pong.tile.kernel_schedule = KernelSchedule::TmaWarpSpecializedPingpong;
  ping_pong.tile.epilogue_schedule = EpilogueSchedule::TmaWarpSpecialized;
  const auto graph_of = [&](const GemmDescription& d) {
    auto with = d.with_epilogue_graph(g);
    EXPECT_TRUE(bool(with)) << with.status().message();
    return *with;
  };
  const double plain_coop = estimate(cooperative, shape, kH100).seconds;
  const double graph_coop = estimate(graph_of(cooperative), shape, kH100).seconds;
  const double plain_pp = estimate(ping_pong, shape, kH100).seconds;
  const double graph_pp = estimate(graph_of(ping_pong), shape, kH100).seconds;
  EXPECT_GT(graph_coop, plain_coop);
  EXPECT_GE(graph_pp, plain_pp);
  EXPECT_GT(graph_coop - plain_coop, graph_pp - plain_pp);
}

TEST(PerformanceModel, SkinnyMPrefersA64RowTile) {
  const GemmShape shape{16, 4096, 4096};
  const PerformanceEstimate rows64 = estimate(bf16_kernel({64, 128, 64}), shape, kH100);
  const PerformanceEstimate rows256 = estimate(bf16_kernel({256, 128, 64}), shape, kH100);
  EXPECT_GT(rows64.score, rows256.score) << rows64.explain() << " vs " << rows256.explain();
  EXPECT_DOUBLE_EQ(rows64.tile_efficiency, 16.0 / 64);
  EXPECT_DOUBLE_EQ(rows256.tile_efficiency, 16.0 / 256);
}

TEST(PerformanceModel, SmallSquarePrefersATileThatFillsTheGpu) {
  const GemmShape shape{1000, 1000, 1000};
  // 256x128: ceil(1000/256) * ceil(1000/128) = 4 * 8 = 32 tiles on 132 SMs.
  const PerformanceEstimate few = estimate(bf16_kernel({256, 128, 64}), shape, kH100);
  // 128x64: 8 * 16 = 128 tiles.
  const PerformanceEstimate many = estimate(bf16_kernel({128, 64, 64}), shape, kH100);
  EXPECT_DOUBLE_EQ(few.wave_efficiency, 32.0 / 132);
  EXPECT_DOUBLE_EQ(many.wave_efficiency, 128.0 / 132);
  EXPECT_GT(many.score, few.score) << many.explain() << " vs " << few.explain();
}

TEST(PerformanceModel, TileEfficiencyIsExactlyOneForMultiplesOfTheTile) {
  const GemmDescription d = bf16_kernel({128, 256, 64});
  EXPECT_EQ(estimate(d, {4096, 4096, 4096}, kH100).tile_efficiency, 1.0);
  EXPECT_EQ(estimate(d, {128, 256, 64, 3}, kH100).tile_efficiency, 1.0);
  // 129 rows pad to 256, 257 columns to 512, 65 deep to 128.
  EXPECT_DOUBLE_EQ(estimate(d, {129, 257, 65}, kH100).tile_efficiency,
                   129.0 * 257 * 65 / (256.0 * 512 * 128));
}

TEST(PerformanceModel, OneTileOverAFullWaveHalvesWaveEfficiency) {
  // 7 x 19 = 133 tiles of 128x128 on 132 SMs: two waves, the second with one tile.
  const GemmDescription d = bf16_kernel({128, 128, 64});
  const PerformanceEstimate e = estimate(d, {7 * 128, 19 * 128, 8192}, kH100);
  EXPECT_NEAR(e.wave_efficiency, 133.0 / 264, 1e-12);
  EXPECT_NEAR(e.wave_efficiency, 0.5, 0.01);
  // 12 x 11 = 132 tiles: one full wave.
  const PerformanceEstimate full = estimate(d, {12 * 128, 11 * 128, 8192}, kH100);
  EXPECT_DOUBLE_EQ(full.wave_efficiency, 1.0);
  // The extra tile costs nearly a whole wave.
  EXPECT_GT(e.seconds, 1.8 * full.seconds - 4e-6) << e.explain() << " vs " << full.explain();
}

TEST(PerformanceModel, PersistentGridOfClustersFollowsCutlassOccupancy) {
  // CUTLASS assumes GPCs of 18 SMs: 132 SMs hold 7 * 16 + 4 = 116 CTAs in clusters of 4, which
  // 116 tiles fill exactly; clusters of one hold all 132.
  const GemmShape shape{116 * 128, 128, 4096};
  GemmDescription clustered = bf16_kernel({128, 128, 64}, TileScheduler::Persistent, {4, 1, 1});
  clustered.tile.kernel_schedule = KernelSchedule::TmaWarpSpecializedCooperative;
  GemmDescription single = bf16_kernel({128, 128, 64});
  single.tile.kernel_schedule = KernelSchedule::TmaWarpSpecializedCooperative;
  EXPECT_DOUBLE_EQ(estimate(clustered, shape, kH100).wave_efficiency, 1.0);
  EXPECT_DOUBLE_EQ(estimate(single, shape, kH100).wave_efficiency, 116.0 / 132);
}

TEST(PerformanceModel, SwizzlePadsTheGridAsCutlassDoes) {
  // 24 x 20 tiles of 128x256 with clusters of 2x1: swizzle 8 walks 32 x 24 tiles, the padding
  // computing nothing but costing a full mainloop each.
  const GemmShape shape{3000, 5000, 7000};
  GemmDescription plain = bf16_kernel({128, 256, 64}, TileScheduler::Persistent, {2, 1, 1});
  plain.tile.kernel_schedule = KernelSchedule::TmaWarpSpecializedCooperative;
  GemmDescription swizzled = plain;
  swizzled.swizzle = Swizzle::IdentitySwizzle8;
  const double ratio = estimate(swizzled, shape, kH100).score / estimate(plain, shape, kH100).score;
  EXPECT_LT(ratio, 480.0 / 768 * 1.1);
}

TEST(PerformanceModel, OneByOneByOneIsPositiveAndFinite) {
  for (const GemmDescription& d : every_test_description()) {
    SCOPED_TRACE(d.procedural_name());
    const PerformanceEstimate e = estimate(d, {1, 1, 1}, kH100);
    expect_sane(e);
    EXPECT_LT(e.seconds, 10e-6) << e.explain();
  }
}

TEST(PerformanceModel, StreamKBeatsPersistentOnFewDeepTiles) {
  // 16 output tiles of 128x128 with 256 k-tiles each: persistent leaves 116 SMs idle.
  const GemmShape shape{512, 512, 16384};
  const PerformanceEstimate persistent = estimate(bf16_kernel({128, 128, 64}), shape, kH100);
  const PerformanceEstimate stream_k =
      estimate(bf16_kernel({128, 128, 64}, TileScheduler::StreamK), shape, kH100);
  EXPECT_DOUBLE_EQ(persistent.wave_efficiency, 16.0 / 132);
  EXPECT_GT(stream_k.wave_efficiency, 0.9);
  EXPECT_GT(stream_k.score, 2 * persistent.score)
      << stream_k.explain() << " vs " << persistent.explain();
}

TEST(PerformanceModel, StreamKIsSlightlySlowerThanPersistentOnWholeWaves) {
  const GemmShape shape{132 * 128, 256 * 16, 8192};  // 16 whole waves of 128x256 tiles
  const PerformanceEstimate persistent = estimate(bf16_kernel({128, 256, 64}), shape, kH100);
  const PerformanceEstimate stream_k =
      estimate(bf16_kernel({128, 256, 64}, TileScheduler::StreamK), shape, kH100);
  // Measured: the stream-K scheduler's iterations run at about 0.9 of the persistent one's.
  EXPECT_GE(stream_k.seconds, persistent.seconds) << stream_k.explain();
  EXPECT_LT(stream_k.seconds, 1.2 * persistent.seconds) << persistent.explain();
}

TEST(PerformanceModel, Fp8DoublesTheRateOfBf16OnTheSameTile) {
  using enum DataType;
  const MathInstruction m =
      wgmma({64, 256, 32}, e4m3, e4m3, f32, MathOperation::multiply_add_fast_accum);
  const GemmDescription fp8 = gemm(tile({128, 256, 128}, m), tma(e4m3, Layout::RowMajor),
                                   tma(e4m3, Layout::ColumnMajor), tma(bf16, Layout::RowMajor),
                                   epilogue(bf16, f32, Activation::identity, sm90_test::scales()));
  const GemmShape shape{8192, 8192, 8192};
  const PerformanceEstimate f8 = estimate(fp8, shape, kH100);
  const PerformanceEstimate b16 = estimate(bf16_kernel({128, 256, 64}), shape, kH100);
  EXPECT_GT(f8.score, 1.7 * b16.score) << f8.explain() << " vs " << b16.explain();
  EXPECT_LT(f8.score, 2 * kH100.peak_tensor_tflops_16bit);
}

TEST(PerformanceModel, Sm80KernelsReachAtMostAboutSixTenthsOfHopperPeak) {
  const GemmDescription sm80 = emit::testing::tensorop_f16_tn();
  const PerformanceEstimate on_hopper = estimate(sm80, {8192, 8192, 8192}, kH100);
  EXPECT_LE(on_hopper.instruction_efficiency, 0.6);
  EXPECT_LT(on_hopper.score,
            estimate(bf16_kernel({128, 128, 64}), {8192, 8192, 8192}, kH100).score);
  DeviceTraits a100{108, 80, 312.0, 2039.0, 40.0 * 1024 * 1024};
  EXPECT_GT(estimate(sm80, {8192, 8192, 8192}, a100).instruction_efficiency,
            on_hopper.instruction_efficiency);
}

TEST(PerformanceModel, NarrowSm80AccessesCostTime) {
  GemmDescription aligned = emit::testing::tensorop_f16_tn();
  GemmDescription narrow = aligned;
  narrow.A.alignment = 2;
  narrow.B.alignment = 2;
  const GemmShape shape{4096, 4096, 4096};
  EXPECT_GT(estimate(aligned, shape, kH100).score, estimate(narrow, shape, kH100).score);
}

TEST(PerformanceModel, Sm90KernelCannotRunOnAnAmpereDevice) {
  DeviceTraits a100{108, 80, 312.0, 2039.0, 40.0 * 1024 * 1024};
  const PerformanceEstimate e = estimate(bf16_kernel({128, 128, 64}), {4096, 4096, 4096}, a100);
  EXPECT_EQ(e.score, 0);
  EXPECT_TRUE(std::isinf(e.seconds));
}

TEST(PerformanceModel, UnvalidatedEmptyDescriptionIsNotRunnable) {
  const PerformanceEstimate e = estimate(GemmDescription{}, {4096, 4096, 4096}, kH100);
  EXPECT_EQ(e.score, 0);
  EXPECT_TRUE(std::isinf(e.seconds));
}

TEST(PerformanceModel, EmptyProblemScoresZero) {
  const PerformanceEstimate e = estimate(bf16_kernel({128, 128, 64}), {0, 4096, 4096}, kH100);
  EXPECT_EQ(e.score, 0);
  EXPECT_GT(e.seconds, 0);
  EXPECT_TRUE(std::isfinite(e.seconds));
}

TEST(PerformanceModel, EveryTestDescriptionEstimatesWithoutThrowing) {
  const GemmShape shapes[] = {{1, 1, 1},          {16, 4096, 4096},   {1000, 1000, 1000},
                              {512, 512, 16384},  {8192, 8192, 8192}, {4096, 128, 64, 32},
                              {65536, 65536, 16}, {3, 70000, 5}};
  for (const GemmDescription& d : every_test_description()) {
    for (const GemmShape& shape : shapes) {
      SCOPED_TRACE(d.procedural_name() + " on " + std::to_string(shape.m) + "x" +
                   std::to_string(shape.n) + "x" + std::to_string(shape.k));
      PerformanceEstimate e;
      EXPECT_NO_THROW(e = estimate(d, shape, kH100));
      expect_sane(e);
    }
  }
}

TEST(PerformanceModel, ExplainNamesEveryQuantity) {
  const std::string line =
      estimate(bf16_kernel({128, 256, 64}), {8192, 8192, 8192}, kH100).explain();
  for (const char* key : {"score=", "time=", "tile=", "wave=", "ai=", "inst="}) {
    EXPECT_NE(line.find(key), std::string::npos) << line;
  }
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::discover
