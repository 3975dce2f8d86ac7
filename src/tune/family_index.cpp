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

std::string index_name(const ProblemSignature& signature) {
  return "family-" +
         compile::sha256_hex(signature.device_model + "\n" + signature.family).substr(0, 32) +
         ".txt";
}

}  // namespace

std::string tuning_root() { return settings().cache_dir + "/tuning/v1"; }

std::string model_folder(const std::string& device_model) {
  std::string folder;
  for (char c : device_model) {
    folder += std::isalnum(static_cast<unsigned char>(c)) || c == '-' ? c : '_';
  }
  return folder.empty() ? "unknown" : folder;
}

std::optional<std::string> verified(const std::string& text) {
  Result<std::string> key = compile::user_signing_key();
  return key ? compile::verified_body(*key, text) : std::nullopt;
}

Status write_signed(const std::string& device_model, const std::string& file_name,
                    const std::string& body) {
  Result<std::string> folder =
      compile::cache_subdir(settings().cache_dir, {"tuning", "v1", model_folder(device_model)});
  if (!folder) return folder.status();
  Result<std::string> key = compile::user_signing_key();
  if (!key) return key.status();
  return compile::write_record_file(*folder + "/" + file_name, compile::signed_record(*key, body));
}

std::set<std::string> compiled_in_family(const ProblemSignature& signature) {
  std::set<std::string> names;
  const std::optional<std::string> text = compile::read_record_file(
      tuning_root() + "/" + model_folder(signature.device_model) + "/" + index_name(signature),
      kMaxIndexBytes);
  const std::optional<std::string> body = text ? verified(*text) : std::nullopt;
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
  std::string text = std::string(kFamilyIndexMagic) + "\nfamily " + signature.family + "\n";
  for (const std::string& name : all) text += name + "\n";
  // The index is a hint: a cache we cannot write just lacks it.
  (void)write_signed(signature.device_model, index_name(signature), text);
}

}  // namespace tilecraft::tune
