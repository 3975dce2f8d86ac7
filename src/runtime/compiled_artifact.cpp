#include "tilecraft/runtime/compiled_artifact.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <climits>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "tilecraft/compile/artifact_cache.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/runtime/module.hpp"

namespace tilecraft {
namespace {

using compile::UniqueFd;

constexpr std::string_view kMagic = "tilecraft-artifact\n";
constexpr int kFormatVersion = 1;
constexpr size_t kMaxHeaderBytes = 64 * 1024;

struct ArtifactHeader {
  int format = kFormatVersion;
  int abi = TILECRAFT_ABI_VERSION;
  std::string kernel;
  std::string metadata;
  int arch = 0;
  long long payload_bytes = 0;
  std::string payload_sha256;
};

struct ArtifactFile {
  ArtifactHeader header;
  std::string_view payload;
};

using HeaderFields = std::map<std::string, std::string, std::less<>>;

Status artifact_error(const std::string& path, const std::string& what) {
  return Status::invalid("artifact: " + path + ": " + what);
}

Status with_prefix(const std::string& prefix, const Status& status) {
  return Status(status.code(), prefix + status.message());
}

std::string header_text(const ArtifactHeader& header) {
  return std::string(kMagic) + "format " + std::to_string(header.format) + "\nabi " +
         std::to_string(header.abi) + "\nkernel " + header.kernel + "\nmetadata " +
         header.metadata + "\narch " + std::to_string(header.arch) + "\npayload-bytes " +
         std::to_string(header.payload_bytes) + "\npayload-sha256 " + header.payload_sha256 +
         "\n\n";
}

Result<std::string> read_whole_file(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Status::invalid(compile::errno_text("artifact: cannot open", path));
  // A directory opens, then fails to read: the caller named the wrong thing, say so.
  struct stat info {};
  if (fstat(fd.get(), &info) == 0 && !S_ISREG(info.st_mode)) {
    return Status::invalid("artifact: " + path + " is not a file (" +
                           (S_ISDIR(info.st_mode) ? "a directory" : "not a regular file") + ")");
  }
  std::string bytes;
  if (Status read = compile::read_all(fd.get(), path, &bytes); !read) {
    return with_prefix("artifact: ", read);
  }
  return bytes;
}

// Writes the parts, one after another, to a temporary file beside path, then renames it there:
// readers see the old file or the whole new one.
Status write_atomically(const std::string& path, const std::vector<std::string_view>& parts,
                        mode_t mode) {
  std::string temp = path + ".tmp-XXXXXX";
  UniqueFd fd(mkostemp(temp.data(), O_CLOEXEC));
  if (!fd.valid()) return Status(StatusCode::kInternal, compile::errno_text("cannot create", temp));
  bool done = fchmod(fd.get(), mode) == 0;
  for (std::string_view part : parts) {
    for (size_t written = 0; done && written < part.size();) {
      const ssize_t put = write(fd.get(), part.data() + written, part.size() - written);
      if (put < 0 && errno == EINTR) continue;
      done = put > 0;
      written += done ? static_cast<size_t>(put) : 0;
    }
  }
  done = done && fsync(fd.get()) == 0;
  std::string failure = done ? "" : compile::errno_text("cannot write", temp);
  fd.reset();
  if (done && rename(temp.c_str(), path.c_str()) != 0) {
    failure = compile::errno_text("cannot rename " + temp + " to", path);
  }
  if (!failure.empty()) {
    unlink(temp.c_str());
    return Status(StatusCode::kInternal, failure);
  }
  const std::string folder = std::filesystem::path(path).parent_path().string();
  return compile::fsync_path(folder.empty() ? "." : folder);
}

std::optional<long long> parse_integer(std::string_view text, long long maximum) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0 || value > maximum) {
    return std::nullopt;
  }
  return value;
}

// The "key value" lines between the magic and the empty line that ends the header.
Result<HeaderFields> header_fields(const std::string& path, std::string_view lines) {
  HeaderFields fields;
  while (!lines.empty()) {
    const size_t end = lines.find('\n');
    const std::string_view line = lines.substr(0, end);
    lines.remove_prefix(end + 1);
    const size_t space = line.find(' ');
    const std::string key(line.substr(0, space));
    const std::string value(space == std::string_view::npos ? "" : line.substr(space + 1));
    if (!fields.emplace(key, value).second) {
      return artifact_error(path, "the header has two '" + key + "' lines");
    }
  }
  return fields;
}

