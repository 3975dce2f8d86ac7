// Ed25519 signatures (RFC 8032), computed by OpenSSL's libcrypto: the signatures of cache
// archives, made with a key pair the user holds and checked against public keys the user trusts.
#pragma once

#include <string>
#include <string_view>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

inline constexpr size_t kEd25519KeyBytes = 32;  // a private key (seed) or a public key
inline constexpr size_t kEd25519SignatureBytes = 64;

// The public key of a private key (its 32-byte seed).
Result<std::string> ed25519_public_key(std::string_view seed);
// The 64-byte signature of message under the private key (seed).
Result<std::string> ed25519_sign(std::string_view seed, std::string_view message);
// Whether signature is a valid signature of message by public_key (false for malformed input).
bool ed25519_verify(std::string_view public_key, std::string_view message,
                    std::string_view signature);

}  // namespace tilecraft::compile
