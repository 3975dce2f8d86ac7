// SHA-256 and HMAC-SHA256 for cache keys, manifests and signed records, computed by OpenSSL's
// libcrypto (the project writes no cryptography of its own).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tilecraft::compile {

using Digest = std::array<std::uint8_t, 32>;

// Incremental SHA-256: update() any number of times, then finish() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  void update(std::string_view data);
  Digest finish();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

// Incremental HMAC-SHA256 under a key of any length, used as Sha256 is.
class HmacSha256 {
 public:
  explicit HmacSha256(std::string_view key);
  ~HmacSha256();
  void update(std::string_view data);
  Digest finish();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

Digest sha256(std::string_view data);
// Lower-case hex of bytes (two characters a byte).
std::string to_hex(std::string_view bytes);
std::string to_hex(const Digest& digest);
// The bytes of lower-case or upper-case hex text; nullopt-like empty result with *ok false when
// the text is not hex of an even length.
std::string from_hex(std::string_view hex, bool* ok);
// Whether text is `length` lower-case hex digits, as to_hex writes them.
bool is_lower_hex(std::string_view text, size_t length);
// HMAC-SHA256 of message under key, the key of any length.
Digest hmac_sha256(std::string_view key, std::string_view message);
// Compares two byte strings in time independent of where they differ (not of their lengths).
bool constant_time_equal(std::string_view a, std::string_view b);
bool digests_equal(const Digest& a, const Digest& b);
// count bytes from the operating system's random source (OpenSSL's RAND_bytes); throws
// tilecraft::Error when it fails.
std::string random_bytes(size_t count);

}  // namespace tilecraft::compile
