// The runtime arguments an api arguments object has been prepared into, per kernel (grouped GEMM
// and convolution arguments keep one): a later run of the same arguments with the same kernel and
// workspace launches at once.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "tilecraft/core/status.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"

namespace tilecraft::api::detail {

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
