#include "compile/header_digest.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "compile/sha256.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/compile/signed_record.hpp"

namespace tilecraft::compile {
namespace {

namespace fs = std::filesystem;

struct HeaderFile {
  std::string name;  // "<root index>/<relative path>"
  std::string path;
  struct stat info;
};

Result<std::vector<HeaderFile>> list_files(const std::vector<std::string>& roots) {
  std::vector<HeaderFile> files;
  for (size_t r = 0; r < roots.size(); ++r) {
    std::error_code error;
    fs::recursive_directory_iterator it(roots[r], error), end;
    if (error) {
      return Status::unsupported("cannot list the headers under " + roots[r] + ": " +
                                 error.message());
    }
    for (; it != end; it.increment(error)) {
      if (error) {
        return Status::unsupported("cannot list the headers under " + roots[r] + ": " +
                                   error.message());
      }
      HeaderFile file;
      file.path = it->path().string();
      if (stat(file.path.c_str(), &file.info) != 0 || !S_ISREG(file.info.st_mode)) continue;
      // Lexical: fs::relative resolves every component of both paths, a dozen system calls a file.
      file.name = std::to_string(r) + "/" + it->path().lexically_relative(roots[r]).string();
      files.push_back(std::move(file));
    }
  }
  std::sort(files.begin(), files.end(),
            [](const HeaderFile& a, const HeaderFile& b) { return a.name < b.name; });
  return files;
}

std::string fingerprint(const std::vector<std::string>& roots,
                        const std::vector<HeaderFile>& files) {
  Sha256 hasher;
  for (const std::string& root : roots) hasher.update("root " + root + "\n");
  for (const HeaderFile& file : files) {
    const struct stat& s = file.info;
    hasher.update(file.name + " " + std::to_string(s.st_size) + " " +
                  std::to_string(s.st_mtim.tv_sec) + "." + std::to_string(s.st_mtim.tv_nsec) + " " +
                  std::to_string(s.st_ctim.tv_sec) + "." + std::to_string(s.st_ctim.tv_nsec) + " " +
                  std::to_string(s.st_ino) + " " + std::to_string(s.st_dev) + "\n");
  }
  return to_hex(hasher.finish());
}

Result<std::string> content_digest(const std::vector<HeaderFile>& files) {
  Sha256 hasher;
  std::string bytes;
  for (const HeaderFile& file : files) {
    UniqueFd fd(open(file.path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return Status::unsupported(errno_text("cannot read the header", file.path));
    if (Status read = read_all(fd.get(), file.path, &bytes); !read) {
      return Status::unsupported(read.message());
    }
    hasher.update(file.name + "\n" + std::to_string(bytes.size()) + "\n");
    hasher.update(bytes);
  }
  return to_hex(hasher.finish());
}

}  // namespace

Result<std::string> header_tree_digest(const std::vector<std::string>& roots,
                                       const std::string& memo_dir) {
  Result<std::vector<HeaderFile>> files = list_files(roots);
  if (!files) return files.status();
  const std::string print = fingerprint(roots, *files);
  std::string roots_text;
  for (const std::string& root : roots) roots_text += root + "\n";
  const std::string memo =
      memo_dir.empty() ? "" : memo_dir + "/" + sha256_hex(roots_text).substr(0, 32);
  const std::string expected_prefix = "tilecraft-header-digest v1\nfingerprint " + print + "\n";
  // The memo steers the cache key, so it is a signed record: one this user's key did not sign
  // (planted or edited) reads as absent. Without a key there is no memo.
  std::optional<std::string> key;
  if (!memo.empty()) {
    if (Result<std::string> made = user_signing_key()) key = *made;
  }
  if (key) {
    const std::string file = read_record_file(memo, 4096).value_or("");
    const std::string text = verified_body(*key, file).value_or("");
    if (text.rfind(expected_prefix, 0) == 0 && text.size() == expected_prefix.size() + 7 + 64 + 1 &&
        text.compare(expected_prefix.size(), 7, "digest ") == 0) {
      return text.substr(expected_prefix.size() + 7, 64);
    }
  }
  Result<std::string> digest = content_digest(*files);
  if (!digest) return digest.status();
  if (key && ensure_own_dir(memo_dir)) {
    (void)write_record_file(memo,
                            signed_record(*key, expected_prefix + "digest " + *digest + "\n"));
  }
  return digest;
}

}  // namespace tilecraft::compile
