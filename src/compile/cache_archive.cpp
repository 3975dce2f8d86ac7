// export_cache / import_cache: compiled modules moved between machines as one signed archive.
//
// Format (version 2); every index line ends in '\n':
//   tilecraft-cache-archive 2
//   signer tilecraft-ed25519:<64 hex>          the exporter's public key
//   entries <n>
//   entry <64-hex key>                          n times, each followed by its three files:
//   file <name> <size> <sha256 of the bytes>    module.so, source.cu, key.txt, in this order
//   end-of-index
//   signature <128 hex>                         Ed25519, by the signer, of kSignedPrefix and
//                                               every byte above this line
//   <the files' bytes, in index order, and nothing after them>
// The signature covers each file's digest under its entry's key, so a module cannot be swapped,
// altered or moved to another entry without the signer's private key; an entry's key must also
// be the key of its key.txt and source.cu (compile/toolchain.hpp: key_of). An import checks the
// signer against the public keys the importing user trusts, then reads the archive once to check
// every file before anything is written, then again to store each entry (checking each file
// once more as it is written). Memory stays bounded: modules are streamed.
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>
#include <vector>

#include "compile/archive_keys.hpp"
#include "compile/ed25519.hpp"
#include "compile/sha256.hpp"
#include "compile/toolchain.hpp"
#include "tilecraft/compile/artifact_cache.hpp"
#include "tilecraft/compile/cache_root.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::compile {
namespace {

constexpr std::string_view kArchiveMagic = "tilecraft-cache-archive 2";
constexpr std::string_view kSignedPrefix = "tilecraft cache archive signature v2\n";
constexpr const char* kFiles[] = {"module.so", "source.cu", "key.txt"};
constexpr uint64_t kMaxFileBytes[] = {uint64_t(2) << 30, uint64_t(64) << 20, uint64_t(1) << 20};
constexpr uint64_t kMaxArchiveBytes = uint64_t(8) << 30;
constexpr size_t kMaxEntries = 100000;
constexpr size_t kMaxLineBytes = 256;
constexpr size_t kChunk = size_t(1) << 20;

// A decimal number without sign, blanks or leading zeros, at most limit.
bool parse_size(std::string_view text, uint64_t limit, uint64_t* value) {
  if (text.empty() || text.size() > 20 || (text.size() > 1 && text[0] == '0')) return false;
  uint64_t result = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    if (result > (limit - static_cast<uint64_t>(c - '0')) / 10) return false;
    result = result * 10 + static_cast<uint64_t>(c - '0');
  }
  *value = result;
  return true;
}

// Why the first bytes of a module are not those of a shared object this machine can load, or "".
std::string elf_problem(std::string_view head) {
  if (head.size() < sizeof(Elf64_Ehdr)) return "it is too short to be an ELF shared object";
  Elf64_Ehdr header;
  std::copy(head.begin(), head.begin() + sizeof(header), reinterpret_cast<char*>(&header));
  if (std::string_view(reinterpret_cast<const char*>(header.e_ident), SELFMAG) != ELFMAG) {
    return "it is not an ELF file";
  }
#if defined(__x86_64__)
  constexpr int kMachine = EM_X86_64;
#elif defined(__aarch64__)
  constexpr int kMachine = EM_AARCH64;
#else
  constexpr int kMachine = -1;
#endif
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB ||
      header.e_ident[EI_VERSION] != EV_CURRENT || header.e_type != ET_DYN ||
      (kMachine >= 0 && header.e_machine != kMachine)) {
    return "it is not a 64-bit shared object for this machine";
  }
  return "";
}

struct FileRecord {
  uint64_t size = 0;
  std::string sha256;  // hex
};

struct EntryRecord {
  std::string key;
  FileRecord files[3];
};

