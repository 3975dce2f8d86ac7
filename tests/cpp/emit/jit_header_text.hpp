// The text of a header that generated modules include (include/tilecraft/jit), from the source
// tree.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "compile/jit_headers.hpp"

namespace tilecraft::emit::testing {

// The repository's root folder.
inline std::filesystem::path source_root() {
  return std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path();
}

inline std::string jit_header_text(const std::string& name) {
  std::ifstream in(source_root() / "include" / "tilecraft" / "jit" / name, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The "(missing)" lines of the module's key text: tilecraft headers it includes that the source
// tree lacks ("" when there are none).
inline std::string missing_jit_headers(const std::string& module) {
  const std::string root = (source_root() / "include").string();
  Result<compile::JitHeaders> headers = compile::read_jit_headers(root, root);
  if (!headers) return headers.status().message();
  std::string missing;
  std::istringstream lines(compile::jit_header_key_text(*headers, module));
  for (std::string line; std::getline(lines, line);) {
    if (line.find("(missing)") != std::string::npos) missing += line + "\n";
  }
  return missing;
}

}  // namespace tilecraft::emit::testing
