// The runtime arguments an api::GroupedGemmArguments has been prepared into, per kernel: a later
// run of the same arguments with the same kernel, stream-independent, reuses the device arrays.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "tilecraft/discover/grouped_api.hpp"
#include "tilecraft/runtime/grouped_gemm_arguments.hpp"

namespace tilecraft::api {

struct GroupedGemmArguments::Prepared {
  std::mutex mutex;
  struct Entry {
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
    std::unique_ptr<tilecraft::GroupedGemmArguments> abi;
  };
  std::map<std::string, Entry> by_kernel;
};

}  // namespace tilecraft::api
