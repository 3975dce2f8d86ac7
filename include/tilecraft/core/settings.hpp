// One typed table of every environment variable tilecraft reads. Read once, overridable from code.
#pragma once

#include <string>
#include <vector>

namespace tilecraft {

struct Settings {
  // TILECRAFT_CACHE_DIR; default $XDG_CACHE_HOME/tilecraft or ~/.cache/tilecraft. Always an
  // absolute path: a relative TILECRAFT_CACHE_DIR is resolved once against the working folder
  // (and a note says so); a relative XDG_CACHE_HOME or HOME is ignored, as the XDG Base
  // Directory specification requires.
  std::string cache_dir;
  // TILECRAFT_SIGNING_KEY_FILE: the 32 random bytes that sign every cached module's manifest. It
  // lives outside the cache, so a cache folder planted by someone else can carry no key that
  // tilecraft trusts. Default $XDG_STATE_HOME/tilecraft/signing-key or
  // ~/.local/state/tilecraft/signing-key.
  std::string signing_key_file;
  // TILECRAFT_ARCHIVE_KEY_FILE: the Ed25519 key pair that signs the archives export_cache writes
  // (made there on the first export when missing). Default $XDG_STATE_HOME/tilecraft/archive-key
  // or ~/.local/state/tilecraft/archive-key.
  std::string archive_key_file;
  // TILECRAFT_TRUSTED_KEYS: a file of the public keys whose archives import_cache accepts, one a
  // line ("tilecraft-ed25519:<hex>", '#' comments). Default $XDG_CONFIG_HOME/tilecraft/trusted-keys
  // or ~/.config/tilecraft/trusted-keys (read when it exists).
  std::string trusted_keys_file;
  // "TILECRAFT_TRUSTED_KEYS" when the variable named trusted_keys_file, else "" (the default).
  std::string trusted_keys_variable;
  // TILECRAFT_CUTLASS_DIR or CUTLASS_DIR: a folder holding include/cutlass (and
  // tools/util/include). Default: the CUTLASS headers the library was built against.
  std::string cutlass_dir;
  // Which variable named cutlass_dir ("TILECRAFT_CUTLASS_DIR", "CUTLASS_DIR"), or "" for the
  // built-in default: error messages name what the user set.
  std::string cutlass_dir_variable;
  // The folder holding tilecraft/jit and tilecraft/abi, the headers generated modules include: the
  // one installed beside the library, else the source tree's include folder it was built from.
  std::string jit_include_dir;
  // TILECRAFT_NVCC; else $CUDA_HOME/bin/nvcc, $CUDA_PATH/bin/nvcc, nvcc in an absolute folder of
  // PATH, /usr/local/cuda/bin/nvcc.
  std::string nvcc;
  // TILECRAFT_COMPILE_JOBS: parallel compiler processes, 1 to kMaxCompileJobs (default: threads).
  int compile_jobs = 0;
  // TILECRAFT_VERBOSE=1: print compiler command lines and cache decisions to stderr.
  bool verbose = false;
  // TILECRAFT_QUIET=1: no progress lines on stderr.
  bool quiet = false;
  // TILECRAFT_TUNING: auto (default), blocking, off or force (tilecraft::tune::TuningMode).
  std::string tuning = "auto";
  // TILECRAFT_TUNING_CANDIDATES: kernels a tuning run measures, 1 to 64 (default 6).
  int tuning_candidates = 6;
  // TILECRAFT_TUNING_SECONDS: one tuning run's wall-clock budget in seconds (0, default: none).
  double tuning_seconds = 0;
  // What reading the environment decided on the user's behalf (a relative path resolved or
  // ignored); printed once on stderr when the table is first used, unless quiet.
  std::vector<std::string> notes;
};

inline constexpr int kMaxCompileJobs = 4096;

// The process-wide settings, read from the environment on first use. Throws tilecraft::Error
// naming the variable when a value is malformed.
const Settings& settings();
// Replaces the settings (tests, embedding applications). References returned earlier stay valid
// and keep the old values; compiles already running keep the table they started with.
void set_settings(const Settings& settings);
// Re-reads the environment.
Settings settings_from_environment();

}  // namespace tilecraft
