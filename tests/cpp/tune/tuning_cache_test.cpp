// The tuning cache and signatures, on real files in a private folder.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "compile/test_support.hpp"
#include "scoped_env.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/tune/tuning.hpp"
#include "tune/family_index.hpp"

namespace tilecraft::tune {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;

class TuningCacheTest : public ::testing::Test {
 protected:
  static ProblemSignature signature(int64_t m) {
    ProblemSignature s;
    s.device_model = "NVIDIA H100 80GB HBM3";
    s.family = "A=bfloat16/RowMajor/8;B=bfloat16/ColumnMajor/8;out=bfloat16/RowMajor/8";
    s.bucket = {shape_bucket(m), 4096, 4096, 1};
    return s;
  }

  static TunedChoice choice(const std::string& name, double tflops) {
    TunedChoice c;
    c.kernel_name = name;
    c.tflops = tflops;
    c.median_us = 200;
    c.shape = {4096, 4096, 4096, 1};
    c.clocks = "SM 1980 MHz, memory 2619 MHz";
    c.tuned_at = 1764000000;
    CandidateResult loser;
    loser.kernel_name = "loser";
    loser.outcome = Outcome::verify_failed;
    loser.reason = "output element (0, 1, 2) is 3, expected 4";
    c.candidates = {loser};
    return c;
  }

  // A fresh cache folder for the test; the settings come back afterwards.
  compile::testing::ScopedCache cache_{"tuning"};
  const std::string dir_ = cache_.cache_dir();
};

TEST(ShapeBucket, FourStepsPerOctave) {
  EXPECT_EQ(shape_bucket(1), 1);
  EXPECT_EQ(shape_bucket(8), 8);
  EXPECT_EQ(shape_bucket(9), 10);
  EXPECT_EQ(shape_bucket(16), 16);
  EXPECT_EQ(shape_bucket(17), 20);
  EXPECT_EQ(shape_bucket(4096), 4096);
  EXPECT_EQ(shape_bucket(4097), 5120);
  EXPECT_EQ(shape_bucket(4000), 4096);
  EXPECT_EQ(shape_bucket(3000), 3072);
  EXPECT_EQ(shape_bucket(11008), 12288);
  for (int64_t e = 1; e < 100000; e += 37) {
    EXPECT_GE(shape_bucket(e), e);
    EXPECT_LE(shape_bucket(e), e + e / 4 + 1);
  }
}

TEST_F(TuningCacheTest, StoresAndFindsAWinner) {
  EXPECT_FALSE(find_tuned(signature(4096)));
  ASSERT_TRUE(store_tuned(signature(4096), choice("kernel_a", 612.5)));
  auto found = find_tuned(signature(4000));  // the same bucket
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kernel_name, "kernel_a");
  EXPECT_DOUBLE_EQ(found->tflops, 612.5);
  EXPECT_EQ(found->shape[0], 4096);
  EXPECT_EQ(found->clocks, "SM 1980 MHz, memory 2619 MHz");
  ASSERT_EQ(found->candidates.size(), 1u);
  EXPECT_EQ(found->candidates[0].outcome, Outcome::verify_failed);
  EXPECT_EQ(found->candidates[0].reason, "output element (0, 1, 2) is 3, expected 4");
  EXPECT_FALSE(find_tuned(signature(5000)));  // another bucket
  ProblemSignature other_device = signature(4096);
  other_device.device_model = "NVIDIA H200";
  EXPECT_FALSE(find_tuned(other_device));
}

TEST_F(TuningCacheTest, ACorruptOrTruncatedEntryReadsAsAbsent) {
  ASSERT_TRUE(store_tuned(signature(4096), choice("kernel_a", 600)));
  auto entries = list_tuning_cache();
  ASSERT_TRUE(entries);
  ASSERT_EQ(entries->size(), 1u);
  const std::string path = (*entries)[0].path;
  std::string text;
  {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string edited = text;
  edited.replace(edited.find("kernel_a"), 8, "kernel_b");
  std::ofstream(path, std::ios::trunc) << edited;
  EXPECT_FALSE(find_tuned(signature(4096)));
  std::ofstream(path, std::ios::trunc) << text.substr(0, text.size() / 2);
  EXPECT_FALSE(find_tuned(signature(4096)));
  auto stats = tuning_cache_stats();
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->entries, 0u);
  EXPECT_EQ(stats->invalid, 1u);
  ASSERT_TRUE(store_tuned(signature(4096), choice("kernel_c", 650)));  // a re-tune replaces it
  EXPECT_EQ(find_tuned(signature(4096))->kernel_name, "kernel_c");
}

