// The SM80 GEMM emitter: one translation unit of GemmUniversal instantiations behind the C ABI.
#include <string>
#include <vector>

#include "emit/conv/sm80_conv_parts.hpp"
#include "emit/cutlass_names.hpp"
#include "emit/device_image_text.hpp"
#include "emit/evt/evt_text.hpp"
#include "emit/grouped/sm80_grouped_parts.hpp"
#include "emit/module_table.hpp"
#include "emit/sm80_gemm_parts.hpp"
#include "emit/sm90_gemm_parts.hpp"
#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {

namespace {

bool has_split_k_parallel(const std::vector<GemmEntry>& entries) {
  for (const GemmEntry& entry : entries) {
    if (entry.kind == GemmEntryKind::kSplitKParallel) return true;
  }
  return false;
}

bool has_grouped(const std::vector<GemmEntry>& entries) {
  for (const GemmEntry& entry : entries) {
    if (entry.description.is_grouped()) return true;
  }
  return false;
}

bool has_epilogue_graph(const std::vector<GemmEntry>& entries) {
  for (const GemmEntry& entry : entries) {
    if (entry.description.has_epilogue_graph()) return true;
  }
  return false;
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
  out += "#if defined(TILECRAFT_DEVICE_HALF)\n";
  out += kernel_definition_text(KernelForm::kKernel2, gemm + "::GemmKernel", kernel);
  out += "#else\n";
  const std::string common = ns + "::kTraits, &" + ns + "::fill_fusion";
  const std::string gemm_args = gemm + ", " + (sm80_evt_transposed(d) ? "true" : "false");
  out += "static int32_t tc_can_implement_" + i +
         "(const tc_args_header* args, char* error, size_t capacity) {\n";
  out += "  return tc_gemm::visitor_can_implement<" + gemm_args + ">(args, error, capacity, " +
         common + ");\n}\n";
  out += "static size_t tc_workspace_size_" + i + "(const tc_args_header* args) {\n";
  out += "  return tc_gemm::visitor_workspace_size<" + gemm_args + ">(args, \"" + kernel + "\", " +
         common + ");\n}\n";
  out += "static int32_t tc_run_" + i +
         "(const tc_args_header* args, void* workspace, void* stream, char* error,\n"
         "    size_t capacity) {\n";
  out += "  return tc_gemm::visitor_run<" + gemm_args +
         ">(args, workspace, stream, error, capacity, \"" + kernel + "\",\n      " + common;
  out += ");\n}\n";
  out += "#endif  // TILECRAFT_DEVICE_HALF\n";
  return out;
}

}  // namespace

std::string entry_name(const GemmEntry& entry) {
  std::string name = entry.description.procedural_name();
  if (entry.kind == GemmEntryKind::kSplitKParallel) name += "_splitk_parallel";
  return name;
}

std::string universal_entry_text(const GemmEntry& entry, int index) {
  if (entry.description.has_epilogue_graph()) return visitor_entry_text(entry, index);
  const std::string i = std::to_string(index);
  const GemmDescription& d = entry.description;
  const std::string gemm = "TcGemm" + i;
  std::string out;
  const std::string kernel = "tc_kernel_" + i;
  out += "using " + gemm + " = " +
         gemm_universal_type(d, {d.C.element, d.C.layout, cutlass_epilogue(d.epilogue)}) + ";\n";
  out += "#if defined(TILECRAFT_DEVICE_HALF)\n";
  out += kernel_definition_text(KernelForm::kKernel2, gemm + "::GemmKernel", kernel);
  out += "#else\n";
  out += "static int32_t tc_can_implement_" + i +
         "(const tc_args_header* args, char* error, size_t capacity) {\n";
  out += "  return tc_gemm::universal_can_implement<" + gemm + ">(args, error, capacity, " +
         std::to_string(epilogue_max_k(d.epilogue)) + ");\n}\n";
  out += "static size_t tc_workspace_size_" + i + "(const tc_args_header* args) {\n";
  out += "  return tc_gemm::universal_workspace_size<" + gemm + ">(args, \"" + kernel + "\");\n}\n";
  out += "static int32_t tc_run_" + i +
         "(const tc_args_header* args, void* workspace, void* stream, char* error,\n"
         "    size_t capacity) {\n";
  out += "  return tc_gemm::universal_run<" + gemm +
         ">(args, workspace, stream, error, capacity, \"" + kernel + "\");\n}\n";
  out += "#endif  // TILECRAFT_DEVICE_HALF\n";
  return out;
}

