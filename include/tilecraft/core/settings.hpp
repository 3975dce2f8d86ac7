// One typed table of every environment variable tilecraft reads. Read once, overridable from code.
#pragma once

#include <string>

namespace tilecraft {

struct Settings {
  // TILECRAFT_CACHE_DIR; default $XDG_CACHE_HOME/tilecraft or ~/.cache/tilecraft.
  std::string cache_dir;
  // TILECRAFT_CUTLASS_DIR or CUTLASS_DIR: a folder holding include/cutlass (and
  // tools/util/include). Default: the CUTLASS headers the library was built against.
  std::string cutlass_dir;
  // TILECRAFT_NVCC; else $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc, nvcc on PATH,
  // /usr/local/cuda/bin/nvcc.
  std::string nvcc;
  // TILECRAFT_COMPILE_JOBS: parallel compiler processes; default: hardware threads.
  int compile_jobs = 0;
  // TILECRAFT_VERBOSE=1: print compiler command lines and cache decisions to stderr.
  bool verbose = false;
  // TILECRAFT_QUIET=1: no progress lines on stderr.
  bool quiet = false;
  // TILECRAFT_KEEP_SOURCES=1: keep generated sources beside cached modules even on success.
  bool keep_sources = false;
};

// The process-wide settings, read from the environment on first use. Throws tilecraft::Error
// naming the variable when a value is malformed.
const Settings& settings();
// Replaces the settings (tests, embedding applications). References returned earlier stay valid
// and keep the old values; compiles already running keep the table they started with.
void set_settings(const Settings& settings);
// Re-reads the environment.
Settings settings_from_environment();

}  // namespace tilecraft
