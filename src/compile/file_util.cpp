#include "tilecraft/compile/file_util.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace tilecraft::compile {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    reset();
    fd_ = other.release();
  }
  return *this;
}

int UniqueFd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

std::string errno_text(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t put = write(fd, bytes.data(), bytes.size());
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(put));
  }
  return true;
}

Status read_all(int fd, const std::string& path, std::string* contents) {
  contents->clear();
  char buffer[65536];
  for (;;) {
    ssize_t got = read(fd, buffer, sizeof(buffer));
    if (got > 0) {
      contents->append(buffer, static_cast<size_t>(got));
    } else if (got == 0) {
      return Status::ok();
    } else if (errno != EINTR) {
      return Status::internal(errno_text("could not read", path));
    }
  }
}

Status write_file_synced(const std::string& path, const std::string& contents, int mode) {
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode));
  if (!fd.valid()) return Status::internal(errno_text("could not create", path));
  if (!write_all(fd.get(), contents)) {
    return Status::internal(errno_text("could not write", path));
  }
  if (fsync(fd.get()) != 0) return Status::internal(errno_text("could not fsync", path));
  return Status::ok();
}

Status fsync_path(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::internal(errno_text("could not open", path));
  if (fsync(fd.get()) != 0) return Status::internal(errno_text("could not fsync", path));
  return Status::ok();
}

Status make_private_dir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) == 0) return Status::ok();
  if (errno == EEXIST) {
    struct stat info;
    if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return Status::ok();
    return Status::internal("expected a folder at " + path + ", found something else");
  }
  return Status::internal(errno_text("could not create the folder", path));
}

Status make_private_dirs(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) return Status::ok();
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    TILECRAFT_RETURN_IF_ERROR(make_private_dirs(path.substr(0, slash)));
  }
  return make_private_dir(path);
}

std::string private_dir_problem(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return errno_text("cannot inspect", path);
  if (!S_ISDIR(info.st_mode)) return path + " is not a folder";
  if (info.st_uid != geteuid()) {
    return path + " is owned by uid " + std::to_string(info.st_uid) + ", not by this user (uid " +
           std::to_string(geteuid()) + ")";
  }
  if (info.st_mode & (S_IWGRP | S_IWOTH)) {
    return path + " is writable by its group or by everyone (mode " + mode_text(info.st_mode) + ")";
  }
  return "";
}

std::string mode_text(unsigned mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", mode & 07777);
  return text;
}

std::string file_kind(unsigned mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a fifo";
  if (S_ISSOCK(mode)) return "a socket";
  return "a device file";
}

Status ensure_own_dir(const std::string& path, std::string* replaced) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    struct stat info;
    if (lstat(path.c_str(), &info) != 0) {
      if (errno != ENOENT) return Status::internal(errno_text("cannot inspect", path));
      if (mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) continue;
      return Status::internal(errno_text("could not create the folder", path));
    }
    if (S_ISDIR(info.st_mode)) {
      if (info.st_uid != geteuid()) {
        return Status::internal(path + " is a folder of uid " + std::to_string(info.st_uid) +
                                ", not of this user (uid " + std::to_string(geteuid()) + ")");
      }
      if ((info.st_mode & 077) != 0 && chmod(path.c_str(), 0700) != 0) {
        return Status::internal(errno_text("could not make private", path));
      }
      return Status::ok();
    }
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Status::internal(errno_text(
          "could not remove " + file_kind(info.st_mode) + " standing where a folder belongs:",
          path));
    }
    if (replaced) *replaced = file_kind(info.st_mode);
  }
  return Status::internal("could not make a folder at " + path +
                          ": something else keeps appearing there");
}

bool remove_path(const std::string& path) {
  std::error_code error;
  std::filesystem::remove_all(path, error);
  struct stat info;
  return lstat(path.c_str(), &info) != 0 && errno == ENOENT;
}

}  // namespace tilecraft::compile
