#include "compile/signing_key.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "compile/sha256.hpp"
#include "tilecraft/compile/file_util.hpp"

namespace tilecraft::compile {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kKeyFileMagic = "tilecraft-signing-key v1\n";
// A key file is a few dozen bytes; anything much larger is no key of ours, and is not read whole.
constexpr size_t kMaxSigningKeyFileBytes = 4096;

std::string key_file_text(const std::string& key) {
  return std::string(kKeyFileMagic) + to_hex(key) + "\n";
}

// What stands at the key's path, and what tilecraft may do about it.
struct KeyRead {
  enum class State {
    kValid,    // bytes holds the key
    kMissing,  // nothing there: tilecraft writes a new key
    kDamaged,  // a key file tilecraft wrote, damaged or exposed: replaced, and said so
    kForeign,  // something tilecraft did not write: refused, never touched
  };
  State state = State::kMissing;
  std::string bytes;
  std::string why;  // for kDamaged and kForeign
};

KeyRead foreign(std::string why) { return {KeyRead::State::kForeign, "", std::move(why)}; }
KeyRead damaged(std::string why) { return {KeyRead::State::kDamaged, "", std::move(why)}; }

// Whether text is (the start of) a key file tilecraft writes: the magic line, or a prefix of it
// as a torn or truncated write leaves.
bool looks_like_ours(std::string_view text) {
  if (text.empty()) return false;
  if (text.size() < kKeyFileMagic.size()) return kKeyFileMagic.substr(0, text.size()) == text;
  return text.substr(0, kKeyFileMagic.size()) == kKeyFileMagic;
}

KeyRead read_key(const std::string& path) {
  struct stat info;
  if (lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return {};
    return foreign(errno_text("it cannot be inspected:", path));
  }
  if (S_ISLNK(info.st_mode)) return foreign("it is a symbolic link, which tilecraft never follows");
  if (!S_ISREG(info.st_mode)) return foreign("it is " + file_kind(info.st_mode) + ", not a file");
  if (info.st_uid != geteuid()) {
    return foreign("it belongs to uid " + std::to_string(info.st_uid) + ", not to this user");
  }
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid() || fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return foreign(errno_text("it cannot be opened as a file:", path));
  }
  std::string text(kMaxSigningKeyFileBytes + 1, '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return foreign(errno_text("it cannot be read:", path));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  const bool exposed = (info.st_mode & 077) != 0;
  if (looks_like_ours(text)) {
    const std::string_view hex =
        std::string_view(text).substr(std::min(text.size(), kKeyFileMagic.size()));
    bool hex_ok = false;
    std::string key;
    if (hex.size() == 2 * kSigningKeyBytes + 1 && hex.back() == '\n') {
      key = from_hex(hex.substr(0, hex.size() - 1), &hex_ok);
    }
    if (!hex_ok) return damaged("its key text is malformed (" + std::to_string(got) + " bytes)");
    if (exposed) return damaged("others may read it (mode " + mode_text(info.st_mode) + ")");
    return {KeyRead::State::kValid, std::move(key), ""};
  }
  // The raw 32 bytes an earlier tilecraft wrote: used as they are, never rewritten.
  if (got == kSigningKeyBytes && !exposed) return {KeyRead::State::kValid, text, ""};
  if (got > kMaxSigningKeyFileBytes) {
    return foreign("it is a file of more than " + std::to_string(kMaxSigningKeyFileBytes) +
                   " bytes that tilecraft did not write");
  }
  return foreign("it is a file of " + std::to_string(got) + " bytes (mode " +
                 mode_text(info.st_mode) + ") that tilecraft did not write");
}

// Writes a new key beside path, then moves it into place: over a damaged key of ours
// (replace_existing), else only where nothing stands (link() replaces nothing that appeared).
Result<std::string> write_new_key(const std::string& path, bool replace_existing) {
  std::string bytes = random_bytes(kSigningKeyBytes);
  std::string temp = path + ".new-XXXXXX";
  UniqueFd fd(mkostemp(temp.data(), O_CLOEXEC));  // O_EXCL, mode 0600
  if (!fd.valid()) return Status::internal(errno_text("could not create", temp));
  const std::string text = key_file_text(bytes);
  bool done = fchmod(fd.get(), 0600) == 0 &&
              write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
              fsync(fd.get()) == 0;
  std::string failure = done ? "" : errno_text("could not write", temp);
  fd.reset();
  if (done) {
    const bool moved = replace_existing ? rename(temp.c_str(), path.c_str()) == 0
                                        : link(temp.c_str(), path.c_str()) == 0;
    if (!moved) failure = errno_text("could not put the new key at", path);
  }
  unlink(temp.c_str());  // after link() the key stays at path; after rename() nothing is here
  if (!failure.empty()) return Status::internal(failure);
  TILECRAFT_RETURN_IF_ERROR(fsync_path(fs::path(path).parent_path().string()));
  return bytes;
}

std::string key_file_named(const std::string& path) {
  return "the signing key file '" + path + "' (TILECRAFT_SIGNING_KEY_FILE)";
}

}  // namespace

