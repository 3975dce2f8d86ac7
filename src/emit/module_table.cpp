#include "emit/module_table.hpp"

#include "emit/device_image_text.hpp"
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

std::string module_text(const std::vector<GemmEntry>& entries, std::string_view noun,
                        std::string_view form, std::string_view prelude,
                        const std::vector<std::string>& headers, EntryText entry_text,
                        EntryText entry_kernels) {
  std::string out = "// ---- tilecraft generated module: " + std::to_string(entries.size()) + " " +
                    std::string(noun) + (entries.size() == 1 ? " entry (" : " entries (") +
                    std::string(form) + ")\n" + std::string(prelude) + module_open_text();
  for (const std::string& header : headers) out += jit_include(header);
  std::string kernels, table;
  for (size_t index = 0; index < entries.size(); ++index) {
    out += "\n// ---- entry " + std::to_string(index) + ": " + entry_name(entries[index]) + "\n";
    out += entry_text(entries[index], static_cast<int>(index));
    kernels += entry_kernels(entries[index], static_cast<int>(index));
  }
  for (size_t index = 0; index < entries.size(); ++index) {
    const std::string s = std::to_string(index);
    table += "    {" + quoted(entry_name(entries[index])) + ",\n     " +
             quoted(gemm_metadata(entries[index])) + ",\n     &tc_can_implement_" + s +
             ", &tc_workspace_size_" + s + ", &tc_run_" + s + "},\n";
  }
  out += "#if !defined(TILECRAFT_DEVICE_HALF)\n\n// ---- the module table\n";
  out += "static const tc_kernel_entry tc_entries[] = {\n" + table + "};\n\n";
  out +=
      "extern \"C\" __attribute__((visibility(\"default\"))) const tc_module_table*\n"
      "tilecraft_module_table(void) {\n";
  out += "  static const tc_module_table table = {TILECRAFT_ABI_VERSION, " +
         std::to_string(entries.size()) + "u, tc_entries};\n";
  out += "  return &table;\n}\n";
  out += module_verify_text(kernels);
  out += "#endif  // !TILECRAFT_DEVICE_HALF\n";
  out += module_close_text();
  return out;
}

}  // namespace tilecraft::emit
