#include <string>

#include "emit/cutlass_names.hpp"
#include "emit/evt/evt_text.hpp"
#include "emit/sm80_gemm_parts.hpp"

namespace tilecraft::emit {

std::string gemm_universal_type(const GemmDescription& d, const GemmOutput& output) {
  const MathInstruction& math = d.tile.math_instruction;
  // Tensor memory types come from the operands; tf32 math on f32 tensors is OpMultiplyAdd on
  // float elements (CUTLASS converts while loading).
  std::string out = "cutlass::gemm::device::GemmUniversal<\n";
  out += "    " + cutlass_element(d.A.element) + ", " + cutlass_layout(d.A.layout) + ",\n";
  out += "    " + cutlass_element(d.B.element) + ", " + cutlass_layout(d.B.layout) + ",\n";
  out += "    " + cutlass_element(output.element) + ", " + cutlass_layout(output.layout) + ",\n";
  out += "    " + cutlass_element(math.element_accumulator) + ", " +
         cutlass_op_class(math.opcode_class) + ", cutlass::arch::Sm80,\n";
  out += "    " + cutlass_gemm_shape(d.tile.threadblock_shape) + ",\n";
  out += "    " + cutlass_gemm_shape(d.tile.warp_shape()) + ",\n";
  out += "    " + cutlass_gemm_shape(math.instruction_shape) + ",\n";
  out += "    " + output.epilogue + ",\n";
  out += "    " + cutlass_swizzle(d.swizzle) + ",\n";
  out += "    " + std::to_string(d.tile.stages) + ", " + std::to_string(d.A.alignment) + ", " +
         std::to_string(d.B.alignment) + ", " + cutlass_math_operator(math.math_operation) + ">";
  return out;
}

namespace {

Layout transposed_layout(Layout layout) {
  return layout == Layout::RowMajor ? Layout::ColumnMajor : Layout::RowMajor;
}

}  // namespace

std::string gemm_with_visitor_kernel_type(const GemmDescription& d, const std::string& callbacks) {
  const MathInstruction& math = d.tile.math_instruction;
  // A column-major D is the transpose of the row-major D^T = B^T A^T the kernel computes.
  const bool transposed = sm80_evt_transposed(d);
  TensorDescription a = d.A, b = d.B;
  if (transposed) {
    a = {d.B.element, transposed_layout(d.B.layout), d.B.alignment};
    b = {d.A.element, transposed_layout(d.A.layout), d.A.alignment};
  }
  const std::string none = "cutlass::ComplexTransform::kNone";
  std::string out = "typename cutlass::gemm::kernel::DefaultGemmWithVisitor<\n";
  out += "    " + cutlass_element(a.element) + ", " + cutlass_layout(a.layout) + ", " + none +
         ", " + std::to_string(a.alignment) + ",\n";
  out += "    " + cutlass_element(b.element) + ", " + cutlass_layout(b.layout) + ", " + none +
         ", " + std::to_string(b.alignment) + ",\n";
  out += "    " + cutlass_element(d.C.element) + ", " + cutlass_layout(Layout::RowMajor) + ", " +
         std::to_string(d.C.alignment) + ",\n";
  out += "    " + cutlass_element(math.element_accumulator) + ", " +
         cutlass_element(d.epilogue.element_epilogue) + ", " + cutlass_op_class(math.opcode_class) +
         ", cutlass::arch::Sm80,\n";
  out += "    " + cutlass_gemm_shape(d.tile.threadblock_shape) + ",\n";
  out += "    " + cutlass_gemm_shape(d.tile.warp_shape()) + ",\n";
  out += "    " + cutlass_gemm_shape(math.instruction_shape) + ",\n";
  out += "    " + callbacks + ", " + cutlass_swizzle(d.swizzle) + ", " +
         std::to_string(d.tile.stages) + ", " + cutlass_math_operator(math.math_operation) + ", " +
         std::to_string(kSm80EvtEpilogueStages) + ">::GemmKernel";
  return out;
}

int epilogue_max_k(const EpilogueFunctor& epilogue) {
  return epilogue.kind == EpilogueKind::FastLinearCombinationClamp ? kFastLinearCombinationClampMaxK
                                                                   : 0;
}

}  // namespace tilecraft::emit
