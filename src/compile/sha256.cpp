#include "compile/sha256.hpp"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <algorithm>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {
namespace {

[[noreturn]] void fail(const char* what) {
  throw Error(Status::internal(std::string("OpenSSL's libcrypto failed: ") + what));
}

}  // namespace

struct Sha256::Context {
  EVP_MD_CTX* md = nullptr;
  ~Context() { EVP_MD_CTX_free(md); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  context_->md = EVP_MD_CTX_new();
  if (!context_->md || EVP_DigestInit_ex(context_->md, EVP_sha256(), nullptr) != 1) {
    fail("EVP_DigestInit_ex(SHA-256)");
  }
}

Sha256::~Sha256() = default;

void Sha256::update(std::string_view data) {
  if (!data.empty() && EVP_DigestUpdate(context_->md, data.data(), data.size()) != 1) {
    fail("EVP_DigestUpdate");
  }
}

Digest Sha256::finish() {
  Digest digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_->md, digest.data(), &length) != 1 || length != digest.size()) {
    fail("EVP_DigestFinal_ex");
  }
  return digest;
}

struct HmacSha256::Context {
  EVP_MAC* mac = nullptr;
  EVP_MAC_CTX* ctx = nullptr;
  ~Context() {
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(mac);
  }
};

HmacSha256::HmacSha256(std::string_view key) : context_(std::make_unique<Context>()) {
  static const unsigned char kNoKey = 0;
  char digest_name[] = "SHA256";
  const OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest_name, 0),
      OSSL_PARAM_construct_end()};
  context_->mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  context_->ctx = context_->mac ? EVP_MAC_CTX_new(context_->mac) : nullptr;
  const auto* key_bytes =
      key.empty() ? &kNoKey : reinterpret_cast<const unsigned char*>(key.data());
  if (!context_->ctx || EVP_MAC_init(context_->ctx, key_bytes, key.size(), params) != 1) {
    fail("EVP_MAC_init(HMAC-SHA256)");
  }
}

HmacSha256::~HmacSha256() = default;

void HmacSha256::update(std::string_view data) {
  if (!data.empty() &&
      EVP_MAC_update(context_->ctx, reinterpret_cast<const unsigned char*>(data.data()),
                     data.size()) != 1) {
    fail("EVP_MAC_update");
  }
}

Digest HmacSha256::finish() {
  Digest digest{};
  size_t length = 0;
  if (EVP_MAC_final(context_->ctx, digest.data(), &length, digest.size()) != 1 ||
      length != digest.size()) {
    fail("EVP_MAC_final");
  }
  return digest;
}

Digest sha256(std::string_view data) {
  Sha256 hasher;
  hasher.update(data);
  return hasher.finish();
}

std::string to_hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto byte = static_cast<std::uint8_t>(c);
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 0xf]);
  }
  return hex;
}

std::string to_hex(const Digest& digest) {
  return to_hex(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::string from_hex(std::string_view hex, bool* ok) {
  auto value = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string bytes;
  *ok = hex.size() % 2 == 0;
  for (size_t i = 0; *ok && i < hex.size(); i += 2) {
    const int high = value(hex[i]), low = value(hex[i + 1]);
    *ok = high >= 0 && low >= 0;
    bytes.push_back(static_cast<char>(high * 16 + low));
  }
  if (!*ok) bytes.clear();
  return bytes;
}

bool is_lower_hex(std::string_view text, size_t length) {
  return text.size() == length && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Digest hmac_sha256(std::string_view key, std::string_view message) {
  HmacSha256 mac(key);
  mac.update(message);
  return mac.finish();
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.empty() || CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0);
}

bool digests_equal(const Digest& a, const Digest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string random_bytes(size_t count) {
  std::string bytes(count, '\0');
  if (count > 0 &&
      RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(count)) != 1) {
    fail("RAND_bytes");
  }
  return bytes;
}

std::string sha256_hex(std::string_view data) { return to_hex(sha256(data)); }

}  // namespace tilecraft::compile
