#include <gtest/gtest.h>

#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;

MathInstruction f16_inst() {
  return MathInstruction::make({16, 8, 16}, f16, f16, f32, OpClass::TensorOp,
                               MathOperation::multiply_add)
      .value();
}

MathInstruction simt_f32() {
  return MathInstruction::make({1, 1, 1}, f32, f32, f32, OpClass::Simt, MathOperation::multiply_add)
      .value();
}

std::string message_of(const Status& status) { return status.message(); }

TEST(TileDescription, SeedExampleIsValid) {
  auto tile = TileDescription::make({128, 128, 8}, 4, {2, 4, 1}, simt_f32());
  ASSERT_TRUE(tile) << tile.status().message();
  EXPECT_EQ(tile->warp_shape(), (std::array<int, 3>{64, 32, 8}));
  EXPECT_EQ(tile->threads(), 256);
}

TEST(TileDescription, RejectsWarpsThatDoNotDivide) {
  auto tile = TileDescription::make({128, 96, 32}, 3, {2, 5, 1}, f16_inst());
  ASSERT_FALSE(tile);
  EXPECT_NE(message_of(tile.status()).find("does not divide threadblock_shape"), std::string::npos);
}

TEST(TileDescription, RejectsWarpTileNotMultipleOfInstruction) {
  auto tile = TileDescription::make({64, 64, 32}, 3, {8, 1, 1}, f16_inst());
  ASSERT_FALSE(tile);
  EXPECT_NE(message_of(tile.status()).find("not a multiple of the instruction shape"),
            std::string::npos)
      << message_of(tile.status());
}

TEST(TileDescription, RejectsTooMuchSharedMemory) {
  auto tile = TileDescription::make({256, 256, 64}, 5, {2, 2, 1}, f16_inst());
  ASSERT_FALSE(tile);
  EXPECT_NE(message_of(tile.status()).find("KiB of shared memory"), std::string::npos);
}

TEST(TileDescription, RejectsBadStagesAndTooManyThreads) {
  EXPECT_FALSE(TileDescription::make({128, 128, 32}, 1, {2, 2, 1}, f16_inst()));
  EXPECT_FALSE(TileDescription::make({256, 256, 8}, 3, {8, 8, 1}, simt_f32()));
  EXPECT_FALSE(TileDescription::make({128, 128, 32}, 3, {2, 2, 2}, f16_inst()));
}

TEST(TileDescription, TwoStagesAreTheMainloopOf16BitOperandsOnly) {
  EXPECT_TRUE(TileDescription::make({128, 128, 32}, 2, {2, 2, 1}, f16_inst()));
  auto tf32 = MathInstruction::make({16, 8, 8}, DataType::tf32, DataType::tf32, f32,
                                    OpClass::TensorOp, MathOperation::multiply_add)
                  .value();
  auto tile = TileDescription::make({128, 128, 16}, 2, {2, 2, 1}, tf32);
  ASSERT_FALSE(tile);
  EXPECT_NE(message_of(tile.status()).find("got stages 2 with tfloat32 operands"),
            std::string::npos)
      << message_of(tile.status());
}

TEST(TensorDescription, Validation) {
  EXPECT_TRUE(TensorDescription::make(f16, Layout::RowMajor, 8));
  EXPECT_FALSE(TensorDescription::make(f16, Layout::RowMajor, 16));  // 256 bits
  EXPECT_FALSE(TensorDescription::make(f16, Layout::RowMajor, 3));
  EXPECT_FALSE(TensorDescription::make(f16, Layout::RowMajor, 0));
  auto interleaved = TensorDescription::make(f32, Layout::RowMajorInterleaved32, 4);
  ASSERT_FALSE(interleaved);
  EXPECT_NE(message_of(interleaved.status()).find("8-bit integers only"), std::string::npos);
}