TEST_F(TuningCacheTest, ConcurrentWritersLeaveOneValidWinner) {
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t) {
    writers.emplace_back([t] {
      for (int i = 0; i < 20; ++i) {
        ASSERT_TRUE(store_tuned(signature(4096), choice("kernel_" + std::to_string(t), 100 + t)));
      }
    });
  }
  for (auto& w : writers) w.join();
  auto found = find_tuned(signature(4096));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kernel_name.rfind("kernel_", 0), 0u);
  auto stats = tuning_cache_stats();
  EXPECT_EQ(stats->entries, 1u);
  EXPECT_EQ(stats->invalid, 0u);
  for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".part"), std::string::npos)
        << "a temporary file was left: " << entry.path();
  }
}

TEST_F(TuningCacheTest, ListClearAndPrune) {
  for (int i = 0; i < 5; ++i) {
    TunedChoice c = choice("kernel_" + std::to_string(i), 100 + i);
    c.tuned_at = 1764000000 + i;
    ASSERT_TRUE(store_tuned(signature(1000 + 600 * i), c));
  }
  auto listed = list_tuning_cache();
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->size(), 5u);
  EXPECT_EQ((*listed)[0].kernel_name, "kernel_4");  // newest first
  auto stats = tuning_cache_stats();
  const int64_t one = stats->bytes / 5;
  auto pruned = prune_tuning_cache(2 * one + one / 2);
  ASSERT_TRUE(pruned);
  EXPECT_EQ(*pruned, 3u);
  EXPECT_EQ(tuning_cache_stats()->entries, 2u);
  auto refused = prune_tuning_cache(-1);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.status().message().find("max_bytes: expected a size >= 0, got -1"),
            std::string::npos);
  auto cleared = clear_tuning_cache();
  ASSERT_TRUE(cleared);
  EXPECT_EQ(*cleared, 2u);
  EXPECT_EQ(tuning_cache_stats()->entries, 0u);
}

// A winner decides which kernel runs: one signed under another user's key (or planted with a
// plain checksum, as the first version was written) reads as absent.
TEST_F(TuningCacheTest, AnEntrySignedWithAnotherKeyReadsAsAbsent) {
  ASSERT_TRUE(store_tuned(signature(4096), choice("kernel_a", 600)));
  ASSERT_TRUE(find_tuned(signature(4096)));
  note_compiled(signature(4096), {"k1"});
  ASSERT_EQ(compiled_in_family(signature(4096)).size(), 1u);
  Settings s = settings();
  s.signing_key_file = cache_.dir() + "/other-state/signing-key";
  set_settings(s);
  EXPECT_FALSE(find_tuned(signature(4096)));
  EXPECT_TRUE(compiled_in_family(signature(4096)).empty());
  EXPECT_EQ(tuning_cache_stats()->invalid, 1u);
}

