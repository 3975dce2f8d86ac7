// The kernel cache seen as a whole: its entries, their size and use, and removing them (the
// `tilecraft cache` command). An entry is removed under its key's lock, so a process building
// that key never sees half of it; a process that already loaded the module keeps its mapping.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compile/sha256.hpp"
#include "tilecraft/compile/artifact_cache.hpp"
#include "tilecraft/compile/cache_root.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::compile {
namespace {

namespace fs = std::filesystem;

bool is_key(const std::string& name) { return is_lower_hex(name, 64); }

// runtime/kernel_facts.cpp names its files "<40 hex>.txt" (and ".tmp-*.part" while writing).
bool is_facts_name(const std::string& name) {
  return (name.size() == 44 && name.ends_with(".txt") && is_lower_hex(name.substr(0, 40), 40)) ||
         (name.starts_with(".tmp-") && name.ends_with(".part"));
}

// The entry names of a module's table, from its kept source (opened only as a regular file).
std::vector<std::string> kernel_names(const std::string& source_path) {
  std::vector<std::string> names;
  UniqueFd fd(::open(source_path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat info;
  std::string text;
  if (!fd.valid() || fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode) ||
      !read_all(fd.get(), source_path, &text)) {
    return names;
  }
  std::istringstream source(text);
  std::string line;
  bool in_table = false;
  while (std::getline(source, line)) {
    if (line.find("tc_entries[] = {") != std::string::npos) {
      in_table = true;
    } else if (in_table && line.rfind("};", 0) == 0) {
      break;
    } else if (in_table && line.rfind("    {\"", 0) == 0) {
      const size_t end = line.find('"', 6);
      if (end != std::string::npos) names.push_back(line.substr(6, end - 6));
    }
  }
  return names;
}

uint64_t folder_bytes(const fs::path& folder) {
  uint64_t bytes = 0;
  std::error_code error;
  for (const auto& item : fs::recursive_directory_iterator(folder, error)) {
    struct stat info;
    if (lstat(item.path().c_str(), &info) == 0 && S_ISREG(info.st_mode)) bytes += info.st_size;
  }
  return bytes;
}

Result<std::vector<KernelCacheEntry>> entries_of(const ArtifactCache& cache) {
  if (!cache.readable()) {
    return Status::unsupported("the kernel cache at " + cache.root() +
                               " cannot be used: " + cache.reason());
  }
  std::vector<KernelCacheEntry> entries;
  std::error_code error;
  for (const auto& prefix : fs::directory_iterator(cache.root() + "/v1", error)) {
    const std::string two = prefix.path().filename().string();
    // A shard or entry that is a link is never followed: it leads out of the cache.
    if (two.size() != 2 || !is_own_real_dir(prefix.path().string())) continue;
    for (const auto& item : fs::directory_iterator(prefix.path(), error)) {
      const std::string key = item.path().filename().string();
      if (!is_key(key) || key.substr(0, 2) != two || !is_own_real_dir(item.path().string())) {
        continue;
      }
      KernelCacheEntry entry;
      entry.key = key;
      entry.path = item.path().string();
      entry.bytes = folder_bytes(item.path());
      // Verifying reads the module: its access time is put back, so looking is not use.
      struct stat info;
      const std::string module = entry.path + "/module.so";
      const bool stated = lstat(module.c_str(), &info) == 0;
      if (stated || lstat(entry.path.c_str(), &info) == 0) {
        entry.last_used = std::max<int64_t>(info.st_atime, info.st_mtime);
      }
      const LookupResult found = cache.lookup(key);
      if (stated) {
        const struct timespec times[2] = {info.st_atim, {0, UTIME_OMIT}};
        utimensat(AT_FDCWD, module.c_str(), times, AT_SYMLINK_NOFOLLOW);
      }
      entry.valid = found.module_path.has_value();
      entry.invalid_reason = found.invalid_reason;
      entry.kernels = kernel_names(entry.path + "/source.cu");
      entries.push_back(std::move(entry));
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const KernelCacheEntry& a, const KernelCacheEntry& b) {
              return a.last_used != b.last_used ? a.last_used < b.last_used : a.key < b.key;
            });
  return entries;
}

// Removes one entry under its key's lock; true when it is gone.
bool remove_entry(const ArtifactCache& cache, const KernelCacheEntry& entry) {
  auto lock = cache.lock(entry.key);
  if (!lock) return false;
  return remove_path(entry.path);
}

}  // namespace

Result<KernelCacheStats> kernel_cache_stats() {
  const ArtifactCache cache = ArtifactCache::open(settings());
  auto entries = entries_of(cache);
  if (!entries) return entries.status();
  KernelCacheStats stats;
  stats.folder = cache.root();
  for (const auto& entry : *entries) {
    ++stats.entries;
    stats.kernels += entry.kernels.size();
    stats.bytes += entry.bytes;
    if (!entry.valid) ++stats.invalid;
  }
  return stats;
}

Result<std::vector<KernelCacheEntry>> list_kernel_cache() {
  return entries_of(ArtifactCache::open(settings()));
}

Result<size_t> clear_kernel_cache(std::vector<std::string>* left_alone) {
  return prune_kernel_cache(0, left_alone);
}

Result<size_t> prune_kernel_cache(uint64_t max_bytes, std::vector<std::string>* left_alone) {
  const ArtifactCache cache = ArtifactCache::open(settings());
  if (!cache.writable()) {
    return Status::unsupported("the kernel cache at " + cache.root() +
                               " cannot be changed: " + cache.reason());
  }
  auto entries = entries_of(cache);
  if (!entries) return entries.status();
  uint64_t total = 0;
  for (const auto& entry : *entries) total += entry.bytes;
  size_t removed = 0;
  // Entries that do not verify go first, then the least recently used.
  std::stable_partition(entries->begin(), entries->end(),
                        [](const KernelCacheEntry& e) { return !e.valid; });
  for (const auto& entry : *entries) {
    if (total <= max_bytes && entry.valid) break;
    if (!remove_entry(cache, entry)) continue;
    total -= std::min(total, entry.bytes);
    ++removed;
  }
  // An alias left by a pruned unit leads nowhere and reads as a miss; a clear removes them all,
  // and the kernel facts: only files tilecraft wrote, never through a link.
  if (max_bytes == 0) {
    const std::string facts = cache.root() + "/facts";
    remove_own_files(facts + "/v1", is_facts_name, "tilecraft-kernel-facts", left_alone);
    if (is_own_real_dir(facts)) {
      std::error_code error;
      for (const auto& item : fs::directory_iterator(facts, error)) {
        if (item.path().filename() != "v1") {
          note_left_alone(item.path().string(), "not a file tilecraft wrote", left_alone);
        }
      }
    }
    rmdir(facts.c_str());
    const std::string aliases = cache.root() + "/v1/aliases";
    if (is_own_real_dir(aliases)) {
      std::error_code error;
      for (const auto& shard : fs::directory_iterator(aliases, error)) {
        const std::string two = shard.path().filename().string();
        remove_own_files(
            shard.path().string(),
            [&two](const std::string& name) { return is_key(name) && name.starts_with(two); },
            "tilecraft-alias", left_alone);
      }
      rmdir(aliases.c_str());
    }
  }
  return removed;
}

}  // namespace tilecraft::compile
