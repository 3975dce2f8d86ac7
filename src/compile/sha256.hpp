// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for cache keys and cache manifests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tilecraft::compile {

using Digest = std::array<std::uint8_t, 32>;

// Incremental SHA-256: update() any number of times, then finish() once.
class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  Digest finish();

 private:
  void compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

Digest sha256(std::string_view data);
// Lower-case hex of a digest (64 characters).
std::string to_hex(const Digest& digest);
// HMAC-SHA256 of message under key, the key of any length.
Digest hmac_sha256(std::string_view key, std::string_view message);
// Compares two digests in time independent of where they differ.
bool digests_equal(const Digest& a, const Digest& b);

}  // namespace tilecraft::compile