std::string index_text(const std::string& signer, const std::vector<EntryRecord>& entries) {
  std::string out = std::string(kArchiveMagic) + "\nsigner " + public_key_text(signer) +
                    "\nentries " + std::to_string(entries.size()) + "\n";
  for (const EntryRecord& entry : entries) {
    out += "entry " + entry.key + "\n";
    for (int f = 0; f < 3; ++f) {
      out += std::string("file ") + kFiles[f] + " " + std::to_string(entry.files[f].size) + " " +
             entry.files[f].sha256 + "\n";
    }
  }
  return out + "end-of-index\n";
}

// Reads an open file from an offset, in order: lines of the index, then byte ranges.
class ArchiveReader {
 public:
  ArchiveReader(int fd, uint64_t size) : fd_(fd), size_(size) {}

  uint64_t offset() const { return offset_; }
  void seek(uint64_t offset) {
    offset_ = offset;
    buffer_.clear();
    at_ = 0;
  }

  // The next line without its '\n'; false at the end, on a read error or past max bytes.
  bool line(std::string* text) {
    text->clear();
    for (;;) {
      if (at_ == buffer_.size() && !fill()) return false;
      const size_t end = buffer_.find('\n', at_);
      const size_t stop = end == std::string::npos ? buffer_.size() : end;
      text->append(buffer_, at_, stop - at_);
      offset_ += stop - at_ + (end == std::string::npos ? 0 : 1);
      at_ = end == std::string::npos ? buffer_.size() : end + 1;
      if (text->size() > kMaxLineBytes) return false;
      if (end != std::string::npos) return true;
    }
  }

  // Calls sink with consecutive pieces of the next count bytes; false when the file ends first.
  template <class Sink>
  bool bytes(uint64_t count, Sink&& sink) {
    while (count > 0) {
      if (at_ == buffer_.size() && !fill()) return false;
      const size_t take = static_cast<size_t>(std::min<uint64_t>(count, buffer_.size() - at_));
      if (!sink(std::string_view(buffer_).substr(at_, take))) return false;
      at_ += take;
      offset_ += take;
      count -= take;
    }
    return true;
  }

