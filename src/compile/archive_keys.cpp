#include "compile/archive_keys.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "compile/ed25519.hpp"
#include "compile/sha256.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::compile {
namespace {

constexpr std::string_view kKeyPrefix = "tilecraft-ed25519:";
constexpr std::string_view kKeyFileMagic = "tilecraft-archive-key v1\n";
constexpr size_t kMaxKeyListFileBytes = 4096;
constexpr size_t kMaxTrustedFileBytes = 1 << 20;

std::string_view trimmed(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const size_t last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

// The bytes of a small regular file, read without following a link at path's end and without
// blocking on a fifo; `what` names it in messages.
Result<std::string> read_small_file(const std::string& path, size_t limit, const std::string& what,
                                    struct stat* info) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ELOOP) return Status::invalid(what + ": '" + path + "' is a symbolic link");
    return Status::invalid(what + ": " + errno_text("cannot open", path));
  }
  if (fstat(fd.get(), info) != 0)
    return Status::invalid(what + ": " + errno_text("cannot inspect", path));
  if (!S_ISREG(info->st_mode)) {
    return Status::invalid(what + ": expected a file, got " + file_kind(info->st_mode) + " at '" +
                           path + "'");
  }
  if (static_cast<uint64_t>(info->st_size) > limit) {
    return Status::invalid(what + ": '" + path + "' holds " + std::to_string(info->st_size) +
                           " bytes, more than the " + std::to_string(limit) + " such a file has");
  }
  std::string text;
  TILECRAFT_RETURN_IF_ERROR(read_all(fd.get(), path, &text));
  if (text.size() > limit) return Status::invalid(what + ": '" + path + "' grew while read");
  return text;
}

Status key_file_path_problem(const std::string& path) {
  if (path.empty() || path.front() != '/' || path.find('\0') != std::string::npos) {
    return Status::invalid("key_file: expected an absolute path without NUL bytes, got '" +
                           path.substr(0, path.find('\0')) + "'");
  }
  return Status::ok();
}

std::string key_file_text(const ArchiveKey& key) {
  return std::string(kKeyFileMagic) + "public " + public_key_text(key.public_key) + "\nprivate " +
         to_hex(key.seed) + "\n";
}

// The public keys of a file of key lines.
Status read_key_lines(const std::string& path, const std::string& what,
                      std::vector<std::string>* keys) {
  struct stat info;
  Result<std::string> text = read_small_file(path, kMaxTrustedFileBytes, what, &info);
  if (!text) return text.status();
  size_t number = 0;
  for (size_t start = 0; start < text->size();) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    const std::string_view line = trimmed(std::string_view(*text).substr(start, end - start));
    start = end + 1;
    ++number;
    if (line.empty() || line.front() == '#') continue;
    Result<std::string> key =
        parse_public_key(line, what + " ('" + path + "', line " + std::to_string(number) + ")");
    if (!key) return key.status();
    keys->push_back(std::move(*key));
  }
  return Status::ok();
}

}  // namespace

std::string printable(std::string_view text) {
  std::string shown(text.substr(0, 80));
  for (char& c : shown) {
    if (c < 32 || c > 126) c = '?';
  }
  return shown;
}

std::string public_key_text(std::string_view public_key) {
  return std::string(kKeyPrefix) + to_hex(public_key);
}

std::string public_key_id(std::string_view public_key) {
  return std::string(kKeyPrefix) + to_hex(public_key).substr(0, 16);
}

Result<std::string> parse_public_key(std::string_view text, const std::string& what) {
  std::string_view key = trimmed(text);
  if (const size_t blank = key.find_first_of(" \t"); blank != std::string_view::npos) {
    key = key.substr(0, blank);  // a comment follows
  }
  bool ok = false;
  std::string bytes;
  if (key.starts_with(kKeyPrefix) && key.size() == kKeyPrefix.size() + 2 * kEd25519KeyBytes) {
    bytes = from_hex(key.substr(kKeyPrefix.size()), &ok);
  }
  if (!ok) {
    return Status::invalid(what +
                           ": expected a public key 'tilecraft-ed25519:' followed by 64 hex "
                           "digits, got '" +
                           printable(trimmed(text)) + "'");
  }
  return bytes;
}

Result<ArchiveKey> generate_archive_key(const std::string& path) {
  const std::string what = "archive key '" + path + "'";
  TILECRAFT_RETURN_IF_ERROR(key_file_path_problem(path));
  struct stat info;
  if (lstat(path.c_str(), &info) == 0) {
    return Status::invalid(what + ": something is there already (" + file_kind(info.st_mode) +
                           "); tilecraft never replaces it: name a new path");
  }
  const std::string folder = path.substr(0, path.find_last_of('/'));
  if (!folder.empty()) {
    if (Status made = make_private_dirs(folder); !made) {
      return Status::invalid(what + ": its folder cannot be made: " + made.message());
    }
  }
  ArchiveKey key;
  key.seed = random_bytes(kEd25519KeyBytes);
  Result<std::string> public_key = ed25519_public_key(key.seed);
  if (!public_key) return public_key.status();
  key.public_key = std::move(*public_key);
  UniqueFd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return Status::invalid(what + ": " + errno_text("cannot create", path));
  const std::string text = key_file_text(key);
  if (fchmod(fd.get(), 0600) != 0 ||
      write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
      fsync(fd.get()) != 0) {
    const Status failed = Status::invalid(what + ": " + errno_text("cannot write", path));
    unlink(path.c_str());
    return failed;
  }
  return key;
}

