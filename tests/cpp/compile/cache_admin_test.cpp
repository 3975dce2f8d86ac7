// The kernel cache as a whole: stats, listing, pruning by size and use, clearing, and entries
// that do not verify, on real modules built by nvcc into a private cache.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <filesystem>

#include "test_support.hpp"
#include "tilecraft/compile/artifact_cache.hpp"

namespace tilecraft::compile {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;
using testing::read_file;
using testing::ScopedCache;
using testing::tiny_request;
using testing::unique_marker;
using testing::write_file;

TEST(KernelCacheAdmin, StatsListPruneAndClear) {
  ScopedCache cache("cache-admin");
  auto empty = kernel_cache_stats();
  ASSERT_TRUE(empty) << empty.status().message();
  EXPECT_EQ(empty->entries, 0u);
  std::vector<CompileRequest> requests;
  for (int i = 0; i < 3; ++i) {
    requests.push_back(
        tiny_request("admin" + std::to_string(i), unique_marker("admin" + std::to_string(i))));
  }
  std::vector<std::string> paths;
  for (auto& built : build_modules(requests)) {
    ASSERT_TRUE(built) << built.status().message();
    paths.push_back(built->path);
  }
  // Ages: module 0 used longest ago, module 2 most recently.
  for (int i = 0; i < 3; ++i) {
    struct utimbuf when {
      1000000000 + i * 1000, 1000000000 + i * 1000
    };
    ASSERT_EQ(utime(paths[i].c_str(), &when), 0);
  }
  auto stats = kernel_cache_stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->entries, 3u);
  EXPECT_EQ(stats->invalid, 0u);
  EXPECT_GT(stats->bytes, 0u);
  auto listed = list_kernel_cache();
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 3u);
  EXPECT_EQ((*listed)[0].path + "/module.so", paths[0]) << "least recently used first";
  EXPECT_TRUE((*listed)[0].valid);
  const uint64_t one = (*listed)[2].bytes;

  // A damaged module is invalid and goes first, whatever its age.
  { std::ofstream(paths[2], std::ios::app) << "tampered"; }
  stats = kernel_cache_stats();
  EXPECT_EQ(stats->invalid, 1u);
  auto removed = prune_kernel_cache(stats->bytes);  // fits already: only the invalid one goes
  ASSERT_TRUE(removed);
  EXPECT_EQ(*removed, 1u);
  EXPECT_FALSE(std::filesystem::exists(paths[2]));
  EXPECT_TRUE(std::filesystem::exists(paths[0]));

  removed = prune_kernel_cache(one + one / 2);  // room for one module: the oldest goes
  ASSERT_TRUE(removed);
  EXPECT_EQ(*removed, 1u);
  EXPECT_FALSE(std::filesystem::exists(paths[0]));
  EXPECT_TRUE(std::filesystem::exists(paths[1]));

  // An alias (a kernel served by module 1's unit) is no entry of its own, and a clear takes it.
  CompileRequest served = tiny_request("served", unique_marker("served"));
  auto unit = build_modules({requests[1]});
  ASSERT_TRUE(unit[0] && unit[0]->from_cache);
  record_unit_serves(*unit[0], {served});
  ASSERT_TRUE(find_cached_modules({served})[0]);
  EXPECT_EQ(kernel_cache_stats()->entries, 1u);

  removed = clear_kernel_cache();
  ASSERT_TRUE(removed);
  EXPECT_EQ(*removed, 1u);
  EXPECT_EQ(kernel_cache_stats()->entries, 0u);
  EXPECT_FALSE(std::filesystem::exists(cache.cache_dir() + "/v1/aliases"));
  EXPECT_FALSE(find_cached_modules({served})[0]);
  // What is gone is compiled again, not half found.
  auto again = build_modules({requests[1]});
  ASSERT_TRUE(again[0]);
  EXPECT_FALSE(again[0]->from_cache);
}

// DATA-2: a clear removes only what tilecraft wrote, follows no link out of the cache, and says
// what it left alone.
TEST(KernelCacheAdmin, ClearLeavesForeignFilesAndFollowsNoLink) {
  ScopedCache cache("cache-admin-foreign");
  ASSERT_TRUE(ArtifactCache::open(settings()).writable());
  const std::string root = cache.cache_dir();
  const std::string outside = cache.dir() + "/outside";
  const std::string key(64, 'a');
  fs::create_directories(outside + "/" + key);
  write_file(outside + "/" + key + "/module.so", "someone's file");
  write_file(outside + "/notes.txt", "tilecraft-kernel-facts 2\n");
  fs::create_directory_symlink(outside, root + "/v1/aa");  // a shard that leads out
  fs::create_directories(root + "/facts/v1");
  write_file(root + "/facts/notes.md", "my notes");
  write_file(root + "/facts/v1/" + std::string(40, '0') + ".txt", "tilecraft-kernel-facts 2\n");
  write_file(root + "/facts/v1/" + std::string(40, '1') + ".txt", "a file of the user's");
  fs::create_symlink(outside + "/notes.txt", root + "/facts/v1/" + std::string(40, '2') + ".txt");

  std::vector<std::string> left;
  auto removed = clear_kernel_cache(&left);
  ASSERT_TRUE(removed) << removed.status().message();
  EXPECT_EQ(*removed, 0u);
  EXPECT_EQ(read_file(outside + "/" + key + "/module.so"), "someone's file");
  EXPECT_EQ(read_file(outside + "/notes.txt"), "tilecraft-kernel-facts 2\n");
  EXPECT_EQ(read_file(root + "/facts/notes.md"), "my notes");
  EXPECT_FALSE(fs::exists(root + "/facts/v1/" + std::string(40, '0') + ".txt"));
  EXPECT_EQ(read_file(root + "/facts/v1/" + std::string(40, '1') + ".txt"), "a file of the user's");
  EXPECT_TRUE(fs::is_symlink(root + "/facts/v1/" + std::string(40, '2') + ".txt"));
  EXPECT_TRUE(fs::is_symlink(root + "/v1/aa"));
  ASSERT_EQ(left.size(), 3u);  // the user's file and the link in facts/v1, and notes.md
  for (const std::string& line : left) EXPECT_EQ(line.rfind("left " + root + "/facts/", 0), 0u);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::compile
