// Small POSIX file helpers for the artifact cache: whole-file reads and durable writes.
#pragma once

#include <string>
#include <string_view>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

// Closes a file descriptor when it goes out of scope.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();
  void reset();

 private:
  int fd_ = -1;
};

// "<what> <path>: <strerror(errno)>", for Status messages.
std::string errno_text(const std::string& what, const std::string& path);

// Writes all of bytes to fd, writing again after EINTR; false (errno says why) when it fails.
bool write_all(int fd, std::string_view bytes);

// Reads the whole of an open file.
Status read_all(int fd, const std::string& path, std::string* contents);

// Creates (or truncates) path with the given mode, writes contents and fsyncs it.
Status write_file_synced(const std::string& path, const std::string& contents, int mode = 0600);

// Flushes a file or folder that already exists to disk.
Status fsync_path(const std::string& path);

// Creates one folder (mode 0700) if it is missing; fine when it already is a folder.
Status make_private_dir(const std::string& path);

// mkdir -p, giving the folders it creates mode 0700.
Status make_private_dirs(const std::string& path);

// "" when path is a folder this user owns that nobody else may write; else why it is not.
std::string private_dir_problem(const std::string& path);

// The permission bits of a mode as four octal digits: "0644".
std::string mode_text(unsigned mode);

// What kind of thing lstat() found: "a regular file", "a symbolic link", "a folder", ...
std::string file_kind(unsigned mode);

// Makes path a real folder of this user (mode 0700) inside a tree tilecraft owns: creates it
// when missing; when something else stands there (a file, a symbolic link, a fifo) removes it
// first and sets *replaced to what it was. A folder of another user is an error.
Status ensure_own_dir(const std::string& path, std::string* replaced = nullptr);

// Removes whatever is at path, a whole folder too (links not followed); true when nothing is left.
bool remove_path(const std::string& path);

}  // namespace tilecraft::compile
