#include "compile/toolchain.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "compile/file_util.hpp"
#include "compile/header_digest.hpp"
#include "compile/process.hpp"
#include "compile/sha256.hpp"
#include "core/program_path.hpp"
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

// `nvcc --version` answers in milliseconds; one that hangs is broken, and is said to be.
constexpr double kVersionTimeLimit = 30;

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

// NVCC_CCBIN (a path, or a name looked up on PATH), else the first g++, c++ or clang++ in an
// absolute folder of PATH.
std::string find_host_compiler() {
  if (const char* ccbin = std::getenv("NVCC_CCBIN"); ccbin && *ccbin) {
    std::string named = ccbin;
    if (named.find('/') == std::string::npos) return find_program_on_path(named);
    return fs::absolute(named).lexically_normal().string();
  }
  for (const char* name : {"g++", "c++", "clang++"}) {
    if (std::string found = find_program_on_path(name); !found.empty()) return found;
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
  Result<ProcessResult> run = run_process({nvcc, "--version"}, {}, nullptr, kVersionTimeLimit);
  if (!run) return run.status();
  if (run->timed_out) {
    return Status::unsupported("TILECRAFT_NVCC: expected an nvcc that answers --version, got '" +
                               nvcc + "', which did not answer within " +
                               std::to_string(static_cast<int>(kVersionTimeLimit)) + " s");
  }
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
    return Status::unsupported(
        "TILECRAFT_NVCC: expected an executable nvcc (an absolute path, or "
        "a name found in an absolute folder of PATH), got '" +
        s.nvcc + "', which " +
        (s.nvcc.front() == '/' ? "does not exist or is not executable" : "is not on PATH"));
  }
  return Status::unsupported(
      "no nvcc found: searched $TILECRAFT_NVCC, $CUDA_HOME/bin, $CUDA_PATH/bin, "
      "$CUDA_INSTALL_PATH/bin, every absolute folder of $PATH and /usr/local/cuda/bin; set "
      "TILECRAFT_NVCC to the nvcc to use");
}

// Where the CUTLASS folder came from, as the user would recognize it.
std::string cutlass_origin(const Settings& s) {
  if (!s.cutlass_dir_variable.empty()) return s.cutlass_dir_variable;
  return "the CUTLASS headers tilecraft was built with";
}

// <cache>/v1/headers when the cache's v1 folder is there and private to this user, else "".
std::string header_memo_dir(const Settings& s) {
  std::string v1 = s.cache_dir + "/v1";
  if (s.cache_dir.empty() || s.cache_dir.front() != '/' ||
      !private_dir_problem(s.cache_dir).empty() || !private_dir_problem(v1).empty()) {
    return "";
  }
  return v1 + "/headers";
}

}  // namespace

