// Shared by the nvcc compile tests of emitted modules (SM80 and SM90): write a module's source
// (beside the test's results, for reading), build it as tilecraft itself does
// (compile::build_module, through the artifact cache), report the time.
#pragma once

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tilecraft/abi/conv_args.h"
#include "tilecraft/abi/gemm_args.h"
#include "tilecraft/abi/grouped_args.h"
#include "tilecraft/abi/module_abi.h"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit::compile_testing {

struct ModuleSpec {
  std::string name;
  std::vector<GemmEntry> entries;
};

struct CompiledModule {
  std::filesystem::path library;
  double seconds = 0;
  int exit_code = -1;
  std::string log;
};

inline CompiledModule compile_module(const std::filesystem::path& dir, const ModuleSpec& spec,
                                     int arch) {
  CompiledModule result;
  std::ofstream(dir / (spec.name + ".cu")) << emit_gemm_module(spec.entries);
  compile::CompileRequest request{spec.name, emit_gemm_module(spec.entries),
                                  gemm_module_arch_flags(arch)};
  const auto start = std::chrono::steady_clock::now();
  Result<compile::CompiledModule> built = compile::build_module(request, [](std::string_view) {});
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (built) {
    result.library = built->path;
    result.exit_code = 0;
    if (built->from_cache) result.log = "from the cache";
  } else {
    result.exit_code = 1;
    result.log = built.status().message();
  }
  std::cout << "[ compile  ] " << spec.name << " (" << spec.entries.size()
            << (spec.entries.size() == 1 ? " entry" : " entries") << ", arch " << arch
            << "): " << result.seconds << " s, exit " << result.exit_code << std::endl;
  return result;
}

// Several modules, TILECRAFT_COMPILE_JOBS at a time (one unless it is set).
inline std::vector<CompiledModule> compile_modules(const std::filesystem::path& dir,
                                                   const std::vector<ModuleSpec>& specs, int arch) {
  const int jobs = std::getenv("TILECRAFT_COMPILE_JOBS") ? std::max(1, settings().compile_jobs) : 1;
  std::vector<CompiledModule> results(specs.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < specs.size(); i = next++)
      results[i] = compile_module(dir, specs[i], arch);
  };
  std::vector<std::thread> others;
  for (int j = 1; j < jobs && static_cast<size_t>(j) < specs.size(); ++j)
    others.emplace_back(worker);
  worker();
  for (std::thread& t : others) t.join();
  return results;
}

// A loaded module, closed when it goes.
class Module {
 public:
  explicit Module(const std::filesystem::path& path)
      : handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~Module() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  const tc_module_table* table() const {
    if (handle_ == nullptr) return nullptr;
    auto fn = reinterpret_cast<tc_module_table_fn>(dlsym(handle_, TILECRAFT_MODULE_TABLE_SYMBOL));
    return fn != nullptr ? fn() : nullptr;
  }

  void* symbol(const char* name) const {
    return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
  }

 private:
  void* handle_;
};

// On a GPU that runs `arch` kernels: every kernel of the module loads from its device image, and
// the device compiler laid out each kernel's parameters (size and alignment) exactly as the host
// compiler did, so that no launch can pass a wrongly laid out block (tilecraft_module_verify).
// Without such a GPU the check is skipped, and says so once.
inline void check_parameter_layouts(const Module& module, int arch) {
  int devices = 0, major = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0 ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess ||
      major * 10 < arch) {
    cudaGetLastError();
    static bool said = false;
    if (!said)
      std::cout << "[ layouts  ] no GPU for arch " << arch << ": parameter layouts not checked\n";
    said = true;
    return;
  }
  using Verify = int32_t (*)(char*, size_t);
  auto verify = reinterpret_cast<Verify>(module.symbol("tilecraft_module_verify"));
  ASSERT_NE(verify, nullptr) << "the module exports no tilecraft_module_verify";
  std::string report(1 << 16, '\0');
  const int32_t status = verify(report.data(), report.size());
  report.resize(std::strlen(report.c_str()));
  std::cout << "[ layouts  ] " << report;
  EXPECT_EQ(status, TC_OK) << report;
  EXPECT_NE(report.find(": ok"), std::string::npos) << report;
}

struct Verdict {
  int32_t status;
  std::string text;
};

// Any family's block, through the entry's one C signature.
template <class Block>
Verdict can_implement(const tc_kernel_entry& entry, const Block& args) {
  char error[512] = "";
  const int32_t status = entry.can_implement(&args.header, error, sizeof(error));
  return {status, error};
}

// A zeroed argument block of a family, its header filled as the runtime fills it.
template <class Block>
Block block_of(int32_t family, int32_t version) {
  Block b{};
  b.header.family = family;
  b.header.family_version = version;
  return b;
}
inline tc_gemm_args gemm_block() {
  return block_of<tc_gemm_args>(TC_FAMILY_GEMM, TC_GEMM_ARGS_VERSION);
}
inline tc_grouped_args grouped_block() {
  return block_of<tc_grouped_args>(TC_FAMILY_GROUPED, TC_GROUPED_ARGS_VERSION);
}
inline tc_conv_args conv_block() {
  return block_of<tc_conv_args>(TC_FAMILY_CONV, TC_CONV_ARGS_VERSION);
}

// Compiles the modules for `arch` and checks each table against its specification (ABI
// version, entry count, names, the arch in the metadata); `check_entry` adds the arch's own
// checks of each entry. Returns the tables' owners so a test can probe further; the sources are
// kept under `dir` when anything failed.
inline std::vector<std::unique_ptr<Module>> compile_and_check(
    const std::string& dir_prefix, const std::vector<ModuleSpec>& specs, int arch,
    const std::function<void(const GemmEntry&, const tc_kernel_entry&)>& check_entry) {
  namespace fs = std::filesystem;
  std::vector<std::unique_ptr<Module>> modules;
  const fs::path dir = fs::temp_directory_path() / (dir_prefix + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::vector<CompiledModule> compiled = compile_modules(dir, specs, arch);
  const std::string arch_key = "arch=" + std::to_string(arch) + ";";
  for (size_t i = 0; i < specs.size(); ++i) {
    SCOPED_TRACE(specs[i].name);
    const CompiledModule& result = compiled[i];
    EXPECT_EQ(result.exit_code, 0) << "nvcc failed; source kept in " << dir << "\n" << result.log;
    modules.push_back(std::make_unique<Module>(result.library));
    if (result.exit_code != 0) continue;
    const tc_module_table* table = modules.back()->table();
    if (table == nullptr) {
      const char* why = dlerror();
      ADD_FAILURE() << "no module table in " << result.library << ": " << (why ? why : "");
      continue;
    }
    EXPECT_EQ(table->abi_version, uint32_t(TILECRAFT_ABI_VERSION));
    if (table->num_entries != specs[i].entries.size()) {
      ADD_FAILURE() << "module has " << table->num_entries << " entries, expected "
                    << specs[i].entries.size();
      continue;
    }
    for (size_t e = 0; e < specs[i].entries.size(); ++e) {
      const tc_kernel_entry& entry = table->entries[e];
      SCOPED_TRACE(entry.name);
      EXPECT_EQ(std::string(entry.name), entry_name(specs[i].entries[e]));
      EXPECT_NE(std::string(entry.metadata).find(arch_key), std::string::npos);
      check_entry(specs[i].entries[e], entry);
    }
    check_parameter_layouts(*modules.back(), arch);
  }
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
  return modules;
}

}  // namespace tilecraft::emit::compile_testing
