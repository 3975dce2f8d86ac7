// The key that signs every cached module's manifest (Settings::signing_key_file): 32 random bytes
// in a 0600 file, in a private folder of this user, apart from every cache it signs. An HMAC only
// proves that its writer knew the key; a key kept beside the entries it signs would prove nothing
// about a cache folder that someone else made (a checkout, an unpacked archive).
#pragma once

#include <string>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

inline constexpr size_t kSigningKeyBytes = 32;

// Reads the key at path, creating it (and its folder) when missing. A damaged key (wrong size,
// readable by others, not a regular file) is replaced by a new one, and *repair says so: entries
// signed with the old key then fail verification and are compiled again as they are needed.
// Fails, with the reason, when the key's folder is not a private folder of this user, or when the
// key is missing or damaged and cannot be written.
Result<std::string> load_signing_key(const std::string& path, std::string* repair);

}  // namespace tilecraft::compile