Result<std::string> load_signing_key(const std::string& path, std::string* repair) {
  if (path.empty() || path.front() != '/') {
    return Status::unsupported("TILECRAFT_SIGNING_KEY_FILE: expected an absolute path, got '" +
                               path + "'");
  }
  if (path.find('\0') != std::string::npos) {
    return Status::unsupported("TILECRAFT_SIGNING_KEY_FILE: expected a path without NUL bytes");
  }
  // What stands there is looked at before anything is created beside it.
  if (KeyRead first = read_key(path); first.state == KeyRead::State::kForeign) {
    return Status::unsupported(key_file_named(path) +
                               " is not a key tilecraft wrote: " + first.why +
                               "; tilecraft never replaces what it did not make: name another "
                               "path, or remove it and tilecraft writes a new key there");
  } else if (first.state == KeyRead::State::kValid) {
    return std::move(first.bytes);
  }
  const std::string folder = fs::path(path).parent_path().string();
  if (Status made = make_private_dirs(folder); !made) {
    return Status::unsupported(key_file_named(path) + ": its folder cannot be created (" +
                               made.message() + ")");
  }
  if (std::string problem = private_dir_problem(folder); !problem.empty()) {
    return Status::unsupported(key_file_named(path) + ": its folder is not private: " + problem);
  }
  // Serializes repairs across threads and processes: one new key, not one per racer.
  UniqueFd lock(
      open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  struct stat lock_info;
  if (lock.valid() && fstat(lock.get(), &lock_info) == 0 && S_ISREG(lock_info.st_mode)) {
    while (flock(lock.get(), LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  KeyRead read = read_key(path);
  switch (read.state) {
    case KeyRead::State::kValid:
      return std::move(read.bytes);
    case KeyRead::State::kForeign:
      return Status::unsupported(key_file_named(path) + " is not a key tilecraft wrote: " +
                                 read.why + "; tilecraft never replaces what it did not make");
    case KeyRead::State::kMissing:
    case KeyRead::State::kDamaged:
      break;
  }
  const bool is_damaged = read.state == KeyRead::State::kDamaged;
  Result<std::string> made = write_new_key(path, is_damaged);
  if (!made) {
    return Status::unsupported(
        key_file_named(path) + " is " +
        (is_damaged ? "damaged (" + read.why + ")" : std::string("missing")) +
        " and a new one cannot be written: " + made.status().message());
  }
  if (is_damaged && repair) {
    *repair = "tilecraft: the signing key " + path + " was damaged (" + read.why +
              "): replaced it with a new key; modules cached before are compiled again as they "
              "are needed";
  }
  return made;
}

}  // namespace tilecraft::compile
