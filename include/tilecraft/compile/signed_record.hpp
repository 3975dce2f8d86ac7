// Small text files that steer which kernel runs (kernel facts, tuning winners, family indexes),
// trusted like modules: each ends in an HMAC of its body under this user's signing key
// (compile/signing_key.hpp), so a file someone else planted or edited reads as absent. They are
// read only as regular files (a link, fifo or device is skipped with a note, never opened in a
// way that blocks), of bounded size, and written atomically (temp + rename).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

// This user's signing key (Settings::signing_key_file), made where missing; repairs said once.
Result<std::string> user_signing_key();

// body + "hmac-sha256 <hex>\n", the HMAC over body under signing_key.
std::string signed_record(const std::string& signing_key, std::string_view body);
// The body of a signed record whose HMAC verifies under signing_key; nullopt otherwise.
std::optional<std::string> verified_body(const std::string& signing_key, std::string_view text);

// The bytes of the record file at path: nullopt when there is none, when it is larger than limit,
// or when it is not a regular file (a note on stderr says so, once per path).
std::optional<std::string> read_record_file(const std::string& path, size_t limit);

// Writes text at path atomically (a temporary file beside it, then rename), mode 0600.
Status write_record_file(const std::string& path, const std::string& text);

}  // namespace tilecraft::compile
