// The keys of cache archives. An archive is code: export_cache signs it with an Ed25519 key pair
// the exporting user holds (a small file tilecraft writes, mode 0600), and import_cache accepts it
// only when its signer is one of the public keys the importing user trusts. A public key is
// written "tilecraft-ed25519:<64 hex digits>".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

struct ArchiveKey {
  std::string seed;        // the private key (32 bytes)
  std::string public_key;  // 32 bytes
};

// text's first 80 characters, each outside printable ASCII shown as '?': input quoted in messages.
std::string printable(std::string_view text);

// "tilecraft-ed25519:<hex>" for a 32-byte public key.
std::string public_key_text(std::string_view public_key);
// A short name of a public key for messages: its text's first 16 hex digits.
std::string public_key_id(std::string_view public_key);
// The 32 bytes of a public key written as public_key_text writes it (surrounding blanks and a
// trailing comment after a blank allowed); `what` names the value in the message of a refusal.
Result<std::string> parse_public_key(std::string_view text, const std::string& what);

// Writes a new key pair to path, which must not exist (its folder is made, mode 0700, where
// missing). Never replaces anything.
Result<ArchiveKey> generate_archive_key(const std::string& path);
// Reads a key pair file tilecraft wrote: a regular file of this user that only this user may read;
// `what` names it in messages (an argument, or TILECRAFT_ARCHIVE_KEY_FILE).
Result<ArchiveKey> read_archive_key(const std::string& path, const std::string& what);

// The key export_cache signs with: key_file when given (it must exist), else
// Settings::archive_key_file, made on first use (*note then says where, and its public key).
Result<ArchiveKey> archive_signing_key(const std::string& key_file, std::string* note);

// The public keys import_cache trusts: each of `given` (a public key, or the path of a file of
// them, one a line, '#' comments and blank lines allowed), the keys of Settings::trusted_keys_file
// (when TILECRAFT_TRUSTED_KEYS names it, or the default file exists), and the public key of this
// user's own archive key pair (when it exists). *sources says where they came from, for messages.
Result<std::vector<std::string>> trusted_public_keys(const std::vector<std::string>& given,
                                                     std::string* sources);

}  // namespace tilecraft::compile
