// Helpers for the compile tests: a fresh cache folder per test, tiny CUDA sources.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::compile::testing {

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

// Points the settings at a fresh cache folder (the rest from the environment) for one test, and
// restores the previous settings and removes the folder afterwards.
class ScopedCache {
 public:
  explicit ScopedCache(const std::string& stem, int compile_jobs = 2)
      : saved_(tilecraft::settings()), dir_(make_temp_dir(stem)) {
    Settings s = settings_from_environment();
    s.cache_dir = dir_ + "/cache";
    s.compile_jobs = compile_jobs;
    s.quiet = true;
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
  void set_cache_dir(const std::string& path) {
    Settings s = tilecraft::settings();
    s.cache_dir = path;
    tilecraft::set_settings(s);
  }

 private:
  Settings saved_;
  std::string dir_;
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

}  // namespace tilecraft::compile::testing
