#include "tilecraft/runtime/module.hpp"

#include <dlfcn.h>

#include <cstring>
#include <map>
#include <mutex>

namespace tilecraft {

Result<std::shared_ptr<const LoadedModule>> LoadedModule::load(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const LoadedModule>> loaded;
  std::lock_guard lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) return it->second;

  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    return Status(StatusCode::kInternal, "loading module " + path + " failed: " +
                                             (error ? error : "unknown dlopen error"));
  }
  auto table_fn =
      reinterpret_cast<tc_module_table_fn>(dlsym(handle, TILECRAFT_MODULE_TABLE_SYMBOL));
  if (!table_fn) {
    dlclose(handle);
    return Status(StatusCode::kInternal,
                  "module " + path + " exports no " TILECRAFT_MODULE_TABLE_SYMBOL " table");
  }
  const tc_module_table* table = table_fn();
  if (!table || table->abi_version != TILECRAFT_ABI_VERSION) {
    dlclose(handle);
    return Status(StatusCode::kInternal, "module " + path + " speaks ABI version " +
                                             std::to_string(table ? table->abi_version : 0) +
                                             ", expected " + std::to_string(TILECRAFT_ABI_VERSION) +
                                             ": rebuild it");
  }
  auto module = std::make_shared<LoadedModule>();
  module->path_ = path;
  module->handle_ = handle;
  module->table_ = table;
  loaded[path] = module;
  return std::shared_ptr<const LoadedModule>(module);
}

const tc_kernel_entry* LoadedModule::find(const std::string& entry_name) const {
  for (uint32_t i = 0; i < table_->num_entries; ++i) {
    if (entry_name == table_->entries[i].name) return &table_->entries[i];
  }
  return nullptr;
}

}  // namespace tilecraft
