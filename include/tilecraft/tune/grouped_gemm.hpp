// One-call grouped GEMM: tilecraft::grouped_gemm(args) picks a grouped kernel, compiles it on
// first use and runs it. The pick is the performance model's first ranked kernel that compiles
// (grouped kernels are not tuned by measurement yet); it is remembered for the process per
// problem family (types, layouts, alignments, epilogue, and each (N, K) with its row count in
// quarter-octave buckets), so later calls of the family pay no ranking.
#pragma once

#include <string>

#include "tilecraft/core/status.hpp"
#include "tilecraft/discover/grouped_api.hpp"

namespace tilecraft {

struct GroupedPick {
  std::string kernel_name;
  std::string reason;  // why this kernel serves (and which ranked kernels failed to compile)
};

Result<GroupedPick> grouped_gemm(const api::GroupedGemmArguments& args, void* stream = nullptr);

}  // namespace tilecraft
