#include <string>

#include "emit/cutlass_names.hpp"
#include "emit/device_image_text.hpp"
#include "emit/grouped/sm80_grouped_parts.hpp"
#include "emit/sm80_gemm_parts.hpp"

namespace tilecraft::emit {

std::string sm80_grouped_entry_text(const GemmEntry& entry, int index) {
  const std::string i = std::to_string(index);
  const GemmDescription& d = entry.description;
  const MathInstruction& math = d.tile.math_instruction;
  const std::string kernel_type = "TcGrouped" + i;
  const std::string kernel = "tc_kernel_" + i;
  const std::string max_k = std::to_string(epilogue_max_k(d.epilogue));
  std::string out =
      "using " + kernel_type + " = typename cutlass::gemm::kernel::DefaultGemmGrouped<\n";
  out += "    " + cutlass_element(d.A.element) + ", " + cutlass_layout(d.A.layout) +
         ", cutlass::ComplexTransform::kNone, " + std::to_string(d.A.alignment) + ",\n";
  out += "    " + cutlass_element(d.B.element) + ", " + cutlass_layout(d.B.layout) +
         ", cutlass::ComplexTransform::kNone, " + std::to_string(d.B.alignment) + ",\n";
  out += "    " + cutlass_element(d.C.element) + ", " + cutlass_layout(d.C.layout) + ", " +
         cutlass_element(math.element_accumulator) + ", " + cutlass_op_class(math.opcode_class) +
         ", cutlass::arch::Sm80,\n";
  out += "    " + cutlass_gemm_shape(d.tile.threadblock_shape) + ",\n";
  out += "    " + cutlass_gemm_shape(d.tile.warp_shape()) + ",\n";
  out += "    " + cutlass_gemm_shape(math.instruction_shape) + ",\n";
  out += "    " + cutlass_epilogue(d.epilogue) + ",\n";
  out += "    " + cutlass_swizzle(d.swizzle) + ", " + std::to_string(d.tile.stages) + ",\n";
  out += std::string("    cutlass::gemm::kernel::GroupScheduleMode::") +
         (d.scheduler_mode == SchedulerMode::Host ? "kHostPrecompute" : "kDeviceOnly") + ",\n";
  out += "    " + cutlass_math_operator(math.math_operation) + ">::GemmKernel;\n";
  const std::string host = abi_functions_text(
      i, "tc_grouped::can_implement<" + kernel_type + ">(args, error, capacity, " + max_k + ")",
      "tc_grouped::workspace_size<" + kernel_type + ">(args, \"" + kernel + "\")",
      "tc_grouped::run<" + kernel_type + ">(args, workspace, stream, error, capacity, \"" + kernel +
          "\", " + max_k + ")");
  return out + halves_text(kernel_definition_text(KernelForm::kKernel, kernel_type, kernel), host);
}

}  // namespace tilecraft::emit