std::string emit_gemm_module(const std::vector<GemmEntry>& entries) {
  if (entries.empty()) throw Error(Status::invalid("emit: a module needs at least one entry"));
  const int arch = entries.front().description.arch;
  for (const GemmEntry& entry : entries) {
    if (entry.description.arch != arch) {
      throw Error(Status::invalid("emit: one module holds kernels of one arch; got " +
                                  std::to_string(arch) + " and " +
                                  std::to_string(entry.description.arch)));
    }
  }
  const bool conv = entries.front().description.is_conv();
  for (const GemmEntry& entry : entries) {
    if (entry.description.is_conv() != conv) {
      throw Error(Status::invalid("emit: one module holds convolutions or GEMMs, not both; got " +
                                  entry_name(entries.front()) + " and " + entry_name(entry)));
    }
  }
  if (arch == 90) return emit_sm90_gemm_module(entries);  // GEMMs and convolutions alike
  if (conv) return emit_sm80_conv_module(entries);
  const bool split_k = has_split_k_parallel(entries);
  const bool grouped = has_grouped(entries);
  const bool graphs = has_epilogue_graph(entries);
  for (const GemmEntry& entry : entries) {
    if (entry.kind == GemmEntryKind::kSplitKParallel && entry.description.has_epilogue_graph()) {
      throw Error(Status::unsupported(
          "emit: " + entry_name(entry) +
          ": an epilogue graph runs in the GEMM's own epilogue (CUTLASS's 2.x visitor); "
          "GemmSplitKParallel's reduction kernel cannot run it"));
    }
  }
  std::string out = "// ---- tilecraft generated module: " + std::to_string(entries.size()) +
                    " GEMM entr" + (entries.size() == 1 ? "y" : "ies") +
                    " (CUTLASS 2.x GemmUniversal, SM80)\n";
  out += module_open_text();
  bool plain = false;
  for (const GemmEntry& entry : entries) plain = plain || !entry.description.is_grouped();
  if (plain) out += jit_include("sm80_gemm.cuh");
  if (split_k) out += jit_include("sm80_split_k_parallel.cuh");
  if (grouped) out += jit_include("sm80_grouped.cuh");
  if (graphs) out += jit_include("sm80_epilogue_graph.cuh");
  for (size_t index = 0; index < entries.size(); ++index) {
    const GemmEntry& entry = entries[index];
    const int i = static_cast<int>(index);
    out += "\n// ---- entry " + std::to_string(index) + ": " + entry_name(entry) + "\n";
    if (entry.description.is_grouped()) {
      out += sm80_grouped_entry_text(entry, i);
    } else {
      out += entry.kind == GemmEntryKind::kUniversal ? universal_entry_text(entry, i)
                                                     : split_k_parallel_entry_text(entry, i);
    }
  }
  std::string kernels;
  for (size_t index = 0; index < entries.size(); ++index) {
    const std::string i = std::to_string(index);
    if (entries[index].description.is_grouped()) {
      kernels += "      &tc_image::kernel<TcGrouped" + i + ">(\"tc_kernel_" + i + "\"),\n";
    } else if (entries[index].kind == GemmEntryKind::kUniversal) {
      kernels += "      &tc_gemm::gemm_kernel<TcGemm" + i + ">(\"tc_kernel_" + i + "\"),\n";
    } else {
      kernels +=
          "      &tc_gemm::gemm_kernel<TcPartial" + i + ">(\"tc_kernel_" + i + "_partial\"),\n";
      kernels += "      &tc_image::kernel<TcReduction" + i + "::ReductionKernel>(\"tc_kernel_" + i +
                 "_reduction\"),\n";
    }
  }
  out += "#if !defined(TILECRAFT_DEVICE_HALF)\n";
  out += module_table_text(entries);
  out += module_verify_text(kernels);
  out += "#endif  // !TILECRAFT_DEVICE_HALF\n";
  out += module_close_text();
  return out;
}

std::vector<std::string> gemm_module_arch_flags(int arch) {
  if (arch >= 90) {
    const std::string a = std::to_string(arch);
    return {"-gencode=arch=compute_" + a + "a,code=sm_" + a + "a"};
  }
  // One front-end pass for compute_<arch>; ptxas then builds SASS for the arch itself and for
  // sm_90 (Hopper runs SM80-style kernels natively), plus PTX for anything newer.
  const std::string a = std::to_string(arch);
  return {"-gencode=arch=compute_" + a + ",code=sm_" + a,
          "-gencode=arch=compute_" + a + ",code=sm_90",
          "-gencode=arch=compute_" + a + ",code=compute_" + a};
}

}  // namespace tilecraft::emit