Result<std::string> text_field(const std::string& path, const HeaderFields& fields,
                               std::string_view key) {
  const auto found = fields.find(key);
  if (found == fields.end()) {
    return artifact_error(path, "the header has no '" + std::string(key) + "' line");
  }
  return found->second;
}

Result<long long> integer_field(const std::string& path, const HeaderFields& fields,
                                std::string_view key, long long maximum = INT_MAX) {
  Result<std::string> text = text_field(path, fields, key);
  if (!text) return text.status();
  if (std::optional<long long> value = parse_integer(*text, maximum)) return *value;
  return artifact_error(path, "the header's '" + std::string(key) +
                                  "' must be a non-negative integer, got '" + *text + "'");
}

// Checks the versions first: a header of another format or ABI may differ in any other field.
Status check_versions(const std::string& path, const HeaderFields& fields) {
  Result<long long> format = integer_field(path, fields, "format");
  if (!format) return format.status();
  if (*format != kFormatVersion) {
    return artifact_error(path, "file format version " + std::to_string(*format) +
                                    ", this library reads version " +
                                    std::to_string(kFormatVersion));
  }
  Result<long long> abi = integer_field(path, fields, "abi");
  if (!abi) return abi.status();
  if (*abi != TILECRAFT_ABI_VERSION) {
    return artifact_error(path, "built for ABI version " + std::to_string(*abi) +
                                    ", this library speaks " +
                                    std::to_string(TILECRAFT_ABI_VERSION));
  }
  return Status::ok();
}

Result<ArtifactHeader> header_from_fields(const std::string& path, const HeaderFields& fields) {
  TILECRAFT_RETURN_IF_ERROR(check_versions(path, fields));
  Result<std::string> kernel = text_field(path, fields, "kernel");
  Result<std::string> metadata = text_field(path, fields, "metadata");
  Result<long long> arch = integer_field(path, fields, "arch");
  Result<long long> payload_bytes = integer_field(path, fields, "payload-bytes", LLONG_MAX);
  Result<std::string> payload_sha256 = text_field(path, fields, "payload-sha256");
  for (const Status* status : {&kernel.status(), &metadata.status(), &arch.status(),
                               &payload_bytes.status(), &payload_sha256.status()}) {
    if (!*status) return *status;
  }
  if (kernel->empty()) return artifact_error(path, "the header names no kernel");
  ArtifactHeader header;
  header.kernel = std::move(*kernel);
  header.metadata = std::move(*metadata);
  header.arch = static_cast<int>(*arch);
  header.payload_bytes = *payload_bytes;
  header.payload_sha256 = std::move(*payload_sha256);
  return header;
}

Result<ArtifactFile> parse_artifact(const std::string& path, std::string_view file) {
  if (!file.starts_with(kMagic)) {
    return Status::invalid("artifact: " + path + " is not a tilecraft artifact (bad magic)");
  }
  const size_t header_end = file.substr(0, kMaxHeaderBytes).find("\n\n", kMagic.size() - 1);
  if (header_end == std::string_view::npos) {
    return artifact_error(path, "the header does not end (no empty line in its first " +
                                    std::to_string(kMaxHeaderBytes) + " bytes)");
  }
  const std::string_view lines = file.substr(kMagic.size(), header_end + 1 - kMagic.size());
  Result<HeaderFields> fields = header_fields(path, lines);
  if (!fields) return fields.status();
  Result<ArtifactHeader> header = header_from_fields(path, *fields);
  if (!header) return header.status();
  return ArtifactFile{std::move(*header), file.substr(header_end + 2)};
}

Status check_payload(const std::string& path, const ArtifactFile& file) {
  const ArtifactHeader& header = file.header;
  const std::string actual = compile::sha256_hex(file.payload);
  if (static_cast<long long>(file.payload.size()) == header.payload_bytes &&
      actual == header.payload_sha256) {
    return Status::ok();
  }
  return artifact_error(
      path, "payload sha256 mismatch (file truncated or corrupt): the header records " +
                std::to_string(header.payload_bytes) + " bytes with sha256 " +
                header.payload_sha256 + ", the file holds " + std::to_string(file.payload.size()) +
                " bytes with sha256 " + actual);
}

// <cache dir>/artifacts when the cache is writable; else a private temporary folder that is
// removed when the process exits.
Result<std::string> payload_folder(const std::string& sha256) {
  const compile::ArtifactCache cache = compile::ArtifactCache::open(settings());
  if (cache.writable()) {
    const std::string folder = cache.root() + "/artifacts";
    if (compile::ensure_own_dir(folder)) return folder;
  }
  Result<compile::BuildDir> build = cache.make_build_dir(sha256);
  if (!build) return build.status();
  build->release();
  return build->path();
}