TEST(Epilogue, Validation) {
  EXPECT_TRUE(EpilogueFunctor::linear_combination(f16, 8, f32, f32));
  EXPECT_FALSE(EpilogueFunctor::fast_linear_combination_clamp(f16, 8));
  EXPECT_FALSE(EpilogueFunctor::linear_combination_generic(Activation::identity, f16, 8, f32, f32));
  EXPECT_FALSE(EpilogueFunctor::linear_combination_generic(Activation::relu, f16, 8, f32, s32));
  EXPECT_FALSE(EpilogueFunctor::linear_combination(f16, 16, f32, f32));
  auto gen = EpilogueFunctor::linear_combination_generic(Activation::leaky_relu, f16, 8, f32, f32);
  ASSERT_TRUE(gen);
  EXPECT_FALSE(validate_epilogue_params(*gen, {1.0, 0.0, {}}));
  EXPECT_TRUE(validate_epilogue_params(*gen, {1.0, 0.0, {0.1}}));
}

struct OperationFixture : ::testing::Test {
  TileDescription tile = TileDescription::make({128, 128, 32}, 3, {2, 2, 1}, f16_inst()).value();
  TensorDescription a = TensorDescription::make(f16, Layout::RowMajor, 8).value();
  TensorDescription b = TensorDescription::make(f16, Layout::ColumnMajor, 8).value();
  TensorDescription c = TensorDescription::make(f16, Layout::RowMajor, 8).value();
  EpilogueFunctor epi = EpilogueFunctor::linear_combination(f16, 8, f32, f32).value();
};

TEST_F(OperationFixture, ValidAndNamed) {
  auto op = GemmDescription::make(80, tile, a, b, c, epi, Swizzle::IdentitySwizzle1);
  ASSERT_TRUE(op) << op.status().message();
  EXPECT_EQ(
      op->procedural_name(),
      "tilecraft_sm80_tensorop_16816gemm_f16f16_f32acc_f16_128x128_32x3_w2x2x1_tnt_align8x8x8");
  auto relu = EpilogueFunctor::linear_combination_generic(Activation::relu, f16, 8, f32, f32);
  auto op2 = GemmDescription::make(80, tile, a, b, c, *relu, Swizzle::IdentitySwizzle4);
  EXPECT_NE(op->procedural_name(), op2->procedural_name());
}

