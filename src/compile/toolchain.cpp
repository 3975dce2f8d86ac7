#include "compile/toolchain.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>

#include "compile/header_digest.hpp"
#include "compile/process.hpp"
#include "compile/sha256.hpp"
#include "tilecraft/abi/module_abi.h"
#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/compile/signed_record.hpp"
#include "tilecraft/core/program_path.hpp"

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
// What a remembered --version answer may hold, at most.
constexpr size_t kVersionMemoLimit = 64 * 1024;

// The lines of the host compiler's --version that the key keeps (the compiler, its version, its
// target and threading model; the rest is licence text).
constexpr int kHostIdentityLines = 4;

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

struct HostCompiler {
  std::string path;    // empty: none found
  std::string origin;  // where it came from, for messages
  std::string named;   // what NVCC_CCBIN said, when it said something
};

// NVCC_CCBIN (a path, or a name looked up on PATH), else the first g++, c++ or clang++ in an
// absolute folder of PATH: the compiler nvcc is told to use with -ccbin.
HostCompiler find_host_compiler() {
  const char* ccbin = std::getenv("NVCC_CCBIN");
  const char* path = std::getenv("PATH");
  static std::mutex mutex;
  static std::map<std::string, HostCompiler> found_for;
  const std::string memo_key =
      std::string(ccbin ? ccbin : "") + '\0' + std::string(path ? path : "");
  std::lock_guard lock(mutex);
  if (auto found = found_for.find(memo_key); found != found_for.end()) return found->second;
  HostCompiler found;
  if (ccbin && *ccbin) {
    found.named = ccbin;
    found.origin = "NVCC_CCBIN";
    found.path = found.named.find('/') == std::string::npos
                     ? find_program_on_path(found.named)
                     : fs::absolute(found.named).lexically_normal().string();
  } else {
    for (const char* name : {"g++", "c++", "clang++"}) {
      if (std::string on_path = find_program_on_path(name); !on_path.empty()) {
        found = {on_path, std::string("the first ") + name + " on PATH", ""};
        break;
      }
    }
  }
  found_for.emplace(memo_key, found);
  return found;
}

