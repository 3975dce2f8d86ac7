// export_cache / import_cache: a round trip between two caches signed with different keys, and
// every kind of damage refused whole, leaving the destination untouched.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "compile/artifact_cache.hpp"
#include "compile/test_support.hpp"
#include "compile/toolchain.hpp"
#include "tilecraft/compile/compiler.hpp"

namespace tilecraft::compile {
namespace {

namespace fs = std::filesystem;
using namespace testing;

const std::string kElf = std::string("\x7f") + "ELF fake module bytes";

// Stores an entry the way a compile would, under the key of its key text and source.
std::string store_entry(const std::string& key_text, const std::string& source) {
  ArtifactCache cache = ArtifactCache::open(settings());
  const std::string key = key_of(key_text, source);
  Result<BuildDir> build = cache.make_build_dir(key);
  EXPECT_TRUE(build) << build.status().message();
  write_file(build->path() + "/module.so", kElf + key);
  write_file(build->path() + "/source.cu", source);
  Result<std::string> module = cache.commit(key, *build, key_text);
  EXPECT_TRUE(module) << module.status().message();
  return key;
}

size_t module_count(const std::string& root) {
  size_t count = 0;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(root, error);
       it != fs::recursive_directory_iterator(); ++it) {
    count += it->path().filename() == "module.so" ? 1 : 0;
  }
  return count;
}

TEST(CacheArchive, RoundTripBetweenCachesWithDifferentSigningKeys) {
  ScopedCache source_cache("archive-src");
  const std::string first = store_entry("key text one\n", "source one");
  const std::string second = store_entry("key text two\n", "source two");
  const std::string archive = source_cache.dir() + "/cache.tcarchive";
  Result<CacheTransfer> exported = export_cache(archive);
  ASSERT_TRUE(exported) << exported.status().message();
  EXPECT_EQ(exported->entries, 2u);
  EXPECT_EQ(exported->skipped, 0u);

  ScopedCache destination("archive-dst");  // another root and another signing key
  ArtifactCache empty = ArtifactCache::open(settings());
  EXPECT_FALSE(empty.lookup(first).module_path);
  Result<CacheTransfer> imported = import_cache(archive);
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ(imported->entries, 2u);
  ArtifactCache cache = ArtifactCache::open(settings());
  for (const std::string& key : {first, second}) {
    LookupResult found = cache.lookup(key);
    ASSERT_TRUE(found.module_path) << found.invalid_reason;
    EXPECT_EQ(read_file(*found.module_path), kElf + key);
  }
  Result<CacheTransfer> again = import_cache(archive);
  ASSERT_TRUE(again) << again.status().message();
  EXPECT_EQ(again->entries, 0u);
  EXPECT_EQ(again->already_present, 2u);
}

TEST(CacheArchive, ExportLeavesOutEntriesThatDoNotVerify) {
  ScopedCache scope("archive-bad");
  const std::string good = store_entry("good\n", "good source");
  const std::string bad = store_entry("bad\n", "bad source");
  ArtifactCache cache = ArtifactCache::open(settings());
  write_file(cache.entry_dir(bad) + "/module.so", kElf + "modified after signing");
  Result<CacheTransfer> exported = export_cache(scope.dir() + "/a.tcarchive");
  ASSERT_TRUE(exported) << exported.status().message();
  EXPECT_EQ(exported->entries, 1u);
  EXPECT_EQ(exported->skipped, 1u);
  ASSERT_EQ(exported->notes.size(), 1u);
  EXPECT_EQ(exported->notes[0].rfind(bad.substr(0, 16), 0), 0u) << exported->notes[0];
  (void)good;
}

TEST(CacheArchive, EmptyCacheExportsAnEmptyArchive) {
  ScopedCache scope("archive-empty");
  const std::string archive = scope.dir() + "/empty.tcarchive";
  Result<CacheTransfer> exported = export_cache(archive);
  ASSERT_TRUE(exported) << exported.status().message();
  EXPECT_EQ(exported->entries, 0u);
  Result<CacheTransfer> imported = import_cache(archive);
  ASSERT_TRUE(imported) << imported.status().message();
  EXPECT_EQ(imported->entries, 0u);
}

// Each damage, applied to a good archive, is refused with words naming it, and nothing is
// written into the destination cache.
TEST(CacheArchive, DamagedArchivesAreRefusedWhole) {
  ScopedCache source_cache("archive-tamper");
  const std::string key = store_entry("text\n", "the source");
  store_entry("other text\n", "other source");
  const std::string archive = source_cache.dir() + "/good.tcarchive";
  ASSERT_TRUE(export_cache(archive));
  const std::string good = read_file(archive);
  const size_t index_end = good.find("end-of-index\n") + 13;
  const size_t trailer = good.rfind("digest ");

  struct Damage {
    const char* name;
    std::function<std::string(std::string)> apply;
    const char* words;
  };
  auto redigest = [](std::string body) {
    body = body.substr(0, body.rfind("digest "));
    return body + "digest " + sha256_hex(body) + "\n";
  };
  const std::vector<Damage> damages = {
      {"a flipped module byte",
       [&](std::string a) {
         a[index_end + 5] ^= 1;
         return a;
       },
       "digest does not match"},
      {"a flipped module byte, digest recomputed",
       [&](std::string a) {
         a[index_end + 5] ^= 1;
         return redigest(a);
       },
       "module.so: SHA-256 mismatch"},
      {"truncated", [&](std::string a) { return a.substr(0, a.size() / 2); },
       "digest does not match"},
      {"another version",
       [&](std::string a) {
         a.replace(0, 25, "tilecraft-cache-archive 9");
         return redigest(a);
       },
       "not a tilecraft cache archive of version 1"},
      {"a key that is not its source's",
       [&](std::string a) {
         size_t at = a.find("entry ") + 6;
         a[at] = a[at] == 'a' ? 'b' : 'a';
         return redigest(a);
       },
       "is not the key of its key.txt and source.cu"},
      {"a path in a file name",
       [&](std::string a) {
         size_t at = a.find("file module.so");
         a.replace(at, 14, "file ../x.so  ");
         return redigest(a);
       },
       "malformed file line"},
      {"a huge declared size",
       [&](std::string a) {
         size_t at = a.find("file module.so ") + 15;
         size_t end = a.find(' ', at);
         a.replace(at, end - at, "999999999");
         return redigest(a);
       },
       "runs past the end"},
  };
  ScopedCache destination("archive-tamper-dst");
  for (const Damage& damage : damages) {
    SCOPED_TRACE(damage.name);
    const std::string path = destination.dir() + "/damaged.tcarchive";
    write_file(path, damage.apply(good));
    Result<CacheTransfer> imported = import_cache(path);
    ASSERT_FALSE(imported);
    const std::string message = imported.status().message();
    EXPECT_NE(message.find(damage.words), std::string::npos) << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("nothing was imported"), std::string::npos) << message;
    EXPECT_EQ(module_count(destination.cache_dir()), 0u);
  }
  (void)key;
  (void)trailer;
}

TEST(CacheArchive, MissingArchiveIsAClearError) {
  ScopedCache scope("archive-missing");
  Result<CacheTransfer> imported = import_cache(scope.dir() + "/nothing-here");
  ASSERT_FALSE(imported);
  EXPECT_NE(imported.status().message().find("is not a file"), std::string::npos);
}

}  // namespace
}  // namespace tilecraft::compile
