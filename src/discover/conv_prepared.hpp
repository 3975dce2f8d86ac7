// The runtime arguments an api::Conv2dArguments has been prepared into, per kernel: a later run of
// the same arguments with the same kernel and workspace launches at once.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "tilecraft/discover/conv_api.hpp"
#include "tilecraft/runtime/conv2d_arguments.hpp"

namespace tilecraft::api {

struct Conv2dArguments::Prepared {
  std::mutex mutex;
  struct Entry {
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
    std::unique_ptr<tilecraft::Conv2dArguments> abi;
  };
  std::map<std::string, Entry> by_kernel;
};

}  // namespace tilecraft::api
