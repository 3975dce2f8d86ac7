#include "tilecraft/core/settings.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <list>
#include <mutex>
#include <set>
#include <thread>

#include "tilecraft/core/program_path.hpp"
#include "tilecraft/core/status.hpp"

namespace tilecraft {
namespace {

// The folder of libtilecraft itself, or "" when it cannot be told.
std::filesystem::path library_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<const void*>(&library_dir), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  std::error_code error;
  std::filesystem::path library = std::filesystem::canonical(info.dli_fname, error);
  return error ? std::filesystem::path() : library.parent_path();
}

// <folder of libtilecraft>/<folder> (a path relative to it, such as ../include) when it holds
// `marker`, or "".
std::string beside_library(const char* folder, const char* marker) {
  const std::filesystem::path dir = library_dir();
  if (dir.empty() || *folder == '\0') return "";
  std::error_code error;
  const std::filesystem::path candidate = (dir / folder).lexically_normal();
  return std::filesystem::is_regular_file(candidate / marker, error) ? candidate.string() : "";
}

namespace fs = std::filesystem;

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

// Digits only: no sign, no spaces on either side, no trailing text.
int env_int(const char* name, int fallback, int minimum, int maximum) {
  const char* value = env(name);
  if (!value) return fallback;
  std::string text = value;
  bool digits = text.size() <= 9 && text.find_first_not_of("0123456789") == std::string::npos;
  long parsed = digits ? std::strtol(text.c_str(), nullptr, 10) : -1;
  if (!digits || parsed < minimum || parsed > maximum) {
    throw Error(Status::invalid(std::string(name) + ": expected an integer from " +
                                std::to_string(minimum) + " to " + std::to_string(maximum) +
                                ", got '" + text + "'"));
  }
  return static_cast<int>(parsed);
}

// A plain decimal number >= 0, e.g. "90" or "2.5".
double env_seconds(const char* name, double fallback) {
  const char* value = env(name);
  if (!value) return fallback;
  const std::string text = value;
  char* end = nullptr;
  const double parsed = std::strtod(text.c_str(), &end);
  const bool plain = text.find_first_not_of("0123456789.") == std::string::npos;
  if (!plain || end != text.c_str() + text.size() || !(parsed >= 0) || parsed > 1e7) {
    throw Error(Status::invalid(std::string(name) +
                                ": expected a number of seconds >= 0 (0: no limit), got '" + text +
                                "'"));
  }
  return parsed;
}

std::string env_choice(const char* name, const std::string& fallback,
                       std::initializer_list<const char*> choices) {
  const char* value = env(name);
  if (!value) return fallback;
  std::string names;
  for (const char* choice : choices) {
    if (std::string(value) == choice) return value;
    names += (names.empty() ? "" : ", ") + std::string(choice);
  }
  throw Error(
      Status::invalid(std::string(name) + ": expected one of " + names + ", got '" + value + "'"));
}

bool is_absolute(const std::string& path) { return !path.empty() && path.front() == '/'; }

// A path the user gave relative to the working folder: resolved now, once, so that a later
// change of folder (or a folder holding planted files) cannot change what it names.
std::string resolved(const char* variable, const std::string& path, Settings* s) {
  if (is_absolute(path)) return path;
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  if (error) {
    throw Error(
        Status::invalid(std::string(variable) + ": expected an absolute path, got '" + path +
                        "' (relative) and the working folder cannot be read: " + error.message()));
  }
  std::string text = absolute.lexically_normal().string();
  s->notes.push_back(std::string("tilecraft: ") + variable + "='" + path +
                     "' is a relative path: using " + text);
  return text;
}

// Adds a note once: several settings default under the same base folder.
void note_once(Settings* s, const std::string& note) {
  if (std::find(s->notes.begin(), s->notes.end(), note) == s->notes.end()) s->notes.push_back(note);
}

// An XDG base folder: only an absolute value counts (XDG Base Directory specification).
const char* xdg_base(const char* variable, Settings* s) {
  const char* value = env(variable);
  if (!value || is_absolute(value)) return value;
  note_once(s, std::string("tilecraft: ignoring ") + variable + "='" + value +
                   "': it is relative, and the XDG Base Directory specification says "
                   "relative paths are invalid there");
  return nullptr;
}

const char* home(Settings* s) {
  const char* value = env("HOME");
  if (!value || is_absolute(value)) return value;
  note_once(s, std::string("tilecraft: ignoring HOME='") + value + "': it is relative");
  return nullptr;
}

// The path `variable` names, else <xdg>/tilecraft<name>, ~<home_folder>/tilecraft<name>, fallback.
std::string path_setting(Settings* s, const char* variable, const char* xdg,
                         const char* home_folder, const std::string& name,
                         const std::string& fallback) {
  if (const char* value = env(variable)) return resolved(variable, value, s);
  if (const char* base = xdg_base(xdg, s)) return std::string(base) + "/tilecraft" + name;
  if (const char* dir = home(s)) return std::string(dir) + home_folder + "/tilecraft" + name;
  return fallback;
}

bool is_executable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

std::string find_nvcc(Settings* s) {
  if (const char* explicit_nvcc = env("TILECRAFT_NVCC")) {
    std::string nvcc = explicit_nvcc;
    if (nvcc.find('/') != std::string::npos) return resolved("TILECRAFT_NVCC", nvcc, s);
    std::string found = find_program_on_path(nvcc);
    return found.empty() ? nvcc : found;  // a bare name not found: compiling says so
  }
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH", "CUDA_INSTALL_PATH"}) {
    if (const char* dir = env(variable); dir && is_absolute(dir)) {
      std::string candidate = std::string(dir) + "/bin/nvcc";
      if (is_executable(candidate)) return candidate;
    }
  }
  if (std::string found = find_program_on_path("nvcc"); !found.empty()) return found;
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

void print_notes_once(const Settings& s) {
  static std::set<std::string> printed;
  if (s.quiet) return;
  for (const std::string& note : s.notes) {
    if (!printed.insert(note).second) continue;
    std::string line = note + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
}

}  // namespace

Settings settings_from_environment() {
  Settings s;
  const std::string uid = std::to_string(geteuid());
  s.cache_dir = path_setting(&s, "TILECRAFT_CACHE_DIR", "XDG_CACHE_HOME", "/.cache", "",
                             "/tmp/tilecraft-cache-" + uid);
  s.signing_key_file =
      path_setting(&s, "TILECRAFT_SIGNING_KEY_FILE", "XDG_STATE_HOME", "/.local/state",
                   "/signing-key", "/tmp/tilecraft-state-" + uid + "/signing-key");
  s.archive_key_file =
      path_setting(&s, "TILECRAFT_ARCHIVE_KEY_FILE", "XDG_STATE_HOME", "/.local/state",
                   "/archive-key", "/tmp/tilecraft-state-" + uid + "/archive-key");
  s.trusted_keys_file = path_setting(&s, "TILECRAFT_TRUSTED_KEYS", "XDG_CONFIG_HOME", "/.config",
                                     "/trusted-keys", "");
  if (env("TILECRAFT_TRUSTED_KEYS")) s.trusted_keys_variable = "TILECRAFT_TRUSTED_KEYS";
  for (const char* variable : {"TILECRAFT_CUTLASS_DIR", "CUTLASS_DIR"}) {
    if (const char* dir = env(variable)) {
      s.cutlass_dir = resolved(variable, dir, &s);
      s.cutlass_dir_variable = variable;
      break;
    }
  }
  if (s.cutlass_dir_variable.empty()) {
    // The Python package's wheel carries the pinned CUTLASS headers in tilecraft/cutlass; an
    // installed C++ package (cmake --install) in <prefix>/share/tilecraft/cutlass.
    constexpr const char* kCutlassMarker = "include/cutlass/version.h";
    std::string bundled = beside_library("cutlass", kCutlassMarker);
    if (bundled.empty()) bundled = beside_library(TILECRAFT_INSTALLED_CUTLASS_DIR, kCutlassMarker);
    s.cutlass_dir = bundled.empty() ? std::string(TILECRAFT_DEFAULT_CUTLASS_DIR) : bundled;
  }
  // The wheel carries them in tilecraft/include, beside the library; an installed C++ package in
  // <prefix>/include.
  constexpr const char* kJitMarker = "tilecraft/jit/module_prelude.cuh";
  std::string jit = beside_library("include", kJitMarker);
  if (jit.empty()) jit = beside_library(TILECRAFT_INSTALLED_INCLUDE_DIR, kJitMarker);
  s.jit_include_dir = jit.empty() ? std::string(TILECRAFT_DEFAULT_JIT_INCLUDE_DIR) : jit;
  s.nvcc = find_nvcc(&s);
  unsigned hardware = std::thread::hardware_concurrency();
  s.compile_jobs =
      env_int("TILECRAFT_COMPILE_JOBS", hardware ? static_cast<int>(std::min(hardware, 4096u)) : 2,
              1, kMaxCompileJobs);
  s.verbose = env_flag("TILECRAFT_VERBOSE");
  s.quiet = env_flag("TILECRAFT_QUIET");
  s.tuning =
      env_choice("TILECRAFT_TUNING", "auto", {"auto", "automatic", "blocking", "off", "force"});
  s.tuning_candidates = env_int("TILECRAFT_TUNING_CANDIDATES", 6, 1, 64);
  s.tuning_seconds = env_seconds("TILECRAFT_TUNING_SECONDS", 0);
  return s;
}

const Settings& settings() {
  std::lock_guard lock(settings_mutex());
  if (!current()) {
    current() = &all_tables().emplace_back(settings_from_environment());
    print_notes_once(*current());
  }
  return *current();
}

void set_settings(const Settings& s) {
  std::lock_guard lock(settings_mutex());
  current() = &all_tables().emplace_back(s);
  print_notes_once(s);
}

}  // namespace tilecraft
