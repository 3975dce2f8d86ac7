// Compilation: generated source -> shared object on disk, through the artifact cache.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

struct CompileRequest {
  std::string name;                     // for file names and progress lines
  std::string source;                   // one CUDA C++ translation unit
  std::vector<std::string> arch_flags;  // e.g. {"-gencode", "arch=compute_80,code=sm_80"}
};

struct CompiledModule {
  std::string path;  // a shared object that tilecraft wrote and verified
  std::string key;   // the cache key (hex SHA-256)
  bool from_cache = false;
  double compile_seconds = 0.0;  // 0 when from the cache
  // Found for a single-kernel request through a unit's alias (record_unit_serves): the module
  // holds other kernels too, and its resource report numbers its kernels in the unit's order.
  bool shared_unit = false;
};

// Lets the thread that starts compiles stop them. While a scope lives on a thread, compiles
// started on that thread call `interrupted` about every 50 ms while they wait (on the starting
// thread); once it returns true, every compiler process they started is killed with all it
// started, nothing of theirs is cached or left behind, and each unfinished request fails with
// StatusCode::kCancelled. The Python binding turns Ctrl-C into KeyboardInterrupt this way.
// Scopes nest: compiles stop when the innermost scope's function or any enclosing one's says so.
class InterruptScope {
 public:
  explicit InterruptScope(std::function<bool()> interrupted);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  std::function<bool()> previous_;
};

// Receives human-readable progress lines ("[2/5] compiled foo in 9.1 s").
using ProgressFn = std::function<void(std::string_view line)>;
// Writes progress to stderr unless Settings::quiet.
void default_progress(std::string_view line);

// How many modules build at once when Settings::compile_jobs processes may run: each build runs
// its device and host halves at the same time, so half as many (at least one).
int module_builds_at_once(int compile_jobs);

// The cache key of a request: SHA-256 over the ABI version, the source, the compiler's identity
// and full flags, and the CUTLASS version. Same key, same binary.
std::string cache_key(const CompileRequest& request);

// Finds each request's module in the cache or compiles it, several at a time (Settings::
// compile_jobs). Concurrent processes asking for the same key compile it once. A compile
// failure's Status carries nvcc's own message, the command line and the kept source's path.
std::vector<Result<CompiledModule>> build_modules(const std::vector<CompileRequest>& requests,
                                                  const ProgressFn& progress = default_progress);

// The requests already in the cache (nothing is compiled); nullopt for the others. A request of
// one kernel is also found in a module built for several (see record_unit_serves).
std::vector<std::optional<CompiledModule>> find_cached_modules(
    const std::vector<CompileRequest>& requests);

// Records that `unit`, a module built from one request holding several kernels, serves each of
// `kernels` (their single-kernel requests), so that find_cached_modules finds it for them later
// in any company: kernels compiled together are not compiled again when next asked for alone or
// grouped otherwise. Best effort (nothing is recorded in a cache that is not writable).
void record_unit_serves(const CompiledModule& unit, const std::vector<CompileRequest>& kernels);
// A module found in the cache that cannot be loaded (damaged after it was signed, or an imported
// module that does not load on this machine) is a miss: this removes its entry (under its key's
// lock) and says so on stderr, so that the next build compiles it again.
void discard_cached_module(const CompiledModule& module, const std::string& why);

Result<CompiledModule> build_module(const CompileRequest& request,
                                    const ProgressFn& progress = default_progress);

// What export_cache / import_cache did.
struct CacheTransfer {
  size_t entries = 0;              // written to the archive, or imported into the cache
  size_t already_present = 0;      // import: valid entries the cache had already
  size_t skipped = 0;              // export: entries that do not verify here, left out
  std::vector<std::string> notes;  // why each skipped entry was skipped
};

// Writes every verified module of the cache (Settings::cache_dir) into one archive file, signed
// with an Ed25519 key pair the user holds: key_file, else Settings::archive_key_file (made on
// first use; a note in the report gives its public key). Each module is listed with its source,
// key text and their SHA-256s under its entry's key, and the signature covers that list. The
// archive is written beside path and renamed over it; path may name nothing or a regular file
// (anything else is refused). Cache keys name no path of this machine, so another machine with
// the same CUDA toolkit and CUTLASS headers finds the imported modules without compiling.
Result<CacheTransfer> export_cache(const std::string& archive_path,
                                   const std::string& key_file = "");

// Imports an archive from export_cache only when it is signed by a key the user trusts: one of
// trusted_keys (public keys "tilecraft-ed25519:<hex>", or absolute paths of files listing them),
// the keys of Settings::trusted_keys_file, or the user's own archive key. It checks the signature,
// then every file (sizes, digests, ELF shared objects, each entry's key against its source and
// key text) before writing anything; any fault refuses the whole archive with a message naming
// the entry and the fault. Entries are then stored as if compiled here, signed with this user's
// signing key. Memory use does not grow with the archive (modules are streamed).
Result<CacheTransfer> import_cache(const std::string& archive_path,
                                   const std::vector<std::string>& trusted_keys = {});

// Makes a new archive key pair at path (nothing may be there; "" : Settings::archive_key_file) and
// returns its public key ("tilecraft-ed25519:<hex>"), to give to those who import your archives.
Result<std::string> make_archive_key(const std::string& path = "");
// The public key of the archive key pair at path ("" : Settings::archive_key_file).
Result<std::string> archive_public_key(const std::string& path = "");

// ---- the kernel cache as a whole (the `tilecraft cache` command) ------------------------------

struct KernelCacheEntry {
  std::string key;                   // hex SHA-256
  std::string path;                  // the entry's folder
  std::vector<std::string> kernels;  // the entry names of its module
  uint64_t bytes = 0;
  int64_t last_used = 0;  // seconds since the epoch: the module's last access or write
  bool valid = false;     // its module verifies (HMAC, size) with this user's signing key
  std::string invalid_reason;
};

struct KernelCacheStats {
  std::string folder;
  size_t entries = 0, kernels = 0, invalid = 0;
  uint64_t bytes = 0;
};

Result<KernelCacheStats> kernel_cache_stats();
// Least recently used first.
Result<std::vector<KernelCacheEntry>> list_kernel_cache();
// Removes entries that do not verify, then the least recently used ones, until the cache holds at
// most max_bytes; returns how many were removed. Each goes under its key's lock. Only entries in
// tilecraft's own layout are removed, and no link is followed out of the cache: anything else is
// left where it is and said so (in *left_alone, or on stderr when it is null).
Result<size_t> prune_kernel_cache(uint64_t max_bytes,
                                  std::vector<std::string>* left_alone = nullptr);
// Removes every entry (and the kernel facts index, and the alias records); returns how many
// entries were removed. Leaves what tilecraft did not write, as prune_kernel_cache does.
Result<size_t> clear_kernel_cache(std::vector<std::string>* left_alone = nullptr);

// Lower-case hex SHA-256 of data (64 characters); for keys of other caches too.
std::string sha256_hex(std::string_view data);

}  // namespace tilecraft::compile
