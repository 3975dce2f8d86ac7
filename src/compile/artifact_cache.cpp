#include "compile/artifact_cache.hpp"

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

#include "compile/sha256.hpp"

namespace tilecraft::compile {
namespace {

namespace fs = std::filesystem;

constexpr size_t kSecretBytes = 32;
constexpr auto kStaleBuildAge = std::chrono::hours(24);

void warn_once(const std::string& line) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard lock(mutex);
  if (!said.insert(line).second) return;
  std::string text = line + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
}

// "" when path is a folder this user owns that nobody else may write; else why it is not.
std::string unsafe_dir_reason(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return errno_text("cannot inspect", path);
  if (!S_ISDIR(info.st_mode)) return path + " is not a folder";
  if (info.st_uid != geteuid()) {
    return path + " is owned by uid " + std::to_string(info.st_uid) + ", not by this user (uid " +
           std::to_string(geteuid()) + ")";
  }
  if (info.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return path + " is writable by its group or by everyone (mode " + mode + ")";
  }
  return "";
}

// mkdir -p, giving the folders it creates mode 0700.
Status make_dirs(const std::string& path) {
  std::error_code error;
  if (fs::is_directory(path, error)) return Status::ok();
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && parent != fs::path(path)) TILECRAFT_RETURN_IF_ERROR(make_dirs(parent));
  return make_private_dir(path);
}

Result<std::string> random_bytes(size_t count) {
  UniqueFd fd(open("/dev/urandom", O_RDONLY | O_CLOEXEC));
  if (!fd.valid())
    return Status(StatusCode::kInternal, errno_text("could not open", "/dev/urandom"));
  std::string bytes(count, '\0');
  size_t got = 0;
  while (got < count) {
    ssize_t n = read(fd.get(), bytes.data() + got, count - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status(StatusCode::kInternal, errno_text("could not read", "/dev/urandom"));
    got += static_cast<size_t>(n);
  }
  return bytes;
}

// Creates <root>/secret atomically: a complete 0600 file is linked into place, so a racing
// process sees either no secret or the whole of one.
Status create_secret(const std::string& root, const std::string& path) {
  Result<std::string> bytes = random_bytes(kSecretBytes);
  if (!bytes) return bytes.status();
  std::string temp = root + "/secret.tmp-XXXXXX";
  UniqueFd fd(mkostemp(temp.data(), O_CLOEXEC));  // O_EXCL, mode 0600
  if (!fd.valid()) return Status(StatusCode::kInternal, errno_text("could not create", temp));
  fchmod(fd.get(), 0600);
  bool written =
      write(fd.get(), bytes->data(), bytes->size()) == static_cast<ssize_t>(bytes->size());
  bool synced = written && fsync(fd.get()) == 0;
  fd.reset();
  int linked = synced ? link(temp.c_str(), path.c_str()) : -1;
  int link_errno = errno;
  unlink(temp.c_str());
  if (!synced) return Status(StatusCode::kInternal, "could not write the cache secret " + temp);
  if (linked != 0 && link_errno != EEXIST) {
    errno = link_errno;
    return Status(StatusCode::kInternal, errno_text("could not create", path));
  }
  return fsync_path(root);
}

Result<std::string> load_secret(const std::string& root, bool may_create) {
  std::string path = root + "/secret";
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid() && errno == ENOENT && may_create) {
    TILECRAFT_RETURN_IF_ERROR(create_secret(root, path));
    fd = UniqueFd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  }
  if (!fd.valid()) {
    if (errno == ENOENT) return Status::unsupported(path + " does not exist and cannot be created");
    return Status::unsupported(errno_text("cannot open the cache secret", path));
  }
  struct stat info;
  if (fstat(fd.get(), &info) != 0) return Status::unsupported(errno_text("cannot inspect", path));
  if (!S_ISREG(info.st_mode)) return Status::unsupported(path + " is not a regular file");
  if (info.st_uid != geteuid()) {
    return Status::unsupported(path + " is owned by uid " + std::to_string(info.st_uid) +
                               ", not by this user (uid " + std::to_string(geteuid()) + ")");
  }
  if (info.st_mode & 077) {
    return Status::unsupported(path + " may be read or written by others (expected mode 0600)");
  }
  std::string secret;
  TILECRAFT_RETURN_IF_ERROR(read_all(fd.get(), path, &secret));
  if (secret.size() != kSecretBytes) {
    return Status::unsupported(path + ": expected " + std::to_string(kSecretBytes) +
                               " bytes, got " + std::to_string(secret.size()));
  }
  return secret;
}

