#include "emit/cutlass_names.hpp"

#include <gtest/gtest.h>

#include "emit/emit_test_descriptions.hpp"

namespace tilecraft::emit {
namespace {
namespace TILECRAFT_TEST_FILE {

TEST(CutlassNames, Elements) {
  EXPECT_EQ(cutlass_element(DataType::f64), "double");
  EXPECT_EQ(cutlass_element(DataType::f32), "float");
  EXPECT_EQ(cutlass_element(DataType::tf32), "cutlass::tfloat32_t");
  EXPECT_EQ(cutlass_element(DataType::f16), "cutlass::half_t");
  EXPECT_EQ(cutlass_element(DataType::bf16), "cutlass::bfloat16_t");
  EXPECT_EQ(cutlass_element(DataType::s8), "int8_t");
  EXPECT_EQ(cutlass_element(DataType::u8), "uint8_t");
  EXPECT_EQ(cutlass_element(DataType::s32), "int32_t");
  EXPECT_EQ(cutlass_element(DataType::e4m3), "cutlass::float_e4m3_t");
  EXPECT_EQ(cutlass_element(DataType::e5m2), "cutlass::float_e5m2_t");
}

TEST(CutlassNames, Layouts) {
  EXPECT_EQ(cutlass_layout(Layout::RowMajor), "cutlass::layout::RowMajor");
  EXPECT_EQ(cutlass_layout(Layout::ColumnMajor), "cutlass::layout::ColumnMajor");
  EXPECT_EQ(cutlass_layout(Layout::RowMajorInterleaved32),
            "cutlass::layout::RowMajorInterleaved<32>");
  EXPECT_EQ(cutlass_layout(Layout::ColumnMajorInterleaved32),
            "cutlass::layout::ColumnMajorInterleaved<32>");
  EXPECT_EQ(cutlass_layout(Layout::TensorNHWC), "cutlass::layout::TensorNHWC");
  EXPECT_EQ(cutlass_layout(Layout::TensorC32RSK32), "cutlass::layout::TensorCxRSKx<32>");
}

TEST(CutlassNames, MathOperators) {
  EXPECT_EQ(cutlass_math_operator(MathOperation::multiply_add), "cutlass::arch::OpMultiplyAdd");
  EXPECT_EQ(cutlass_math_operator(MathOperation::multiply_add_saturate),
            "cutlass::arch::OpMultiplyAddSaturate");
  EXPECT_EQ(cutlass_math_operator(MathOperation::multiply_add_fast_f32),
            "cutlass::arch::OpMultiplyAddFastF32");
  EXPECT_EQ(cutlass_math_operator(MathOperation::multiply_add_fast_f16),
            "cutlass::arch::OpMultiplyAddFastF16");
  EXPECT_EQ(cutlass_math_operator(MathOperation::multiply_add_fast_bf16),
            "cutlass::arch::OpMultiplyAddFastBF16");
}

TEST(CutlassNames, Epilogues) {
  using testing::epilogue;
  using enum DataType;
  EXPECT_EQ(cutlass_epilogue(epilogue(EpilogueKind::LinearCombination, f16, 8, f32, f32)),
            "cutlass::epilogue::thread::LinearCombination<cutlass::half_t, 8, float, float>");
  EXPECT_EQ(cutlass_epilogue(epilogue(EpilogueKind::LinearCombinationClamp, s8, 8, s32, f32)),
            "cutlass::epilogue::thread::LinearCombinationClamp<int8_t, 8, int32_t, float>");
  EXPECT_EQ(cutlass_epilogue(epilogue(EpilogueKind::FastLinearCombinationClamp, s8, 16, s32, f32)),
            "cutlass::epilogue::thread::FastLinearCombinationClamp<int8_t, 16>");
  EXPECT_EQ(cutlass_epilogue(epilogue(EpilogueKind::LinearCombinationGeneric, f32, 4, f32, f32,
                                      Activation::leaky_relu)),
            "cutlass::epilogue::thread::LinearCombinationGeneric<"
            "cutlass::epilogue::thread::LeakyReLU, float, 4, float, float>");
}

TEST(CutlassNames, EveryActivationHasAFunctor) {
  EXPECT_EQ(cutlass_activation(Activation::relu), "cutlass::epilogue::thread::ReLu");
  EXPECT_EQ(cutlass_activation(Activation::tanh), "cutlass::epilogue::thread::Tanh");
  EXPECT_EQ(cutlass_activation(Activation::sigmoid), "cutlass::epilogue::thread::Sigmoid");
  EXPECT_EQ(cutlass_activation(Activation::silu), "cutlass::epilogue::thread::SiLu");
  EXPECT_EQ(cutlass_activation(Activation::hardswish), "cutlass::epilogue::thread::HardSwish");
  EXPECT_EQ(cutlass_activation(Activation::gelu), "cutlass::epilogue::thread::GELU");
}

TEST(CutlassNames, Swizzles) {
  EXPECT_EQ(cutlass_swizzle(Swizzle::IdentitySwizzle4),
            "cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<4>");
  // GemmHorizontalThreadblockSwizzle does not compile in GemmUniversal (no
  // get_tile_offset(int)); its split-K twin maps tiles the same way.
  EXPECT_EQ(cutlass_swizzle(Swizzle::HorizontalSwizzle),
            "cutlass::gemm::threadblock::GemmSplitKHorizontalThreadblockSwizzle");
  EXPECT_EQ(cutlass_swizzle(Swizzle::BatchedIdentitySwizzle),
            "cutlass::gemm::threadblock::GemmBatchedIdentityThreadblockSwizzle");
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::emit
