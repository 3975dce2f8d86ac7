// The key that signs every cached module's manifest and every file that steers which module runs
// (Settings::signing_key_file): 32 random bytes, written by tilecraft as a small text file
// ("tilecraft-signing-key v1" and the key in hex) of mode 0600 in a private folder of this user,
// apart from every cache it signs. An HMAC only proves that its writer knew the key; a key kept
// beside the entries it signs would prove nothing about a cache folder someone else made.
#pragma once

#include <string>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

inline constexpr size_t kSigningKeyBytes = 32;

// Reads the key at path, creating it (and its folder) when nothing is there. A key file tilecraft
// wrote that is damaged or readable by others is replaced by a new one, and *repair says so:
// entries signed with the old key then fail verification and are compiled again as they are
// needed. Anything else at path (a folder, a link, a fifo, a device, a file tilecraft did not
// write) is refused, naming TILECRAFT_SIGNING_KEY_FILE, and left as it is. Fails, with the
// reason, also when the key's folder is not a private folder of this user.
Result<std::string> load_signing_key(const std::string& path, std::string* repair);

}  // namespace tilecraft::compile
