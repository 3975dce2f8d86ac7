// How every family prepares its arguments for a kernel's ABI, and the launches grouped GEMM and
// convolution arguments keep per kernel: a later run of the same arguments object with the same
// kernel and workspace launches at once.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "tilecraft/core/status.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/runtime/prepared_launch.hpp"

namespace tilecraft::api::detail {

// The runtime arguments (Native: tilecraft::GemmArguments, GroupedGemmArguments or
// Conv2dArguments) of `problem` for `operation`, with the given workspace.
template <class Native, class Problem>
Result<std::unique_ptr<Native>> make_prepared(const GemmOperation& operation,
                                              Result<Problem> problem, void* workspace,
                                              size_t workspace_bytes) {
  if (!problem) return problem.status();
  problem->workspace = workspace;
  problem->workspace_bytes = workspace_bytes;
  return Native::make(operation, *problem);
}

// The same, as the launch every family's arguments prepare.
template <class Native, class Problem>
Result<std::unique_ptr<PreparedLaunch>> prepared_launch(const GemmOperation& operation,
                                                        Result<Problem> problem, void* workspace,
                                                        size_t workspace_bytes) {
  auto made = make_prepared<Native>(operation, std::move(problem), workspace, workspace_bytes);
  if (!made) return made.status();
  return std::unique_ptr<PreparedLaunch>(std::move(*made));
}

struct PreparedByKernel {
  std::mutex mutex;
  struct Entry {
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
    std::unique_ptr<PreparedLaunch> launch;
  };
  std::map<std::string, Entry> by_kernel;

  // Runs `operation` (the kernel `kernel_name`) with its prepared arguments, made by
  // prepare() -> Result<std::unique_ptr<PreparedLaunch>> on the first run and whenever the
  // workspace changes.
  template <class Prepare>
  Status run(const std::string& kernel_name, const GemmOperation& operation, void* stream,
             void* workspace, size_t workspace_bytes, Prepare prepare) {
    std::lock_guard lock(mutex);
    Entry& entry = by_kernel[kernel_name];
    if (!entry.launch || entry.workspace != workspace || entry.workspace_bytes != workspace_bytes) {
      LaunchStreamScope launching_on(stream);
      auto made = prepare();
      if (!made) return made.status();
      if ((*made)->allocated_in_capture()) return operation.run(**made, stream);  // not kept
      entry = {workspace, workspace_bytes, std::move(*made)};
    }
    return operation.run(*entry.launch, stream);
  }
};

}  // namespace tilecraft::api::detail
