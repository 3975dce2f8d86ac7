#include "tune/family_index.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "compile/file_util.hpp"
#include "tilecraft/core/settings.hpp"
#include "tune/text.hpp"

namespace tilecraft::tune {
namespace {

constexpr const char* kMagic = "tilecraft-family 1";

std::string index_path(const ProblemSignature& signature) {
  std::string folder;
  for (char c : signature.device_model) {
    folder += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  }
  return settings().cache_dir + "/tuning/v1/" + (folder.empty() ? "unknown" : folder) + "/family-" +
         compile::sha256_hex(signature.device_model + "\n" + signature.family).substr(0, 32) +
         ".txt";
}

}  // namespace

std::set<std::string> compiled_in_family(const ProblemSignature& signature) {
  std::set<std::string> names;
  const std::string path = index_path(signature);
  compile::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  std::string text;
  if (!fd.valid() || !compile::read_all(fd.get(), path, &text)) return names;
  const auto lines = lines_of(text);
  if (lines.size() < 2 || lines[0] != kMagic || lines[1] != "family " + signature.family) {
    return names;
  }
  for (size_t i = 2; i < lines.size(); ++i) {
    if (!lines[i].empty()) names.insert(std::string(lines[i]));
  }
  return names;
}

void note_compiled(const ProblemSignature& signature, const std::vector<std::string>& names) {
  std::set<std::string> all = compiled_in_family(signature);
  size_t before = all.size();
  all.insert(names.begin(), names.end());
  if (all.size() == before) return;
  const std::string path = index_path(signature);
  const std::string folder = std::filesystem::path(path).parent_path().string();
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  std::string text = std::string(kMagic) + "\nfamily " + signature.family + "\n";
  for (const std::string& name : all) text += name + "\n";
  std::random_device random;
  const std::string temp =
      folder + "/.tmp-" + std::to_string(getpid()) + "-" + std::to_string(random()) + ".part";
  if (!compile::write_file_synced(temp, text, 0600) ||
      std::rename(temp.c_str(), path.c_str()) != 0) {
    unlink(temp.c_str());  // the index is a hint: a cache folder we cannot write just lacks it
  }
}

}  // namespace tilecraft::tune