Result<std::shared_ptr<const Toolchain>> find_toolchain(const Settings& s) {
  if (s.nvcc.empty() || s.nvcc.front() != '/' || !is_executable_file(s.nvcc)) {
    return nvcc_not_found(s);
  }
  std::string version_header = s.cutlass_dir + "/include/cutlass/version.h";
  std::error_code error;
  if (s.cutlass_dir.empty() || !fs::is_regular_file(version_header, error)) {
    const std::string setting =
        s.cutlass_dir_variable.empty() ? "TILECRAFT_CUTLASS_DIR" : s.cutlass_dir_variable;
    return Status::unsupported(
        setting + ": expected a folder holding include/cutlass/version.h, got '" + s.cutlass_dir +
        "'" + (s.cutlass_dir.empty() ? " (empty)" : "") + " from " + cutlass_origin(s) +
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
    return Status::unsupported(cutlass_origin(s) + ": could not read " + version_header);
  }
  toolchain->cutlass_version = define_value(header, "CUTLASS_MAJOR") + "." +
                               define_value(header, "CUTLASS_MINOR") + "." +
                               define_value(header, "CUTLASS_PATCH");
  Result<std::string> digest = header_tree_digest(include_roots(s.cutlass_dir), header_memo_dir(s));
  if (!digest) return Status::unsupported(cutlass_origin(s) + ": " + digest.status().message());
  toolchain->cutlass_headers_sha256 = std::move(*digest);
  for (const char* name : kNvccEnvironment) {
    if (const char* value = std::getenv(name); value && *value) {
      toolchain->nvcc_environment.push_back(std::string(name) + "=" + value);
    }
  }

  std::lock_guard lock(mutex);
  known.emplace(memo_key, toolchain);
  return std::shared_ptr<const Toolchain>(toolchain);
}

std::vector<std::string> include_roots(const std::string& cutlass_dir) {
  std::vector<std::string> roots = {cutlass_dir + "/include"};
  std::error_code error;
  if (fs::is_directory(cutlass_dir + "/tools/util/include", error)) {
    roots.push_back(cutlass_dir + "/tools/util/include");
  }
  return roots;
}

namespace {

// Flags both halves share: language, optimization, the CUTLASS headers and the architectures.
std::vector<std::string> common_flags(const Toolchain& toolchain, const CompileRequest& request) {
  std::vector<std::string> flags = {"-std=c++17", "-O3", "-DNDEBUG", "--expt-relaxed-constexpr"};
  if (!toolchain.host_compiler.empty()) {
    flags.push_back("-ccbin");
    flags.push_back(toolchain.host_compiler);
  }
  for (const std::string& root : include_roots(toolchain.cutlass_dir)) flags.push_back("-I" + root);
  flags.insert(flags.end(), request.arch_flags.begin(), request.arch_flags.end());
  return flags;
}

std::vector<std::string> with(std::vector<std::string> front,
                              const std::vector<std::string>& back) {
  front.insert(front.end(), back.begin(), back.end());
  return front;
}

// The plan's commands as the key sees them: no path of this machine. The CUTLASS folders become
// <cutlass> (their content is keyed), the host compiler and the build folder disappear.
std::string portable_command(const Toolchain& toolchain, std::vector<std::string> command,
                             const std::string& dir) {
  std::string text;
  for (size_t i = 1; i < command.size(); ++i) {
    std::string arg = command[i];
    if (arg == "-ccbin" && i + 1 < command.size()) {
      ++i;
      continue;
    }
    if (arg.rfind("-I" + toolchain.cutlass_dir, 0) == 0) {
      arg = "-I<cutlass>" + arg.substr(2 + toolchain.cutlass_dir.size());
    }
    if (arg.rfind(dir, 0) == 0) arg = "<dir>" + arg.substr(dir.size());
    text += " " + arg;
  }
  return text;
}

}  // namespace

BuildPlan build_plan(const Toolchain& toolchain, const CompileRequest& request,
                     const std::string& dir) {
  const std::vector<std::string> common = common_flags(toolchain, request);
  const std::string source = dir + "/source.cu";
  BuildPlan plan;
  plan.device = with(with({toolchain.nvcc}, common),
                     {"-fatbin", "--resource-usage", "-DTILECRAFT_DEVICE_HALF=1", "-o",
                      dir + "/kernels.fatbin", source});
  plan.host = with(with({toolchain.nvcc}, common),
                   {"-c", "-DTILECRAFT_HOST_HALF=1", "-Xcompiler=-fPIC",
                    "-Xcompiler=-fvisibility=hidden", "-o", dir + "/host.o", source});
  plan.assemble = {toolchain.host_compiler.empty() ? std::string("cc") : toolchain.host_compiler,
                   "-c", dir + "/image.S", "-o", dir + "/image.o"};
  plan.link = {toolchain.nvcc, "-shared",
               // One CUDA runtime per process (the one libtilecraft and the frameworks use).
               "-cudart=shared"};
  if (!toolchain.host_compiler.empty())
    plan.link.insert(plan.link.end(), {"-ccbin", toolchain.host_compiler});
  plan.link.insert(plan.link.end(), {"-o", dir + "/module.so", dir + "/host.o", dir + "/image.o"});
  return plan;
}

std::string device_image_assembly(const std::string& fatbin_path) {
  std::string quoted;
  for (char c : fatbin_path) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return "\t.section .rodata.tc_device_image,\"a\"\n"
         "\t.balign 64\n"
         "\t.globl tc_device_image\n"
         "\t.hidden tc_device_image\n"
         "\t.type tc_device_image, @object\n"
         "tc_device_image:\n"
         "\t.incbin \"" +
         quoted +
         "\"\n"
         "\t.section .note.GNU-stack,\"\",@progbits\n";
}

std::string key_text(const Toolchain& toolchain, const CompileRequest& request) {
  std::string text = std::string("tilecraft-abi-") + kAbiVersion + "\n";
  text += "tilecraft-version: " TILECRAFT_VERSION "\n";
  text += "nvcc --version:\n" + toolchain.nvcc_version;
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += "cutlass: version " + toolchain.cutlass_version + " (headers sha256 " +
          toolchain.cutlass_headers_sha256 + ")\n";
  for (const std::string& variable : toolchain.nvcc_environment) text += "env: " + variable + "\n";
  const std::string dir = "/tilecraft-build";
  BuildPlan plan = build_plan(toolchain, request, dir);
  text += "device:" + portable_command(toolchain, plan.device, dir) + "\n";
  text += "host:" + portable_command(toolchain, plan.host, dir) + "\n";
  text += "image:\n" + device_image_assembly("<dir>/kernels.fatbin");
  text += "link:" + portable_command(toolchain, plan.link, dir) + "\n";
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
