// The content hash of the header trees a compile includes (CUTLASS's include folders), so that
// editing any header, not only version.h, changes every cache key that depends on it.
#pragma once

#include <string>
#include <vector>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

// SHA-256 over every regular file under the roots: its root's index, its path relative to the
// root, its size and its bytes, in path order. Hashing CUTLASS (about 900 files, 28 MB) takes a
// fraction of a second, so the result is remembered in memo_dir (when not empty and usable)
// beside a fingerprint of the files' metadata (path, size, mtime, ctime, inode) and reused while
// the fingerprint holds, which takes a few milliseconds to check. The memo is a signed record
// (compile/signed_record.hpp): one this user's key did not sign is not read.
Result<std::string> header_tree_digest(const std::vector<std::string>& roots,
                                       const std::string& memo_dir);

}  // namespace tilecraft::compile
