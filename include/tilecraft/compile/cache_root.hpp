// The cache folder (Settings::cache_dir) as a folder tilecraft made. A cache is tagged when
// created, by the Cache Directory Tagging convention (a CACHEDIR.TAG file, which backup tools
// honour); tilecraft writes only into a folder that is its cache, and never into the root folder,
// the home folder, or a folder holding things of someone else's.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tilecraft/core/status.hpp"

namespace tilecraft::compile {

inline constexpr const char* kCacheTagName = "CACHEDIR.TAG";

// Makes root a tilecraft cache, or says why it cannot be one. Accepts a missing folder (created,
// mode 0700, and tagged), an empty folder (tagged), a folder tagged by tilecraft, and an untagged
// cache of an earlier tilecraft (only its own folders at the top: v1, facts, tuning; tagged where
// it can be written). Refuses, changing nothing, "/", the home folder, a path that is not a
// folder, and any other folder. The message names TILECRAFT_CACHE_DIR.
Status claim_cache_root(const std::string& root);

// The folder root/parts[0]/parts[1]/... inside a claimed cache, each part made a real folder of
// this user (mode 0700) where missing; a link, file or fifo at a part's place is replaced, since
// everything inside a claimed cache is tilecraft's. For writers of the cache's files (facts,
// tuning entries): nothing is written through a link out of the cache.
Result<std::string> cache_subdir(const std::string& root, const std::vector<std::string>& parts);

// Whether path names a folder that is a real folder (not a link) of this user, for readers and
// cleaners that must not follow a link out of the cache.
bool is_own_real_dir(const std::string& path);

// Removes from folder (not followed when it is a link) the regular files of this user whose name
// `is_own_name` accepts and whose content starts with `magic`: files tilecraft wrote. Every other
// thing in it is left where it is, with a line in *left_alone saying what and why (printed on
// stderr when left_alone is null). Removes folder too when that leaves it empty. Returns how many
// files it removed.
size_t remove_own_files(const std::string& folder,
                        const std::function<bool(const std::string&)>& is_own_name,
                        std::string_view magic, std::vector<std::string>* left_alone);

// Says what a clean-up left alone: appends to *left_alone, or prints on stderr when it is null.
void note_left_alone(const std::string& path, const std::string& why,
                     std::vector<std::string>* left_alone);

}  // namespace tilecraft::compile
