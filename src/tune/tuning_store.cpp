// The tuning cache: one small text file per (device model, signature), written atomically and
// ending in a SHA-256 of everything before it, so that a torn or edited file reads as absent.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>

#include "compile/file_util.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/tune/tuning.hpp"
#include "tune/text.hpp"

namespace tilecraft::tune {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMagic = "tilecraft-tuning 1";

std::string tuning_root() { return settings().cache_dir + "/tuning/v1"; }

// Device model names become folder names: letters, digits, '-' and '_' kept, the rest '_'.
std::string folder_name(const std::string& model) {
  std::string name;
  for (char c : model) name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  return name.empty() ? "unknown" : name;
}

std::string entry_path(const ProblemSignature& signature) {
  return tuning_root() + "/" + folder_name(signature.device_model) + "/" + signature.key() + ".txt";
}

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text.empty() ? "-" : text;
}

std::string entry_text(const ProblemSignature& signature, const TunedChoice& choice) {
  Text out(9);
  out << kMagic << "\n";
  out << "device " << one_line(signature.device_model) << "\n";
  out << "signature " << one_line(signature.text()) << "\n";
  out << "kernel " << one_line(choice.kernel_name) << "\n";
  out << "median_us " << choice.median_us << "\n";
  out << "tflops " << choice.tflops << "\n";
  out << "shape " << choice.shape[0] << " " << choice.shape[1] << " " << choice.shape[2] << " "
      << choice.shape[3] << "\n";
  out << "clocks " << one_line(choice.clocks) << "\n";
  out << "tuned_at " << choice.tuned_at << "\n";
  for (const CandidateResult& c : choice.candidates) {
    out << "candidate " << to_string(c.outcome) << " " << c.median_us << " " << c.tflops << " "
        << c.repeats << " " << one_line(c.kernel_name) << " " << one_line(c.reason) << "\n";
  }
  std::string body = out.str();
  return body + "sha256 " + compile::sha256_hex(body) + "\n";
}

std::optional<Outcome> outcome_from(const std::string& text) {
  for (Outcome o : {Outcome::measured, Outcome::compile_failed, Outcome::run_failed,
                    Outcome::verify_failed, Outcome::timed_out, Outcome::skipped}) {
    if (to_string(o) == text) return o;
  }
  return std::nullopt;
}

struct ParsedEntry {
  std::string device, signature;
  TunedChoice choice;
};

// nullopt when the text is not a whole, unmodified entry.
std::optional<ParsedEntry> parse_entry(const std::string& text) {
  const size_t sum_at = text.rfind("sha256 ");
  if (sum_at == std::string::npos || text.back() != '\n') return std::nullopt;
  const std::string body = text.substr(0, sum_at);
  if (text.substr(sum_at + 7, 64) != compile::sha256_hex(body) || text.size() != sum_at + 72) {
    return std::nullopt;
  }
  const auto lines = lines_of(body);
  if (lines.empty() || lines[0] != kMagic) return std::nullopt;
  ParsedEntry entry;
  TunedChoice& c = entry.choice;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) return std::nullopt;
    const std::string_view key = line.substr(0, space);
    const std::string_view value = line.substr(space + 1);
    std::string_view rest = value;
    bool ok = true;
    if (key == "device") {
      entry.device = value;
    } else if (key == "signature") {
      entry.signature = value;
    } else if (key == "kernel") {
      c.kernel_name = value;
    } else if (key == "median_us") {
      ok = parse_number(value, &c.median_us);
    } else if (key == "tflops") {
      ok = parse_number(value, &c.tflops);
    } else if (key == "shape") {
      for (int64_t& extent : c.shape) ok = ok && parse_number(next_word(&rest), &extent);
    } else if (key == "clocks") {
      c.clocks = value;
    } else if (key == "tuned_at") {
      ok = parse_number(value, &c.tuned_at);
    } else if (key == "candidate") {
      CandidateResult r;
      auto outcome = outcome_from(std::string(next_word(&rest)));
      int64_t repeats = 0;
      ok = outcome && parse_number(next_word(&rest), &r.median_us) &&
           parse_number(next_word(&rest), &r.tflops) && parse_number(next_word(&rest), &repeats);
      r.kernel_name = next_word(&rest);
      if (!ok || r.kernel_name.empty()) return std::nullopt;
      r.outcome = *outcome;
      r.repeats = static_cast<int>(repeats);
      const size_t reason = rest.find_first_not_of(' ');
      r.reason = reason == std::string_view::npos ? "" : std::string(rest.substr(reason));
      if (r.reason == "-") r.reason.clear();
      c.candidates.push_back(std::move(r));
    }
    if (!ok) return std::nullopt;
  }
  if (c.kernel_name.empty() || entry.signature.empty()) return std::nullopt;
  return entry;
}

