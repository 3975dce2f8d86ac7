// SM80 descriptions that passed validation and did not compile, found by the randomized test's
// nvcc sample (describe_randomized_test.cpp, TILECRAFT_RANDOM_SEED=7): CUTLASS's multistage
// mainloop cannot copy their operand tiles to shared memory, or its clamp does not know the
// output type. Each is now refused, naming what to change; CUTLASS's own generator tiles (the
// configuration space) all still pass.
#include <gtest/gtest.h>

#include <string>

#include "tilecraft/describe/gemm_operation.hpp"
#include "tilecraft/discover/gemm_space.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;

MathInstruction mma(DataType t) {
  return MathInstruction::make({16, 8, 16}, t, t, f32, OpClass::TensorOp,
                               MathOperation::multiply_add)
      .value();
}

Result<GemmDescription> gemm(std::array<int, 3> tile, int stages, std::array<int, 3> warps,
                             DataType t, Layout a, Layout b, int alignment,
                             EpilogueKind kind = EpilogueKind::LinearCombination,
                             DataType out = f32) {
  auto tile_description = TileDescription::make(tile, stages, warps, mma(t));
  if (!tile_description) return tile_description.status();
  const int out_alignment =
      128 / size_in_bits(out) < alignment ? 128 / size_in_bits(out) : alignment;
  auto epilogue = kind == EpilogueKind::LinearCombinationClamp
                      ? EpilogueFunctor::linear_combination_clamp(out, out_alignment, f32, f32)
                      : EpilogueFunctor::linear_combination(out, out_alignment, f32, f32);
  if (!epilogue) return epilogue.status();
  return GemmDescription::make(
      80, *tile_description, TensorDescription::make(t, a, alignment).value(),
      TensorDescription::make(t, b, alignment).value(),
      TensorDescription::make(out, Layout::RowMajor, out_alignment).value(), *epilogue,
      Swizzle::IdentitySwizzle1);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// 8 warps over a 64-wide, 16-deep row-major B tile: CUTLASS's "Number of iterations must be
// non-zero". (The sample's own 16-warp tile, [256, 64, 32] with [4, 4, 1], is refused before
// this rule, for its 64 x 16 warp tile.)
TEST(Sm80OperandLoads, TooManyWarpsForTheTileAreRefused) {
  auto d = gemm({256, 64, 16}, 4, {4, 2, 1}, f16, Layout::RowMajor, Layout::RowMajor, 8);
  ASSERT_FALSE(d);
  EXPECT_TRUE(contains(d.status().message(),
                       "tile_description: threadblock_shape [256, 64, 16] "
                       "with warp_count [4, 2, 1] (256 threads)"))
      << d.status().message();
  EXPECT_TRUE(contains(d.status().message(), "8 warps cannot share evenly"))
      << d.status().message();
  auto sample = gemm({256, 64, 32}, 4, {4, 4, 1}, f16, Layout::RowMajor, Layout::RowMajor, 2);
  ASSERT_FALSE(sample);
  EXPECT_TRUE(contains(sample.status().message(), "the warp tile [64, 16, 32]"))
      << sample.status().message();
}

// A row-major B whose N is not a whole number of 128-byte rows: no shared-memory layout of such
// rows (the sample's N 40, an incomplete type; its 128 x 40 warp tile is refused first).
TEST(Sm80OperandLoads, CongruousOperandExtentMustFitItsLayout) {
  auto d = gemm({128, 96, 32}, 3, {2, 1, 1}, bf16, Layout::RowMajor, Layout::RowMajor, 4);
  ASSERT_FALSE(d);
  EXPECT_TRUE(contains(d.status().message(),
                       "N 96 must be 16, 32 or a multiple of 64 (128 bytes of bfloat16) for a "
                       "RowMajor B"))
      << d.status().message();
  auto sample = gemm({256, 40, 32}, 3, {2, 1, 1}, bf16, Layout::ColumnMajor, Layout::RowMajor, 4);
  ASSERT_FALSE(sample);
  EXPECT_TRUE(contains(sample.status().message(), "the warp tile [128, 40, 32]"))
      << sample.status().message();
}

// A SIMT warp tile 32 x 52 (the sample's [128, 104, 8] with [4, 2, 1]): its N is not a multiple
// of the warp's 8 threads along N.
TEST(Sm80OperandLoads, SimtWarpTilesFitTheWarpsThreadsAndLanes) {
  auto simt =
      MathInstruction::make({1, 1, 1}, f32, f32, f32, OpClass::Simt, MathOperation::multiply_add)
          .value();
  auto tile = TileDescription::make({128, 104, 8}, 4, {4, 2, 1}, simt);
  ASSERT_FALSE(tile);
  EXPECT_TRUE(contains(tile.status().message(),
                       "SIMT warp tile [32, 52, 8] (threadblock_shape / warp_count) must be a "
                       "multiple of 4 in M and of 8 in N"))
      << tile.status().message();
  auto lanes = TileDescription::make({128, 48, 8}, 4, {1, 1, 1}, simt);  // threads 32 x 6
  ASSERT_FALSE(lanes);
  EXPECT_TRUE(contains(lanes.status().message(), "not a whole number of its 4 x 4 lanes"))
      << lanes.status().message();
}

// A tf32 warp tile 128 x 8 (the sample's [128, 64, 16] with [1, 8, 1]): the epilogue's thread map
// of so narrow a warp tile is empty (zero-sized arrays).
TEST(Sm80OperandLoads, TensorOpWarpTilesAreCutlassGeneratorSized) {
  auto tf32_math = MathInstruction::make({16, 8, 8}, tf32, tf32, f32, OpClass::TensorOp,
                                         MathOperation::multiply_add)
                       .value();
  auto tile = TileDescription::make({128, 64, 16}, 4, {1, 8, 1}, tf32_math);
  ASSERT_FALSE(tile);
  EXPECT_EQ(tile.status().code(), StatusCode::kNotSupported);
  EXPECT_TRUE(contains(tile.status().message(), "the warp tile [128, 8, 16]"))
      << tile.status().message();
}

// Two warps copying a 128 x 128 A in 2-element accesses: 128 accesses per thread, past the 64
// predicates of CUTLASS's global-memory iterator ("Too many predicates", TILECRAFT_RANDOM_SEED=7
// again, after the rules above; its 256 x 128 warp tile is now refused earlier, by registers).
TEST(Sm80OperandLoads, ThreadsHoldAtMost64AccessPredicates) {
  auto d = gemm({128, 64, 128}, 3, {2, 1, 1}, f16, Layout::ColumnMajor, Layout::ColumnMajor, 2);
  ASSERT_FALSE(d);
  EXPECT_TRUE(contains(d.status().message(),
                       "each thread would make 128 global-memory accesses per K-tile, more than "
                       "the 64 predicates CUTLASS's iterator holds"))
      << d.status().message();
  EXPECT_TRUE(gemm({128, 64, 128}, 3, {4, 2, 1}, f16, Layout::ColumnMajor, Layout::ColumnMajor, 2))
      << gemm({128, 64, 128}, 3, {4, 2, 1}, f16, Layout::ColumnMajor, Layout::ColumnMajor, 2)
             .status()
             .message();
}

// cutlass::platform::numeric_limits<float> has no lowest(): LinearCombinationClamp cannot
// write float outputs.
TEST(Sm80OperandLoads, ClampedOutputsAreTypesCutlassKnowsTheRangeOf) {
  for (DataType out : {f32, bf16, f64}) {
    auto functor = EpilogueFunctor::linear_combination_clamp(out, 1, f32, f32);
    ASSERT_FALSE(functor) << long_name(out);
    EXPECT_TRUE(contains(functor.status().message(),
                         "element_output must be int8, uint8, int32 or float16"))
        << functor.status().message();
  }
  EXPECT_TRUE(EpilogueFunctor::linear_combination_clamp(f16, 8, f32, f32));
  EXPECT_TRUE(EpilogueFunctor::linear_combination_clamp(s8, 16, s32, f32));
}

TEST(Sm80OperandLoads, EveryGeneratorTileStillPasses) {
  const discover::GemmSpace& space = discover::GemmSpace::of(80);
  EXPECT_EQ(space.size(), 13656u);
  for (uint32_t i : space.all_instances()) {
    const GemmDescription d = space.description(i);
    ASSERT_TRUE(d.validate()) << d.procedural_name() << ": " << d.validate().message();
  }
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
