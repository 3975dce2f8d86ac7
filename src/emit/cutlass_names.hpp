// CUTLASS 2.x spellings of tilecraft's description values: the only place where a DataType,
// Layout, math operation, epilogue or swizzle becomes the text of a CUTLASS type.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "tilecraft/core/types.hpp"
#include "tilecraft/describe/epilogue.hpp"
#include "tilecraft/describe/math_instruction.hpp"
#include "tilecraft/describe/swizzle.hpp"

namespace tilecraft::emit {

// "less_equal" -> "LessEqual": how CUTLASS (and tc_evt) spell many of tilecraft's enum names.
std::string camel_case(std::string_view snake_case);
// "float", "cutlass::half_t", "int8_t", ...
std::string cutlass_element(DataType type);
// "cutlass::layout::RowMajor", "cutlass::layout::ColumnMajorInterleaved<32>",
// "cutlass::layout::TensorNHWC", ...
std::string cutlass_layout(Layout layout);
// "cutlass::arch::OpClassSimt" or "cutlass::arch::OpClassTensorOp"
std::string cutlass_op_class(OpClass op_class);
// "cutlass::arch::OpMultiplyAdd", "cutlass::arch::OpMultiplyAddFastF32", ...
std::string cutlass_math_operator(MathOperation operation);
// "cutlass::gemm::GemmShape<128, 128, 32>"
std::string cutlass_gemm_shape(const std::array<int, 3>& shape);
// The activation's class template, e.g. "cutlass::epilogue::thread::ReLu"; "" for identity.
std::string cutlass_activation(Activation activation);
// The same, "cutlass::epilogue::thread::Identity" for identity.
std::string cutlass_activation_functor(Activation activation);
// The epilogue functor type, e.g.
// "cutlass::epilogue::thread::LinearCombination<cutlass::half_t, 8, float, float>".
std::string cutlass_epilogue(const EpilogueFunctor& epilogue);
// The threadblock swizzle type GemmUniversal is instantiated with.
std::string cutlass_swizzle(Swizzle swizzle);

}  // namespace tilecraft::emit
