// Epilogue graphs, an epilogue option of GEMMs, as a registered kind of kernel
// (emit/family_emitter.hpp): the SM80 entry (a DefaultGemmWithVisitor kernel behind
// GemmUniversalAdapter) and the SM90 fusion (a visitor tree in the collective epilogue).
#include <string>

#include "emit/cutlass_names.hpp"
#include "emit/evt/evt_text.hpp"
#include "emit/family_emitter.hpp"
#include "emit/sm80_gemm_parts.hpp"

namespace tilecraft::emit {
namespace {

Layout transposed_layout(Layout layout) {
  return layout == Layout::RowMajor ? Layout::ColumnMajor : Layout::RowMajor;
}

// "typename cutlass::gemm::kernel::DefaultGemmWithVisitor<...>::GemmKernel": the CUTLASS 2.x
// GEMM kernel whose epilogue is the visitor tree `callbacks` (sm80_evt_types_text) writing D
// itself; for a column-major D, the kernel of the transposed problem (A and B exchanged and
// transposed, a row-major output).
std::string gemm_with_visitor_kernel_type(const GemmDescription& d, const std::string& callbacks) {
  const MathInstruction& math = d.tile.math_instruction;
  TensorDescription a = d.A, b = d.B;
  if (sm80_evt_transposed(d)) {
    a = {d.B.element, transposed_layout(d.B.layout), d.B.alignment};
    b = {d.A.element, transposed_layout(d.A.layout), d.A.alignment};
  }
  std::string out = "typename cutlass::gemm::kernel::DefaultGemmWithVisitor<\n" +
                    sm80_operand_line(a) + sm80_operand_line(b);
  out += "    " + cutlass_element(d.C.element) + ", " + cutlass_layout(Layout::RowMajor) + ", " +
         std::to_string(d.C.alignment) + ",\n";
  out += "    " + cutlass_element(math.element_accumulator) + ", " +
         cutlass_element(d.epilogue.element_epilogue) + ", " + cutlass_op_class(math.opcode_class) +
         ", cutlass::arch::Sm80,\n";
  out += sm80_tile_shapes(d);
  out += "    " + callbacks + ", " + cutlass_swizzle(d.swizzle) + ", " +
         std::to_string(d.tile.stages) + ", " + cutlass_math_operator(math.math_operation) + ", " +
         std::to_string(kSm80EvtEpilogueStages) + ">::GemmKernel";
  return out;
}

// An entry whose epilogue is an epilogue graph: a DefaultGemmWithVisitor kernel (behind
// GemmUniversalAdapter) whose visitor tree reads the graph's operands and writes D and the
// graph's other outputs (reductions' outputs are reset to their identity before each run).
std::string visitor_entry_text(const GemmEntry& entry, int index) {
  const GemmDescription& d = entry.description;
  const std::string i = std::to_string(index);
  const std::string ns = "tc_entry_" + i;
  std::string out = "namespace " + ns + " {\n";
  out += "using ElementD = " + cutlass_element(d.C.element) + ";\n";
  out += "using ElementCompute = " + cutlass_element(d.epilogue.element_epilogue) + ";\n";
  out += sm80_evt_types_text(d);
  out += "using GemmKernel = " + gemm_with_visitor_kernel_type(d, "FusionCallbacks") + ";\n";
  out += "using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;\n";
  out += "#if !defined(TILECRAFT_DEVICE_HALF)\n";
  out += sm80_evt_fill_text(d);
  out += "#endif  // !TILECRAFT_DEVICE_HALF\n";
  out += "}  // namespace " + ns + "\n";
  const std::string gemm = "TcGemm" + i;
  const std::string kernel = "tc_kernel_" + i;
  out += "using " + gemm + " = " + ns + "::Gemm;\n";
  const std::string common = ns + "::kTraits, &" + ns + "::fill_fusion";
  const std::string gemm_args = gemm + ", " + (sm80_evt_transposed(d) ? "true" : "false");
  const std::string host = abi_functions_text(
      i, "tc_gemm::visitor_can_implement<" + gemm_args + ">(args, error, capacity, " + common + ")",
      "tc_gemm::visitor_workspace_size<" + gemm_args + ">(args, \"" + kernel + "\", " + common +
          ")",
      "tc_gemm::visitor_run<" + gemm_args + ">(args, workspace, stream, error, capacity, \"" +
          kernel + "\",\n      " + common + ")");
  return out +
         halves_text(kernel_definition_text(KernelForm::kKernel2, gemm + "::GemmKernel", kernel),
                     host);
}

const FamilyEmitterRegistration kEpilogueGraphEmitter{{
    .name = "epilogue_graph",
    .takes = [](const GemmDescription& d) { return d.has_epilogue_graph(); },
    .sm80_entry = visitor_entry_text,
    .sm80_header = "sm80_epilogue_graph.cuh",
    .sm80_on_gemm = true,
    .sm90_extra_header = "evt_functions.cuh",
    .sm90_fusion = sm90_evt_types_text,
    .sm90_fill = sm90_evt_fill_text,
    .sm90_source_c = sm90_evt_source_c_operand,
}};

}  // namespace
}  // namespace tilecraft::emit
