#include "tilecraft/describe/math_instruction.hpp"

#include <gtest/gtest.h>

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;
using enum MathOperation;

TEST(MathInstruction, AcceptsEverySeedTableRow) {
  for (const MathInstructionRule& rule : math_instruction_rules()) {
    auto inst =
        MathInstruction::make(rule.instruction_shape, rule.element_ab, rule.element_ab,
                              rule.element_accumulator, rule.opcode_class, rule.math_operation);
    EXPECT_TRUE(inst) << inst.status().message();
  }
  // With CUDA-core f16 (hgemm), and f16 / bf16 into f32 (the direct convolution's).
  EXPECT_EQ(math_instruction_rules().size(), 17u);
}

TEST(MathInstruction, RejectsShapeOfOtherClass) {
  auto inst = MathInstruction::make({1, 1, 1}, f16, f16, f32, OpClass::TensorOp, multiply_add);
  ASSERT_FALSE(inst);
  EXPECT_NE(inst.status().message().find("instruction_shape [1, 1, 1] is not a TensorOp"),
            std::string::npos)
      << inst.status().message();
  EXPECT_NE(inst.status().message().find("[16, 8, 16]"), std::string::npos);
}

TEST(MathInstruction, RejectsTypesTheShapeDoesNotTake) {
  auto inst = MathInstruction::make({16, 8, 16}, bf16, bf16, bf16, OpClass::TensorOp, multiply_add);
  ASSERT_FALSE(inst);
  EXPECT_NE(inst.status().message().find("bfloat16 operands with a bfloat16 accumulator"),
            std::string::npos)
      << inst.status().message();
}

TEST(MathInstruction, RejectsWrongMathOperation) {
  auto inst = MathInstruction::make({16, 8, 32}, s8, s8, s32, OpClass::TensorOp, multiply_add);
  ASSERT_FALSE(inst);
  EXPECT_NE(inst.status().message().find("expected one of multiply_add_saturate"),
            std::string::npos)
      << inst.status().message();
  EXPECT_FALSE(
      MathInstruction::make({16, 8, 8}, f16, f16, f32, OpClass::TensorOp, multiply_add_fast_f32));
  EXPECT_FALSE(
      MathInstruction::make({1, 1, 1}, f32, f32, f32, OpClass::Simt, multiply_add_fast_f32));
}

TEST(MathInstruction, RejectsMixedOperandTypes) {
  auto inst = MathInstruction::make({16, 8, 16}, f16, bf16, f32, OpClass::TensorOp, multiply_add);
  ASSERT_FALSE(inst);
  EXPECT_NE(inst.status().message().find("float16 and bfloat16"), std::string::npos);
}

TEST(MathInstruction, ShapeName) {
  auto inst = MathInstruction::make({16, 8, 16}, f16, f16, f32, OpClass::TensorOp, multiply_add);
  EXPECT_EQ(inst->shape_name(), "16816");
  auto simt = MathInstruction::make({1, 1, 1}, f32, f32, f32, OpClass::Simt, multiply_add);
  EXPECT_EQ(simt->shape_name(), "");
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
