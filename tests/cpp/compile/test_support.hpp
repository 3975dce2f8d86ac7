// Helpers for the compile tests: a fresh cache folder per test, tiny CUDA sources.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "scoped_env.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/settings.hpp"

extern "C" char** environ;

namespace tilecraft::compile::testing {

using tilecraft::testing::ScopedEnv;

inline std::string make_temp_dir(const std::string& stem) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / ("tilecraft-test-" + stem + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data())) return "";
  chmod(pattern.c_str(), 0700);
  return pattern;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The environment's settings with the cache, keys and trusted-key list under `dir`, quietly.
inline Settings settings_in(const std::string& dir) {
  Settings s = settings_from_environment();
  s.cache_dir = dir + "/cache";
  s.signing_key_file = dir + "/state/signing-key";
  s.archive_key_file = dir + "/state/archive-key";
  s.trusted_keys_file = dir + "/config/trusted-keys";  // read when a test writes it
  s.trusted_keys_variable.clear();
  s.quiet = true;
  return s;
}

// Points the settings at a fresh cache folder (the rest from the environment) for one test, and
// restores the previous settings and removes the folder afterwards.
class ScopedCache {
 public:
  explicit ScopedCache(const std::string& stem, int compile_jobs = 2)
      : saved_(tilecraft::settings()), dir_(make_temp_dir(stem)) {
    Settings s = settings_in(dir_);
    s.compile_jobs = compile_jobs;
    tilecraft::set_settings(s);
  }
  ~ScopedCache() {
    tilecraft::set_settings(saved_);
    std::error_code error;
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all, error);
    std::filesystem::remove_all(dir_, error);
  }
  ScopedCache(const ScopedCache&) = delete;
  ScopedCache& operator=(const ScopedCache&) = delete;

  const std::string& dir() const { return dir_; }
  std::string cache_dir() const { return tilecraft::settings().cache_dir; }
  std::string signing_key_file() const { return tilecraft::settings().signing_key_file; }
  void set_cache_dir(const std::string& path) {
    Settings s = tilecraft::settings();
    s.cache_dir = path;
    tilecraft::set_settings(s);
  }

 private:
  Settings saved_;
  std::string dir_;
};

// Points the settings at a cache that every process of this test binary shares (under its build
// folder), and restores the previous settings afterwards. For a suite whose tests each run in a
// process of their own (ctest) but need the same compiled module: the first process compiles it,
// the others (and later runs) find it; processes racing on it wait on the cache's per-key lock.
class SharedKernelCache {
 public:
  SharedKernelCache() : saved_(tilecraft::settings()) {
    tilecraft::set_settings(
        settings_in(std::string(TILECRAFT_TEST_BINARY_DIR) + "/shared-kernel-cache"));
  }
  ~SharedKernelCache() { tilecraft::set_settings(saved_); }
  SharedKernelCache(const SharedKernelCache&) = delete;
  SharedKernelCache& operator=(const SharedKernelCache&) = delete;

 private:
  Settings saved_;
};

// A tiny host-only CUDA translation unit: compiles in about two seconds, needs no CUTLASS.
inline CompileRequest tiny_request(const std::string& name, const std::string& marker,
                                   int answer = 42) {
  CompileRequest request;
  request.name = name;
  request.source =
      "// " + marker + "\n" +
      "extern \"C\" __attribute__((visibility(\"default\"))) int tilecraft_test_answer() "
      "{ return " +
      std::to_string(answer) + "; }\n";
  request.arch_flags = {"-gencode", "arch=compute_80,code=sm_80"};
  return request;
}

// A marker that makes a source (and so its key) new to every cache.
inline std::string unique_marker(const std::string& test) {
  return test + "-" + std::to_string(getpid()) + "-" + std::to_string(std::rand());
}

// The nvcc stand-in of the fault-injection tests (tests/fixtures/fake_nvcc.sh); its behaviour
// is chosen by TILECRAFT_FAKE_NVCC_MODE.
inline std::string fake_nvcc() {
  return std::filesystem::weakly_canonical(std::string(TILECRAFT_TEST_SOURCE_DIR) +
                                           "/../fixtures/fake_nvcc.sh")
      .string();
}

// Starts argv with this process's environment plus `env` ("NAME=value"); returns the pid.
inline pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<std::string> all_env;
  for (char** e = environ; *e; ++e) all_env.emplace_back(*e);
  all_env.insert(all_env.end(), env.begin(), env.end());
  std::vector<char*> args, envp;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  for (const std::string& e : all_env) envp.push_back(const_cast<char*>(e.c_str()));
  args.push_back(nullptr);
  envp.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0].c_str(), nullptr, nullptr, args.data(), envp.data()) != 0)
    return -1;
  return pid;
}

// This test binary again, running only `filter` (a child half of a test).
inline pid_t spawn_self(const std::string& filter, const std::vector<std::string>& env) {
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  return spawn({self, "--gtest_filter=" + filter}, env);
}

inline int wait_exit_code(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// True while pid is a process that has not died (a zombie waiting for its parent counts as dead).
inline bool process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (text.empty()) return false;
  size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z' &&
         text[paren + 2] != 'X';
}

inline bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

inline bool folder_is_empty(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_directory(path, error) && std::filesystem::is_empty(path, error);
}

}  // namespace tilecraft::compile::testing