// Removes build folders a crashed process left in <v1>/tmp, once per process per cache.
void sweep_stale_builds(const std::string& tmp) {
  static std::mutex mutex;
  static std::set<std::string> swept;
  {
    std::lock_guard lock(mutex);
    if (!swept.insert(tmp).second) return;
  }
  std::error_code error;
  auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(tmp, error), end; !error && it != end; it.increment(error)) {
    std::error_code entry_error;
    auto written = it->last_write_time(entry_error);
    if (!entry_error && now - written > kStaleBuildAge) fs::remove_all(it->path(), entry_error);
  }
}

// This process's private folder for modules built outside the cache: 0700, under $TMPDIR,
// removed when the process exits.
struct PrivateDir {
  std::string path;
  ~PrivateDir() {
    std::error_code error;
    if (!path.empty()) fs::remove_all(path, error);
  }
};

Result<std::string> private_dir() {
  static std::mutex mutex;
  static PrivateDir holder;
  std::string& dir = holder.path;
  std::lock_guard lock(mutex);
  if (!dir.empty()) return dir;
  std::error_code error;
  fs::path base = fs::temp_directory_path(error);
  if (error) base = "/tmp";
  std::string pattern = (base / ("tilecraft-" + std::to_string(geteuid()) + "-XXXXXX")).string();
  if (!mkdtemp(pattern.data())) {
    return Status(StatusCode::kInternal, errno_text("could not create a private folder", pattern));
  }
  dir = pattern;
  return dir;
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

bool constant_time_equal(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  return difference == 0;
}

}  // namespace

std::string manifest_text(const std::string& secret, const std::string& key,
                          const std::string& module_bytes) {
  std::string message = "tilecraft-module v1\n" + key + "\n";
  message += module_bytes;
  return "tilecraft-manifest v1\nkey " + key + "\nmodule.so " +
         std::to_string(module_bytes.size()) + " hmac-sha256 " +
         to_hex(hmac_sha256(secret, message)) + "\n";
}

