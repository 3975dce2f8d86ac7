// Which kernel an export takes for each problem: the stored tuned winner, one tuned now, or the
// ranked first pick; and the arguments a problem stands for (tensors that are never touched).
#pragma once

#include <string>
#include <vector>

#include "tilecraft/discover/api.hpp"
#include "tilecraft/export/export_library.hpp"

namespace tilecraft::exporting {

// The problem as arguments-first GEMM arguments on device 0, with placeholder pointers (aligned
// to 256 bytes): enough to list, rank and tune kernels, which never read them.
Result<api::GemmArguments> arguments_of(const GemmProblem& problem);

// "bf16 4096x4096x4096 TN" and the epilogue, when the problem has no label of its own.
std::string label_of(const GemmProblem& problem);

struct Choice {
  api::Kernel kernel;
  std::string how;     // how the kernel was chosen, in words
  bool tuned = false;  // a measured winner
};

// `tune_here`: a GPU of capability `cc` is present and tuning is allowed.
Result<Choice> choose_kernel(const GemmProblem& problem, const api::GemmArguments& args, int cc,
                             bool tune_here, const ExportOptions& options,
                             const compile::ProgressFn& progress);

}  // namespace tilecraft::exporting
