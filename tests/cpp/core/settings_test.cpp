#include "tilecraft/core/settings.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "scoped_env.hpp"
#include "tilecraft/core/status.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

using testing::ScopedEnv;

TEST(Settings, ReadsTheEnvironment) {
  ScopedEnv cache("TILECRAFT_CACHE_DIR", "/tmp/tilecraft-settings-test");
  ScopedEnv jobs("TILECRAFT_COMPILE_JOBS", "3");
  ScopedEnv quiet("TILECRAFT_QUIET", "true");
  Settings s = settings_from_environment();
  EXPECT_EQ(s.cache_dir, "/tmp/tilecraft-settings-test");
  EXPECT_EQ(s.compile_jobs, 3);
  EXPECT_TRUE(s.quiet);
}

TEST(Settings, RejectsMalformedValuesNamingTheVariable) {
  {
    ScopedEnv jobs("TILECRAFT_COMPILE_JOBS", "many");
    try {
      (void)settings_from_environment();
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()),
                "TILECRAFT_COMPILE_JOBS: expected an integer from 1 to 4096, got 'many'");
    }
  }
  ScopedEnv verbose("TILECRAFT_VERBOSE", "maybe");
  EXPECT_THROW((void)settings_from_environment(), Error);
}

std::string expect_refused(const char* name, const char* value) {
  ScopedEnv variable(name, value);
  try {
    (void)settings_from_environment();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << name << "='" << value << "' was accepted";
  return "";
}

TEST(Settings, CompileJobsAreDigitsWithinTheStatedRange) {
  for (const char* bad : {"4097", "0", "-1", " 2", "2 ", "+2", "2x", "99999999999"}) {
    EXPECT_EQ(expect_refused("TILECRAFT_COMPILE_JOBS", bad),
              std::string("TILECRAFT_COMPILE_JOBS: expected an integer from 1 to 4096, got '") +
                  bad + "'");
  }
  ScopedEnv jobs("TILECRAFT_COMPILE_JOBS", "4096");
  EXPECT_EQ(settings_from_environment().compile_jobs, 4096);
}

TEST(Settings, RelativeCacheDirIsResolvedOnceAndSaidSo) {
  ScopedEnv cache("TILECRAFT_CACHE_DIR", "some/cache");
  Settings s = settings_from_environment();
  const std::string expected = std::filesystem::current_path().string() + "/some/cache";
  EXPECT_EQ(s.cache_dir, expected);
  ASSERT_FALSE(s.notes.empty());
  EXPECT_EQ(s.notes[0],
            "tilecraft: TILECRAFT_CACHE_DIR='some/cache' is a relative path: using " + expected);
}

TEST(Settings, RelativeXdgAndHomeAreIgnored) {
  ScopedEnv cache("TILECRAFT_CACHE_DIR", "");
  ScopedEnv key("TILECRAFT_SIGNING_KEY_FILE", "");
  ScopedEnv xdg_cache("XDG_CACHE_HOME", "xdg");
  ScopedEnv xdg_state("XDG_STATE_HOME", "state");
  ScopedEnv home("HOME", "/home/someone");
  Settings s = settings_from_environment();
  EXPECT_EQ(s.cache_dir, "/home/someone/.cache/tilecraft");
  EXPECT_EQ(s.signing_key_file, "/home/someone/.local/state/tilecraft/signing-key");
  ASSERT_EQ(s.notes.size(), 2u);
  EXPECT_NE(s.notes[0].find("ignoring XDG_CACHE_HOME='xdg'"), std::string::npos) << s.notes[0];
  EXPECT_NE(s.notes[1].find("ignoring XDG_STATE_HOME='state'"), std::string::npos);

  ScopedEnv relative_home("HOME", "relative-home");
  Settings no_home = settings_from_environment();
  EXPECT_EQ(no_home.cache_dir.rfind("/tmp/tilecraft-cache-", 0), 0u) << no_home.cache_dir;
}

TEST(Settings, AbsoluteXdgFoldersAreUsed) {
  ScopedEnv cache("TILECRAFT_CACHE_DIR", "");
  ScopedEnv key("TILECRAFT_SIGNING_KEY_FILE", "");
  ScopedEnv xdg_cache("XDG_CACHE_HOME", "/x/cache");
  ScopedEnv xdg_state("XDG_STATE_HOME", "/x/state");
  Settings s = settings_from_environment();
  EXPECT_EQ(s.cache_dir, "/x/cache/tilecraft");
  EXPECT_EQ(s.signing_key_file, "/x/state/tilecraft/signing-key");
  EXPECT_TRUE(s.notes.empty());
}

TEST(Settings, CutlassFolderRemembersWhichVariableNamedIt) {
  ScopedEnv primary("TILECRAFT_CUTLASS_DIR", "");
  {
    ScopedEnv cutlass("CUTLASS_DIR", "/opt/cutlass");
    Settings s = settings_from_environment();
    EXPECT_EQ(s.cutlass_dir, "/opt/cutlass");
    EXPECT_EQ(s.cutlass_dir_variable, "CUTLASS_DIR");
  }
  ScopedEnv ours("TILECRAFT_CUTLASS_DIR", "/opt/ours");
  ScopedEnv cutlass("CUTLASS_DIR", "/opt/cutlass");
  EXPECT_EQ(settings_from_environment().cutlass_dir_variable, "TILECRAFT_CUTLASS_DIR");
}

TEST(Settings, NvccIsNeverLookedUpInTheWorkingFolder) {
  // A PATH whose only entries are relative (and empty: the working folder) finds nothing.
  ScopedEnv path("PATH", ".:bin::");
  ScopedEnv nvcc("TILECRAFT_NVCC", "");
  ScopedEnv cuda_home("CUDA_HOME", "relative/cuda");
  Settings s = settings_from_environment();
  EXPECT_TRUE(s.nvcc.empty() || s.nvcc == "/usr/local/cuda/bin/nvcc") << s.nvcc;
  ScopedEnv named("TILECRAFT_NVCC", "./tools/nvcc");
  Settings relative = settings_from_environment();
  EXPECT_EQ(relative.nvcc, std::filesystem::current_path().string() + "/tools/nvcc");
}

TEST(Settings, ReferencesSurviveReplacement) {
  const Settings& before = settings();
  const std::string cache = before.cache_dir;
  Settings changed = before;
  changed.cache_dir = "/tmp/tilecraft-elsewhere";
  set_settings(changed);
  EXPECT_EQ(before.cache_dir, cache);  // the old table is still alive
  EXPECT_EQ(settings().cache_dir, "/tmp/tilecraft-elsewhere");
  Settings restored = before;
  set_settings(restored);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
