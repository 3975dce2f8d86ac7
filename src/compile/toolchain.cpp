#include "compile/toolchain.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "compile/process.hpp"
#include "compile/sha256.hpp"
#include "tilecraft/abi/module_abi.h"

#ifndef TILECRAFT_VERSION
#define TILECRAFT_VERSION "unknown"
#endif

namespace tilecraft::compile {
namespace {

namespace fs = std::filesystem;

#define TILECRAFT_STRINGIFY_IMPL(x) #x
#define TILECRAFT_STRINGIFY(x) TILECRAFT_STRINGIFY_IMPL(x)
constexpr const char* kAbiVersion = TILECRAFT_STRINGIFY(TILECRAFT_ABI_VERSION);

// Environment variables that nvcc itself reads and that change what it generates. Read once per
// process, with the toolchain, never on a launch path.
constexpr const char* kNvccEnvironment[] = {"NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS",
                                            "NVCC_CCBIN"};

bool is_executable_file(const std::string& path) {
  std::error_code error;
  return !path.empty() && fs::is_regular_file(path, error) && access(path.c_str(), X_OK) == 0;
}

std::string read_text(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  *ok = static_cast<bool>(in) || in.eof();
  return text.str();
}

std::string find_host_compiler() {
  if (const char* ccbin = std::getenv("NVCC_CCBIN"); ccbin && *ccbin) return ccbin;
  const char* path = std::getenv("PATH");
  std::string all = path ? path : "/usr/bin";
  for (const char* name : {"g++", "c++", "clang++"}) {
    size_t start = 0;
    while (start <= all.size()) {
      size_t end = all.find(':', start);
      if (end == std::string::npos) end = all.size();
      std::string candidate = all.substr(start, end - start) + "/" + name;
      if (end > start && is_executable_file(candidate)) return candidate;
      start = end + 1;
    }
  }
  return "";
}

std::string define_value(const std::string& header, const std::string& name) {
  std::string pattern = "#define " + name + " ";
  size_t at = header.find(pattern);
  if (at == std::string::npos) return "?";
  size_t begin = at + pattern.size();
  size_t end = header.find_first_of(" \t\r\n", begin);
  return header.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

Result<std::string> identify_nvcc(const std::string& nvcc) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::lock_guard lock(mutex);
  if (auto found = versions.find(nvcc); found != versions.end()) return found->second;
  Result<ProcessResult> run = run_process({nvcc, "--version"});
  if (!run) return run.status();
  if (run->exit_code != 0 || run->output.find("Cuda compilation tools") == std::string::npos) {
    return Status::unsupported("TILECRAFT_NVCC: expected an nvcc that answers --version, got '" +
                               nvcc + "', which exited with " + std::to_string(run->exit_code) +
                               " and printed: " + run->output.substr(0, 500));
  }
  versions.emplace(nvcc, run->output);
  return run->output;
}

Status nvcc_not_found(const Settings& s) {
  if (!s.nvcc.empty()) {
    return Status::unsupported("TILECRAFT_NVCC: expected an executable nvcc, got '" + s.nvcc +
                               "', which does not exist or is not executable");
  }
  return Status::unsupported(
      "no nvcc found: searched $TILECRAFT_NVCC, $CUDA_HOME/bin, $CUDA_PATH/bin, "
      "$CUDA_INSTALL_PATH/bin, every folder of $PATH and /usr/local/cuda/bin; set TILECRAFT_NVCC "
      "to the nvcc to use");
}

}  // namespace

Result<std::shared_ptr<const Toolchain>> find_toolchain(const Settings& s) {
  if (!is_executable_file(s.nvcc)) return nvcc_not_found(s);
  std::string version_header = s.cutlass_dir + "/include/cutlass/version.h";
  std::error_code error;
  if (s.cutlass_dir.empty() || !fs::is_regular_file(version_header, error)) {
    return Status::unsupported(
        "TILECRAFT_CUTLASS_DIR: expected a folder holding include/cutlass/version.h, got '" +
        s.cutlass_dir + "'" + (s.cutlass_dir.empty() ? " (empty)" : "") +
        "; searched TILECRAFT_CUTLASS_DIR, CUTLASS_DIR and the headers tilecraft was built with; "
        "run scripts/setup.sh or set TILECRAFT_CUTLASS_DIR");
  }

  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const Toolchain>> known;
  std::string memo_key = s.nvcc + '\n' + s.cutlass_dir;
  {
    std::lock_guard lock(mutex);
    if (auto found = known.find(memo_key); found != known.end()) return found->second;
  }

  auto toolchain = std::make_shared<Toolchain>();
  toolchain->nvcc = s.nvcc;
  Result<std::string> version = identify_nvcc(s.nvcc);
  if (!version) return version.status();
  toolchain->nvcc_version = *version;
  toolchain->host_compiler = find_host_compiler();
  if (!toolchain->host_compiler.empty()) {
    toolchain->host_compiler_real = fs::weakly_canonical(toolchain->host_compiler, error).string();
  }
  toolchain->cutlass_dir = s.cutlass_dir;
  bool ok = false;
  std::string header = read_text(version_header, &ok);
  if (!ok) {
    return Status::unsupported("TILECRAFT_CUTLASS_DIR: could not read " + version_header);
  }
  toolchain->cutlass_version = define_value(header, "CUTLASS_MAJOR") + "." +
                               define_value(header, "CUTLASS_MINOR") + "." +
                               define_value(header, "CUTLASS_PATCH");
  toolchain->cutlass_version_sha256 = sha256_hex(header);
  for (const char* name : kNvccEnvironment) {
    if (const char* value = std::getenv(name); value && *value) {
      toolchain->nvcc_environment.push_back(std::string(name) + "=" + value);
    }
  }

  std::lock_guard lock(mutex);
  known.emplace(memo_key, toolchain);
  return std::shared_ptr<const Toolchain>(toolchain);
}

std::vector<std::string> compile_flags(const Toolchain& toolchain, const CompileRequest& request) {
  std::vector<std::string> flags = {
      "-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr", "-Xcompiler=-fPIC", "-shared",
      // One CUDA runtime per process (the one libtilecraft and the frameworks use), and only the
      // module table exported.
      "-cudart=shared", "-Xcompiler=-fvisibility=hidden"};
  if (!toolchain.host_compiler.empty()) {
    flags.push_back("-ccbin");
    flags.push_back(toolchain.host_compiler);
  }
  flags.push_back("-I" + toolchain.cutlass_dir + "/include");
  flags.push_back("-I" + toolchain.cutlass_dir + "/tools/util/include");
  flags.insert(flags.end(), request.arch_flags.begin(), request.arch_flags.end());
  return flags;
}

std::vector<std::string> compile_command(const Toolchain& toolchain, const CompileRequest& request,
                                         const std::string& source_path,
                                         const std::string& output_path) {
  std::vector<std::string> command = {toolchain.nvcc};
  std::vector<std::string> flags = compile_flags(toolchain, request);
  command.insert(command.end(), flags.begin(), flags.end());
  command.insert(command.end(), {"-o", output_path, source_path});
  return command;
}

std::string key_text(const Toolchain& toolchain, const CompileRequest& request) {
  std::string text = std::string("tilecraft-abi-") + kAbiVersion + "\n";
  text += "tilecraft-version: " TILECRAFT_VERSION "\n";
  text += "nvcc: " + toolchain.nvcc + "\n";
  text += "nvcc --version:\n" + toolchain.nvcc_version;
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += "host-compiler: " + (toolchain.host_compiler.empty() ? std::string("(nvcc default)")
                                                               : toolchain.host_compiler);
  if (toolchain.host_compiler_real != toolchain.host_compiler) {
    text += " -> " + toolchain.host_compiler_real;
  }
  text += "\n";
  text += "cutlass: " + toolchain.cutlass_dir + " version " + toolchain.cutlass_version +
          " (version.h sha256 " + toolchain.cutlass_version_sha256 + ")\n";
  for (const std::string& variable : toolchain.nvcc_environment) text += "env: " + variable + "\n";
  text += "flags:\n";
  for (const std::string& flag : compile_flags(toolchain, request)) text += "  " + flag + "\n";
  return text;
}

std::string key_of(const std::string& text, const std::string& source) {
  Sha256 hasher;
  hasher.update(text);
  hasher.update("source (" + std::to_string(source.size()) + " bytes):\n");
  hasher.update(source);
  return to_hex(hasher.finish());
}

}  // namespace tilecraft::compile
