// export_cache / import_cache: compiled modules moved between machines as one archive.
//
// Format (version 1), all text lines end in '\n':
//   tilecraft-cache-archive 1
//   entries <n>
//   entry <64-hex key>                       n times, each followed by its three files:
//   file <name> <size> <sha256 of the bytes>   name: module.so, source.cu or key.txt
//   end-of-index
//   <the files' bytes, in index order>
//   digest <sha256 of everything above this line>
// An entry's key must be the key of its key.txt and source.cu (compile/toolchain.hpp: key_of), so
// an archive cannot file a module under another source's key; the digests detect damage and
// modification in transit. Imported entries are signed with this machine's signing key, as if
// compiled here. Trusting an archive's origin is like trusting any code one installs.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "compile/artifact_cache.hpp"
#include "compile/file_util.hpp"
#include "compile/sha256.hpp"
#include "compile/toolchain.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::compile {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMagic = "tilecraft-cache-archive 1";
constexpr const char* kFiles[] = {"module.so", "source.cu", "key.txt"};
constexpr size_t kMaxArchiveBytes = size_t(8) << 30;

bool is_key(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status read_file(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::invalid(errno_text("cannot open", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return Status::invalid(errno_text("cannot read", path));
  *out = text.str();
  return Status::ok();
}

struct Entry {
  std::string key;
  std::string files[3];  // module.so, source.cu, key.txt
};

Status refuse(const std::string& archive, const std::string& what) {
  return Status::invalid("import_cache: " + archive + ": " + what + "; nothing was imported");
}

}  // namespace

Result<CacheTransfer> export_cache(const std::string& archive_path) {
  if (archive_path.empty()) {
    return Status::invalid("export_cache: path: expected a file name, got ''");
  }
  const Settings s = settings();
  ArtifactCache cache = ArtifactCache::open(s);
  if (!cache.readable()) {
    return Status::unsupported("export_cache: the cache at " + cache.root() +
                               " cannot be read: " + cache.reason());
  }
  CacheTransfer report;
  std::vector<Entry> entries;
  std::error_code error;
  const fs::path v1 = fs::path(cache.root()) / "v1";
  for (const auto& prefix : fs::directory_iterator(v1, error)) {
    const std::string name = prefix.path().filename().string();
    if (name.size() != 2 || !prefix.is_directory(error) || prefix.is_symlink(error)) continue;
    for (const auto& dir : fs::directory_iterator(prefix.path(), error)) {
      const std::string key = dir.path().filename().string();
      if (!is_key(key)) continue;
      LookupResult found = cache.lookup(key);
      if (!found.module_path) {
        ++report.skipped;
        report.notes.push_back(
            key.substr(0, 16) + ": not exported (" +
            (found.invalid_reason.empty() ? std::string("incomplete") : found.invalid_reason) +
            ")");
        continue;
      }
      Entry entry{key, {}};
      bool complete = true;
      for (int f = 0; f < 3 && complete; ++f) {
        complete =
            static_cast<bool>(read_file(cache.entry_dir(key) + "/" + kFiles[f], &entry.files[f]));
      }
      if (!complete || key_of(entry.files[2], entry.files[1]) != key) {
        ++report.skipped;
        report.notes.push_back(key.substr(0, 16) +
                               ": not exported (its source or key.txt is "
                               "missing or does not match its key)");
        continue;
      }
      entries.push_back(std::move(entry));
    }
  }
  std::string out = std::string(kMagic) + "\nentries " + std::to_string(entries.size()) + "\n";
  for (const Entry& entry : entries) {
    out += "entry " + entry.key + "\n";
    for (int f = 0; f < 3; ++f) {
      out += std::string("file ") + kFiles[f] + " " + std::to_string(entry.files[f].size()) + " " +
             sha256_hex(entry.files[f]) + "\n";
    }
  }
  out += "end-of-index\n";
  for (const Entry& entry : entries) {
    for (const std::string& file : entry.files) out += file;
  }
  out += "digest " + sha256_hex(out) + "\n";
  const std::string temporary = archive_path + ".tmp-" + std::to_string(getpid());
  Status written = write_file_synced(temporary, out, 0644);
  if (!written) return Status(written.code(), "export_cache: " + written.message());
  if (std::rename(temporary.c_str(), archive_path.c_str()) != 0) {
    Status failed = Status::invalid("export_cache: " + errno_text("cannot write", archive_path));
    std::remove(temporary.c_str());
    return failed;
  }
  report.entries = entries.size();
  return report;
}

Result<CacheTransfer> import_cache(const std::string& archive_path) {
  std::string data;
  std::error_code error;
  if (archive_path.empty() || !fs::is_regular_file(archive_path, error)) {
    return Status::invalid(
        "import_cache: path: expected an archive written by export_cache, got '" + archive_path +
        "', which is not a file");
  }
  if (fs::file_size(archive_path, error) > kMaxArchiveBytes) {
    return refuse(archive_path, "larger than 8 GiB");
  }
  TILECRAFT_RETURN_IF_ERROR(read_file(archive_path, &data));

  // The trailer first: nothing in a modified archive is trusted.
  const size_t trailer = data.rfind("digest ");
  if (data.rfind(kMagic, 0) != 0) {
    return refuse(archive_path, "not a tilecraft cache archive of version 1");
  }
  if (trailer == std::string::npos || data.size() != trailer + 7 + 64 + 1 || data.back() != '\n' ||
      data.compare(trailer + 7, 64, sha256_hex(std::string_view(data).substr(0, trailer))) != 0) {
    return refuse(archive_path,
                  "its digest does not match its content (the archive was modified, truncated or "
                  "damaged)");
  }
  std::istringstream index(data.substr(0, trailer));
  std::string line;
  std::getline(index, line);  // the magic line
  size_t count = 0;
  if (!std::getline(index, line) || std::sscanf(line.c_str(), "entries %zu", &count) != 1 ||
      count > 1000000) {
    return refuse(archive_path, "malformed entry count '" + line + "'");
  }
  struct Planned {
    std::string key;
    size_t sizes[3];
    std::string digests[3];
  };
  std::vector<Planned> planned(count);
  for (Planned& p : planned) {
    if (!std::getline(index, line) || line.rfind("entry ", 0) != 0 || !is_key(line.substr(6))) {
      return refuse(archive_path, "malformed entry line '" + line.substr(0, 80) + "'");
    }
    p.key = line.substr(6);
    for (int f = 0; f < 3; ++f) {
      char name[32] = "", digest[65] = "";
      size_t size = 0;
      if (!std::getline(index, line) ||
          std::sscanf(line.c_str(), "file %31s %zu %64s", name, &size, digest) != 3 ||
          std::string(name) != kFiles[f] || !is_key(digest) || size > kMaxArchiveBytes) {
        return refuse(archive_path, "entry " + p.key.substr(0, 16) + ": malformed file line '" +
                                        line.substr(0, 80) + "' (expected " + kFiles[f] + ")");
      }
      p.sizes[f] = size;
      p.digests[f] = digest;
    }
  }
  if (!std::getline(index, line) || line != "end-of-index") {
    return refuse(archive_path, "no end-of-index line");
  }
  size_t at = static_cast<size_t>(index.tellg());
  std::vector<Entry> entries;
  for (const Planned& p : planned) {
    Entry entry{p.key, {}};
    for (int f = 0; f < 3; ++f) {
      if (at > trailer || p.sizes[f] > trailer - at) {
        return refuse(archive_path, "entry " + p.key.substr(0, 16) + ": " + kFiles[f] +
                                        " runs past the end of the archive");
      }
      entry.files[f] = data.substr(at, p.sizes[f]);
      at += p.sizes[f];
      if (sha256_hex(entry.files[f]) != p.digests[f]) {
        return refuse(archive_path, "entry " + p.key.substr(0, 16) + ": " + kFiles[f] +
                                        ": SHA-256 mismatch (the archive was modified or damaged)");
      }
    }
    if (entry.files[0].compare(0, 4,
                               "\x7f"
                               "ELF") != 0) {
      return refuse(archive_path,
                    "entry " + p.key.substr(0, 16) + ": module.so is not an ELF shared object");
    }
    if (key_of(entry.files[2], entry.files[1]) != p.key) {
      return refuse(archive_path, "entry " + p.key.substr(0, 16) +
                                      ": its key is not the key of its key.txt and source.cu");
    }
    entries.push_back(std::move(entry));
  }
  if (at != trailer) return refuse(archive_path, "bytes after the last entry's files");

  const Settings s = settings();
  ArtifactCache cache = ArtifactCache::open(s);
  if (!cache.writable()) {
    return Status::unsupported("import_cache: the cache at " + cache.root() +
                               " cannot be written: " + cache.reason());
  }
  CacheTransfer report;
  for (const Entry& entry : entries) {
    if (cache.lookup(entry.key).module_path) {
      ++report.already_present;
      continue;
    }
    Result<KeyLock> lock = cache.lock(entry.key);
    if (!lock) return lock.status();
    if (cache.lookup(entry.key).module_path) {
      ++report.already_present;
      continue;
    }
    Result<BuildDir> build = cache.make_build_dir(entry.key);
    if (!build) return build.status();
    TILECRAFT_RETURN_IF_ERROR(
        write_file_synced(build->path() + "/module.so", entry.files[0], 0755));
    TILECRAFT_RETURN_IF_ERROR(
        write_file_synced(build->path() + "/source.cu", entry.files[1], 0644));
    Result<std::string> committed = cache.commit(entry.key, *build, entry.files[2]);
    if (!committed) return committed.status();
    ++report.entries;
  }
  return report;
}

}  // namespace tilecraft::compile
