#include "compile/ed25519.hpp"

#include <openssl/evp.h>

#include <memory>

namespace tilecraft::compile {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct ContextFree {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Context = std::unique_ptr<EVP_MD_CTX, ContextFree>;

const unsigned char* bytes_of(std::string_view text) {
  return reinterpret_cast<const unsigned char*>(text.data());
}

Result<Key> private_key(std::string_view seed) {
  if (seed.size() != kEd25519KeyBytes) {
    return Status::invalid("an Ed25519 private key has " + std::to_string(kEd25519KeyBytes) +
                           " bytes, got " + std::to_string(seed.size()));
  }
  Key key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, bytes_of(seed), seed.size()));
  if (!key) return Status::internal("OpenSSL could not make an Ed25519 key");
  return key;
}

}  // namespace

Result<std::string> ed25519_public_key(std::string_view seed) {
  Result<Key> key = private_key(seed);
  if (!key) return key.status();
  std::string public_key(kEd25519KeyBytes, '\0');
  size_t length = public_key.size();
  if (EVP_PKEY_get_raw_public_key(key->get(), reinterpret_cast<unsigned char*>(public_key.data()),
                                  &length) != 1 ||
      length != kEd25519KeyBytes) {
    return Status::internal("OpenSSL could not derive an Ed25519 public key");
  }
  return public_key;
}

Result<std::string> ed25519_sign(std::string_view seed, std::string_view message) {
  Result<Key> key = private_key(seed);
  if (!key) return key.status();
  Context context(EVP_MD_CTX_new());
  std::string signature(kEd25519SignatureBytes, '\0');
  size_t length = signature.size();
  if (!context || EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr, key->get()) != 1 ||
      EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &length,
                     bytes_of(message), message.size()) != 1 ||
      length != kEd25519SignatureBytes) {
    return Status::internal("OpenSSL could not make an Ed25519 signature");
  }
  return signature;
}

bool ed25519_verify(std::string_view public_key, std::string_view message,
                    std::string_view signature) {
  if (public_key.size() != kEd25519KeyBytes || signature.size() != kEd25519SignatureBytes) {
    return false;
  }
  Key key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, bytes_of(public_key),
                                      public_key.size()));
  Context context(EVP_MD_CTX_new());
  return key && context &&
         EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr, key.get()) == 1 &&
         EVP_DigestVerify(context.get(), bytes_of(signature), signature.size(), bytes_of(message),
                          message.size()) == 1;
}

}  // namespace tilecraft::compile
