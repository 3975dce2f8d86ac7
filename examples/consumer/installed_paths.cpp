// Where the installed libtilecraft finds what generated kernels include (its own jit headers and
// the CUTLASS headers), which nvcc it compiles them with, and where it caches them: one line each.
#include <cstdio>

#include "tilecraft/tilecraft.hpp"

int main() {
  const tilecraft::Settings& s = tilecraft::settings();
  std::printf("jit headers: %s\n", s.jit_include_dir.c_str());
  std::printf("CUTLASS: %s\n", s.cutlass_dir.c_str());
  std::printf("nvcc: %s\n", s.nvcc.empty() ? "(none found)" : s.nvcc.c_str());
  std::printf("cache: %s\n", s.cache_dir.c_str());
  return 0;
}
