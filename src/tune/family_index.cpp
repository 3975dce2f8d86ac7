#include "tune/family_index.hpp"

#include <cstdio>

#include "tilecraft/compile/cache_root.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/compile/signed_record.hpp"
#include "tilecraft/core/settings.hpp"
#include "tune/text.hpp"

namespace tilecraft::tune {
namespace {

// Version 2 indexes are signed (compile/signed_record.hpp); version 1 ones read as absent.
constexpr const char* kFamilyIndexMagic = "tilecraft-family 2";
constexpr size_t kMaxIndexBytes = 16 << 20;

std::string model_folder(const ProblemSignature& signature) {
  std::string folder;
  for (char c : signature.device_model) {
    folder += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  }
  return folder.empty() ? "unknown" : folder;
}

std::string index_name(const ProblemSignature& signature) {
  return "family-" +
         compile::sha256_hex(signature.device_model + "\n" + signature.family).substr(0, 32) +
         ".txt";
}

std::string index_path(const ProblemSignature& signature) {
  return settings().cache_dir + "/tuning/v1/" + model_folder(signature) + "/" +
         index_name(signature);
}

}  // namespace

std::set<std::string> compiled_in_family(const ProblemSignature& signature) {
  std::set<std::string> names;
  const std::optional<std::string> text =
      compile::read_record_file(index_path(signature), kMaxIndexBytes);
  if (!text) return names;
  Result<std::string> key = compile::user_signing_key();
  const std::optional<std::string> body = key ? compile::verified_body(*key, *text) : std::nullopt;
  if (!body) return names;
  const auto lines = lines_of(*body);
  if (lines.size() < 2 || lines[0] != kFamilyIndexMagic ||
      lines[1] != "family " + signature.family) {
    return names;
  }
  for (size_t i = 2; i < lines.size(); ++i) {
    if (!lines[i].empty()) names.insert(std::string(lines[i]));
  }
  return names;
}

void note_compiled(const ProblemSignature& signature, const std::vector<std::string>& names) {
  std::set<std::string> all = compiled_in_family(signature);
  const size_t before = all.size();
  all.insert(names.begin(), names.end());
  if (all.size() == before) return;
  Result<std::string> folder =
      compile::cache_subdir(settings().cache_dir, {"tuning", "v1", model_folder(signature)});
  Result<std::string> key = compile::user_signing_key();
  if (!folder || !key) return;  // the index is a hint: a cache we cannot write just lacks it
  std::string text = std::string(kFamilyIndexMagic) + "\nfamily " + signature.family + "\n";
  for (const std::string& name : all) text += name + "\n";
  (void)compile::write_record_file(*folder + "/" + index_name(signature),
                                   compile::signed_record(*key, text));
}

}  // namespace tilecraft::tune