bool file_holds(const std::string& path, const std::string& sha256) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  std::string bytes;
  return fd.valid() && compile::read_all(fd.get(), path, &bytes) &&
         compile::sha256_hex(bytes) == sha256;
}

// The payload as a file named by its sha256, written only when no intact copy is there.
Result<std::string> store_payload(const std::string& sha256, std::string_view payload) {
  Result<std::string> folder = payload_folder(sha256);
  if (!folder) return with_prefix("artifact: ", folder.status());
  const std::string path = *folder + "/" + sha256 + ".so";
  if (file_holds(path, sha256)) return path;
  if (Status written = write_atomically(path, {payload}, 0600); !written) {
    return with_prefix("artifact: ", written);
  }
  return path;
}

std::string entry_names(const tc_module_table& table) {
  std::string names;
  for (uint32_t i = 0; i < table.num_entries; ++i) {
    names += (i == 0 ? "" : ", ") + std::string(table.entries[i].name);
  }
  return names.empty() ? "none" : names;
}

Result<const tc_kernel_entry*> find_entry(const std::string& path, const ArtifactHeader& header,
                                          const LoadedModule& module) {
  const tc_kernel_entry* entry = module.find(header.kernel);
  if (!entry) {
    return artifact_error(path, "module has no entry named " + header.kernel +
                                    " (its entries: " + entry_names(module.table()) + ")");
  }
  if (header.metadata != entry->metadata) {
    return artifact_error(path, "the header's metadata '" + header.metadata +
                                    "' is not the module entry's '" + entry->metadata + "'");
  }
  return entry;
}

Status check_single_line(const std::string& what, const std::string& text) {
  if (text.find('\n') == std::string::npos) return Status::ok();
  return Status(StatusCode::kInternal, "artifact: the " + what + " spans lines: " + text);
}

}  // namespace

CompiledArtifact::CompiledArtifact(int arch, const tc_kernel_entry* entry,
                                   std::shared_ptr<const LoadedModule> module)
    : kernel_name_(entry->name), arch_(arch), entry_(entry), module_(std::move(module)) {}

Result<CompiledArtifact> CompiledArtifact::of(const GemmOperation& operation) {
  const GemmMode mode = operation.description().is_grouped() ? GemmMode::Grouped : GemmMode::Gemm;
  if (Result<const tc_kernel_entry*> compiled = operation.entry(mode); !compiled) {
    return compiled.status();
  }
  auto [module, entry] = operation.universal_kernel();
  return CompiledArtifact(operation.description().arch, entry, std::move(module));
}

Status CompiledArtifact::save(const std::string& path) const {
  if (!module_) return Status::invalid("artifact: nothing to save (a moved-from artifact)");
  Result<std::string> payload = read_whole_file(module_->path());
  if (!payload) return payload.status();
  ArtifactHeader header;
  header.kernel = kernel_name_;
  header.metadata = entry_->metadata;
  header.arch = arch_;
  header.payload_bytes = static_cast<long long>(payload->size());
  header.payload_sha256 = compile::sha256_hex(*payload);
  TILECRAFT_RETURN_IF_ERROR(check_single_line("kernel name", header.kernel));
  TILECRAFT_RETURN_IF_ERROR(check_single_line("metadata", header.metadata));
  const std::string header_bytes = header_text(header);
  if (Status written = write_atomically(path, {header_bytes, *payload}, 0644); !written) {
    return with_prefix("artifact: cannot save " + path + ": ", written);
  }
  return Status::ok();
}

Result<CompiledArtifact> CompiledArtifact::load(const std::string& path) {
  Result<std::string> bytes = read_whole_file(path);
  if (!bytes) return bytes.status();
  Result<ArtifactFile> file = parse_artifact(path, *bytes);
  if (!file) return file.status();
  TILECRAFT_RETURN_IF_ERROR(check_payload(path, *file));
  Result<std::string> module_path = store_payload(file->header.payload_sha256, file->payload);
  if (!module_path) return module_path.status();
  Result<std::shared_ptr<const LoadedModule>> module = LoadedModule::load(*module_path);
  if (!module) return with_prefix("artifact: " + path + ": ", module.status());
  Result<const tc_kernel_entry*> entry = find_entry(path, file->header, **module);
  if (!entry) return entry.status();
  return CompiledArtifact(file->header.arch, *entry, std::move(*module));
}

}  // namespace tilecraft
