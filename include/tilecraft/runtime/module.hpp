// A loaded kernel module: a shared object exporting the C ABI table (abi/module_abi.h).
#pragma once

#include <memory>
#include <string>

#include "tilecraft/abi/module_abi.h"
#include "tilecraft/core/status.hpp"

namespace tilecraft {

class LoadedModule {
 public:
  // Loads once per path per process; later calls return the same module. Never unloaded.
  static Result<std::shared_ptr<const LoadedModule>> load(const std::string& path);

  const tc_kernel_entry* find(const std::string& entry_name) const;
  const tc_module_table& table() const { return *table_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* handle_ = nullptr;
  const tc_module_table* table_ = nullptr;
};

}  // namespace tilecraft