ArtifactCache ArtifactCache::open(const std::string& root) {
  ArtifactCache cache;
  cache.root_ = root;
  while (cache.root_.size() > 1 && cache.root_.back() == '/') cache.root_.pop_back();
  auto unusable = [&cache](const std::string& why) {
    cache.readable_ = cache.writable_ = false;
    cache.reason_ = why;
    warn_once("tilecraft: not using the cache at '" + cache.root_ + "': " + why +
              "; compiling into a private temporary folder instead");
    return cache;
  };
  if (cache.root_.empty()) return unusable("TILECRAFT_CACHE_DIR is empty");
  if (Status made = make_dirs(cache.root_); !made) {
    return unusable("it cannot be created (" + made.message() + ")");
  }
  if (std::string why = unsafe_dir_reason(cache.root_); !why.empty()) return unusable(why);

  std::string not_writable;
  if (access(cache.root_.c_str(), W_OK) != 0) {
    not_writable = errno_text("cannot write to", cache.root_);
  } else {
    for (const char* sub : {"", "/tmp", "/locks", "/failed"}) {
      if (Status made = make_private_dir(cache.v1() + sub); !made) {
        not_writable = made.message();
        break;
      }
    }
  }
  std::error_code error;
  if (fs::exists(cache.v1(), error)) {
    if (std::string why = unsafe_dir_reason(cache.v1()); !why.empty()) return unusable(why);
  }
  Result<std::string> secret = load_secret(cache.root_, not_writable.empty());
  if (!secret) return unusable(secret.status().message());
  cache.secret_ = std::move(*secret);
  cache.readable_ = true;
  cache.writable_ = not_writable.empty();
  if (!cache.writable_) {
    cache.reason_ = not_writable;
    warn_once("tilecraft: the cache at '" + cache.root_ + "' is not writable (" + not_writable +
              "): modules already there are used, new ones are compiled into a private temporary "
              "folder");
  } else {
    sweep_stale_builds(cache.v1() + "/tmp");
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
  if (!S_ISDIR(info.st_mode) || info.st_uid != geteuid()) {
    result.invalid_reason = dir + " is not a folder this user owns";
    return result;
  }
  std::string manifest_path = dir + "/manifest";
  UniqueFd manifest_fd(::open(manifest_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!manifest_fd.valid()) {
    result.invalid_reason = "no readable manifest (a partial or foreign entry)";
    return result;
  }
  std::string manifest;
  if (!read_all(manifest_fd.get(), manifest_path, &manifest)) {
    result.invalid_reason = "the manifest cannot be read";
    return result;
  }
  std::string module_path = dir + "/module.so";
  UniqueFd module_fd(::open(module_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!module_fd.valid() || fstat(module_fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    result.invalid_reason = "module.so is missing or not a regular file";
    return result;
  }
  std::string module_bytes;
  if (!read_all(module_fd.get(), module_path, &module_bytes)) {
    result.invalid_reason = "module.so cannot be read";
    return result;
  }
  if (!constant_time_equal(manifest, manifest_text(secret_, key, module_bytes))) {
    std::string size_text = " " + std::to_string(module_bytes.size()) + " hmac-sha256";
    result.invalid_reason =
        manifest.find(size_text) == std::string::npos
            ? "module.so (" + std::to_string(module_bytes.size()) +
                  " bytes) is not the size its manifest records: truncated or replaced"
            : "module.so does not match its manifest's HMAC: corrupt or not written by tilecraft";
    return result;
  }
  result.module_path = module_path;
  return result;
}

KeyLock ArtifactCache::lock(const std::string& key) const {
  if (!writable_) return KeyLock();
  std::string path = v1() + "/locks/" + key + ".lock";
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) return KeyLock();  // unlocked: racing processes may then compile twice
  while (flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return KeyLock();
  }
  return KeyLock(std::move(fd));
}

Result<std::string> ArtifactCache::make_build_dir(const std::string& key) const {
  std::string base;
  if (writable_) {
    base = v1() + "/tmp";
  } else {
    Result<std::string> dir = private_dir();
    if (!dir) return dir.status();
    base = *dir;
  }
  std::string pattern = base + "/" + key.substr(0, 16) + "-XXXXXX";
  if (!mkdtemp(pattern.data())) {
    return Status(StatusCode::kInternal, errno_text("could not create a build folder", pattern));
  }
  return pattern;
}

Result<std::string> ArtifactCache::commit(const std::string& key, const std::string& build_dir,
                                          const std::string& key_text) const {
  std::string module_path = build_dir + "/module.so";
  TILECRAFT_RETURN_IF_ERROR(write_file_synced(build_dir + "/key.txt", key_text));
  if (!writable_) return module_path;

  UniqueFd module_fd(::open(module_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!module_fd.valid())
    return Status(StatusCode::kInternal, errno_text("cannot open", module_path));
  std::string module_bytes;
  TILECRAFT_RETURN_IF_ERROR(read_all(module_fd.get(), module_path, &module_bytes));
  if (fsync(module_fd.get()) != 0) {
    return Status(StatusCode::kInternal, errno_text("could not fsync", module_path));
  }
  TILECRAFT_RETURN_IF_ERROR(
      write_file_synced(build_dir + "/manifest", manifest_text(secret_, key, module_bytes)));
  TILECRAFT_RETURN_IF_ERROR(fsync_path(build_dir + "/source.cu"));
  TILECRAFT_RETURN_IF_ERROR(fsync_path(build_dir));

  std::string parent = v1() + "/" + key.substr(0, 2);
  TILECRAFT_RETURN_IF_ERROR(make_private_dir(parent));
  std::string final_dir = entry_dir(key);
  if (rename(build_dir.c_str(), final_dir.c_str()) != 0) {
    if (errno != ENOTEMPTY && errno != EEXIST) {
      return Status(StatusCode::kInternal,
                    errno_text("could not move " + build_dir + " to", final_dir));
    }
    // An invalid entry is in the way (this process holds the key's lock): move it aside first.
    std::string trash = v1() + "/tmp/replaced-XXXXXX";
    if (!mkdtemp(trash.data()) || rename(final_dir.c_str(), (trash + "/entry").c_str()) != 0 ||
        rename(build_dir.c_str(), final_dir.c_str()) != 0) {
      return Status(StatusCode::kInternal, errno_text("could not replace the entry", final_dir));
    }
    std::error_code error;
    fs::remove_all(trash, error);
  }
  TILECRAFT_RETURN_IF_ERROR(fsync_path(parent));
  return final_dir + "/module.so";
}

std::string ArtifactCache::keep_failed(const std::string& name, const std::string& key,
                                       const std::string& build_dir, const std::string& log) const {
  std::string source = build_dir + "/source.cu";
  if (!writable_) {
    (void)write_file_synced(build_dir + "/nvcc.log", log);
    return source;
  }
  std::string stem = v1() + "/failed/" + safe_file_name(name) + "-" + key.substr(0, 8);
  if (rename(source.c_str(), (stem + ".cu").c_str()) != 0) return source;
  (void)write_file_synced(stem + ".log", log);
  std::error_code error;
  fs::remove_all(build_dir, error);
  return stem + ".cu";
}

}  // namespace tilecraft::compile
