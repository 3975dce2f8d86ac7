// The cache folder is tilecraft's own (DATA-3): made and tagged (CACHEDIR.TAG) when new; an empty
// folder or an earlier tilecraft's cache is adopted; "/", the home folder and folders holding
// other things are refused by name and left exactly as they were.
#include "tilecraft/compile/cache_root.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "compile/test_support.hpp"
#include "tilecraft/compile/artifact_cache.hpp"
#include "tilecraft/compile/compiler.hpp"

namespace tilecraft::compile {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;
using testing::read_file;
using testing::ScopedCache;
using testing::ScopedEnv;
using testing::write_file;

bool tagged(const std::string& root) {
  return read_file(root + "/CACHEDIR.TAG")
             .rfind("Signature: 8a477f597d28d172789f06886806bc55\n", 0) == 0;
}

TEST(CacheRoot, ANewFolderIsMadePrivateAndTagged) {
  ScopedCache scope("root-new");
  const std::string root = scope.dir() + "/a/b/cache";
  ASSERT_TRUE(claim_cache_root(root));
  struct stat info;
  ASSERT_EQ(stat(root.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  EXPECT_TRUE(tagged(root));
  EXPECT_NE(read_file(root + "/CACHEDIR.TAG").find("created by tilecraft"), std::string::npos);
  ASSERT_TRUE(claim_cache_root(root));  // and it stays ours
}

TEST(CacheRoot, AnEmptyFolderIsAdoptedAndTagged) {
  ScopedCache scope("root-empty");
  const std::string root = scope.dir() + "/empty";
  fs::create_directory(root);
  ASSERT_TRUE(claim_cache_root(root));
  EXPECT_TRUE(tagged(root));
}

TEST(CacheRoot, AnEarlierUntaggedCacheIsAdopted) {
  ScopedCache scope("root-earlier");
  const std::string root = scope.dir() + "/old";
  fs::create_directories(root + "/v1/locks");
  fs::create_directories(root + "/facts/v1");
  ASSERT_TRUE(claim_cache_root(root));
  EXPECT_TRUE(tagged(root));
}

// The audit's data3 case: a file of the user's named v1 is neither replaced nor turned into a
// folder, by a read-only `cache stats` or anything else.
TEST(CacheRoot, AFolderHoldingAUsersFileNamedV1IsRefusedAndUntouched) {
  ScopedCache scope("root-user-v1");
  const std::string root = scope.dir() + "/mine";
  fs::create_directory(root);
  write_file(root + "/v1", "important");
  Status claimed = claim_cache_root(root);
  ASSERT_FALSE(claimed);
  EXPECT_NE(claimed.message().find("TILECRAFT_CACHE_DIR: '" + root + "'"), std::string::npos)
      << claimed.message();
  EXPECT_NE(claimed.message().find("expected an empty folder or a tilecraft cache"),
            std::string::npos);
  EXPECT_NE(claimed.message().find("(such as 'v1', which is not a folder of this user's)"),
            std::string::npos)
      << claimed.message();
  EXPECT_EQ(read_file(root + "/v1"), "important");
  EXPECT_FALSE(fs::exists(root + "/CACHEDIR.TAG"));

  Settings s = settings();
  s.cache_dir = root;
  set_settings(s);
  ArtifactCache cache = ArtifactCache::open(settings());
  EXPECT_FALSE(cache.readable());
  EXPECT_FALSE(kernel_cache_stats());
  EXPECT_FALSE(clear_kernel_cache());
  EXPECT_TRUE(fs::is_regular_file(root + "/v1"));
  EXPECT_EQ(read_file(root + "/v1"), "important");
}

TEST(CacheRoot, AFolderOfOtherThingsIsRefusedNamingOne) {
  ScopedCache scope("root-documents");
  const std::string root = scope.dir() + "/Documents";
  fs::create_directories(root + "/facts");
  write_file(root + "/thesis.tex", "my thesis");
  Status claimed = claim_cache_root(root);
  ASSERT_FALSE(claimed);
  EXPECT_NE(claimed.message().find("such as 'thesis.tex'"), std::string::npos) << claimed.message();
  EXPECT_FALSE(fs::exists(root + "/CACHEDIR.TAG"));
}

TEST(CacheRoot, TheRootAndHomeFoldersAreRefused) {
  ScopedCache scope("root-home");
  Status slash = claim_cache_root("/");
  ASSERT_FALSE(slash);
  EXPECT_NE(slash.message().find("is the root folder"), std::string::npos) << slash.message();

  const std::string home = scope.dir() + "/home";
  fs::create_directory(home);  // even an empty home folder is no cache
  ScopedEnv home_env("HOME", home);
  Status at_home = claim_cache_root(home);
  ASSERT_FALSE(at_home);
  EXPECT_NE(at_home.message().find("is the home folder"), std::string::npos) << at_home.message();
  EXPECT_FALSE(fs::exists(home + "/CACHEDIR.TAG"));
}

TEST(CacheRoot, AFileOrAnotherProgramsCacheIsRefused) {
  ScopedCache scope("root-file");
  const std::string file = scope.dir() + "/notes";
  write_file(file, "notes");
  Status claimed = claim_cache_root(file);
  ASSERT_FALSE(claimed);
  EXPECT_NE(claimed.message().find("expected a folder, got a regular file"), std::string::npos);
  EXPECT_EQ(read_file(file), "notes");

  const std::string other = scope.dir() + "/other-cache";
  fs::create_directory(other);
  write_file(other + "/CACHEDIR.TAG",
             "Signature: 8a477f597d28d172789f06886806bc55\n# created by another program\n");
  Status foreign = claim_cache_root(other);
  ASSERT_FALSE(foreign);
  EXPECT_NE(foreign.message().find("another program's cache"), std::string::npos);
}

TEST(CacheRoot, CleaningLeavesForeignFilesAndLinksAlone) {
  ScopedCache scope("root-clean");
  const std::string folder = scope.dir() + "/facts";
  fs::create_directory(folder);
  const std::string outside = scope.dir() + "/outside";
  fs::create_directory(outside);
  write_file(outside + "/precious.txt", "tilecraft-kernel-facts 2\n");
  write_file(folder + "/0123456789012345678901234567890123456789.txt",
             "tilecraft-kernel-facts 2\n");
  write_file(folder + "/notes.md", "mine");
  write_file(folder + "/abcdefabcdefabcdefabcdefabcdefabcdefabcd.txt", "not tilecraft's");
  fs::create_symlink(outside + "/precious.txt",
                     folder + "/1111111111111111111111111111111111111111.txt");
  std::vector<std::string> left;
  const size_t removed = remove_own_files(
      folder, [](const std::string& name) { return name.ends_with(".txt"); },
      "tilecraft-kernel-facts", &left);
  EXPECT_EQ(removed, 1u);
  EXPECT_EQ(left.size(), 3u);
  EXPECT_EQ(read_file(folder + "/notes.md"), "mine");
  EXPECT_EQ(read_file(outside + "/precious.txt"), "tilecraft-kernel-facts 2\n");
  EXPECT_TRUE(fs::is_symlink(folder + "/1111111111111111111111111111111111111111.txt"));

  // A link where the folder is: nothing through it is removed.
  const std::string linked = scope.dir() + "/linked";
  fs::create_directory_symlink(outside, linked);
  left.clear();
  EXPECT_EQ(remove_own_files(
                linked, [](const std::string&) { return true; }, "tilecraft-kernel-facts", &left),
            0u);
  EXPECT_EQ(left.size(), 1u);
  EXPECT_TRUE(fs::exists(outside + "/precious.txt"));
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::compile
