#include "tilecraft/compile/kernel_facts.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <vector>

#include "tilecraft/compile/cache_root.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/compile/file_util.hpp"
#include "tilecraft/compile/signed_record.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft {
namespace {

// Version 2 records are signed (compile/signed_record.hpp); unsigned version 1 ones read as absent.
constexpr const char* kFactsMagic = "tilecraft-kernel-facts 2";
constexpr size_t kMaxRecordBytes = 64 * 1024;

// The integer after `label` in line ("Used 168 registers": label "Used "), or -1.
int number_after(std::string_view line, std::string_view label) {
  const size_t at = line.find(label);
  if (at == std::string_view::npos) return -1;
  size_t pos = at + label.size();
  if (pos >= line.size() || line[pos] < '0' || line[pos] > '9') return -1;
  long value = 0;
  while (pos < line.size() && line[pos] >= '0' && line[pos] <= '9' && value < (1L << 30)) {
    value = value * 10 + (line[pos++] - '0');
  }
  return static_cast<int>(value);
}

// The integer before `label` in line ("0 bytes spill stores": label " bytes spill stores"), or -1.
int number_before(std::string_view line, std::string_view label) {
  const size_t at = line.find(label);
  if (at == std::string_view::npos || at == 0) return -1;
  size_t start = at;
  while (start > 0 && line[start - 1] >= '0' && line[start - 1] <= '9') --start;
  if (start == at) return -1;
  return number_after(line.substr(start), "");
}

std::string quoted_name(std::string_view line, std::string_view label) {
  const size_t at = line.find(label);
  if (at == std::string_view::npos) return {};
  std::string_view rest = line.substr(at + label.size());
  if (!rest.empty() && rest.front() == '\'') rest.remove_prefix(1);
  const size_t end = rest.find_first_of("' \t");
  return std::string(rest.substr(0, end));
}

void merge(KernelFacts& into, int KernelFacts::*field, int value) {
  if (value >= 0) into.*field = std::max(into.*field, value);
}

// The lines of text, without their '\n'.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string index_path(const std::string& kernel_name) {
  return settings().cache_dir + "/facts/v1" + "/" + compile::sha256_hex(kernel_name).substr(0, 40) +
         ".txt";
}

std::string record_text(const std::string& kernel_name, const KernelFacts& f) {
  std::string text = std::string(kFactsMagic) + "\nkernel " + kernel_name + "\n";
  text += "registers " + std::to_string(f.registers) + "\n";
  text += "spill_stores " + std::to_string(f.spill_store_bytes) + "\n";
  text += "spill_loads " + std::to_string(f.spill_load_bytes) + "\n";
  text += "stack " + std::to_string(f.stack_bytes) + "\n";
  text += "smem " + std::to_string(f.static_smem_bytes) + "\n";
  return text;
}

std::optional<KernelFacts> parse_record(const std::string& kernel_name, const std::string& text) {
  const auto lines = lines_of(text);
  if (lines.size() < 7 || lines[0] != kFactsMagic || lines[1] != "kernel " + kernel_name) {
    return std::nullopt;
  }
  KernelFacts facts;
  facts.source = KernelFacts::Source::compiler;
  const std::pair<const char*, int KernelFacts::*> fields[] = {
      {"registers ", &KernelFacts::registers},
      {"spill_stores ", &KernelFacts::spill_store_bytes},
      {"spill_loads ", &KernelFacts::spill_load_bytes},
      {"stack ", &KernelFacts::stack_bytes},
      {"smem ", &KernelFacts::static_smem_bytes}};
  size_t at = 2;
  for (const auto& [label, field] : fields) {
    const std::string_view line = lines[at++];
    if (line.rfind(label, 0) != 0) return std::nullopt;
    const int value = number_after(line, label);
    if (value < 0) return std::nullopt;
    facts.*field = value;
  }
  return facts;
}

// Facts read or recorded in this process, by kernel name: one file read per kernel at most.
struct Memo {
  std::mutex mutex;
  std::string cache_dir;
  std::map<std::string, std::optional<KernelFacts>> known;
};

Memo& memo() {
  static Memo m;
  return m;
}

}  // namespace

std::string_view source_name(KernelFacts::Source source) {
  switch (source) {
    case KernelFacts::Source::compiler:
      return "compiler";
    case KernelFacts::Source::predicted:
      return "predicted";
    case KernelFacts::Source::unknown:
      break;
  }
  return "unknown";
}

