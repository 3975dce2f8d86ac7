#include "tilecraft/core/settings.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <list>
#include <mutex>
#include <thread>

#include "tilecraft/core/status.hpp"

namespace tilecraft {
namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return (value && *value) ? value : nullptr;
}

bool env_flag(const char* name) {
  const char* value = env(name);
  if (!value) return false;
  std::string text = value;
  if (text == "1" || text == "true" || text == "yes" || text == "on") return true;
  if (text == "0" || text == "false" || text == "no" || text == "off") return false;
  throw Error(Status::invalid(std::string(name) + ": expected 0/1/true/false, got '" + text + "'"));
}

int env_int(const char* name, int fallback, int minimum) {
  const char* value = env(name);
  if (!value) return fallback;
  char* end = nullptr;
  long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || parsed < minimum || parsed > 4096) {
    throw Error(Status::invalid(std::string(name) + ": expected an integer >= " +
                                std::to_string(minimum) + ", got '" + value + "'"));
  }
  return static_cast<int>(parsed);
}

std::string default_cache_dir() {
  if (const char* xdg = env("XDG_CACHE_HOME")) return std::string(xdg) + "/tilecraft";
  if (const char* home = env("HOME")) return std::string(home) + "/.cache/tilecraft";
  return "/tmp/tilecraft-cache-" + std::to_string(getuid());
}

bool is_executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

std::string find_nvcc() {
  if (const char* explicit_nvcc = env("TILECRAFT_NVCC")) return explicit_nvcc;
  for (const char* home : {"CUDA_HOME", "CUDA_PATH", "CUDA_INSTALL_PATH"}) {
    if (const char* dir = env(home)) {
      std::string candidate = std::string(dir) + "/bin/nvcc";
      if (is_executable(candidate)) return candidate;
    }
  }
  if (const char* path = env("PATH")) {
    std::string all = path;
    size_t start = 0;
    while (start <= all.size()) {
      size_t end = all.find(':', start);
      if (end == std::string::npos) end = all.size();
      std::string candidate = all.substr(start, end - start) + "/nvcc";
      if (end > start && is_executable(candidate)) return candidate;
      start = end + 1;
    }
  }
  if (is_executable("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "";  // compiling reports that no nvcc was found
}

std::mutex& settings_mutex() {
  static std::mutex mutex;
  return mutex;
}
// Every table ever made stays alive, so a reference settings() returned never dangles after
// set_settings() (a handful of tables per process at most).
std::list<Settings>& all_tables() {
  static std::list<Settings> tables;
  return tables;
}
const Settings*& current() {
  static const Settings* instance = nullptr;
  return instance;
}

}  // namespace

Settings settings_from_environment() {
  Settings s;
  s.cache_dir = env("TILECRAFT_CACHE_DIR") ? env("TILECRAFT_CACHE_DIR") : default_cache_dir();
  if (const char* dir = env("TILECRAFT_CUTLASS_DIR")) {
    s.cutlass_dir = dir;
  } else if (const char* cutlass = env("CUTLASS_DIR")) {
    s.cutlass_dir = cutlass;
  } else {
    s.cutlass_dir = TILECRAFT_DEFAULT_CUTLASS_DIR;
  }
  s.nvcc = find_nvcc();
  unsigned hardware = std::thread::hardware_concurrency();
  s.compile_jobs = env_int("TILECRAFT_COMPILE_JOBS", hardware ? static_cast<int>(hardware) : 2, 1);
  s.verbose = env_flag("TILECRAFT_VERBOSE");
  s.quiet = env_flag("TILECRAFT_QUIET");
  s.keep_sources = env_flag("TILECRAFT_KEEP_SOURCES");
  return s;
}

const Settings& settings() {
  std::lock_guard lock(settings_mutex());
  if (!current()) current() = &all_tables().emplace_back(settings_from_environment());
  return *current();
}

void set_settings(const Settings& s) {
  std::lock_guard lock(settings_mutex());
  current() = &all_tables().emplace_back(s);
}

}  // namespace tilecraft
