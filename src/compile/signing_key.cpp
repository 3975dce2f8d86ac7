#include "compile/signing_key.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "compile/file_util.hpp"

namespace tilecraft::compile {
namespace {

namespace fs = std::filesystem;

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

// The key's bytes, or why the file at path cannot serve as a key ("" in damage: it is missing).
struct KeyRead {
  std::string bytes;
  bool missing = false;
  std::string damage;
};

KeyRead read_key(const std::string& path) {
  KeyRead read;
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) {
      read.missing = true;
    } else if (errno == ELOOP) {
      read.damage = "it is a symbolic link";
    } else {
      read.damage = errno_text("it cannot be opened:", path);
    }
    return read;
  }
  struct stat info;
  if (fstat(fd.get(), &info) != 0) {
    read.damage = errno_text("it cannot be inspected:", path);
  } else if (!S_ISREG(info.st_mode)) {
    read.damage = "it is " + file_kind(info.st_mode) + ", not a regular file";
  } else if (info.st_uid != geteuid()) {
    read.damage = "it belongs to uid " + std::to_string(info.st_uid) + ", not to this user";
  } else if (info.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(info.st_mode & 07777));
    read.damage = std::string("others may read it (mode ") + mode + ")";
  } else if (Status status = read_all(fd.get(), path, &read.bytes); !status) {
    read.damage = status.message();
  } else if (read.bytes.size() != kSigningKeyBytes) {
    read.damage = "it holds " + std::to_string(read.bytes.size()) + " bytes, not " +
                  std::to_string(kSigningKeyBytes);
  }
  if (!read.damage.empty()) read.bytes.clear();
  return read;
}

// Writes a new key beside path and renames it into place (over whatever was there).
Result<std::string> write_new_key(const std::string& path) {
  Result<std::string> bytes = random_bytes(kSigningKeyBytes);
  if (!bytes) return bytes.status();
  std::string temp = path + ".new-XXXXXX";
  UniqueFd fd(mkostemp(temp.data(), O_CLOEXEC));  // O_EXCL, mode 0600
  if (!fd.valid()) return Status(StatusCode::kInternal, errno_text("could not create", temp));
  bool done =
      fchmod(fd.get(), 0600) == 0 &&
      write(fd.get(), bytes->data(), bytes->size()) == static_cast<ssize_t>(bytes->size()) &&
      fsync(fd.get()) == 0;
  std::string failure = done ? "" : errno_text("could not write", temp);
  fd.reset();
  struct stat info;
  if (done && lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) remove_path(path);
  if (done && rename(temp.c_str(), path.c_str()) != 0) {
    failure = errno_text("could not rename " + temp + " to", path);
  }
  if (!failure.empty()) {
    unlink(temp.c_str());
    return Status(StatusCode::kInternal, failure);
  }
  TILECRAFT_RETURN_IF_ERROR(fsync_path(fs::path(path).parent_path().string()));
  return std::move(*bytes);
}

// mkdir -p, giving the folders it creates mode 0700.
Status make_dirs(const fs::path& path) {
  std::error_code error;
  if (fs::is_directory(path, error)) return Status::ok();
  fs::path parent = path.parent_path();
  if (!parent.empty() && parent != path) TILECRAFT_RETURN_IF_ERROR(make_dirs(parent));
  return make_private_dir(path.string());
}

}  // namespace

Result<std::string> load_signing_key(const std::string& path, std::string* repair) {
  if (path.empty() || path.front() != '/') {
    return Status::unsupported("the signing key file must be an absolute path, got '" + path +
                               "' (TILECRAFT_SIGNING_KEY_FILE)");
  }
  const fs::path folder = fs::path(path).parent_path();
  if (Status made = make_dirs(folder); !made) {
    return Status::unsupported("the signing key's folder cannot be created (" + made.message() +
                               ")");
  }
  if (std::string problem = private_dir_problem(folder.string()); !problem.empty()) {
    return Status::unsupported("the signing key's folder is not private: " + problem);
  }
  // Serializes repairs across threads and processes: one new key, not one per racer.
  UniqueFd lock(open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (lock.valid()) {
    while (flock(lock.get(), LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  KeyRead read = read_key(path);
  if (read.damage.empty() && !read.missing) return std::move(read.bytes);
  Result<std::string> made = write_new_key(path);
  if (!made) {
    return Status::unsupported(
        "the signing key " + path + " is " +
        (read.missing ? std::string("missing") : "damaged (" + read.damage + ")") +
        " and a new one cannot be written: " + made.status().message());
  }
  if (!read.missing && repair) {
    *repair = "tilecraft: the signing key " + path + " was damaged (" + read.damage +
              "): replaced it with a new key; modules cached before are compiled again as they "
              "are needed";
  }
  return made;
}

}  // namespace tilecraft::compile
