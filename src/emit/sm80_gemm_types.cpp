#include <string>

#include "emit/cutlass_names.hpp"
#include "emit/sm80_gemm_parts.hpp"

namespace tilecraft::emit {

std::string sm80_operand_line(const TensorDescription& operand) {
  return "    " + cutlass_element(operand.element) + ", " + cutlass_layout(operand.layout) +
         ", cutlass::ComplexTransform::kNone, " + std::to_string(operand.alignment) + ",\n";
}

std::string sm80_tile_shapes(const GemmDescription& d) {
  return "    " + cutlass_gemm_shape(d.tile.threadblock_shape) + ",\n    " +
         cutlass_gemm_shape(d.tile.warp_shape()) + ",\n    " +
         cutlass_gemm_shape(d.tile.math_instruction.instruction_shape) + ",\n";
}

std::string sm80_leading_arguments(const GemmDescription& d, const GemmOutput& output,
                                   const std::string& swizzle) {
  const MathInstruction& math = d.tile.math_instruction;
  // Tensor memory types come from the operands; tf32 math on f32 tensors is OpMultiplyAdd on
  // float elements (CUTLASS converts while loading).
  std::string out =
      "    " + cutlass_element(d.A.element) + ", " + cutlass_layout(d.A.layout) + ",\n";
  out += "    " + cutlass_element(d.B.element) + ", " + cutlass_layout(d.B.layout) + ",\n";
  out += "    " + cutlass_element(output.element) + ", " + cutlass_layout(output.layout) + ",\n";
  out += "    " + cutlass_element(math.element_accumulator) + ", " +
         cutlass_op_class(math.opcode_class) + ", cutlass::arch::Sm80,\n";
  out += sm80_tile_shapes(d);
  return out + "    " + output.epilogue + ",\n    " + swizzle + ",\n";
}

std::string gemm_universal_type(const GemmDescription& d, const GemmOutput& output) {
  return "cutlass::gemm::device::GemmUniversal<\n" +
         sm80_leading_arguments(d, output, cutlass_swizzle(d.swizzle)) + "    " +
         std::to_string(d.tile.stages) + ", " + std::to_string(d.A.alignment) + ", " +
         std::to_string(d.B.alignment) + ", " +
         cutlass_math_operator(d.tile.math_instruction.math_operation) + ">";
}

int epilogue_max_k(const EpilogueFunctor& epilogue) {
  return epilogue.kind == EpilogueKind::FastLinearCombinationClamp ? kFastLinearCombinationClampMaxK
                                                                   : 0;
}

}  // namespace tilecraft::emit
