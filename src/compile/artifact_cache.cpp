#include "tilecraft/compile/artifact_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include "compile/sha256.hpp"
#include "compile/signing_key.hpp"
#include "tilecraft/compile/cache_root.hpp"

namespace tilecraft::compile {
namespace {

namespace fs = std::filesystem;

// A folder without a lock file (a builder killed between mkdtemp and its lock, a folder moved
// aside and not yet removed, an older tilecraft's build) is removed once it is this old.
constexpr auto kUnlockedLeftoverAge = std::chrono::hours(1);
constexpr auto kLockPoll = std::chrono::milliseconds(20);
constexpr const char* kBuildLock = "/.lock";

bool first_time_for(const std::string& what) {
  static std::mutex mutex;
  static std::set<std::string> done;
  std::lock_guard lock(mutex);
  return done.insert(what).second;
}

void warn_once(const std::string& line) {
  if (!first_time_for("warn " + line)) return;
  const std::string text = line + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
}

// Takes an exclusive flock on a fresh lock file inside folder: held as long as the fd is open.
// The file is locked before it appears under its name (created aside, locked, then linked in):
// a process sweeping leftovers that opens the lock finds none (a fresh folder, left alone) or
// finds it held, never a lock it can take in the moment between creation and flock (it then took
// the new folder for a dead process's and removed it: seen as a flaky test under parallel ctest).
Result<UniqueFd> hold_folder_lock(const std::string& folder) {
  const std::string path = folder + kBuildLock;
  const std::string aside = path + ".new";
  UniqueFd fd(::open(aside.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  const bool held = fd.valid() && flock(fd.get(), LOCK_EX | LOCK_NB) == 0 &&
                    ::link(aside.c_str(), path.c_str()) == 0;
  const Status failure = Status::internal(errno_text("could not lock", path));
  if (fd.valid()) ::unlink(aside.c_str());
  if (!held) return failure;
  return fd;
}

enum class Holder { kAlive, kDead, kUnknown };

// Whether the process that made a build folder still lives: its .lock is flock()ed while it does.
// kDead comes with the lock held in *taken, so that nobody can adopt the folder meanwhile.
Holder folder_holder(const std::string& folder, UniqueFd* taken) {
  UniqueFd fd(
      ::open((folder + kBuildLock).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return Holder::kUnknown;
  struct stat info;
  if (fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) return Holder::kUnknown;
  if (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    return errno == EWOULDBLOCK ? Holder::kAlive : Holder::kUnknown;
  }
  *taken = std::move(fd);
  return Holder::kDead;
}

bool older_than(const struct stat& info, std::chrono::seconds age) {
  auto now = std::chrono::system_clock::now();
  auto written = std::chrono::system_clock::from_time_t(info.st_mtime);
  return now - written > age;
}

// Removes, from folder, the entries whose names start with prefix and that a dead process left:
// folders whose .lock no process holds, and anything without a lock once it is old enough.
// Returns how many it removed.
int sweep_leftovers(const std::string& folder, const std::string& prefix) {
  int removed = 0;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    std::string path = it->path().string();
    struct stat info;
    if (lstat(path.c_str(), &info) != 0 || info.st_uid != geteuid()) continue;
    UniqueFd taken;
    Holder holder = S_ISDIR(info.st_mode) ? folder_holder(path, &taken) : Holder::kUnknown;
    bool stale =
        holder == Holder::kDead ||
        (holder == Holder::kUnknown &&
         older_than(info, std::chrono::duration_cast<std::chrono::seconds>(kUnlockedLeftoverAge)));
    if (stale && remove_path(path)) ++removed;
  }
  return removed;
}

std::string temp_base() {
  const char* tmpdir = std::getenv("TMPDIR");
  return (tmpdir && tmpdir[0] == '/') ? tmpdir : "/tmp";
}

std::string private_prefix() { return "tilecraft-private-" + std::to_string(geteuid()) + "-"; }

// This process's private folder for modules built outside the cache: 0700, under $TMPDIR (when
// absolute), locked while the process lives, removed when it exits (and by the next process to
// open a cache when it was killed).
struct PrivateDir {
  std::string path;
  UniqueFd lock;
  ~PrivateDir() {
    if (!path.empty()) remove_path(path);
  }
};

// Makes a new folder from a mkdtemp pattern (*pattern becomes its path) and locks it; `what`
// names it in the message of a failure, after which nothing is left.
Result<UniqueFd> make_locked_folder(std::string* pattern, const std::string& what) {
  if (!mkdtemp(pattern->data())) {
    return Status::internal(errno_text("could not create " + what, *pattern));
  }
  Result<UniqueFd> held = hold_folder_lock(*pattern);
  if (!held) remove_path(*pattern);
  return held;
}

Result<std::string> private_dir() {
  static std::mutex mutex;
  static PrivateDir holder;
  std::lock_guard lock(mutex);
  if (!holder.path.empty()) return holder.path;
  std::string pattern = temp_base() + "/" + private_prefix() + "XXXXXX";
  Result<UniqueFd> held = make_locked_folder(&pattern, "a private folder");
  if (!held) return held.status();
  holder.lock = std::move(*held);
  holder.path = pattern;
  return holder.path;
}

std::string safe_file_name(const std::string& name) {
  std::string safe;
  for (char c : name.substr(0, 100)) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '.' || c == '_' || c == '-';
    safe += plain ? c : '_';
  }
  if (safe.empty() || safe[0] == '.') safe = "module" + safe;
  return safe;
}

// Opens a file of an entry for reading: never through a symbolic link, never blocking on a fifo.
Status read_entry_file(const std::string& path, std::string* bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat info;
  if (!fd.valid()) return Status::internal(errno_text("cannot open", path));
  if (fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return Status::internal(path + " is not a regular file");
  }
  return read_all(fd.get(), path, bytes);
}

std::string manifest_of(const std::string& key, uint64_t module_size, const Digest& hmac) {
  return "tilecraft-manifest v2\nkey " + key + "\nmodule.so " + std::to_string(module_size) +
         " hmac-sha256 " + to_hex(hmac) + "\n";
}

// The manifest of the module in an open file, read in pieces (a module may be large).
Status manifest_of_file(const std::string& signing_key, const std::string& key, int fd,
                        const std::string& path, std::string* manifest) {
  HmacSha256 mac(signing_key);
  mac.update("tilecraft-module v2\n" + key + "\n");
  std::string buffer(size_t(1) << 20, '\0');
  uint64_t size = 0;
  for (off_t offset = 0;;) {
    const ssize_t got = pread(fd, buffer.data(), buffer.size(), offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Status::internal(errno_text("could not read", path));
    if (got == 0) break;
    mac.update(std::string_view(buffer.data(), static_cast<size_t>(got)));
    offset += got;
    size += static_cast<uint64_t>(got);
  }
  *manifest = manifest_of(key, size, mac.finish());
  return Status::ok();
}

}  // namespace

BuildDir::~BuildDir() {
  if (!released_ && !path_.empty()) remove_path(path_);
}

std::string manifest_text(const std::string& signing_key, const std::string& key,
                          const std::string& module_bytes) {
  HmacSha256 mac(signing_key);
  mac.update("tilecraft-module v2\n" + key + "\n");
  mac.update(module_bytes);
  return manifest_of(key, module_bytes.size(), mac.finish());
}

std::string alias_text(const std::string& signing_key, const std::string& kernel_key,
                       const std::string& unit_key) {
  const std::string body = "kernel " + kernel_key + "\nunit " + unit_key + "\n";
  return "tilecraft-alias v1\n" + body + "hmac-sha256 " +
         to_hex(hmac_sha256(signing_key, "tilecraft-alias v1\n" + body)) + "\n";
}

ArtifactCache ArtifactCache::open(const Settings& settings) {
  return open(settings.cache_dir, settings.signing_key_file);
}

ArtifactCache ArtifactCache::open(const std::string& root, const std::string& signing_key_file) {
  if (first_time_for("private leftovers")) sweep_leftovers(temp_base(), private_prefix());

  ArtifactCache cache;
  cache.root_ = root;
  while (cache.root_.size() > 1 && cache.root_.back() == '/') cache.root_.pop_back();
  auto repaired = [&cache](const std::string& line) {
    cache.repairs_.push_back(line);
    warn_once(line);
  };
  auto unusable = [&cache](const std::string& why) {
    cache.readable_ = cache.writable_ = false;
    cache.reason_ = why;
    warn_once("tilecraft: not using the cache at '" + cache.root_ + "': " + why +
              "; compiling into a private temporary folder instead");
    return cache;
  };
  if (cache.root_.empty()) return unusable("TILECRAFT_CACHE_DIR is empty");
  if (cache.root_.front() != '/') {
    return unusable(
        "expected an absolute path (a relative one names a different folder in "
        "every working folder)");
  }
  if (Status claimed = claim_cache_root(cache.root_); !claimed) return unusable(claimed.message());
  if (std::string why = private_dir_problem(cache.root_); !why.empty()) return unusable(why);

  std::string repair;
  Result<std::string> key = load_signing_key(signing_key_file, &repair);
  if (!key) return unusable(key.status().message());
  if (!repair.empty()) repaired(repair);
  cache.key_ = std::move(*key);

  std::string not_writable;
  if (access(cache.root_.c_str(), W_OK) != 0) {
    not_writable = errno_text("cannot write to", cache.root_);
  } else {
    for (const char* sub : {"", "/tmp", "/locks", "/failed"}) {
      std::string replaced;
      if (Status made = ensure_own_dir(cache.v1() + sub, &replaced); !made) {
        not_writable = made.message();
        break;
      }
      if (!replaced.empty()) {
        repaired("tilecraft: the cache had " + replaced + " at " + cache.v1() + sub +
                 ", where its folder belongs: replaced it with the folder");
      }
    }
  }
  struct stat v1_info;
  if (lstat(cache.v1().c_str(), &v1_info) == 0) {
    if (!S_ISDIR(v1_info.st_mode)) {
      return unusable(cache.v1() + " is " + file_kind(v1_info.st_mode) + ", not a folder");
    }
    if (std::string why = private_dir_problem(cache.v1()); !why.empty()) return unusable(why);
  }
  cache.readable_ = true;
  cache.writable_ = not_writable.empty();
  if (!cache.writable_) {
    cache.reason_ = not_writable;
    warn_once("tilecraft: the cache at '" + cache.root_ + "' is not writable (" + not_writable +
              "): modules already there are used, new ones are compiled into a private temporary "
              "folder");
  } else if (first_time_for("sweep " + cache.root_)) {
    sweep_leftovers(cache.v1() + "/tmp", "");
  }
  return cache;
}

std::string ArtifactCache::entry_dir(const std::string& key) const {
  return v1() + "/" + key.substr(0, 2) + "/" + key;
}

LookupResult ArtifactCache::lookup(const std::string& key) const {
  LookupResult result;
  if (!readable_) return result;
  std::string dir = entry_dir(key);
  struct stat info;
  if (lstat(dir.c_str(), &info) != 0) {
    if (errno != ENOENT) result.invalid_reason = errno_text("cannot inspect", dir);
    return result;
  }
  if (!S_ISDIR(info.st_mode)) {
    result.invalid_reason = dir + " is " + file_kind(info.st_mode) + ", not a folder";
    return result;
  }
  if (info.st_uid != geteuid()) {
    result.invalid_reason = dir + " is not a folder this user owns";
    return result;
  }
  std::string manifest;
  if (!read_entry_file(dir + "/manifest", &manifest)) {
    result.invalid_reason = "no readable manifest (a partial or foreign entry)";
    return result;
  }
  std::string module_path = dir + "/module.so";
  UniqueFd module_fd(::open(module_path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat module_info;
  std::string expected;
  if (!module_fd.valid() || fstat(module_fd.get(), &module_info) != 0 ||
      !S_ISREG(module_info.st_mode) ||
      !manifest_of_file(key_, key, module_fd.get(), module_path, &expected)) {
    result.invalid_reason = "module.so is missing, unreadable or not a regular file";
    return result;
  }
  if (!constant_time_equal(manifest, expected)) {
    const std::string module_size = std::to_string(module_info.st_size);
    std::string size_text = " " + module_size + " hmac-sha256";
    if (manifest.rfind("tilecraft-manifest v2\n", 0) != 0) {
      result.invalid_reason =
          "its manifest is not one this tilecraft writes (an earlier layout, or not tilecraft's)";
    } else if (manifest.find(size_text) == std::string::npos) {
      result.invalid_reason = "module.so (" + module_size +
                              " bytes) is not the size its manifest records: truncated or replaced";
    } else {
      result.invalid_reason =
          "module.so does not match its manifest's HMAC: corrupt, or not signed with this user's "
          "signing key";
    }
    return result;
  }
  result.module_path = module_path;
  return result;
}

Result<KeyLock> ArtifactCache::lock(const std::string& key, const std::atomic<bool>* cancel) const {
  if (!writable_) return KeyLock();
  std::string path = v1() + "/locks/" + key + ".lock";
  UniqueFd fd;
  for (int attempt = 0; attempt < 2 && !fd.valid(); ++attempt) {
    fd = UniqueFd(
        ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
    struct stat info;
    if (fd.valid() && fstat(fd.get(), &info) == 0 && !S_ISREG(info.st_mode)) fd.reset();
    if (!fd.valid()) remove_path(path);  // a link, folder or fifo where the lock file belongs
  }
  if (!fd.valid()) return KeyLock();  // unlocked: racing processes may then compile twice
  while (flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return KeyLock();
    if (cancel && cancel->load()) {
      return Status(StatusCode::kCancelled,
                    "interrupted while waiting for another process "
                    "compiling the same kernel");
    }
    std::this_thread::sleep_for(kLockPoll);
  }
  return KeyLock(std::move(fd));
}

Result<BuildDir> ArtifactCache::make_build_dir(const std::string& key) const {
  std::string base;
  if (writable_) {
    base = v1() + "/tmp";
    TILECRAFT_RETURN_IF_ERROR(ensure_own_dir(base));
  } else {
    Result<std::string> dir = private_dir();
    if (!dir) return dir.status();
    base = *dir;
  }
  std::string pattern = base + "/" + key.substr(0, 16) + "-XXXXXX";
  Result<UniqueFd> held = make_locked_folder(&pattern, "a build folder");
  if (!held) return held.status();
  return BuildDir(pattern, std::move(*held));
}

Result<std::string> ArtifactCache::commit(const std::string& key, BuildDir& build,
                                          const std::string& key_text) const {
  const std::string& build_dir = build.path();
  std::string module_path = build_dir + "/module.so";
  TILECRAFT_RETURN_IF_ERROR(write_file_synced(build_dir + "/key.txt", key_text));
  if (!writable_) {
    build.release();
    return module_path;
  }

  UniqueFd module_fd(::open(module_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!module_fd.valid()) return Status::internal(errno_text("cannot open", module_path));
  std::string manifest;
  TILECRAFT_RETURN_IF_ERROR(manifest_of_file(key_, key, module_fd.get(), module_path, &manifest));
  if (fsync(module_fd.get()) != 0) {
    return Status::internal(errno_text("could not fsync", module_path));
  }
  TILECRAFT_RETURN_IF_ERROR(write_file_synced(build_dir + "/manifest", manifest));
  TILECRAFT_RETURN_IF_ERROR(fsync_path(build_dir + "/source.cu"));
  TILECRAFT_RETURN_IF_ERROR(fsync_path(build_dir));

  std::string parent = v1() + "/" + key.substr(0, 2);
  TILECRAFT_RETURN_IF_ERROR(ensure_own_dir(parent));
  std::string final_dir = entry_dir(key);
  struct stat info;
  // A file or link where the entry belongs goes (this process holds the key). The entry needs no
  // lock file; the fd keeps ours until done.
  if (lstat(final_dir.c_str(), &info) == 0 && !S_ISDIR(info.st_mode)) unlink(final_dir.c_str());
  unlink((build_dir + kBuildLock).c_str());
  if (rename(build_dir.c_str(), final_dir.c_str()) != 0) {
    if (errno != ENOTEMPTY && errno != EEXIST) {
      return Status::internal(errno_text("could not move " + build_dir + " to", final_dir));
    }
    // An invalid entry is in the way (this process holds the key's lock): move it aside first.
    std::string trash = v1() + "/tmp/replaced-XXXXXX";
    if (!mkdtemp(trash.data())) {
      return Status::internal(errno_text("could not replace the entry", final_dir));
    }
    bool moved = rename(final_dir.c_str(), (trash + "/entry").c_str()) == 0 &&
                 rename(build_dir.c_str(), final_dir.c_str()) == 0;
    int error = errno;
    remove_path(trash);
    if (!moved) {
      errno = error;
      return Status::internal(errno_text("could not replace the entry", final_dir));
    }
  }
  build.release();
  TILECRAFT_RETURN_IF_ERROR(fsync_path(parent));
  return final_dir + "/module.so";
}

void ArtifactCache::record_alias(const std::string& kernel_key, const std::string& unit_key) const {
  if (!writable_ || kernel_key.size() < 2 || kernel_key == unit_key) return;
  const std::string dir = v1() + "/aliases/" + kernel_key.substr(0, 2);
  if (!ensure_own_dir(v1() + "/aliases") || !ensure_own_dir(dir)) return;
  // Written beside its final name and renamed over it, so a reader sees a whole record or none.
  const std::string path = dir + "/" + kernel_key;
  const std::string partial = path + ".partial-" + std::to_string(getpid());
  if (!write_file_synced(partial, alias_text(key_, kernel_key, unit_key)) ||
      rename(partial.c_str(), path.c_str()) != 0) {
    remove_path(partial);
  }
}

std::optional<std::string> ArtifactCache::alias_of(const std::string& kernel_key) const {
  if (!readable_ || kernel_key.size() < 2) return std::nullopt;
  std::string text;
  if (!read_entry_file(v1() + "/aliases/" + kernel_key.substr(0, 2) + "/" + kernel_key, &text)) {
    return std::nullopt;
  }
  const std::string marker = "\nunit ";
  const size_t at = text.find(marker);
  if (at == std::string::npos) return std::nullopt;
  const size_t end = text.find('\n', at + marker.size());
  if (end == std::string::npos) return std::nullopt;
  std::string unit_key = text.substr(at + marker.size(), end - at - marker.size());
  if (!constant_time_equal(text, alias_text(key_, kernel_key, unit_key))) return std::nullopt;
  return unit_key;
}

std::string ArtifactCache::keep_failed(const std::string& name, const std::string& key,
                                       BuildDir& build, const std::string& log) const {
  std::string source = build.path() + "/source.cu";
  if (!writable_) {
    (void)write_file_synced(build.path() + "/nvcc.log", log);
    build.release();  // in the private folder, removed when this process exits
    return source;
  }
  std::string failed = v1() + "/failed";
  std::string stem = failed + "/" + safe_file_name(name) + "-" + key.substr(0, 8);
  if (Status made = ensure_own_dir(failed); !made) return "(not kept: " + made.message() + ")";
  if (rename(source.c_str(), (stem + ".cu").c_str()) != 0) {
    return "(not kept: " + errno_text("could not move " + source + " to", stem + ".cu") + ")";
  }
  (void)write_file_synced(stem + ".log", log);
  return stem + ".cu";
}

}  // namespace tilecraft::compile
