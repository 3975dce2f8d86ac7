// The SM80 GEMM emitter: one translation unit of GemmUniversal instantiations behind the C ABI.
#include <string>
#include <vector>

#include "emit/cutlass_names.hpp"
#include "emit/gemm_adapter_text.hpp"
#include "emit/sm80_gemm_parts.hpp"
#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {

namespace {

// Names and metadata are made of [A-Za-z0-9_=;x.]; refuse anything that would need escaping.
std::string quoted(const std::string& text) {
  for (char c : text) {
    if (c == '"' || c == '\\' || c == '\n' || c == '?') {
      throw Error(Status(StatusCode::kInternal, "emit: cannot quote '" + text + "'"));
    }
  }
  return "\"" + text + "\"";
}

bool has_split_k_parallel(const std::vector<GemmEntry>& entries) {
  for (const GemmEntry& entry : entries) {
    if (entry.kind == GemmEntryKind::kSplitKParallel) return true;
  }
  return false;
}

}  // namespace

std::string entry_name(const GemmEntry& entry) {
  std::string name = entry.description.procedural_name();
  if (entry.kind == GemmEntryKind::kSplitKParallel) name += "_splitk_parallel";
  return name;
}

std::string universal_entry_text(const GemmEntry& entry, int index) {
  const std::string i = std::to_string(index);
  const GemmDescription& d = entry.description;
  const std::string gemm = "TcGemm" + i;
  std::string out;
  out += "using " + gemm + " = " +
         gemm_universal_type(d, {d.C.element, d.C.layout, cutlass_epilogue(d.epilogue)}) + ";\n";
  out += "static int32_t tc_can_implement_" + i +
         "(const tc_gemm_args* args, char* error, size_t capacity) {\n";
  out += "  return tc_gemm::universal_can_implement<" + gemm + ">(args, error, capacity, " +
         std::to_string(epilogue_max_k(d.epilogue)) + ");\n}\n";
  out += "static size_t tc_workspace_size_" + i + "(const tc_gemm_args* args) {\n";
  out += "  return tc_gemm::universal_workspace_size<" + gemm + ">(args);\n}\n";
  out += "static int32_t tc_run_" + i +
         "(const tc_gemm_args* args, void* workspace, void* stream, char* error,\n"
         "    size_t capacity) {\n";
  out += "  return tc_gemm::universal_run<" + gemm +
         ">(args, workspace, stream, error, capacity);\n}\n";
  return out;
}

std::string emit_gemm_module(const std::vector<GemmEntry>& entries) {
  const bool split_k = has_split_k_parallel(entries);
  std::string out = kModuleAbiHeaderText;
  out += "\n// ---- tilecraft generated module: " + std::to_string(entries.size()) + " GEMM entr" +
         (entries.size() == 1 ? "y" : "ies") + " (CUTLASS 2.x GemmUniversal, SM80)\n";
  out += gemm_module_includes(split_k);
  out += gemm_universal_adapter_text();
  if (split_k) out += gemm_split_k_parallel_adapter_text();

  std::string table;
  for (size_t index = 0; index < entries.size(); ++index) {
    const GemmEntry& entry = entries[index];
    const std::string name = entry_name(entry);
    const int i = static_cast<int>(index);
    out += "\n// ---- entry " + std::to_string(index) + ": " + name + "\n";
    out += entry.kind == GemmEntryKind::kUniversal ? universal_entry_text(entry, i)
                                                   : split_k_parallel_entry_text(entry, i);
    const std::string s = std::to_string(index);
    table += "    {" + quoted(name) + ",\n     " + quoted(gemm_metadata(entry)) +
             ",\n     &tc_can_implement_" + s + ", &tc_workspace_size_" + s + ", &tc_run_" + s +
             "},\n";
  }

  out += "\n// ---- the module table\n";
  out += "static const tc_kernel_entry tc_entries[] = {\n" + table + "};\n\n";
  out +=
      "extern \"C\" __attribute__((visibility(\"default\"))) const tc_module_table*\n"
      "tilecraft_module_table(void) {\n";
  out += "  static const tc_module_table table = {TILECRAFT_ABI_VERSION, " +
         std::to_string(entries.size()) + "u, tc_entries};\n";
  out += "  return &table;\n}\n";
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
