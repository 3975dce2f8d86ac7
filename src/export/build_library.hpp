// Compiling an exported library: each generated module in two halves as the JIT builds them
// (compile/toolchain.hpp's BuildPlan), its device image under a name of its own, the API source,
// and one link into a shared object that exports only the library's namespace and carries a
// static CUDA runtime.
#pragma once

#include <string>
#include <vector>

#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/status.hpp"

namespace tilecraft::exporting {

struct ModuleSource {
  std::string source;                   // renames (export_text.hpp) + the emitted module
  std::vector<std::string> arch_flags;  // as emit::gemm_module_arch_flags says
};

// Builds <build_dir>/lib<name>.so from the modules and api.cpp (which includes <name>.hpp from
// include_dir). Compiler failures name the step, show the compiler's output and the command, and
// say where the sources are.
Result<std::string> build_library(const std::string& name, const std::vector<ModuleSource>& modules,
                                  const std::string& api_source, const std::string& include_dir,
                                  const std::string& build_dir,
                                  const compile::ProgressFn& progress);

}  // namespace tilecraft::exporting
