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
  out += "#if defined(TILECRAFT_DEVICE_HALF)\n";
  out += kernel_definition_text(KernelForm::kKernel, kernel_type, kernel);
  out += "#else\n";
  out += "static int32_t tc_can_implement_" + i +
         "(const tc_args_header* args, char* error, size_t capacity) {\n";
  out += "  return tc_grouped::can_implement<" + kernel_type + ">(args, error, capacity, " + max_k +
         ");\n}\n";
  out += "static size_t tc_workspace_size_" + i + "(const tc_args_header* args) {\n";
  out += "  return tc_grouped::workspace_size<" + kernel_type + ">(args, \"" + kernel + "\");\n}\n";
  out += "static int32_t tc_run_" + i +
         "(const tc_args_header* args, void* workspace, void* stream, char* error,\n"
         "    size_t capacity) {\n";
  out += "  return tc_grouped::run<" + kernel_type +
         ">(args, workspace, stream, error, capacity, \"" + kernel + "\", " + max_k + ");\n}\n";
  out += "#endif  // TILECRAFT_DEVICE_HALF\n";
  return out;
}

}  // namespace tilecraft::emit
