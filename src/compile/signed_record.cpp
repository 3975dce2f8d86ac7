#include "tilecraft/compile/signed_record.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <mutex>
#include <random>
#include <set>

#include "compile/sha256.hpp"
#include "compile/signing_key.hpp"
#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::compile {
namespace {

constexpr std::string_view kHmacLabel = "hmac-sha256 ";

void say_once(const std::string& line) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard lock(mutex);
  if (!said.insert(line).second) return;
  const std::string text = line + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace

Result<std::string> user_signing_key() {
  std::string repair;
  Result<std::string> key = load_signing_key(settings().signing_key_file, &repair);
  if (!repair.empty()) say_once(repair);
  return key;
}

std::string signed_record(const std::string& signing_key, std::string_view body) {
  return std::string(body) + std::string(kHmacLabel) + to_hex(hmac_sha256(signing_key, body)) +
         "\n";
}

std::optional<std::string> verified_body(const std::string& signing_key, std::string_view text) {
  const size_t at = text.rfind(kHmacLabel);
  if (at == std::string_view::npos || (at > 0 && text[at - 1] != '\n') ||
      text.size() != at + kHmacLabel.size() + 64 + 1 || text.back() != '\n') {
    return std::nullopt;
  }
  const std::string_view body = text.substr(0, at);
  const std::string expected = to_hex(hmac_sha256(signing_key, body));
  if (!constant_time_equal(expected, text.substr(at + kHmacLabel.size(), 64))) return std::nullopt;
  return std::string(body);
}

std::optional<std::string> read_record_file(const std::string& path, size_t limit) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ELOOP) say_once("tilecraft: skipped " + path + ": a symbolic link, not a file");
    return std::nullopt;
  }
  struct stat info;
  if (fstat(fd.get(), &info) != 0) return std::nullopt;
  if (!S_ISREG(info.st_mode)) {
    say_once("tilecraft: skipped " + path + ": " + file_kind(info.st_mode) + ", not a file");
    return std::nullopt;
  }
  if (static_cast<uint64_t>(info.st_size) > limit) {
    say_once("tilecraft: skipped " + path + ": " + std::to_string(info.st_size) +
             " bytes, more than such a file holds");
    return std::nullopt;
  }
  std::string text;
  if (!read_all(fd.get(), path, &text) || text.size() > limit) return std::nullopt;
  return text;
}

Status write_record_file(const std::string& path, const std::string& text) {
  std::random_device random;
  const std::string folder = path.substr(0, path.find_last_of('/'));
  const std::string temp =
      folder + "/.tmp-" + std::to_string(getpid()) + "-" + std::to_string(random()) + ".part";
  Status written = write_file_synced(temp, text, 0600);
  if (written && std::rename(temp.c_str(), path.c_str()) != 0) {
    written = Status::internal(errno_text("could not rename into", path));
  }
  if (!written) unlink(temp.c_str());
  return written;
}

}  // namespace tilecraft::compile
