// The tools a compile needs (nvcc, the host compiler, the CUTLASS headers), found and identified
// once per process, and the flags and cache-key text they imply.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

struct Toolchain {
  std::string nvcc;                           // the nvcc executable's path
  std::string nvcc_version;                   // what `nvcc --version` printed
  std::string host_compiler;                  // passed to nvcc as -ccbin; empty: nvcc's own default
  std::string host_compiler_real;             // host_compiler with symbolic links resolved
  std::string cutlass_dir;                    // holds include/cutlass
  std::string cutlass_version;                // "MAJOR.MINOR.PATCH" as version.h says
  std::string cutlass_headers_sha256;         // content of every header under the -I folders
  std::vector<std::string> nvcc_environment;  // NVCC_PREPEND_FLAGS=... and the like, when set
};

// Finds nvcc and CUTLASS as the settings name them and identifies them (runs `nvcc --version`
// and hashes the CUTLASS headers once per process; the hash is remembered under the cache when
// it is usable). The Status names the setting to change and what was searched.
Result<std::shared_ptr<const Toolchain>> find_toolchain(const Settings& settings);

// The folders compiles include: CUTLASS's include and tools/util/include.
std::vector<std::string> include_roots(const std::string& cutlass_dir);

// nvcc's arguments for a request, except the output and input paths.
std::vector<std::string> compile_flags(const Toolchain& toolchain, const CompileRequest& request);

// The full nvcc command that compiles source_path into output_path.
std::vector<std::string> compile_command(const Toolchain& toolchain, const CompileRequest& request,
                                         const std::string& source_path,
                                         const std::string& output_path);

// Everything the key hashes except the source: stored beside each artifact as key.txt.
std::string key_text(const Toolchain& toolchain, const CompileRequest& request);

// The key (hex SHA-256) of key_text plus the source.
std::string key_of(const std::string& key_text, const std::string& source);

}  // namespace tilecraft::compile
