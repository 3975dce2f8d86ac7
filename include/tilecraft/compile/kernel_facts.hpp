// What the compiler says about a compiled kernel: registers, spills, stack and shared memory per
// thread block, parsed from ptxas's resource usage (nvcc --resource-usage) when a module is
// built, kept beside the module in the cache, and indexed by kernel name so that the ranking
// knows them in every later process.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace tilecraft {

struct KernelFacts {
  enum class Source { unknown, compiler, predicted };
  Source source = Source::unknown;
  int registers = -1;          // per thread
  int spill_store_bytes = -1;  // per thread
  int spill_load_bytes = -1;
  int stack_bytes = -1;        // stack frame per thread (spills and local arrays)
  int static_smem_bytes = -1;  // static shared memory per block (dynamic shared memory excluded)
  int max_ctas_per_sm = -1;    // resident thread blocks per SM (registers, threads, shared memory)

  bool known() const { return source != Source::unknown; }
  bool spills() const { return spill_store_bytes > 0 || spill_load_bytes > 0; }
  // "registers=168 spill_stores=0 spill_loads=0 stack=0 smem=0 max_ctas_per_sm=1 (compiler)";
  // "unknown" when nothing is known.
  std::string text() const;
};

std::string_view source_name(KernelFacts::Source source);

// ptxas's lines of a compiler's output (nvcc --resource-usage); everything else dropped.
std::string resource_usage_lines(std::string_view compiler_output);

// The facts of each kernel function in ptxas's resource usage, by the function's name. A kernel
// compiled for several architectures gets the largest figures of them.
std::map<std::string, KernelFacts> parse_resource_usage(std::string_view text);

// The facts index: the compiler's facts of every kernel built with this cache (Settings::
// cache_dir), by kernel (entry) name. Writes are atomic; a damaged record reads as unknown.
std::optional<KernelFacts> compiled_kernel_facts(const std::string& kernel_name);
void record_kernel_facts(const std::string& kernel_name, const KernelFacts& facts);

}  // namespace tilecraft
