// tilecraft's own headers that generated modules include (include/tilecraft/jit and the ABI
// header), read once per toolchain so that a module's cache key holds the content of exactly the
// headers its source reaches: a change to one family's header re-keys that family's modules only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

struct JitHeader {
  std::string sha256;                 // hex, of the file's bytes
  std::vector<std::string> includes;  // its #include "tilecraft/..." names, in order
};

struct JitHeaders {
  std::string root;                        // the -I folder holding tilecraft/jit and tilecraft/abi
  std::map<std::string, JitHeader> files;  // by include name: "tilecraft/jit/sm80_gemm.cuh"
};

// Reads every file of <root>/tilecraft/jit and <root>/tilecraft/abi; `setting` names where root
// came from for the error when it holds no tilecraft/jit/module_prelude.cuh.
Result<JitHeaders> read_jit_headers(const std::string& root, const std::string& setting);

// "tilecraft/jit/x.cuh <sha256>" lines, in name order, for every tilecraft header `source`
// includes directly or through others ("(missing)" for one that root lacks).
std::string jit_header_key_text(const JitHeaders& headers, const std::string& source);

}  // namespace tilecraft::compile
