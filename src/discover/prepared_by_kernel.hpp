// The runtime arguments an api arguments object has been prepared into, per kernel (grouped GEMM
// and convolution arguments keep one): a later run of the same arguments with the same kernel and
// workspace launches at once. And the one way every family makes them from its problem.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "tilecraft/core/status.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"

namespace tilecraft::api::detail {

// The runtime arguments (Native: tilecraft::GemmArguments, GroupedGemmArguments or
// Conv2dArguments) of `problem` for `operation`, with the given workspace.
template <class Native, class Problem>
Result<std::unique_ptr<Native>> make_prepared(const GemmOperation& operation,
                                              Result<Problem> problem, void* workspace = nullptr,
                                              size_t workspace_bytes = 0) {
  if (!problem) return problem.status();
  problem->workspace = workspace;
  problem->workspace_bytes = workspace_bytes;
  return Native::make(operation, *problem);
}

// The workspace those runtime arguments need.
template <class Native, class Problem>
Result<size_t> prepared_workspace_bytes(const GemmOperation& operation, Result<Problem> problem) {
  auto made = make_prepared<Native>(operation, std::move(problem));
  if (!made) return made.status();
  return (*made)->workspace_bytes();
}

template <class Abi>
struct PreparedByKernel {
  std::mutex mutex;
  struct Entry {
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
    std::unique_ptr<Abi> abi;
  };
  std::map<std::string, Entry> by_kernel;

  // Runs `operation` (the kernel `kernel_name`) with its prepared arguments, made by
  // make(workspace, workspace_bytes) -> Result<std::unique_ptr<Abi>> on the first run and
  // whenever the workspace changes.
  template <class Make>
  Status run(const std::string& kernel_name, const GemmOperation& operation, void* stream,
             void* workspace, size_t workspace_bytes, Make make) {
    std::lock_guard lock(mutex);
    Entry& entry = by_kernel[kernel_name];
    if (!entry.abi || entry.workspace != workspace || entry.workspace_bytes != workspace_bytes) {
      auto made = make(workspace, workspace_bytes);
      if (!made) return made.status();
      entry = {workspace, workspace_bytes, std::move(*made)};
    }
    return operation.run(*entry.abi, stream);
  }
};

}  // namespace tilecraft::api::detail
