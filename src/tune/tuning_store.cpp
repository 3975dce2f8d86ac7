// The tuning cache: one small text file per (device model, signature), written atomically and
// signed like a module (an HMAC under this user's signing key, compile/signed_record.hpp), so
// that a torn, edited or planted file reads as absent: a winner decides which kernel runs.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "tilecraft/compile/cache_root.hpp"
#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/compile/signed_record.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/tune/tuning.hpp"
#include "tune/family_index.hpp"
#include "tune/text.hpp"

namespace tilecraft::tune {
namespace {

namespace fs = std::filesystem;

// Version 2 entries are signed; version 1 ones (a plain SHA-256) read as absent.
constexpr const char* kTuningMagic = "tilecraft-tuning 2";
constexpr size_t kMaxEntryBytes = 1 << 20;

std::string entry_path(const ProblemSignature& signature) {
  return tuning_root() + "/" + model_folder(signature.device_model) + "/" + signature.key() +
         ".txt";
}

bool is_lower_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The names this store and tune/family_index.cpp give their files ("<64 hex>.txt",
// "family-<32 hex>.txt", ".tmp-*.part" while written).
bool is_own_name(const std::string& name) {
  if (name.starts_with(".tmp-") && name.ends_with(".part")) return true;
  if (!name.ends_with(".txt")) return false;
  const std::string_view stem = std::string_view(name).substr(0, name.size() - 4);
  if (stem.starts_with("family-")) return stem.size() == 39 && is_lower_hex(stem.substr(7));
  return stem.size() == 64 && is_lower_hex(stem);
}

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  std::replace(text.begin(), text.end(), '\r', ' ');
  return text.empty() ? "-" : text;
}

std::string entry_body(const ProblemSignature& signature, const TunedChoice& choice) {
  Text out(9);
  out << kTuningMagic << "\n";
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
  return out.str();
}

constexpr std::pair<Outcome, std::string_view> kOutcomeNames[] = {
    {Outcome::measured, "measured"},     {Outcome::compile_failed, "compile_failed"},
    {Outcome::run_failed, "run_failed"}, {Outcome::verify_failed, "verify_failed"},
    {Outcome::timed_out, "timed_out"},   {Outcome::skipped, "skipped"}};

std::optional<Outcome> outcome_from(std::string_view text) {
  for (const auto& [outcome, name] : kOutcomeNames) {
    if (name == text) return outcome;
  }
  return std::nullopt;
}

struct ParsedEntry {
  std::string device, signature;
  TunedChoice choice;
};

// nullopt when the text is not a whole entry this user's tilecraft signed.
std::optional<ParsedEntry> parse_entry(const std::string& text) {
  const std::optional<std::string> body = verified(text);
  if (!body) return std::nullopt;
  const auto lines = lines_of(*body);
  if (lines.empty() || lines[0] != kTuningMagic) return std::nullopt;
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
      auto outcome = outcome_from(next_word(&rest));
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
  return compile::read_record_file(path, kMaxEntryBytes);
}

// Every file of tilecraft's under the tuning folder, with its size and modification time. The
// folders are walked only where they are real folders of this user: a link leads out of the
// cache and is never followed.
struct FileInfo {
  bool family_index = false;  // tune/family_index.cpp's files live beside the entries
  std::string path;
  int64_t bytes = 0;
  int64_t written = 0;  // nanoseconds since the epoch
};

std::vector<FileInfo> entry_files(std::vector<std::string>* left_alone = nullptr) {
  std::vector<FileInfo> files;
  const std::string root = tuning_root();
  for (const std::string& folder : {settings().cache_dir + "/tuning", root}) {
    if (compile::is_own_real_dir(folder)) continue;
    struct stat info;
    if (lstat(folder.c_str(), &info) == 0) {
      compile::note_left_alone(folder,
                               "it is " + compile::file_kind(info.st_mode) +
                                   " where tilecraft keeps a folder of its own",
                               left_alone);
    }
    return files;
  }
  std::error_code error;
  for (const auto& model : fs::directory_iterator(root, error)) {
    const std::string folder = model.path().string();
    if (!compile::is_own_real_dir(folder)) {
      compile::note_left_alone(folder, "not a folder tilecraft made", left_alone);
      continue;
    }
    for (const auto& item : fs::directory_iterator(folder, error)) {
      const std::string name = item.path().filename().string();
      struct stat info;
      if (lstat(item.path().c_str(), &info) != 0) continue;
      if (!is_own_name(name) || !S_ISREG(info.st_mode) || info.st_uid != geteuid()) {
        compile::note_left_alone(item.path().string(), "not a file tilecraft wrote", left_alone);
        continue;
      }
      if (name.starts_with(".tmp-")) continue;
      FileInfo file;
      file.path = item.path().string();
      file.family_index = name.starts_with("family-");
      file.bytes = static_cast<int64_t>(info.st_size);
      file.written = static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 + info.st_mtim.tv_nsec;
      files.push_back(std::move(file));
    }
  }
  return files;
}

// Removes a file of the tuning folder that entry_files() found, when it still holds tilecraft's
// content.
bool remove_file(const FileInfo& file, std::vector<std::string>* left_alone) {
  const std::optional<std::string> text = read_text(file.path);
  if (!text || !text->starts_with("tilecraft-")) {
    compile::note_left_alone(file.path, "its content is not in tilecraft's format", left_alone);
    return false;
  }
  return unlink(file.path.c_str()) == 0;
}

}  // namespace

std::string_view to_string(Outcome outcome) {
  for (const auto& [known, name] : kOutcomeNames) {
    if (known == outcome) return name;
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
  return write_signed(signature.device_model, signature.key() + ".txt",
                      entry_body(signature, choice));
}

Result<TuningCacheStats> tuning_cache_stats() {
  TILECRAFT_RETURN_IF_ERROR(compile::claim_cache_root(settings().cache_dir));
  TuningCacheStats stats;
  stats.folder = tuning_root();
  std::vector<std::string> foreign;  // a listing leaves them alone and says nothing
  for (const FileInfo& file : entry_files(&foreign)) {
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
  TILECRAFT_RETURN_IF_ERROR(compile::claim_cache_root(settings().cache_dir));
  std::vector<TuningCacheEntry> entries;
  std::vector<std::string> foreign;
  for (const FileInfo& file : entry_files(&foreign)) {
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

Result<size_t> clear_tuning_cache(std::vector<std::string>* left_alone) {
  TILECRAFT_RETURN_IF_ERROR(compile::claim_cache_root(settings().cache_dir));
  size_t removed = 0;
  for (const FileInfo& file : entry_files(left_alone))
    removed += remove_file(file, left_alone) ? 1 : 0;
  return removed;
}

Result<size_t> prune_tuning_cache(int64_t max_bytes, std::vector<std::string>* left_alone) {
  if (max_bytes < 0) {
    return Status::invalid("max_bytes: expected a size >= 0, got " + std::to_string(max_bytes));
  }
  TILECRAFT_RETURN_IF_ERROR(compile::claim_cache_root(settings().cache_dir));
  std::vector<FileInfo> files = entry_files(left_alone);
  std::sort(files.begin(), files.end(),
            [](const FileInfo& a, const FileInfo& b) { return a.written < b.written; });
  int64_t total = 0;
  for (const FileInfo& file : files) total += file.bytes;
  size_t removed = 0;
  for (const FileInfo& file : files) {
    if (total <= max_bytes) break;
    if (remove_file(file, left_alone)) {
      total -= file.bytes;
      ++removed;
    }
  }
  return removed;
}

}  // namespace tilecraft::tune
