// The nvcc backend: one translation unit in, one shared object out, no shell in between.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "compile/toolchain.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

struct NvccRun {
  std::vector<std::string> command;
  int exit_code = 0;
  std::string output;  // nvcc's stdout and stderr
  bool cancelled = false;
  bool ok() const { return exit_code == 0 && !cancelled; }
};

// Writes the request's source to <build_dir>/source.cu and compiles it to <build_dir>/module.so;
// nvcc (and all it starts) is killed when *cancel becomes true. Fails only when nvcc could not
// be run or the source not written; nvcc's verdict is in NvccRun.
Result<NvccRun> run_nvcc(const Toolchain& toolchain, const CompileRequest& request,
                         const std::string& build_dir, const std::atomic<bool>* cancel = nullptr);

// After nvcc exited with 0: ok when <build_dir>/module.so is a non-empty ELF file; else the
// kCompileError saying that the compiler produced nothing usable, with its output and command.
Status check_module_produced(const CompileRequest& request, const NvccRun& run,
                             const std::string& build_dir);

// The kCompileError for a failed run: nvcc's own output (its first lines, and how many more
// there were), the command line and where the source was kept.
Status compile_error(const CompileRequest& request, const NvccRun& run,
                     const std::string& kept_source);

}  // namespace tilecraft::compile
