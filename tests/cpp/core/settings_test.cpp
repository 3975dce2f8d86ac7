#include "tilecraft/core/settings.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "tilecraft/core/status.hpp"

namespace tilecraft {
namespace {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_.empty()) {
      unsetenv(name_);
    } else {
      setenv(name_, old_.c_str(), 1);
    }
  }

 private:
  const char* name_;
  std::string old_;
};

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

}  // namespace
}  // namespace tilecraft
