// Grouped GEMMs as a registered family of the shared emitters (emit/family_emitter.hpp): SM80
// GemmGrouped entries, SM90 pointer-array GEMMs read through their own Adapter. On SM80 the
// kernel type comes from DefaultGemmGrouped; the host half builds its Params (and, for the Host
// scheduler, the precomputed schedule) and launches it from the module's device image.
#include <string>

#include "emit/cutlass_names.hpp"
#include "emit/device_image_text.hpp"
#include "emit/family_emitter.hpp"
#include "emit/sm80_gemm_parts.hpp"

namespace tilecraft::emit {
namespace {

// Entry `index`: the kernel type TcGrouped<index>, its device definition and the three static ABI
// functions.
std::string sm80_grouped_entry_text(const GemmEntry& entry, int index) {
  const std::string i = std::to_string(index);
  const GemmDescription& d = entry.description;
  const MathInstruction& math = d.tile.math_instruction;
  const std::string kernel_type = "TcGrouped" + i;
  const std::string kernel = "tc_kernel_" + i;
  const std::string max_k = std::to_string(epilogue_max_k(d.epilogue));
  std::string out =
      "using " + kernel_type + " = typename cutlass::gemm::kernel::DefaultGemmGrouped<\n";
  out += sm80_operand_line(d.A) + sm80_operand_line(d.B);
  out += "    " + cutlass_element(d.C.element) + ", " + cutlass_layout(d.C.layout) + ", " +
         cutlass_element(math.element_accumulator) + ", " + cutlass_op_class(math.opcode_class) +
         ", cutlass::arch::Sm80,\n";
  out += sm80_tile_shapes(d);
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

std::string sm80_grouped_kernels(const GemmEntry&, int index) {
  const std::string i = std::to_string(index);
  return "      &tc_image::kernel<TcGrouped" + i + ">(\"tc_kernel_" + i + "\"),\n";
}

const FamilyEmitterRegistration kGroupedEmitter{{
    .name = "grouped",
    .takes = [](const GemmDescription& d) { return d.is_grouped(); },
    .sm80_entry = sm80_grouped_entry_text,
    .sm80_kernels = sm80_grouped_kernels,
    .sm80_header = "sm80_grouped.cuh",
    .sm90_header = "sm90_grouped.cuh",
}};

}  // namespace
}  // namespace tilecraft::emit
