// The tools a compile needs (nvcc, the host compiler, the CUTLASS headers), found and identified
// once per process, and the flags and cache-key text they imply.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compile/jit_headers.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

struct Toolchain {
  std::string nvcc;                           // the nvcc executable's path
  std::string nvcc_version;                   // what `nvcc --version` printed
  std::string host_compiler;                  // passed to nvcc as -ccbin; empty: nvcc's own default
  std::string host_compiler_real;             // host_compiler with symbolic links resolved
  std::string host_compiler_version;          // the first lines of its --version (no paths)
  std::string cutlass_dir;                    // holds include/cutlass
  std::string cutlass_version;                // "MAJOR.MINOR.PATCH" as version.h says
  std::string cutlass_headers_sha256;         // content of every header under the -I folders
  JitHeaders jit_headers;                     // tilecraft's own, each keyed where it is reached
  std::vector<std::string> nvcc_environment;  // NVCC_PREPEND_FLAGS=... and the like, when set
};

// Finds nvcc and CUTLASS as the settings name them and identifies them (runs `nvcc --version`
// and hashes the CUTLASS headers once per process; the hash is remembered under the cache when
// it is usable). The Status names the setting to change and what was searched.
Result<std::shared_ptr<const Toolchain>> find_toolchain(const Settings& settings);

// The CUTLASS folders compiles include: its include and tools/util/include.
std::vector<std::string> include_roots(const std::string& cutlass_dir);

// How a module is built, in <dir> (DESIGN, "Compilation"): the device half (kernels only, to a
// fatbinary) and the host half (CUTLASS's host code and the ABI table, to an object; its device
// pass is empty) compile at the same time from the same source.cu; then the fatbinary is wrapped
// in an object (image.S, assembled by the host compiler) and linked with the host half into
// module.so. See emit/device_image_text.hpp for the two halves of the source.
struct BuildPlan {
  std::vector<std::string> device;    // nvcc -fatbin -> kernels.fatbin
  std::vector<std::string> host;      // nvcc -c -> host.o
  std::vector<std::string> assemble;  // host compiler -c image.S -> image.o
  std::vector<std::string> link;      // nvcc -shared host.o image.o -> module.so
};
BuildPlan build_plan(const Toolchain& toolchain, const CompileRequest& request,
                     const std::string& dir);

// The assembly that embeds `fatbin_path` as the symbol tc_device_image.
std::string device_image_assembly(const std::string& fatbin_path);

// Everything the key hashes except the source: stored beside each artifact as key.txt. It names
// no path of this machine (the CUTLASS headers by their content, nvcc and the host compiler by
// what they say to --version), so that a cache copied to another machine with the same toolkit
// and host compiler hits. The host compiler is in it because it compiles the host half (CUTLASS's
// argument preparation, the ABI table): another compiler or version makes other code.
std::string key_text(const Toolchain& toolchain, const CompileRequest& request);

// The key (hex SHA-256) of key_text plus the source.
std::string key_of(const std::string& key_text, const std::string& source);

}  // namespace tilecraft::compile
