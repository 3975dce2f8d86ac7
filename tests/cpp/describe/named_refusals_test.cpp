// Refusals that named no argument, or a wrong one, until the randomized test of the description
// layer (describe_randomized_test.cpp) found them: each message now names what to change.
#include <gtest/gtest.h>

#include <string>

#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(NamedRefusals, WgmmaShapeAndTypesNameTheirFields) {
  auto k = MathInstruction::make({64, 128, 32}, bf16, bf16, f32, OpClass::TensorOp,
                                 MathOperation::multiply_add);
  ASSERT_FALSE(k);
  EXPECT_TRUE(contains(k.status().message(), "): instruction_shape: K must be 16 for bfloat16"))
      << k.status().message();
  auto types = MathInstruction::make({64, 128, 16}, bf16, f64, f32, OpClass::TensorOp,
                                     MathOperation::multiply_add);
  ASSERT_FALSE(types);
  EXPECT_TRUE(contains(types.status().message(),
                       "element_a, element_b, element_accumulator: no wgmma takes bfloat16 x "
                       "float64 with a float32 accumulator"))
      << types.status().message();
}

TEST(NamedRefusals, Sm80InstructionTypesNameTheirFields) {
  auto math = MathInstruction::make({16, 8, 16}, f16, f16, e4m3, OpClass::TensorOp,
                                    MathOperation::multiply_add);
  ASSERT_FALSE(math);
  EXPECT_TRUE(contains(math.status().message(),
                       "MathInstruction: element_a, element_accumulator: no TensorOp [16, 8, 16] "
                       "instruction takes float16 operands with a float8_e4m3 accumulator"))
      << math.status().message();
}

TEST(NamedRefusals, Sm90TileWithoutAWgmmaInstructionNamesMathInstruction) {
  auto simt =
      MathInstruction::make({1, 1, 1}, f32, f32, f32, OpClass::Simt, MathOperation::multiply_add)
          .value();
  auto tile = TileDescription::make_sm90({128, 128, 32}, 0, {1, 1, 1}, simt);
  ASSERT_FALSE(tile);
  EXPECT_TRUE(contains(tile.status().message(), "TileDescription: math_instruction: an SM90 tile"))
      << tile.status().message();
}

// An fp8 output was refused for "bias, aux output, per-tensor scales and gelu_tanh/clamp",
// none of which the functor asked for.
TEST(NamedRefusals, Fp8OutputOfAClampingEpilogueSaysSo) {
  auto functor = EpilogueFunctor::fast_linear_combination_clamp(e4m3, 16);
  ASSERT_FALSE(functor);
  EXPECT_EQ(functor.status().message(),
            "FastLinearCombinationClamp: element_output float8_e4m3 (an fp8 output): offered on "
            "LinearCombination and LinearCombinationGeneric (SM90 epilogues) only");
}

// A functor's accumulator is what a math instruction accumulates in; an fp8 accumulator was
// accepted (and then failed to match every instruction).
TEST(NamedRefusals, EpilogueAccumulatorIsOneAnInstructionHas) {
  for (DataType acc : {e4m3, e5m2, bf16, s8, u8, tf32}) {
    auto functor = EpilogueFunctor::linear_combination(f16, 8, acc, f32);
    ASSERT_FALSE(functor) << long_name(acc);
    EXPECT_TRUE(contains(functor.status().message(),
                         "element_accumulator must be float64, float32, float16 or int32"))
        << functor.status().message();
  }
  EXPECT_TRUE(EpilogueFunctor::linear_combination(f16, 8, f16, f16));
  EXPECT_TRUE(EpilogueFunctor::linear_combination(f64, 1, f64, f64));
}

TEST(NamedRefusals, Tf32OutputNamesElementOutput) {
  auto functor = EpilogueFunctor::linear_combination(tf32, 4, f32, f32);
  ASSERT_FALSE(functor);
  EXPECT_TRUE(contains(functor.status().message(), "element_output: no epilogue writes tfloat32"));
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