 private:
  bool fill() {
    const uint64_t file_offset = offset_;
    if (file_offset >= size_) return false;
    buffer_.resize(static_cast<size_t>(std::min<uint64_t>(kChunk, size_ - file_offset)));
    size_t got = 0;
    while (got < buffer_.size()) {
      const ssize_t n = pread(fd_, buffer_.data() + got, buffer_.size() - got,
                              static_cast<off_t>(file_offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    buffer_.resize(got);
    at_ = 0;
    return got > 0;
  }

  int fd_;
  uint64_t size_;
  uint64_t offset_ = 0;
  std::string buffer_;
  size_t at_ = 0;
};

Status refuse(const std::string& archive, const std::string& what) {
  return Status::invalid("import_cache: " + archive + ": " + what + "; nothing was imported");
}

struct ParsedIndex {
  std::string signer;
  std::vector<EntryRecord> entries;
  uint64_t data_offset = 0;
};

// Reads and checks the index and its signature: strict lines, no duplicate keys, bounded counts
// and sizes, the sizes adding up to the file's, and a valid signature by a trusted key.
Result<ParsedIndex> read_index(ArchiveReader& reader, uint64_t file_size, const std::string& path,
                               const std::vector<std::string>& trusted,
                               const std::string& trusted_from) {
  ParsedIndex index;
  std::string line;
  std::string signed_text;
  auto next = [&](const char* expected) -> Status {
    if (!reader.line(&line)) {
      return refuse(path, std::string("the index ends early or has an overlong line where ") +
                              expected + " belongs");
    }
    signed_text += line + "\n";
    return Status::ok();
  };
  TILECRAFT_RETURN_IF_ERROR(next("the first line"));
  if (line != kArchiveMagic) {
    return refuse(path, "expected a tilecraft cache archive of version 2 (first line '" +
                            std::string(kArchiveMagic) + "'), got '" + printable(line) + "'");
  }
  TILECRAFT_RETURN_IF_ERROR(next("the signer line"));
  if (!line.starts_with("signer "))
    return refuse(path, "malformed signer line '" + printable(line) + "'");
  Result<std::string> signer = parse_public_key(line.substr(7), "its signer");
  if (!signer || line.size() != 7 + 18 + 64) {
    return refuse(path, "malformed signer line '" + printable(line) + "'");
  }
  index.signer = std::move(*signer);
  TILECRAFT_RETURN_IF_ERROR(next("the entry count"));
  uint64_t count = 0;
  if (!line.starts_with("entries ") ||
      !parse_size(std::string_view(line).substr(8), kMaxEntries, &count)) {
    return refuse(path, "malformed entry count '" + printable(line) + "' (at most " +
                            std::to_string(kMaxEntries) + " entries)");
  }
  std::set<std::string> keys;
  uint64_t total = 0;
  for (uint64_t e = 0; e < count; ++e) {
    TILECRAFT_RETURN_IF_ERROR(next("an entry line"));
    if (!line.starts_with("entry ") || !is_lower_hex(std::string_view(line).substr(6), 64)) {
      return refuse(path, "malformed entry line '" + printable(line) + "'");
    }
    EntryRecord entry;
    entry.key = line.substr(6);
    if (!keys.insert(entry.key).second) {
      return refuse(path, "entry " + entry.key.substr(0, 16) + " appears twice");
    }
    for (int f = 0; f < 3; ++f) {
      TILECRAFT_RETURN_IF_ERROR(next("a file line"));
      const std::string prefix = std::string("file ") + kFiles[f] + " ";
      const size_t blank = line.rfind(' ');
      FileRecord& file = entry.files[f];
      if (!line.starts_with(prefix) || blank < prefix.size() ||
          !parse_size(std::string_view(line).substr(prefix.size(), blank - prefix.size()),
                      kMaxFileBytes[f], &file.size) ||
          !is_lower_hex(std::string_view(line).substr(blank + 1), 64)) {
        return refuse(path, "entry " + entry.key.substr(0, 16) + ": malformed file line '" +
                                printable(line) + "' (expected 'file " + kFiles[f] +
                                " <size> <sha256>', at most " + std::to_string(kMaxFileBytes[f]) +
                                " bytes)");
      }
      file.sha256 = line.substr(blank + 1);
      total += file.size;
    }
    index.entries.push_back(std::move(entry));
  }
  TILECRAFT_RETURN_IF_ERROR(next("'end-of-index'"));
  if (line != "end-of-index") {
    return refuse(path,
                  "expected 'end-of-index' after the last entry, got '" + printable(line) + "'");
  }
  std::string signature_line;
  if (!reader.line(&signature_line) || !signature_line.starts_with("signature ") ||
      !is_lower_hex(std::string_view(signature_line).substr(10), 128)) {
    return refuse(path, "malformed signature line '" + printable(signature_line) + "'");
  }
  bool hex_ok = false;
  const std::string signature = from_hex(std::string_view(signature_line).substr(10), &hex_ok);
  if (!ed25519_verify(index.signer, std::string(kSignedPrefix) + signed_text, signature)) {
    return refuse(path,
                  "its signature does not verify: the archive was modified or damaged "
                  "after " +
                      public_key_id(index.signer) + "... signed it");
  }
  if (std::find(trusted.begin(), trusted.end(), index.signer) == trusted.end()) {
    return refuse(path, "it is signed by " + public_key_text(index.signer) +
                            ", which is not a key you trust (trusted keys from: " + trusted_from +
                            "). If you know this key is the exporter's, pass it in "
                            "trusted_keys or add it to the file TILECRAFT_TRUSTED_KEYS names");
  }
  index.data_offset = reader.offset();
  if (index.data_offset + total != file_size) {
    return refuse(path, "its files take " + std::to_string(total) + " bytes after the index but " +
                            std::to_string(file_size - std::min(file_size, index.data_offset)) +
                            " follow it (truncated, or bytes added)");
  }
  return index;
}

// Reads one file of an entry from the reader, checking size and digest: module.so is streamed to
// `sink` (when given); source.cu and key.txt are returned in *text.
Status read_entry_file(ArchiveReader& reader, const std::string& path, const EntryRecord& entry,
                       int f, int out_fd, std::string* text) {
  Sha256 hasher;
  std::string head;
  const std::string where = "entry " + entry.key.substr(0, 16) + ": " + kFiles[f];
  text->clear();
  std::string write_error;
  const bool read = reader.bytes(entry.files[f].size, [&](std::string_view piece) {
    hasher.update(piece);
    if (f == 0 && head.size() < sizeof(Elf64_Ehdr)) {
      head.append(piece.substr(0, sizeof(Elf64_Ehdr) - head.size()));
    }
    if (f != 0) text->append(piece);
    if (out_fd >= 0 && !write_all(out_fd, piece)) {
      write_error = errno_text("could not write a module from", path);
      return false;
    }
    return true;
  });
  if (!write_error.empty()) return Status::internal("import_cache: " + write_error);
  if (!read) return refuse(path, where + ": the archive ends or cannot be read inside it");
  if (to_hex(hasher.finish()) != entry.files[f].sha256) {
    return refuse(path, where +
                            ": its SHA-256 is not the one the signed index records (the "
                            "archive was modified or damaged)");
  }
  if (f == 0) {
    if (std::string problem = elf_problem(head); !problem.empty()) {
      return refuse(path, where + ": " + problem);
    }
  }
  return Status::ok();
}

// Checks every file of every entry (pass 1, nothing written).
Status check_entries(ArchiveReader& reader, const std::string& path, const ParsedIndex& index) {
  reader.seek(index.data_offset);
  std::string text[3];
  for (const EntryRecord& entry : index.entries) {
    for (int f = 0; f < 3; ++f) {
      TILECRAFT_RETURN_IF_ERROR(read_entry_file(reader, path, entry, f, -1, &text[f]));
    }
    if (key_of(text[2], text[1]) != entry.key) {
      return refuse(path, "entry " + entry.key.substr(0, 16) +
                              ": its key is not the key of its key.txt and source.cu");
    }
  }
  return Status::ok();
}

// Whether the path an archive is written to may be replaced: nothing there, or a regular file.
Status export_target_problem(const std::string& path) {
  struct stat info;
  if (lstat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) return Status::ok();
    return Status::invalid("export_cache: path: " + errno_text("cannot inspect", path));
  }
  if (!S_ISREG(info.st_mode)) {
    return Status::invalid("export_cache: path: expected a new or regular file, got " +
                           file_kind(info.st_mode) + " at '" + path +
                           "'; tilecraft writes archives only over regular files");
  }
  return Status::ok();
}

// Streams a cache entry's file into the archive, checking it still has the digest recorded.
Status copy_into(int out_fd, const std::string& file, const FileRecord& record,
                 const std::string& archive) {
  UniqueFd in(open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat info;
  if (!in.valid() || fstat(in.get(), &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<uint64_t>(info.st_size) != record.size) {
    return Status::invalid("export_cache: " + file + " changed while it was exported");
  }
  ArchiveReader reader(in.get(), record.size);
  Sha256 hasher;
  std::string error;
  const bool copied = reader.bytes(record.size, [&](std::string_view piece) {
    hasher.update(piece);
    if (write_all(out_fd, piece)) return true;
    error = errno_text("cannot write", archive);
    return false;
  });
  if (!error.empty()) return Status::invalid("export_cache: " + error);
  if (!copied || to_hex(hasher.finish()) != record.sha256) {
    return Status::invalid("export_cache: " + file + " changed while it was exported");
  }
  return Status::ok();
}

// The size and digest of a file of a cache entry, streamed; `text` receives it when not null.
Result<FileRecord> record_of(const std::string& file, uint64_t limit, std::string* text) {
  UniqueFd in(open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat info;
  if (!in.valid() || fstat(in.get(), &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<uint64_t>(info.st_size) > limit) {
    return Status::invalid(file + " is missing, not a regular file or too large");
  }
  FileRecord record;
  record.size = static_cast<uint64_t>(info.st_size);
  ArchiveReader reader(in.get(), record.size);
  Sha256 hasher;
  if (text) text->clear();
  if (!reader.bytes(record.size, [&](std::string_view piece) {
        hasher.update(piece);
        if (text) text->append(piece);
        return true;
      })) {
    return Status::invalid(file + " could not be read whole");
  }
  record.sha256 = to_hex(hasher.finish());
  return record;
}

}  // namespace

Result<CacheTransfer> export_cache(const std::string& archive_path, const std::string& key_file) {
  if (archive_path.empty() || archive_path.find('\0') != std::string::npos) {
    return Status::invalid("export_cache: path: expected a file name without NUL bytes, got '" +
                           archive_path.substr(0, archive_path.find('\0')) + "'");
  }
  TILECRAFT_RETURN_IF_ERROR(export_target_problem(archive_path));
  std::string note;
  Result<ArchiveKey> signer = archive_signing_key(key_file, &note);
  if (!signer) return Status(signer.status().code(), "export_cache: " + signer.status().message());
  ArtifactCache cache = ArtifactCache::open(settings());
  if (!cache.readable()) {
    return Status::unsupported("export_cache: the cache at " + cache.root() +
                               " cannot be read: " + cache.reason());
  }
  CacheTransfer report;
  if (!note.empty()) report.notes.push_back(note);
  std::vector<EntryRecord> entries;
  std::error_code error;
  const std::filesystem::path v1 = std::filesystem::path(cache.root()) / "v1";
  for (const auto& prefix : std::filesystem::directory_iterator(v1, error)) {
    const std::string name = prefix.path().filename().string();
    if (name.size() != 2 || !is_own_real_dir(prefix.path().string())) continue;
    for (const auto& dir : std::filesystem::directory_iterator(prefix.path(), error)) {
      const std::string key = dir.path().filename().string();
      if (!is_lower_hex(key, 64)) continue;
      auto skip = [&](const std::string& why) {
        ++report.skipped;
        report.notes.push_back(key.substr(0, 16) + ": not exported (" + why + ")");
      };
      LookupResult found = cache.lookup(key);
      if (!found.module_path) {
        skip(found.invalid_reason.empty() ? std::string("incomplete") : found.invalid_reason);
        continue;
      }
      EntryRecord entry{key, {}};
      std::string text[3];
      bool complete = true;
      for (int f = 0; f < 3 && complete; ++f) {
        Result<FileRecord> record = record_of(cache.entry_dir(key) + "/" + kFiles[f],
                                              kMaxFileBytes[f], f == 0 ? nullptr : &text[f]);
        complete = static_cast<bool>(record);
        if (record) entry.files[f] = *record;
      }
      if (!complete || key_of(text[2], text[1]) != key) {
        skip("its source or key.txt is missing or does not match its key");
        continue;
      }
      entries.push_back(std::move(entry));
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const EntryRecord& a, const EntryRecord& b) { return a.key < b.key; });
  const std::string index = index_text(signer->public_key, entries);
  Result<std::string> signature = ed25519_sign(signer->seed, std::string(kSignedPrefix) + index);
  if (!signature) return signature.status();
  const std::string header = index + "signature " + to_hex(*signature) + "\n";

  std::string temporary = archive_path + ".tmp-XXXXXX";
  UniqueFd out(mkostemp(temporary.data(), O_CLOEXEC));
  if (!out.valid()) {
    return Status::invalid("export_cache: " + errno_text("cannot write beside", archive_path));
  }
  Status written = fchmod(out.get(), 0644) == 0
                       ? Status::ok()
                       : Status::invalid("export_cache: " + errno_text("cannot write", temporary));
  if (written && !write_all(out.get(), header)) {
    written = Status::invalid("export_cache: " + errno_text("cannot write", temporary));
  }
  for (const EntryRecord& entry : entries) {
    for (int f = 0; written && f < 3; ++f) {
      written = copy_into(out.get(), cache.entry_dir(entry.key) + "/" + kFiles[f], entry.files[f],
                          temporary);
    }
  }
  if (written && fsync(out.get()) != 0) {
    written = Status::invalid("export_cache: " + errno_text("cannot write", temporary));
  }
  out.reset();
  if (written) written = export_target_problem(archive_path);  // nothing else appeared there
  if (written && rename(temporary.c_str(), archive_path.c_str()) != 0) {
    written = Status::invalid("export_cache: " + errno_text("cannot write", archive_path));
  }
  if (!written) {
    unlink(temporary.c_str());
    return written;
  }
  report.entries = entries.size();
  return report;
}

Result<CacheTransfer> import_cache(const std::string& archive_path,
                                   const std::vector<std::string>& trusted_keys) {
  if (archive_path.empty() || archive_path.find('\0') != std::string::npos) {
    return Status::invalid(
        "import_cache: path: expected an archive written by export_cache, got '" +
        archive_path.substr(0, archive_path.find('\0')) + "'");
  }
  std::string trusted_from;
  Result<std::vector<std::string>> trusted = trusted_public_keys(trusted_keys, &trusted_from);
  if (!trusted)
    return Status(trusted.status().code(), "import_cache: " + trusted.status().message());
  UniqueFd fd(open(archive_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  struct stat info;
  if (!fd.valid()) {
    return Status::invalid("import_cache: path: " + errno_text("cannot open", archive_path));
  }
  if (fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
    return Status::invalid("import_cache: path: expected an archive written by export_cache, got " +
                           file_kind(info.st_mode) + " at '" + archive_path + "'");
  }
  const uint64_t size = static_cast<uint64_t>(info.st_size);
  if (size > kMaxArchiveBytes) return refuse(archive_path, "larger than 8 GiB");
  ArchiveReader reader(fd.get(), size);
  Result<ParsedIndex> index = read_index(reader, size, archive_path, *trusted, trusted_from);
  if (!index) return index.status();
  TILECRAFT_RETURN_IF_ERROR(check_entries(reader, archive_path, *index));

  ArtifactCache cache = ArtifactCache::open(settings());
  if (!cache.writable()) {
    return Status::unsupported("import_cache: the cache at " + cache.root() +
                               " cannot be written: " + cache.reason());
  }
  CacheTransfer report;
  reader.seek(index->data_offset);
  for (const EntryRecord& entry : index->entries) {
    const uint64_t files_bytes = entry.files[0].size + entry.files[1].size + entry.files[2].size;
    const uint64_t next_entry = reader.offset() + files_bytes;
    if (cache.lookup(entry.key).module_path) {
      ++report.already_present;
      reader.seek(next_entry);
      continue;
    }
    Result<KeyLock> lock = cache.lock(entry.key);
    if (!lock) return lock.status();
    if (cache.lookup(entry.key).module_path) {
      ++report.already_present;
      reader.seek(next_entry);
      continue;
    }
    Result<BuildDir> build = cache.make_build_dir(entry.key);
    if (!build) return build.status();
    const std::string module = build->path() + "/module.so";
    UniqueFd module_fd(
        open(module.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0755));
    if (!module_fd.valid()) {
      return Status::internal("import_cache: " + errno_text("cannot create", module));
    }
    std::string text[3];
    TILECRAFT_RETURN_IF_ERROR(
        read_entry_file(reader, archive_path, entry, 0, module_fd.get(), &text[0]));
    if (fsync(module_fd.get()) != 0) {
      return Status::internal("import_cache: " + errno_text("cannot write", module));
    }
    module_fd.reset();
    for (int f = 1; f < 3; ++f) {
      TILECRAFT_RETURN_IF_ERROR(read_entry_file(reader, archive_path, entry, f, -1, &text[f]));
    }
    if (key_of(text[2], text[1]) != entry.key) {
      return refuse(archive_path,
                    "entry " + entry.key.substr(0, 16) + " changed while it was imported");
    }
    TILECRAFT_RETURN_IF_ERROR(write_file_synced(build->path() + "/source.cu", text[1], 0644));
    Result<std::string> committed = cache.commit(entry.key, *build, text[2]);
    if (!committed) return committed.status();
    ++report.entries;
  }
  return report;
}

}  // namespace tilecraft::compile
