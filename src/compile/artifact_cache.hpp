// The on-disk artifact cache (DESIGN "Compilation and the artifact cache"):
//   <root>/secret                       32 random bytes, 0600: the key of every manifest's HMAC
//   <root>/v1/<key[0:2]>/<key>/         module.so, source.cu, key.txt, manifest
//   <root>/v1/tmp/                      entries being built; renamed into place when complete
//   <root>/v1/locks/<key>.lock          flock()ed while a process compiles that key
//   <root>/v1/failed/<name>-<key8>.cu   sources nvcc rejected, with nvcc's log beside them
// A root that is missing and cannot be created, not writable, or not safely owned still works:
// modules are then built in a private temporary folder (and found in the cache when it can be
// trusted for reading).
#pragma once

#include <optional>
#include <string>

#include "compile/file_util.hpp"
#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

// Holds an exclusive flock() on a key's lock file until destroyed; holds nothing when the cache
// is not writable.
class KeyLock {
 public:
  KeyLock() = default;
  explicit KeyLock(UniqueFd fd) : fd_(std::move(fd)) {}

 private:
  UniqueFd fd_;
};

struct LookupResult {
  std::optional<std::string> module_path;  // a verified module.so: a hit
  std::string invalid_reason;              // set when an entry exists but failed verification
};

class ArtifactCache {
 public:
  // Opens the cache at root, creating its folders and secret where missing. Never fails: an
  // unusable root gives a cache that builds privately, and says why once per process on stderr.
  static ArtifactCache open(const std::string& root);

  const std::string& root() const { return root_; }
  bool readable() const { return readable_; }            // lookups can be trusted
  bool writable() const { return writable_; }            // new entries are stored
  const std::string& reason() const { return reason_; }  // why not readable or not writable

  std::string entry_dir(const std::string& key) const;

  // The entry's module.so when its manifest's HMAC verifies; else a miss, with the reason when an
  // entry was there but is corrupt, partial or foreign.
  LookupResult lookup(const std::string& key) const;

  // Blocks until this process holds the key's lock across processes.
  KeyLock lock(const std::string& key) const;

  // A new empty folder to build the key's entry in (under <root>/v1/tmp, or privately).
  Result<std::string> make_build_dir(const std::string& key) const;

  // Completes an entry whose build_dir holds module.so and source.cu: writes key.txt and the
  // manifest, fsyncs, and renames it into place (replacing an invalid entry). Returns the path of
  // the module.so to load. When not writable the module stays in build_dir.
  Result<std::string> commit(const std::string& key, const std::string& build_dir,
                             const std::string& key_text) const;

  // Keeps a source nvcc rejected (and nvcc's log beside it); returns the kept source's path.
  std::string keep_failed(const std::string& name, const std::string& key,
                          const std::string& build_dir, const std::string& log) const;

 private:
  std::string v1() const { return root_ + "/v1"; }

  std::string root_;
  std::string secret_;
  bool readable_ = false;
  bool writable_ = false;
  std::string reason_;
};

// The manifest's HMAC input for a module: binds the bytes to the key they were built for.
std::string manifest_text(const std::string& secret, const std::string& key,
                          const std::string& module_bytes);

}  // namespace tilecraft::compile
