// The nvcc backend: one translation unit in, one shared object out, no shell in between.
#pragma once

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
  bool ok() const { return exit_code == 0; }
};

// Writes the request's source to <build_dir>/source.cu and compiles it to <build_dir>/module.so.
// Fails only when nvcc could not be run or the source not written; nvcc's verdict is in NvccRun.
Result<NvccRun> run_nvcc(const Toolchain& toolchain, const CompileRequest& request,
                         const std::string& build_dir);

// The kCompileError for a failed run: nvcc's own output (its first lines, and how many more
// there were), the command line and where the source was kept.
Status compile_error(const CompileRequest& request, const NvccRun& run,
                     const std::string& kept_source);

}  // namespace tilecraft::compile
