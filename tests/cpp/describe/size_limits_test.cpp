// Issue 10, defect 10: validation computed sizes (shared memory, threads, access widths) in 32-bit
// ints, so huge extents overflowed into plausible or false verdicts. Extents are now refused up
// front with the argument and its range, sizes are 64-bit, and enum values outside their
// enumerators are refused before anything divides by their size.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "tilecraft/describe/gemm_operation.hpp"
#include "tilecraft/discover/performance_model.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;

MathInstruction simt_f32() {
  return MathInstruction::make({1, 1, 1}, f32, f32, f32, OpClass::Simt, MathOperation::multiply_add)
      .value();
}

MathInstruction wgmma(int n, DataType t, int k) {
  return MathInstruction::make({64, n, k}, t, t, f32, OpClass::TensorOp,
                               MathOperation::multiply_add)
      .value();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(SizeLimits, TheReportedTileIsRefusedWithTheArgumentAndItsRange) {
  auto tile = TileDescription::make({128, 16777216, 8}, 4, {2, 4, 1}, simt_f32());
  ASSERT_FALSE(tile);
  EXPECT_EQ(tile.status().message(),
            "TileDescription: threadblock_shape [128, 16777216, 8]: each extent must be in [1, "
            "65536]");
}

// Each of these was accepted: its shared memory came out negative, zero or small.
TEST(SizeLimits, ImpossibleTilesWhoseSharedMemoryOverflowedAreRefused) {
  int cases = 0;
  for (int dim = 0; dim < 3; ++dim) {
    for (int extent : {1 << 20, 1 << 22, 1 << 24, 1 << 25, 1 << 26, 1 << 28, 1 << 30}) {
      for (int stages : {2, 3, 4, 5, 6, 8}) {
        std::array<int, 3> shape{128, 128, 8};
        shape[dim] = extent;
        auto tile = TileDescription::make(shape, stages, {2, 4, 1}, simt_f32());
        ASSERT_FALSE(tile) << "accepted " << tile->procedural_name();
        EXPECT_TRUE(contains(tile.status().message(), "threadblock_shape"))
            << tile.status().message();
        EXPECT_TRUE(contains(tile.status().message(), "must be in [1, 65536]"))
            << tile.status().message();
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 126);
}

// M x N of the warp tile overflowed to 0, and the tile was refused for a reason it did not have.
TEST(SizeLimits, SquareOfTwoToTheTwentyGetsItsTrueReason) {
  auto tile = TileDescription::make({1 << 20, 1 << 20, 8}, 4, {2, 4, 1}, simt_f32());
  ASSERT_FALSE(tile);
  EXPECT_FALSE(contains(tile.status().message(), "SIMT warp tile")) << tile.status().message();
  EXPECT_TRUE(contains(tile.status().message(), "threadblock_shape [1048576, 1048576, 8]"));
}

TEST(SizeLimits, WarpCountsAreBoundedAndThreadsDoNotOverflow) {
  auto tile = TileDescription::make({1024, 1024, 8}, 4, {1024, 1024, 1}, simt_f32());
  ASSERT_FALSE(tile);
  EXPECT_TRUE(contains(tile.status().message(),
                       "warp_count [1024, 1024, 1]: each extent must be in [1, 32]"))
      << tile.status().message();
  TileDescription raw;
  raw.warp_count = {1 << 30, 1 << 30, 1 << 30};
  EXPECT_GT(raw.threads(), 1024);  // saturates, never wraps to a small or negative count
  raw.warp_count = {2, 4, 1};
  EXPECT_EQ(raw.threads(), 256);
}

TEST(SizeLimits, SharedMemoryIsSixtyFourBit) {
  TileDescription raw;
  raw.threadblock_shape = {65536, 65536, 65536};
  raw.stages = 16;
  raw.math_instruction = simt_f32();
  EXPECT_EQ(raw.mainloop_shared_memory_bytes(), int64_t{16} * 65536 * (65536 * 4 * 2));
  // The largest extents validation accepts are refused for their true size.
  auto tile = TileDescription::make({65536, 65536, 65536}, 16, {1, 1, 1}, simt_f32());
  ASSERT_FALSE(tile);
  EXPECT_TRUE(contains(tile.status().message(), "needs 536870912 KiB of shared memory"))
      << tile.status().message();
}

TEST(SizeLimits, Sm90TileKThatOverflowedIsRefused) {
  // 32-bit: K * 32 bits wrapped into [256, 2048] bits, and the tile was accepted.
  for (int k : {(1 << 27) + 8, (1 << 27) + 16, (1 << 28) + 8}) {
    auto tile = TileDescription::make_sm90({128, 128, k}, 4, {1, 1, 1}, wgmma(128, tf32, 8));
    ASSERT_FALSE(tile) << "accepted K=" << k;
    EXPECT_TRUE(contains(tile.status().message(), "threadblock_shape [128, 128, " +
                                                      std::to_string(k) +
                                                      "]: each extent must be in [1, 65536]"))
        << tile.status().message();
  }
}

TEST(SizeLimits, EpilogueAccessWidthDoesNotOverflow) {
  // 2^29 float32 elements are 2^34 bits, which wrapped to 0 and passed the 128-bit limit.
  for (int count : {1 << 27, 1 << 29, 1 << 30}) {
    auto functor = EpilogueFunctor::linear_combination(f32, count, f32, f32);
    ASSERT_FALSE(functor) << "accepted elements_per_access " << count;
    EXPECT_TRUE(contains(functor.status().message(), "elements_per_access"));
  }
}

TEST(SizeLimits, AlignmentMessageStatesTheTrueWidth) {
  auto t = TensorDescription::make(f16, Layout::RowMajor, 1 << 30);
  ASSERT_FALSE(t);
  EXPECT_TRUE(contains(t.status().message(), "is 17179869184 bits")) << t.status().message();
}

// Values outside an enum's enumerators: each is refused naming its field, before any rule
// divides by the size of an unknown type (which was a SIGFPE).
TEST(SizeLimits, OutOfRangeEnumValuesAreRefusedByName) {
  const auto bad_type = static_cast<DataType>(200);
  auto wgmma_inst = MathInstruction::make({64, 128, 16}, bad_type, bad_type, f32, OpClass::TensorOp,
                                          MathOperation::multiply_add);
  ASSERT_FALSE(wgmma_inst);
  EXPECT_EQ(wgmma_inst.status().message(),
            "MathInstruction: element_a: expected a DataType, got the out-of-range value 200");
  auto op_class = MathInstruction::make({1, 1, 1}, f32, f32, f32, static_cast<OpClass>(7),
                                        MathOperation::multiply_add);
  ASSERT_FALSE(op_class);
  EXPECT_TRUE(contains(op_class.status().message(), "opcode_class"));

  auto tensor = TensorDescription::make(bad_type, Layout::RowMajor, 1);
  ASSERT_FALSE(tensor);
  EXPECT_TRUE(contains(tensor.status().message(), "element: expected a DataType"));
  auto layout = TensorDescription::make(f16, static_cast<Layout>(99), 8);
  ASSERT_FALSE(layout);
  EXPECT_TRUE(contains(layout.status().message(), "layout: expected a Layout"));

  auto epilogue = EpilogueFunctor::linear_combination(bad_type, 1, f32, f32);
  ASSERT_FALSE(epilogue);
  EXPECT_TRUE(contains(epilogue.status().message(), "element_output: expected a DataType"));
  auto activation =
      EpilogueFunctor::linear_combination_generic(static_cast<Activation>(50), f16, 8, f32, f32);
  ASSERT_FALSE(activation);
  EXPECT_TRUE(contains(activation.status().message(), "activation: expected an Activation"))
      << activation.status().message();

  auto sm90 = TileDescription::make_sm90({128, 128, 64}, 0, {1, 1, 1}, wgmma(128, bf16, 16),
                                         static_cast<KernelSchedule>(9));
  ASSERT_FALSE(sm90);
  EXPECT_TRUE(contains(sm90.status().message(), "kernel_schedule: expected a KernelSchedule"));

  auto tile = TileDescription::make({128, 128, 8}, 4, {2, 4, 1}, simt_f32()).value();
  auto t = TensorDescription::make(f32, Layout::RowMajor, 1).value();
  auto lc = EpilogueFunctor::linear_combination(f32, 1, f32, f32).value();
  auto gemm = GemmDescription::make(80, tile, t, t, t, lc, static_cast<Swizzle>(42));
  ASSERT_FALSE(gemm);
  EXPECT_TRUE(contains(gemm.status().message(), "swizzling_functor: expected a Swizzle"));
}

// A hand-built SM90 tile with Auto schedules is the caller's mistake, not a broken invariant.
TEST(SizeLimits, UnresolvedSm90SchedulesAreAnInvalidArgument) {
  TileDescription raw;
  raw.threadblock_shape = {128, 128, 64};
  raw.math_instruction = wgmma(128, bf16, 16);
  const Status status = raw.validate();
  ASSERT_FALSE(status);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(status.message(), "kernel_schedule: Auto")) << status.message();
}

// The performance model takes any description; absurd ones score 0 instead of dividing by a
// thread count or a shared-memory size that wrapped to 0.
TEST(SizeLimits, PerformanceModelSurvivesUnvalidatedDescriptions) {
  GemmDescription d;
  d.tile.math_instruction = simt_f32();
  d.tile.threadblock_shape = {128, 128, 8};
  d.tile.stages = 4;
  const discover::GemmShape shape{1024, 1024, 1024, 1};
  const discover::DeviceTraits device;
  for (const std::array<int, 3>& warps :
       {std::array<int, 3>{1 << 10, 1 << 10, 1 << 10}, std::array<int, 3>{1 << 30, 4, 1},
        std::array<int, 3>{0, 4, 1}, std::array<int, 3>{-2, 4, 1}}) {
    d.tile.warp_count = warps;
    EXPECT_EQ(discover::estimate(d, shape, device).score, 0);
  }
  d.tile.warp_count = {2, 4, 1};
  for (int stages : {-1, -8, 1 << 30}) {
    d.tile.stages = stages;
    EXPECT_EQ(discover::estimate(d, shape, device).score, 0) << stages;
  }
  d.tile.stages = 4;
  d.tile.threadblock_shape = {1 << 20, 1 << 20, 8};
  EXPECT_EQ(discover::estimate(d, shape, device).score, 0);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

// Audit of 2026-11-26 (MISC): a SIMT 2048x128 tile over 2x4 warps, 1024 accumulators per thread,
// was accepted. A thread holds at most 255 registers: accumulators that need more are refused.
TEST(SizeLimits, WarpTilesWhoseAccumulatorsCannotFitAThreadsRegistersAreRefused) {
  auto tile = TileDescription::make({2048, 128, 8}, 2, {2, 4, 1}, simt_f32());
  ASSERT_FALSE(tile) << "accepted " << tile->procedural_name();
  EXPECT_TRUE(contains(tile.status().message(),
                       "TileDescription: the warp tile [1024, 32, 8] (threadblock_shape / "
                       "warp_count) gives each of a warp's 32 threads 1024 float32 accumulators, "
                       "1024 32-bit registers; a thread has at most 255"))
      << tile.status().message();
  // f64 accumulators take two registers each: 128 of them are 256 registers.
  const auto dmma = MathInstruction::make({8, 8, 4}, f64, f64, f64, OpClass::TensorOp,
                                          MathOperation::multiply_add)
                        .value();
  auto f64_tile = TileDescription::make({128, 128, 16}, 3, {2, 2, 1}, dmma);
  ASSERT_FALSE(f64_tile);
  EXPECT_TRUE(contains(f64_tile.status().message(), "128 float64 accumulators, 256 32-bit"))
      << f64_tile.status().message();
  // CUTLASS's own largest tiles (128 accumulators per thread) stay valid.
  EXPECT_TRUE(TileDescription::make({256, 128, 8}, 3, {4, 2, 1}, simt_f32()));
  EXPECT_TRUE(TileDescription::make({128, 128, 16}, 3, {4, 2, 1}, dmma));
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