// HANG-1: a fifo, a device or a link where an entry or a family index belongs is skipped at once.
TEST_F(TuningCacheTest, AFifoOrLinkAtAnEntryIsSkippedWithoutBlocking) {
  ASSERT_TRUE(store_tuned(signature(4096), choice("kernel_a", 600)));
  note_compiled(signature(4096), {"k1"});
  auto listed = list_tuning_cache();
  ASSERT_TRUE(listed && listed->size() == 1u);
  const std::string entry = (*listed)[0].path;
  const std::string folder = fs::path(entry).parent_path().string();
  std::string index;
  for (const auto& item : fs::directory_iterator(folder)) {
    if (item.path().filename().string().rfind("family-", 0) == 0) index = item.path().string();
  }
  ASSERT_FALSE(index.empty());
  fs::remove(entry);
  fs::remove(index);
  ASSERT_EQ(mkfifo(entry.c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", index);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(find_tuned(signature(4096)));
  EXPECT_TRUE(compiled_in_family(signature(4096)).empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// DATA-2: a clear removes only tilecraft's files and follows no link out of the cache.
TEST_F(TuningCacheTest, ClearLeavesForeignFilesAndFollowsNoLink) {
  ASSERT_TRUE(store_tuned(signature(4096), choice("kernel_a", 600)));
  const std::string model = fs::path((*list_tuning_cache())[0].path).parent_path().string();
  std::ofstream(model + "/notes.txt") << "mine";
  std::ofstream(model + "/" + std::string(64, 'f') + ".txt") << "a file of the user's";
  std::vector<std::string> left;
  auto cleared = clear_tuning_cache(&left);
  ASSERT_TRUE(cleared);
  EXPECT_EQ(*cleared, 1u);
  EXPECT_EQ(left.size(), 2u);
  EXPECT_TRUE(fs::exists(model + "/notes.txt"));
  EXPECT_TRUE(fs::exists(model + "/" + std::string(64, 'f') + ".txt"));

  // The audit's data2 case: tuning/ a link to a folder elsewhere.
  fs::remove_all(dir_ + "/tuning");
  const std::string elsewhere = cache_.dir() + "/elsewhere";
  fs::create_directories(elsewhere + "/v1/sub");
  std::ofstream(elsewhere + "/v1/a.txt") << "a";
  std::ofstream(elsewhere + "/v1/sub/b.txt") << "b";
  fs::create_directory_symlink(elsewhere, dir_ + "/tuning");
  left.clear();
  cleared = clear_tuning_cache(&left);
  ASSERT_TRUE(cleared);
  EXPECT_EQ(*cleared, 0u);
  EXPECT_EQ(left.size(), 1u);
  EXPECT_TRUE(fs::exists(elsewhere + "/v1/a.txt"));
  EXPECT_TRUE(fs::exists(elsewhere + "/v1/sub/b.txt"));
  auto pruned = prune_tuning_cache(0, &left);
  ASSERT_TRUE(pruned);
  EXPECT_EQ(*pruned, 0u);
  EXPECT_TRUE(fs::exists(elsewhere + "/v1/a.txt"));
}

TEST_F(TuningCacheTest, FamilyIndexCollectsCompiledKernels) {
  EXPECT_TRUE(compiled_in_family(signature(4096)).empty());
  note_compiled(signature(4096), {"k1", "k2"});
  note_compiled(signature(128), {"k2", "k3"});  // same family, another shape
  const auto names = compiled_in_family(signature(8192));
  EXPECT_EQ(names, (std::set<std::string>{"k1", "k2", "k3"}));
  ProblemSignature other = signature(4096);
  other.family += ";act=relu";
  EXPECT_TRUE(compiled_in_family(other).empty());
  EXPECT_EQ(tuning_cache_stats()->invalid, 0u);  // the index is not a broken entry
}

TEST(TuningOptions, ParsedAndValidatedWithTheirNames) {
  EXPECT_EQ(*parse_tuning_mode("auto", "tuning"), TuningMode::automatic);
  EXPECT_EQ(*parse_tuning_mode("force", "tuning"), TuningMode::force);
  auto bad = parse_tuning_mode("sometimes", "TILECRAFT_TUNING");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.status().message(),
            "TILECRAFT_TUNING: expected 'auto', 'blocking', 'off' or 'force', got 'sometimes'");
  TuningOptions options;
  options.max_candidates = -1;
  EXPECT_EQ(validate(options).message(),
            "max_candidates: expected an integer from 1 to 64, got -1");
  options.max_candidates = 4;
  options.max_seconds = -1;
  EXPECT_NE(validate(options).message().find("max_seconds: expected a number of seconds >= 0"),
            std::string::npos);
}

TEST(TuningOptions, FromTheEnvironment) {
  {
    testing::ScopedEnv mode("TILECRAFT_TUNING", "off");
    testing::ScopedEnv candidates("TILECRAFT_TUNING_CANDIDATES", "3");
    testing::ScopedEnv seconds("TILECRAFT_TUNING_SECONDS", "12.5");
    Settings s = settings_from_environment();
    EXPECT_EQ(s.tuning, "off");
    EXPECT_EQ(s.tuning_candidates, 3);
    EXPECT_DOUBLE_EQ(s.tuning_seconds, 12.5);
  }
  {
    testing::ScopedEnv candidates("TILECRAFT_TUNING_CANDIDATES", "-1");
    EXPECT_THROW(settings_from_environment(), Error);
  }
  {
    testing::ScopedEnv seconds("TILECRAFT_TUNING_SECONDS", "-1");
    try {
      settings_from_environment();
      FAIL() << "a negative budget was accepted";
    } catch (const Error& e) {
      EXPECT_NE(
          std::string(e.what()).find("TILECRAFT_TUNING_SECONDS: expected a number of seconds"),
          std::string::npos);
    }
  }
  {
    testing::ScopedEnv mode("TILECRAFT_TUNING", "sometimes");
    EXPECT_THROW(settings_from_environment(), Error);
  }
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::tune
