#include "compile/jit_headers.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "compile/sha256.hpp"

namespace tilecraft::compile {
namespace {

namespace fs = std::filesystem;

// The names of the `#include "tilecraft/..."` lines of `text`.
std::vector<std::string> tilecraft_includes(const std::string& text) {
  static constexpr std::string_view kInclude = "#include \"tilecraft/";
  std::vector<std::string> names;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(kInclude, 0) != 0) continue;
    const size_t start = line.find('"') + 1;
    const size_t end = line.find('"', start);
    if (end != std::string::npos) names.push_back(line.substr(start, end - start));
  }
  return names;
}

}  // namespace

Result<JitHeaders> read_jit_headers(const std::string& root, const std::string& setting) {
  std::error_code error;
  if (!fs::is_regular_file(root + "/tilecraft/jit/module_prelude.cuh", error)) {
    return Status::unsupported(setting +
                               ": expected a folder holding tilecraft/jit/module_prelude.cuh "
                               "(the headers generated modules include), got '" +
                               root + "'");
  }
  JitHeaders headers;
  headers.root = root;
  for (const char* folder : {"tilecraft/jit", "tilecraft/abi"}) {
    for (const fs::directory_entry& entry : fs::directory_iterator(root + "/" + folder, error)) {
      if (!entry.is_regular_file(error)) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      if (!in) return Status::unsupported(setting + ": could not read " + entry.path().string());
      const std::string name = std::string(folder) + "/" + entry.path().filename().string();
      headers.files[name] = {to_hex(sha256(text.str())), tilecraft_includes(text.str())};
    }
    if (error) return Status::unsupported(setting + ": could not list " + root + "/" + folder);
  }
  return headers;
}

std::string jit_header_key_text(const JitHeaders& headers, const std::string& source) {
  std::set<std::string> reached;
  std::vector<std::string> pending = tilecraft_includes(source);
  while (!pending.empty()) {
    const std::string name = std::move(pending.back());
    pending.pop_back();
    if (!reached.insert(name).second) continue;
    if (auto found = headers.files.find(name); found != headers.files.end()) {
      pending.insert(pending.end(), found->second.includes.begin(), found->second.includes.end());
    }
  }
  std::string text;
  for (const std::string& name : reached) {
    auto found = headers.files.find(name);
    text += name + " " + (found == headers.files.end() ? "(missing)" : found->second.sha256) + "\n";
  }
  return text;
}

}  // namespace tilecraft::compile