std::optional<std::string> read_text(const std::string& path) {
  compile::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  std::string text;
  if (!compile::read_all(fd.get(), path, &text)) return std::nullopt;
  return text;
}

Status make_dirs(const std::string& path) {
  std::error_code error;
  if (fs::is_directory(path, error)) return Status::ok();
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && parent != fs::path(path)) TILECRAFT_RETURN_IF_ERROR(make_dirs(parent));
  return compile::make_private_dir(path);
}

// Every entry file under the tuning folder, with its size and modification time.
struct FileInfo {
  bool family_index = false;  // tune/family_index.cpp's files live beside the entries
  std::string path;
  int64_t bytes = 0;
  fs::file_time_type written;
};

std::vector<FileInfo> entry_files() {
  std::vector<FileInfo> files;
  std::error_code error;
  fs::recursive_directory_iterator it(tuning_root(), error), end;
  for (; !error && it != end; it.increment(error)) {
    if (!it->is_regular_file(error) || it->path().extension() != ".txt") continue;
    FileInfo info;
    info.path = it->path().string();
    info.family_index = it->path().filename().string().rfind("family-", 0) == 0;
    info.bytes = static_cast<int64_t>(it->file_size(error));
    info.written = it->last_write_time(error);
    files.push_back(std::move(info));
  }
  return files;
}

}  // namespace

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::measured:
      return "measured";
    case Outcome::compile_failed:
      return "compile_failed";
    case Outcome::run_failed:
      return "run_failed";
    case Outcome::verify_failed:
      return "verify_failed";
    case Outcome::timed_out:
      return "timed_out";
    case Outcome::skipped:
      return "skipped";
  }
  return "?";
}

std::optional<TunedChoice> find_tuned(const ProblemSignature& signature) {
  auto text = read_text(entry_path(signature));
  if (!text) return std::nullopt;
  auto entry = parse_entry(*text);
  // A key collision or a file copied under another name must not hand out a winner.
  if (!entry || entry->signature != signature.text() || entry->device != signature.device_model) {
    return std::nullopt;
  }
  return entry->choice;
}

Status store_tuned(const ProblemSignature& signature, const TunedChoice& choice) {
  const std::string path = entry_path(signature);
  const std::string folder = fs::path(path).parent_path().string();
  TILECRAFT_RETURN_IF_ERROR(make_dirs(folder));
  std::random_device random;
  const std::string temp =
      folder + "/.tmp-" + std::to_string(getpid()) + "-" + std::to_string(random()) + ".part";
  TILECRAFT_RETURN_IF_ERROR(compile::write_file_synced(temp, entry_text(signature, choice), 0600));
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    Status failed(StatusCode::kInternal, compile::errno_text("could not rename into", path));
    unlink(temp.c_str());
    return failed;
  }
  return Status::ok();
}

Result<TuningCacheStats> tuning_cache_stats() {
  TuningCacheStats stats;
  stats.folder = tuning_root();
  for (const FileInfo& file : entry_files()) {
    stats.bytes += file.bytes;
    if (file.family_index) continue;
    auto text = read_text(file.path);
    if (!text || !parse_entry(*text)) {
      ++stats.invalid;
    } else {
      ++stats.entries;
    }
  }
  return stats;
}

Result<std::vector<TuningCacheEntry>> list_tuning_cache() {
  std::vector<TuningCacheEntry> entries;
  for (const FileInfo& file : entry_files()) {
    if (file.family_index) continue;
    auto text = read_text(file.path);
    auto parsed = text ? parse_entry(*text) : std::nullopt;
    if (!parsed) continue;
    TuningCacheEntry e;
    e.path = file.path;
    e.device_model = parsed->device;
    e.signature = parsed->signature;
    e.kernel_name = parsed->choice.kernel_name;
    e.tflops = parsed->choice.tflops;
    e.bytes = file.bytes;
    e.tuned_at = parsed->choice.tuned_at;
    entries.push_back(std::move(e));
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.tuned_at > b.tuned_at; });
  return entries;
}

Result<size_t> clear_tuning_cache() {
  size_t removed = 0;
  for (const FileInfo& file : entry_files()) removed += unlink(file.path.c_str()) == 0 ? 1 : 0;
  return removed;
}

Result<size_t> prune_tuning_cache(int64_t max_bytes) {
  if (max_bytes < 0) {
    return Status::invalid("max_bytes: expected a size >= 0, got " + std::to_string(max_bytes));
  }
  std::vector<FileInfo> files = entry_files();
  std::sort(files.begin(), files.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.written < b.written; });
  int64_t total = 0;
  for (const FileInfo& file : files) total += file.bytes;
  size_t removed = 0;
  for (const FileInfo& file : files) {
    if (total <= max_bytes) break;
    if (unlink(file.path.c_str()) == 0) {
      total -= file.bytes;
      ++removed;
    }
  }
  return removed;
}

}  // namespace tilecraft::tune
