// Small files that remember what a slow step found (a header tree's digest, what a compiler says
// to --version) across processes, under the cache's own private folder. A memo is only a hint:
// one that is missing, unreadable or written for other inputs is ignored and the step is done.
#pragma once

#include <string>

namespace tilecraft::compile {

// The memo's text, or "" when there is none or it cannot be read (never through a link, never
// blocking on a fifo).
std::string read_memo(const std::string& path);

// Replaces the memo at path with text, atomically (a temporary file renamed over it); a failure
// leaves no memo and is not an error.
void write_memo(const std::string& path, const std::string& text);

}  // namespace tilecraft::compile