std::string KernelFacts::text() const {
  if (!known()) return "unknown";
  auto field = [](int value) { return value < 0 ? std::string("?") : std::to_string(value); };
  return "registers=" + field(registers) + " spill_stores=" + field(spill_store_bytes) +
         " spill_loads=" + field(spill_load_bytes) + " stack=" + field(stack_bytes) +
         " smem=" + field(static_smem_bytes) + " max_ctas_per_sm=" + field(max_ctas_per_sm) + " (" +
         std::string(source_name(source)) + ")";
}

std::string resource_usage_lines(std::string_view output) {
  std::string kept;
  for (std::string_view line : lines_of(output)) {
    if (line.find("ptxas info") != std::string_view::npos ||
        line.find("bytes stack frame") != std::string_view::npos) {
      kept.append(line);
      kept += '\n';
    }
  }
  return kept;
}

std::map<std::string, KernelFacts> parse_resource_usage(std::string_view text) {
  std::map<std::string, KernelFacts> facts;
  std::string current;
  for (std::string_view line : lines_of(text)) {
    std::string name = quoted_name(line, "Compiling entry function ");
    if (name.empty()) name = quoted_name(line, "Function properties for ");
    if (!name.empty()) {
      current = name;
      continue;
    }
    if (current.empty()) continue;
    KernelFacts& f = facts[current];
    f.source = KernelFacts::Source::compiler;
    if (line.find("bytes stack frame") != std::string_view::npos) {
      merge(f, &KernelFacts::stack_bytes, number_before(line, " bytes stack frame"));
      merge(f, &KernelFacts::spill_store_bytes, number_before(line, " bytes spill stores"));
      merge(f, &KernelFacts::spill_load_bytes, number_before(line, " bytes spill loads"));
    } else if (line.find("Used ") != std::string_view::npos &&
               line.find(" registers") != std::string_view::npos) {
      merge(f, &KernelFacts::registers, number_after(line, "Used "));
      const int smem = number_before(line, " bytes smem");
      merge(f, &KernelFacts::static_smem_bytes, smem < 0 ? 0 : smem);
    }
  }
  // A function ptxas named without a register line is not a kernel it compiled here.
  for (auto it = facts.begin(); it != facts.end();) {
    it = it->second.registers < 0 ? facts.erase(it) : std::next(it);
  }
  for (auto& [name, f] : facts) {
    if (f.spill_store_bytes < 0) f.spill_store_bytes = 0;
    if (f.spill_load_bytes < 0) f.spill_load_bytes = 0;
    if (f.stack_bytes < 0) f.stack_bytes = 0;
  }
  return facts;
}

std::optional<KernelFacts> compiled_kernel_facts(const std::string& kernel_name) {
  Memo& m = memo();
  std::lock_guard lock(m.mutex);
  if (m.cache_dir != settings().cache_dir) {
    m.known.clear();
    m.cache_dir = settings().cache_dir;
  }
  if (auto it = m.known.find(kernel_name); it != m.known.end()) return it->second;
  const std::string path = index_path(kernel_name);
  std::optional<KernelFacts> found;
  if (std::optional<std::string> text = compile::read_record_file(path, kMaxRecordBytes)) {
    Result<std::string> key = compile::user_signing_key();
    std::optional<std::string> body = key ? compile::verified_body(*key, *text) : std::nullopt;
    if (body) found = parse_record(kernel_name, *body);
  }
  m.known[kernel_name] = found;
  return found;
}

void record_kernel_facts(const std::string& kernel_name, const KernelFacts& facts) {
  if (facts.source != KernelFacts::Source::compiler) return;
  {
    Memo& m = memo();
    std::lock_guard lock(m.mutex);
    if (m.cache_dir != settings().cache_dir) {
      m.known.clear();
      m.cache_dir = settings().cache_dir;
    }
    auto it = m.known.find(kernel_name);
    if (it != m.known.end() && it->second && it->second->registers == facts.registers &&
        it->second->spill_store_bytes == facts.spill_store_bytes) {
      return;
    }
    m.known[kernel_name] = facts;
  }
  Result<std::string> folder = compile::cache_subdir(settings().cache_dir, {"facts", "v1"});
  Result<std::string> key = compile::user_signing_key();
  // The index is a hint: a cache folder we cannot use or write just lacks it.
  if (!folder || !key) return;
  (void)compile::write_record_file(index_path(kernel_name),
                                   compile::signed_record(*key, record_text(kernel_name, facts)));
}

}  // namespace tilecraft
