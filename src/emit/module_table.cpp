#include "emit/module_table.hpp"

#include "emit/sm80_gemm_parts.hpp"

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

}  // namespace

std::string module_table_text(const std::vector<GemmEntry>& entries) {
  std::string table;
  for (size_t index = 0; index < entries.size(); ++index) {
    const std::string s = std::to_string(index);
    table += "    {" + quoted(entry_name(entries[index])) + ",\n     " +
             quoted(gemm_metadata(entries[index])) + ",\n     &tc_can_implement_" + s +
             ", &tc_workspace_size_" + s + ", &tc_run_" + s + "},\n";
  }
  std::string out = "\n// ---- the module table\n";
  out += "static const tc_kernel_entry tc_entries[] = {\n" + table + "};\n\n";
  out +=
      "extern \"C\" __attribute__((visibility(\"default\"))) const tc_module_table*\n"
      "tilecraft_module_table(void) {\n";
  out += "  static const tc_module_table table = {TILECRAFT_ABI_VERSION, " +
         std::to_string(entries.size()) + "u, tc_entries};\n";
  out += "  return &table;\n}\n";
  return out;
}

}  // namespace tilecraft::emit