std::string define_value(const std::string& header, const std::string& name) {
  std::string pattern = "#define " + name + " ";
  size_t at = header.find(pattern);
  if (at == std::string::npos) return "?";
  size_t begin = at + pattern.size();
  size_t end = header.find_first_of(" \t\r\n", begin);
  return header.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The text a version memo holds for the program file `identity` (its path and stat facts) that
// answered --version with `output`.
std::string version_memo_text(const std::string& identity, const std::string& output) {
  return "tilecraft-version-memo v1\n" + std::to_string(identity.size()) + "\n" + identity + "\n" +
         output;
}

// What `program --version` did: run once per process for each program file (its path and
// identity: a file replaced or edited in place is asked again), failures included, so that a
// program that hangs costs its time limit once. A clean answer is also kept in memo_dir (when not
// empty) for the next process: starting two programs from a process holding a GPU context (a
// fork copies its page tables) cost more than the rest of a cached kernel's first load.
Result<ProcessResult> version_run(const std::string& program, const std::string& memo_dir) {
  static std::mutex mutex;
  static std::map<std::string, Result<ProcessResult>> runs;
  struct stat info {};
  std::string memo_key = program;
  const bool identified = stat(program.c_str(), &info) == 0;
  if (identified) {
    memo_key += '\n' + std::to_string(info.st_dev) + ':' + std::to_string(info.st_ino) + ':' +
                std::to_string(info.st_size) + ':' + std::to_string(info.st_mtim.tv_sec) + '.' +
                std::to_string(info.st_mtim.tv_nsec) + ':' + std::to_string(info.st_ctim.tv_sec) +
                '.' + std::to_string(info.st_ctim.tv_nsec);
  }
  std::lock_guard lock(mutex);
  if (auto found = runs.find(memo_key); found != runs.end()) return found->second;
  const std::string memo = identified && !memo_dir.empty()
                               ? memo_dir + "/version-" + sha256_hex(memo_key).substr(0, 32)
                               : std::string();
  // The memo steers the cache key, so it is a signed record: one this user's key did not sign
  // reads as absent.
  const Result<std::string> signing_key =
      memo.empty() ? Result<std::string>(Status::invalid("no memo")) : user_signing_key();
  if (signing_key) {
    const std::optional<std::string> text = read_record_file(memo, kVersionMemoLimit);
    const std::optional<std::string> body =
        text ? verified_body(*signing_key, *text) : std::nullopt;
    const std::string prefix = version_memo_text(memo_key, "");
    if (body && body->size() > prefix.size() && body->rfind(prefix, 0) == 0) {
      ProcessResult remembered;
      remembered.output = body->substr(prefix.size());
      runs.emplace(memo_key, remembered);
      return remembered;
    }
  }
  Result<ProcessResult> run = run_process({program, "--version"}, {}, nullptr, kVersionTimeLimit);
  runs.emplace(memo_key, run);
  if (signing_key && run && !run->timed_out && run->exit_code == 0 && !run->output.empty() &&
      ensure_own_dir(memo_dir)) {
    (void)write_record_file(memo,
                            signed_record(*signing_key, version_memo_text(memo_key, run->output)));
  }
  return run;
}

std::string did_not_answer() {
  return "did not answer within " + std::to_string(static_cast<int>(kVersionTimeLimit)) + " s";
}

std::string exited_and_printed(const ProcessResult& run) {
  return "exited with " + std::to_string(run.exit_code) +
         " and printed: " + run.output.substr(0, 500);
}

Result<std::string> identify_nvcc(const std::string& nvcc, const std::string& memo_dir) {
  const std::string expected =
      "TILECRAFT_NVCC: expected an nvcc that answers --version, got '" + nvcc + "', which ";
  Result<ProcessResult> run = version_run(nvcc, memo_dir);
  if (!run) return run.status();
  if (run->timed_out) return Status::unsupported(expected + did_not_answer());
  if (run->exit_code != 0 || run->output.find("Cuda compilation tools") == std::string::npos) {
    return Status::unsupported(expected + exited_and_printed(*run));
  }
  return run->output;
}

// The host compiler's identity for the key: what it says to --version, without the lines that
// name folders of this machine (clang's InstalledDir and configuration file), at most a few lines.
Result<std::string> identify_host_compiler(const std::string& compiler, const std::string& origin,
                                           const std::string& memo_dir) {
  const std::string expected =
      origin + ": expected a host compiler that answers --version, got '" + compiler + "', which ";
  Result<ProcessResult> run = version_run(compiler, memo_dir);
  if (!run) return Status::unsupported(expected + "could not run: " + run.status().message());
  if (run->timed_out) return Status::unsupported(expected + did_not_answer());
  std::string identity;
  std::istringstream lines(run->output);
  int kept = 0;
  for (std::string line; kept < kHostIdentityLines && std::getline(lines, line);) {
    if (line.rfind("InstalledDir:", 0) == 0 || line.rfind("Configuration file:", 0) == 0) continue;
    identity += line.substr(0, 200) + "\n";
    kept += line.empty() ? 0 : 1;
  }
  if (run->exit_code != 0 || kept == 0)
    return Status::unsupported(expected + exited_and_printed(*run));
  return identity;
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

// Where the toolchain's memos go (header digests, --version answers): <cache>/v1/headers when the
// cache's v1 folder is there and private to this user, else "".
std::string toolchain_memo_dir(const Settings& s) {
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
  const HostCompiler host = find_host_compiler();
  std::string memo_key =
      s.nvcc + '\n' + s.cutlass_dir + '\n' + s.jit_include_dir + '\n' + host.path;
  {
    std::lock_guard lock(mutex);
    if (auto found = known.find(memo_key); found != known.end()) return found->second;
  }

  auto toolchain = std::make_shared<Toolchain>();
  toolchain->nvcc = s.nvcc;
  const std::string memo_dir = toolchain_memo_dir(s);
  Result<std::string> version = identify_nvcc(s.nvcc, memo_dir);
  if (!version) return version.status();
  toolchain->nvcc_version = *version;
  toolchain->host_compiler = host.path;
  if (!host.named.empty() && host.path.empty()) {
    return Status::unsupported(
        "NVCC_CCBIN: expected a host compiler (a path, or a name found in "
        "an absolute folder of PATH), got '" +
        host.named + "', which is not on PATH");
  }
  if (!host.path.empty()) {
    if (fs::is_directory(host.path, error)) {
      return Status::unsupported(host.origin + ": expected the host compiler's executable, got '" +
                                 host.path +
                                 "', a folder (tilecraft also assembles with it: name the "
                                 "compiler itself, such as /usr/bin/g++-12)");
    }
    toolchain->host_compiler_real = fs::weakly_canonical(host.path, error).string();
    Result<std::string> identity = identify_host_compiler(host.path, host.origin, memo_dir);
    if (!identity) return identity.status();
    toolchain->host_compiler_version = std::move(*identity);
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
  Result<std::string> digest = header_tree_digest(include_roots(s.cutlass_dir), memo_dir);
  if (!digest) return Status::unsupported(cutlass_origin(s) + ": " + digest.status().message());
  toolchain->cutlass_headers_sha256 = std::move(*digest);
  Result<JitHeaders> jit =
      read_jit_headers(s.jit_include_dir, "the tilecraft headers installed with the library");
  if (!jit) return jit.status();
  toolchain->jit_headers = std::move(*jit);
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
  flags.push_back("-I" + toolchain.jit_headers.root);
  for (const std::string& root : include_roots(toolchain.cutlass_dir)) flags.push_back("-I" + root);
  flags.insert(flags.end(), request.arch_flags.begin(), request.arch_flags.end());
  return flags;
}

std::vector<std::string> with(std::vector<std::string> front,
                              const std::vector<std::string>& back) {
  front.insert(front.end(), back.begin(), back.end());
  return front;
}

// The plan's commands as the key sees them, with no path of this machine: the CUTLASS folders
// become <cutlass>, tilecraft's <tilecraft> (their content is keyed); -ccbin and <dir> go.
std::string portable_command(const Toolchain& toolchain, std::vector<std::string> command,
                             const std::string& dir) {
  std::string text;
  for (size_t i = 1; i < command.size(); ++i) {
    std::string arg = command[i];
    if (arg == "-ccbin" && i + 1 < command.size()) {
      ++i;
      continue;
    }
    if (arg == "-I" + toolchain.jit_headers.root) {
      arg = "-I<tilecraft>";
    } else if (arg.rfind("-I" + toolchain.cutlass_dir, 0) == 0) {
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
  text += "tilecraft headers the source includes:\n" +
          jit_header_key_text(toolchain.jit_headers, request.source);
  text += "host compiler --version:\n" + (toolchain.host_compiler.empty()
                                              ? std::string("(none found: nvcc's own default)\n")
                                              : toolchain.host_compiler_version);
  for (const std::string& variable : toolchain.nvcc_environment) {
    // NVCC_CCBIN names a path; the compiler it names is keyed above by what it is.
    if (variable.rfind("NVCC_CCBIN=", 0) == 0) continue;
    text += "env: " + variable + "\n";
  }
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