Result<ArchiveKey> read_archive_key(const std::string& path, const std::string& what) {
  struct stat info;
  Result<std::string> text = read_small_file(path, kMaxKeyListFileBytes, what, &info);
  if (!text) return text.status();
  if (info.st_uid != geteuid()) {
    return Status::invalid(what + ": '" + path + "' belongs to uid " + std::to_string(info.st_uid) +
                           ", not to this user");
  }
  if (info.st_mode & 077) {
    return Status::invalid(what + ": '" + path + "' may be read by others (mode " +
                           mode_text(info.st_mode) + "): a private key must be mode 0600");
  }
  const std::string malformed =
      what + ": '" + path + "' is not an archive key pair tilecraft wrote";
  if (!std::string_view(*text).starts_with(kKeyFileMagic)) return Status::invalid(malformed);
  std::string_view rest = std::string_view(*text).substr(kKeyFileMagic.size());
  auto line = [&rest](std::string_view label) -> std::string_view {
    if (!rest.starts_with(label)) return {};
    const size_t end = rest.find('\n');
    if (end == std::string_view::npos) return {};
    std::string_view value = rest.substr(label.size(), end - label.size());
    rest.remove_prefix(end + 1);
    return value;
  };
  const std::string_view public_line = line("public ");
  const std::string_view private_line = line("private ");
  bool ok = false;
  ArchiveKey key;
  key.seed = from_hex(private_line, &ok);
  if (!ok || key.seed.size() != kEd25519KeyBytes || !rest.empty())
    return Status::invalid(malformed);
  Result<std::string> public_key = ed25519_public_key(key.seed);
  if (!public_key) return public_key.status();
  key.public_key = std::move(*public_key);
  if (public_key_text(key.public_key) != public_line) {
    return Status::invalid(malformed + " (its public key does not belong to its private key)");
  }
  return key;
}

Result<ArchiveKey> archive_signing_key(const std::string& key_file, std::string* note) {
  if (!key_file.empty()) {
    TILECRAFT_RETURN_IF_ERROR(key_file_path_problem(key_file));
    return read_archive_key(key_file, "key_file");
  }
  const std::string& path = settings().archive_key_file;
  struct stat info;
  if (lstat(path.c_str(), &info) == 0) return read_archive_key(path, "TILECRAFT_ARCHIVE_KEY_FILE");
  Result<ArchiveKey> made = generate_archive_key(path);
  if (!made) {
    return Status::invalid("TILECRAFT_ARCHIVE_KEY_FILE: no archive key at '" + path +
                           "' and none can be made: " + made.status().message());
  }
  if (note) {
    *note = "tilecraft: made an archive signing key at " + path +
            "; machines that import your archives trust its public key " +
            public_key_text(made->public_key) +
            " (import_cache(trusted_keys=...) or a line of "
            "TILECRAFT_TRUSTED_KEYS's file)";
  }
  return made;
}

Result<std::vector<std::string>> trusted_public_keys(const std::vector<std::string>& given,
                                                     std::string* sources) {
  std::vector<std::string> keys;
  std::vector<std::string> from;
  for (size_t i = 0; i < given.size(); ++i) {
    const std::string what = "trusted_keys[" + std::to_string(i) + "]";
    const std::string& value = given[i];
    if (value.find('\0') != std::string::npos) {
      return Status::invalid(what +
                             ": expected a public key or a file of them, got a string "
                             "holding a NUL byte");
    }
    if (trimmed(value).starts_with(kKeyPrefix)) {
      Result<std::string> key = parse_public_key(value, what);
      if (!key) return key.status();
      keys.push_back(std::move(*key));
    } else if (!value.empty() && value.front() == '/') {
      TILECRAFT_RETURN_IF_ERROR(read_key_lines(value, what, &keys));
    } else {
      return Status::invalid(what +
                             ": expected a public key ('tilecraft-ed25519:<hex>') or the "
                             "absolute path of a file of them, got '" +
                             value.substr(0, 80) + "'");
    }
    if (i == 0) from.push_back("the trusted_keys argument");
  }
  const Settings& s = settings();
  struct stat info;
  if (!s.trusted_keys_file.empty() &&
      (!s.trusted_keys_variable.empty() || lstat(s.trusted_keys_file.c_str(), &info) == 0)) {
    TILECRAFT_RETURN_IF_ERROR(read_key_lines(
        s.trusted_keys_file,
        s.trusted_keys_variable.empty() ? "the trusted keys file" : s.trusted_keys_variable,
        &keys));
    from.push_back("'" + s.trusted_keys_file + "'");
  }
  if (lstat(s.archive_key_file.c_str(), &info) == 0) {
    if (Result<ArchiveKey> own = read_archive_key(s.archive_key_file, "TILECRAFT_ARCHIVE_KEY_FILE");
        own) {
      keys.push_back(own->public_key);
      from.push_back("your own archive key");
    }
  }
  if (sources) {
    *sources = from.empty() ? "none" : from[0];
    for (size_t i = 1; i < from.size(); ++i) *sources += ", " + from[i];
  }
  return keys;
}

Result<std::string> make_archive_key(const std::string& path) {
  const std::string& target = path.empty() ? settings().archive_key_file : path;
  Result<ArchiveKey> key = generate_archive_key(target);
  if (!key) return key.status();
  return public_key_text(key->public_key);
}

Result<std::string> archive_public_key(const std::string& path) {
  const std::string& target = path.empty() ? settings().archive_key_file : path;
  Result<ArchiveKey> key =
      read_archive_key(target, path.empty() ? "TILECRAFT_ARCHIVE_KEY_FILE" : "key_file");
  if (!key) return key.status();
  return public_key_text(key->public_key);
}

}  // namespace tilecraft::compile
