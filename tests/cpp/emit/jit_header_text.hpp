// The text of a header that generated modules include (include/tilecraft/jit), from the source
// tree.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace tilecraft::emit::testing {

inline std::string jit_header_text(const std::string& name) {
  const std::filesystem::path root =
      std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path();
  std::ifstream in(root / "include" / "tilecraft" / "jit" / name, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The tilecraft/jit headers that `module` includes and the source tree lacks.
inline std::string missing_jit_headers(const std::string& module) {
  static constexpr std::string_view kInclude = "#include \"tilecraft/jit/";
  std::string missing;
  for (size_t at = module.find(kInclude); at != std::string::npos;
       at = module.find(kInclude, at + 1)) {
    const size_t start = at + kInclude.size();
    const std::string name = module.substr(start, module.find('"', start) - start);
    if (jit_header_text(name).empty()) missing += name + " ";
  }
  return missing;
}

}  // namespace tilecraft::emit::testing