TEST_F(OperationFixture, RejectsMismatches) {
  EXPECT_FALSE(GemmDescription::make(75, tile, a, b, c, epi, Swizzle::IdentitySwizzle1));
  auto bf = TensorDescription::make(bf16, Layout::RowMajor, 8).value();
  auto wrong_a = GemmDescription::make(80, tile, bf, b, c, epi, Swizzle::IdentitySwizzle1);
  ASSERT_FALSE(wrong_a);
  EXPECT_EQ(message_of(wrong_a.status()).rfind("A: element bfloat16", 0), 0u);
  auto c4 = TensorDescription::make(f16, Layout::RowMajor, 4).value();
  EXPECT_FALSE(GemmDescription::make(80, tile, a, b, c4, epi, Swizzle::IdentitySwizzle1));
  auto a1 = TensorDescription::make(f16, Layout::RowMajor, 1).value();
  auto narrow = GemmDescription::make(80, tile, a1, b, c, epi, Swizzle::IdentitySwizzle1);
  ASSERT_FALSE(narrow);
  EXPECT_NE(message_of(narrow.status()).find("copy at least 32 bits"), std::string::npos);
  auto two_stages = TileDescription::make({128, 128, 32}, 2, {2, 2, 1}, f16_inst()).value();
  auto c1 = TensorDescription::make(f16, Layout::RowMajor, 1).value();
  auto e1 = EpilogueFunctor::linear_combination(f16, 1, f32, f32).value();
  EXPECT_TRUE(GemmDescription::make(80, two_stages, a1, a1, c1, e1, Swizzle::IdentitySwizzle1))
      << "the two-stage mainloop loads any alignment";
  auto grouped = GemmDescription::make_grouped(80, two_stages, a1, a1, c1, e1,
                                               Swizzle::IdentitySwizzle1, SchedulerMode::Device);
  ASSERT_FALSE(grouped);
  EXPECT_NE(message_of(grouped.status()).find("take stages >= 3"), std::string::npos)
      << message_of(grouped.status());
  EpilogueGraph graph;
  graph.store(graph.accumulator(), "D", f16);
  auto plain = GemmDescription::make(80, two_stages, a1, a1, c1, e1, Swizzle::IdentitySwizzle1);
  auto with_graph = plain->with_epilogue_graph(graph);
  ASSERT_FALSE(with_graph);
  EXPECT_NE(message_of(with_graph.status()).find("epilogue graphs take stages >= 3"),
            std::string::npos)
      << message_of(with_graph.status());
  auto x = TensorDescription::make(f16, Layout::TensorNHWC, 8).value();
  auto e8 = EpilogueFunctor::linear_combination(f16, 8, f32, f32).value();
  auto conv =
      GemmDescription::make_conv2d(ConvKind::Fprop, IteratorAlgorithm::Optimized, 80, two_stages, x,
                                   x, x, StrideSupport::Strided, e8, Swizzle::IdentitySwizzle1);
  ASSERT_FALSE(conv);
  EXPECT_NE(
      message_of(conv.status()).find("Conv2d with iterator_algorithm optimized take stages >= 3"),
      std::string::npos)
      << message_of(conv.status());
  // The analytic iterator has two-stage forms, with accesses of one element (3 channels).
  auto x1 = TensorDescription::make(f16, Layout::TensorNHWC, 1).value();
  auto conv1 =
      GemmDescription::make_conv2d(ConvKind::Fprop, IteratorAlgorithm::Analytic, 80, two_stages, x1,
                                   x1, x1, StrideSupport::Strided, e1, Swizzle::IdentitySwizzle1);
  EXPECT_TRUE(conv1) << message_of(conv1.status());
  auto multistage1 =
      GemmDescription::make_conv2d(ConvKind::Fprop, IteratorAlgorithm::Analytic, 80, tile, x1, x1,
                                   x1, StrideSupport::Strided, e1, Swizzle::IdentitySwizzle1);
  ASSERT_FALSE(multistage1);
  EXPECT_NE(
      message_of(multistage1.status()).find("multistage tensor-op mainloops copy at least 32"),
      std::string::npos)
      << message_of(multistage1.status());
  auto nhwc = TensorDescription::make(f16, Layout::TensorNHWC, 8).value();
  EXPECT_FALSE(GemmDescription::make(80, tile, nhwc, b, c, epi, Swizzle::IdentitySwizzle1));
  auto e32 = EpilogueFunctor::linear_combination(f16, 8, f16, f16).value();
  EXPECT_FALSE(GemmDescription::make(80, tile, a, b, c, e32, Swizzle::IdentitySwizzle1));
}

TEST(GemmDescription, InterleavedInt8NeedsTheCanonicalTriple) {
  auto inst = MathInstruction::make({16, 8, 32}, s8, s8, s32, OpClass::TensorOp,
                                    MathOperation::multiply_add_saturate)
                  .value();
  auto tile = TileDescription::make({128, 128, 64}, 3, {2, 2, 1}, inst).value();
  auto a = TensorDescription::make(s8, Layout::ColumnMajorInterleaved32, 16).value();
  auto b = TensorDescription::make(s8, Layout::RowMajorInterleaved32, 16).value();
  auto c = TensorDescription::make(s8, Layout::ColumnMajorInterleaved32, 16).value();
  auto epi = EpilogueFunctor::linear_combination_clamp(s8, 16, s32, f32).value();
  EXPECT_TRUE(GemmDescription::make(80, tile, a, b, c, epi, Swizzle::IdentitySwizzle1));
  auto row = TensorDescription::make(s8, Layout::RowMajor, 16).value();
  auto col = TensorDescription::make(s8, Layout::ColumnMajor, 16).value();
  EXPECT_TRUE(GemmDescription::make(80, tile, row, col, row, epi, Swizzle::IdentitySwizzle1));
  auto nn = GemmDescription::make(80, tile, col, col, row, epi, Swizzle::IdentitySwizzle1);
  ASSERT_FALSE(nn);
  EXPECT_NE(message_of(nn.status()).find("take A RowMajor and B ColumnMajor (TN)"),
            std::string::npos);
  auto bad = GemmDescription::make(80, tile, a, b, row, epi, Swizzle::IdentitySwizzle1);
  ASSERT_FALSE(bad);
  EXPECT_NE(message_of(bad.status()).find("interleaved int8 GEMM takes"), std::string::npos);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
