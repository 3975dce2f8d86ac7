// The nvcc backend: one translation unit in, one shared object out, no shell in between. The
// module is built as toolchain.hpp's BuildPlan says: both halves at once, then the link.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "compile/toolchain.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

struct NvccRun {
  std::vector<std::string> command;  // the step that failed, else the link
  std::string step;                  // "device half", "host half", "device image" or "link"
  int exit_code = 0;
  std::string output;  // the compilers' stdout and stderr
  bool cancelled = false;
  std::string no_output;  // the step exited with 0 but wrote no usable output: what is wrong
  double device_seconds = 0, host_seconds = 0, link_seconds = 0;
  bool ok() const { return exit_code == 0 && !cancelled && no_output.empty(); }
};

// Writes the request's source to <build_dir>/source.cu and builds <build_dir>/module.so; every
// compiler (and all it starts) is killed when *cancel becomes true. Fails only when a compiler
// could not be run or a file not written; the compilers' verdict is in NvccRun.
Result<NvccRun> run_nvcc(const Toolchain& toolchain, const CompileRequest& request,
                         const std::string& build_dir, const std::atomic<bool>* cancel = nullptr);

// Removes what the build made on the way to module.so (the module holds all of it); done once
// the entry is stored, so that a full disk is met where the cache can say so.
void remove_intermediates(const std::string& dir);

// After nvcc exited with 0: ok when <build_dir>/module.so is a non-empty ELF file; else the
// kCompileError saying that the compiler produced nothing usable, with its output and command.
Status check_module_produced(const CompileRequest& request, const NvccRun& run,
                             const std::string& build_dir);

// The kCompileError for a failed run (a step that exited with non-zero, or with 0 and without its
// output, named by its step and file): nvcc's own output (its first lines, and how many more
// there were), the command line and where the source was kept.
Status compile_error(const CompileRequest& request, const NvccRun& run,
                     const std::string& kept_source);

}  // namespace tilecraft::compile
