#include "tilecraft/compile/cache_root.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "tilecraft/compile/file_util.hpp"

namespace tilecraft::compile {
namespace {

constexpr std::string_view kTagSignature = "Signature: 8a477f597d28d172789f06886806bc55\n";
constexpr std::string_view kTagText =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by tilecraft.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n";
// The folders an earlier, untagged tilecraft kept at a cache's top ("secret": the signing key's
// place before it moved out of the cache).
const std::set<std::string> kLegacyNames = {"v1", "facts", "tuning", "secret", kCacheTagName};

std::string named(const std::string& root) { return "TILECRAFT_CACHE_DIR: '" + root + "'"; }

bool same_file(const struct stat& a, const char* path) {
  struct stat b;
  return path && path[0] == '/' && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

bool is_home(const struct stat& info) {
  if (same_file(info, std::getenv("HOME"))) return true;
  const struct passwd* entry = getpwuid(geteuid());
  return entry && same_file(info, entry->pw_dir);
}

enum class Tag { kNone, kOurs, kForeign };

Tag tag_of(const std::string& root) {
  const std::string path = root + "/" + kCacheTagName;
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    struct stat info;
    return lstat(path.c_str(), &info) == 0 ? Tag::kForeign : Tag::kNone;
  }
  struct stat info;
  if (fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) return Tag::kForeign;
  char text[512];
  const ssize_t got = read(fd.get(), text, sizeof(text));
  if (got <= 0) return Tag::kForeign;
  const std::string_view content(text, static_cast<size_t>(got));
  return content.starts_with(kTagSignature) &&
                 content.find("created by tilecraft") != std::string_view::npos
             ? Tag::kOurs
             : Tag::kForeign;
}

// The names in a folder (without "." and ".."), at most limit of them.
Result<std::vector<std::string>> names_in(const std::string& folder, size_t limit) {
  DIR* dir = opendir(folder.c_str());
  if (!dir) return Status::internal(errno_text("cannot list", folder));
  std::vector<std::string> names;
  while (names.size() < limit) {
    const dirent* item = readdir(dir);
    if (!item) break;
    const std::string name = item->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  return names;
}

// A tag being written by another thread or process (write_tag's temporary name).
bool is_tag_in_writing(const std::string& name) {
  return name.starts_with(std::string(kCacheTagName) + ".new-");
}

bool is_earlier_cache(const std::string& root, const std::vector<std::string>& names) {
  bool has_own_folder = false;
  for (const std::string& name : names) {
    if (is_tag_in_writing(name)) {
      has_own_folder = true;  // another tilecraft is making this very cache now
      continue;
    }
    if (!kLegacyNames.count(name)) return false;
    if (name != "secret" && name != kCacheTagName && is_own_real_dir(root + "/" + name)) {
      has_own_folder = true;
    }
  }
  return has_own_folder;
}

Status write_tag(const std::string& root) {
  const std::string path = root + "/" + kCacheTagName;
  std::string temp = path + ".new-XXXXXX";
  UniqueFd fd(mkostemp(temp.data(), O_CLOEXEC));
  if (!fd.valid()) return Status::internal(errno_text("could not write", path));
  fd.reset();
  Status written = write_file_synced(temp, std::string(kTagText), 0644);
  if (written && rename(temp.c_str(), path.c_str()) != 0) {
    written = Status::internal(errno_text("could not write", path));
  }
  if (!written) unlink(temp.c_str());
  return written;
}

}  // namespace

bool is_own_real_dir(const std::string& path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode) && info.st_uid == geteuid();
}

Status claim_cache_root(const std::string& root) {
  if (root.empty() || root.front() != '/' || root.find('\0') != std::string::npos) {
    return Status::unsupported(named(root) + ": expected an absolute path");
  }
  struct stat info;
  if (stat(root.c_str(), &info) != 0) {
    if (errno != ENOENT) {
      return Status::unsupported(named(root) + ": " + errno_text("cannot inspect", root));
    }
    if (Status made = make_private_dirs(root); !made) {
      return Status::unsupported(named(root) + ": it cannot be created (" + made.message() + ")");
    }
    if (stat(root.c_str(), &info) != 0) {
      return Status::unsupported(named(root) + ": " + errno_text("cannot inspect", root));
    }
  }
  if (!S_ISDIR(info.st_mode)) {
    return Status::unsupported(named(root) + ": expected a folder, got " + file_kind(info.st_mode));
  }
  if (const char* which = same_file(info, "/") ? "root" : is_home(info) ? "home" : nullptr) {
    return Status::unsupported(named(root) + " is the " + which +
                               " folder; a cache needs a folder of its own (the default is "
                               "~/.cache/tilecraft)");
  }
  switch (tag_of(root)) {
    case Tag::kOurs:
      return Status::ok();
    case Tag::kForeign:
      return Status::unsupported(named(root) + " holds a " + kCacheTagName +
                                 " that tilecraft did not write: it is another program's cache");
    case Tag::kNone:
      break;
  }
  Result<std::vector<std::string>> names = names_in(root, 64);
  if (!names) return Status::unsupported(named(root) + ": " + names.status().message());
  if (!names->empty() && !is_earlier_cache(root, *names)) {
    // One name that makes it no cache: a foreign one, else one of a cache's names that is not
    // the folder a cache keeps there (a file named v1, say).
    std::string example;
    for (const std::string& name : *names) {
      if (!kLegacyNames.count(name) && !is_tag_in_writing(name)) {
        example = "'" + name + "'";
        break;
      }
    }
    for (const std::string& name : *names) {
      if (!example.empty()) break;
      if (kLegacyNames.count(name) && name != "secret" && name != kCacheTagName &&
          !is_own_real_dir(root + "/" + name)) {
        example = "'" + name + "', which is not a folder of this user's";
      }
    }
    return Status::unsupported(
        named(root) + ": expected an empty folder or a tilecraft cache (tagged by its " +
        kCacheTagName + "), got a folder holding other things (such as " + example +
        "); tilecraft writes only into folders it made: name a new or empty folder");
  }
  // An empty folder or an earlier cache becomes a tagged one; one that cannot be written is
  // still read (as a cache someone shares read-only).
  if (access(root.c_str(), W_OK) == 0) (void)write_tag(root);
  return Status::ok();
}

Result<std::string> cache_subdir(const std::string& root, const std::vector<std::string>& parts) {
  TILECRAFT_RETURN_IF_ERROR(claim_cache_root(root));
  std::string path = root;
  for (const std::string& part : parts) {
    path += "/" + part;
    TILECRAFT_RETURN_IF_ERROR(ensure_own_dir(path));
  }
  return path;
}

void note_left_alone(const std::string& path, const std::string& why,
                     std::vector<std::string>* left_alone) {
  std::string line = "left " + path + " alone: " + why;
  if (left_alone) {
    left_alone->push_back(std::move(line));
  } else {
    line = "tilecraft: " + line + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
}

size_t remove_own_files(const std::string& folder,
                        const std::function<bool(const std::string&)>& is_own_name,
                        std::string_view magic, std::vector<std::string>* left_alone) {
  struct stat info;
  if (lstat(folder.c_str(), &info) != 0) return 0;
  if (!S_ISDIR(info.st_mode) || info.st_uid != geteuid()) {
    note_left_alone(folder,
                    "it is " + file_kind(info.st_mode) +
                        (S_ISDIR(info.st_mode) ? " of another user" : "") +
                        " where tilecraft keeps a folder of its own",
                    left_alone);
    return 0;
  }
  Result<std::vector<std::string>> names = names_in(folder, SIZE_MAX);
  if (!names) return 0;
  size_t removed = 0;
  for (const std::string& name : *names) {
    const std::string path = folder + "/" + name;
    if (lstat(path.c_str(), &info) != 0) continue;
    std::string why;
    if (!is_own_name(name)) {
      why = "tilecraft does not name its files so";
    } else if (!S_ISREG(info.st_mode)) {
      why = "it is " + file_kind(info.st_mode) + ", not a file tilecraft wrote";
    } else if (info.st_uid != geteuid()) {
      why = "it belongs to another user";
    } else {
      UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
      std::string head(magic.size(), '\0');
      const ssize_t got = fd.valid() ? read(fd.get(), head.data(), head.size()) : -1;
      if (got != static_cast<ssize_t>(magic.size()) || head != magic) {
        why = "its content is not in tilecraft's format";
      } else if (unlink(path.c_str()) == 0) {
        ++removed;
        continue;
      } else {
        why = errno_text("it could not be removed:", path);
      }
    }
    note_left_alone(path, why, left_alone);
  }
  rmdir(folder.c_str());  // only when nothing is left in it
  return removed;
}

}  // namespace tilecraft::compile
