// The on-disk artifact cache (DESIGN "Compilation and the artifact cache"):
//   <root>/v1/<key[0:2]>/<key>/         module.so, source.cu, key.txt, manifest
//   <root>/v1/tmp/<key16>-XXXXXX/       entries being built, each holding a flock()ed .lock while
//                                       its builder lives; renamed into place when complete
//   <root>/v1/locks/<key>.lock          flock()ed while a process compiles that key
//   <root>/v1/failed/<name>-<key8>.cu   sources nvcc rejected, with nvcc's log beside them
//   <root>/v1/aliases/<key[0:2]>/<key>  "this kernel's own key is served by that unit's module":
//                                       kernels built together in one translation unit are
//                                       found again when later asked for alone or in other
//                                       company (signed like manifests)
// Each manifest holds an HMAC of its module under the signing key (compile/signing_key.hpp),
// which lives outside every cache: an entry verifies only if a process of this user wrote it.
// A root that is missing and cannot be created, not writable, or not safely owned still works:
// modules are then built in a private temporary folder (and found in the cache when it can be
// trusted for reading). What a dead process left behind (build folders, private folders) is
// removed by the next process that opens a cache.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

// Holds an exclusive flock() on a key's lock file until destroyed (nothing when not writable).
class KeyLock {
 public:
  KeyLock() = default;
  explicit KeyLock(UniqueFd fd) : fd_(std::move(fd)) {}

 private:
  UniqueFd fd_;
};

// A folder an entry is being built in. Removed when destroyed, unless released (committed into
// the cache, or kept for a person to read); its flock()ed .lock tells sweepers its builder lives.
class BuildDir {
 public:
  BuildDir(std::string path, UniqueFd lock) : path_(std::move(path)), lock_(std::move(lock)) {}
  BuildDir(BuildDir&& other) noexcept
      : path_(std::exchange(other.path_, {})),
        lock_(std::move(other.lock_)),
        released_(std::exchange(other.released_, true)) {}
  BuildDir& operator=(BuildDir&&) = delete;
  ~BuildDir();

  const std::string& path() const { return path_; }
  void release() { released_ = true; }

 private:
  std::string path_;
  UniqueFd lock_;
  bool released_ = false;
};

struct LookupResult {
  std::optional<std::string> module_path;  // a verified module.so: a hit
  std::string invalid_reason;              // set when an entry exists but failed verification
};

class ArtifactCache {
 public:
  // Opens the cache at settings.cache_dir, signed with settings.signing_key_file, creating its
  // folders and the key where missing and repairing what stands in their way. Never fails: an
  // unusable root gives a cache that builds privately, and says why once per process on stderr.
  static ArtifactCache open(const Settings& settings);
  static ArtifactCache open(const std::string& root, const std::string& signing_key_file);

  const std::string& root() const { return root_; }
  bool readable() const { return readable_; }            // lookups can be trusted
  bool writable() const { return writable_; }            // new entries are stored
  const std::string& reason() const { return reason_; }  // why not readable or not writable
  // What opening repaired (a damaged key, a file where a folder belongs), as said on stderr.
  const std::vector<std::string>& repairs() const { return repairs_; }

  std::string entry_dir(const std::string& key) const;

  // The entry's module.so when its manifest's HMAC verifies; else a miss, with the reason when an
  // entry was there but is corrupt, partial or foreign.
  LookupResult lookup(const std::string& key) const;

  // Blocks until this process holds the key's lock across processes, or *cancel becomes true.
  Result<KeyLock> lock(const std::string& key, const std::atomic<bool>* cancel = nullptr) const;

  // A new empty folder to build the key's entry in (under <root>/v1/tmp, or privately).
  Result<BuildDir> make_build_dir(const std::string& key) const;

  // Completes an entry whose build folder holds module.so and source.cu: writes key.txt and the
  // manifest, fsyncs, and renames it into place (replacing an invalid entry, or whatever else
  // stands there). Returns the path of the module.so to load. When not writable the module stays
  // in the (private) build folder. On failure the build folder is removed by its destructor.
  Result<std::string> commit(const std::string& key, BuildDir& build,
                             const std::string& key_text) const;

  // Records that the module of `unit_key` (a translation unit of several kernels) holds the
  // kernel whose single-kernel request has key `kernel_key`. Best effort: does nothing when the
  // cache is not writable or the write fails (the kernel is then compiled again when asked for
  // in other company).
  void record_alias(const std::string& kernel_key, const std::string& unit_key) const;

  // The unit key recorded for `kernel_key`, when its alias verifies under the signing key.
  std::optional<std::string> alias_of(const std::string& kernel_key) const;

  // Keeps a source nvcc rejected (and nvcc's log beside it); returns the kept source's path, or
  // says why it could not be kept.
  std::string keep_failed(const std::string& name, const std::string& key, BuildDir& build,
                          const std::string& log) const;

 private:
  std::string v1() const { return root_ + "/v1"; }

  std::string root_;
  std::string key_;
  bool readable_ = false;
  bool writable_ = false;
  std::string reason_;
  std::vector<std::string> repairs_;
};

// An alias record: binds a kernel's key to the unit key whose module holds it, signed.
std::string alias_text(const std::string& signing_key, const std::string& kernel_key,
                       const std::string& unit_key);

// The manifest of a module: binds the bytes to the key they were built for, under the signing key.
std::string manifest_text(const std::string& signing_key, const std::string& key,
                          const std::string& module_bytes);

}  // namespace tilecraft::compile
