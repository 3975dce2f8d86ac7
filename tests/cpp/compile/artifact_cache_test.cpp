// The artifact cache, with real files, real nvcc runs and real concurrent processes.
#include "tilecraft/compile/artifact_cache.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "compile/process.hpp"
#include "compile/test_support.hpp"
#include "tilecraft/compile/compiler.hpp"

namespace tilecraft::compile {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;
using testing::read_file;
using testing::ScopedCache;
using testing::tiny_request;
using testing::unique_marker;
using testing::write_file;

// Loads a module built from tiny_request and returns what its function answers (-1: unusable).
int call_answer(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    ADD_FAILURE() << "dlopen(" << path << "): " << dlerror();
    return -1;
  }
  auto* answer = reinterpret_cast<int (*)()>(dlsym(handle, "tilecraft_test_answer"));
  int value = answer ? answer() : -1;
  dlclose(handle);
  return value;
}

struct Collected {
  std::vector<std::string> lines;
  ProgressFn fn() {
    return [this](std::string_view line) { lines.emplace_back(line); };
  }
  int count(const std::string& needle) const {
    int found = 0;
    for (const std::string& line : lines) found += line.find(needle) != std::string::npos ? 1 : 0;
    return found;
  }
};

TEST(ArtifactCache, MissThenHitReturnsTheSamePathWithoutCompiling) {
  ScopedCache scope("hit");
  CompileRequest request = tiny_request("hit", unique_marker("hit"));
  Collected first;
  Result<CompiledModule> built = build_module(request, first.fn());
  ASSERT_TRUE(built) << built.status().message();
  EXPECT_FALSE(built->from_cache);
  EXPECT_GT(built->compile_seconds, 0.0);
  EXPECT_EQ(first.count("compiled hit in"), 1);
  EXPECT_EQ(first.count("compiling 1 kernel with 1 parallel job (cache miss)"), 1);
  EXPECT_EQ(built->key, cache_key(request));
  EXPECT_EQ(call_answer(built->path), 42);

  // The entry's layout: the module, its manifest, the source and the key's text (sans source).
  std::string entry = scope.cache_dir() + "/v1/" + built->key.substr(0, 2) + "/" + built->key;
  EXPECT_EQ(built->path, entry + "/module.so");
  EXPECT_EQ(read_file(entry + "/source.cu"), request.source);
  std::string key_txt = read_file(entry + "/key.txt");
  EXPECT_NE(key_txt.find("tilecraft-abi-"), std::string::npos);
  EXPECT_NE(key_txt.find("arch=compute_80,code=sm_80"), std::string::npos);
  EXPECT_NE(key_txt.find("Cuda compilation tools"), std::string::npos);
  EXPECT_NE(key_txt.find("headers sha256"), std::string::npos);
  EXPECT_EQ(key_txt.find("tilecraft_test_answer"), std::string::npos);
  EXPECT_NE(read_file(entry + "/manifest").find("hmac-sha256"), std::string::npos);
  // The signing key lives outside the cache, private to this user.
  EXPECT_FALSE(fs::exists(scope.cache_dir() + "/secret"));
  struct stat key;
  ASSERT_EQ(stat(scope.signing_key_file().c_str(), &key), 0);
  EXPECT_EQ(key.st_mode & 0777, 0600u);
  EXPECT_EQ(key.st_size, 25 + 65);  // "tilecraft-signing-key v1\n", 64 hex digits, '\n'
  EXPECT_EQ(read_file(scope.signing_key_file()).rfind("tilecraft-signing-key v1\n", 0), 0u);
  EXPECT_TRUE(fs::is_empty(scope.cache_dir() + "/v1/tmp"));

  Collected second;
  Result<CompiledModule> again = build_module(request, second.fn());
  ASSERT_TRUE(again) << again.status().message();
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->path, built->path);
  EXPECT_EQ(again->compile_seconds, 0.0);
  EXPECT_TRUE(second.lines.empty()) << second.lines.front();
}

TEST(ArtifactCache, TruncatedModuleIsDetectedAndRebuilt) {
  ScopedCache scope("corrupt");
  CompileRequest request = tiny_request("corrupt", unique_marker("corrupt"));
  Result<CompiledModule> built = build_module(request);
  ASSERT_TRUE(built) << built.status().message();
  fs::resize_file(built->path, fs::file_size(built->path) / 2);

  Collected progress;
  Result<CompiledModule> rebuilt = build_module(request, progress.fn());
  ASSERT_TRUE(rebuilt) << rebuilt.status().message();
  EXPECT_FALSE(rebuilt->from_cache);
  EXPECT_EQ(progress.count("is invalid"), 1);
  EXPECT_EQ(progress.count("truncated"), 1);
  EXPECT_EQ(call_answer(rebuilt->path), 42);
  Result<CompiledModule> third = build_module(request);
  ASSERT_TRUE(third);
  EXPECT_TRUE(third->from_cache);
}

TEST(ArtifactCache, PlantedModuleIsNeverReturned) {
  ScopedCache scope("planted");
  CompileRequest request = tiny_request("planted", unique_marker("planted"));
  std::string key = cache_key(request);
  std::string entry = scope.cache_dir() + "/v1/" + key.substr(0, 2) + "/" + key;
  fs::create_directories(entry);
  const std::string garbage =
      "\x7f"
      "ELF planted by someone else";
  write_file(entry + "/module.so", garbage);
  write_file(entry + "/manifest", "tilecraft-manifest v2\nkey " + key + "\nmodule.so " +
                                      std::to_string(garbage.size()) + " hmac-sha256 " +
                                      std::string(64, '0') + "\n");

  Collected progress;
  Result<CompiledModule> built = build_module(request, progress.fn());
  ASSERT_TRUE(built) << built.status().message();
  EXPECT_FALSE(built->from_cache);
  EXPECT_EQ(progress.count("does not match its manifest's HMAC"), 1);
  EXPECT_NE(read_file(built->path), garbage);
  EXPECT_EQ(call_answer(built->path), 42);
}

TEST(ArtifactCache, EntryWithoutManifestIsAMiss) {
  ScopedCache scope("partial");
  CompileRequest request = tiny_request("partial", unique_marker("partial"));
  Result<CompiledModule> built = build_module(request);
  ASSERT_TRUE(built) << built.status().message();
  fs::remove(fs::path(built->path).parent_path() / "manifest");
  Collected progress;
  Result<CompiledModule> rebuilt = build_module(request, progress.fn());
  ASSERT_TRUE(rebuilt) << rebuilt.status().message();
  EXPECT_FALSE(rebuilt->from_cache);
  EXPECT_EQ(progress.count("no readable manifest"), 1);
}

TEST(ArtifactCache, UncreatableRootStillYieldsAUsableModule) {
  ScopedCache scope("uncreatable");
  // A regular file where the cache folder should be: nothing can be created under it, even by
  // root (for whom chmod 0555 would not stop writes).
  write_file(scope.dir() + "/not-a-folder", "x");
  scope.set_cache_dir(scope.dir() + "/not-a-folder/cache");
  ArtifactCache cache = ArtifactCache::open(tilecraft::settings());
  EXPECT_FALSE(cache.readable());
  EXPECT_FALSE(cache.writable());

  CompileRequest request = tiny_request("uncreatable", unique_marker("uncreatable"), 7);
  Result<CompiledModule> built = build_module(request);
  ASSERT_TRUE(built) << built.status().message();
  EXPECT_FALSE(built->from_cache);
  EXPECT_EQ(built->path.find(scope.dir()), std::string::npos);
  EXPECT_EQ(call_answer(built->path), 7);
  // Within the process the privately built module is remembered, not compiled again.
  Result<CompiledModule> again = build_module(request);
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->path, built->path);
}

TEST(ArtifactCache, ReadOnlyRootStillYieldsAUsableModule) {
  if (geteuid() == 0) {
    GTEST_SKIP() << "running as root, whom chmod 0555 does not stop from writing; "
                    "UncreatableRootStillYieldsAUsableModule covers the unwritable cache";
  }
  ScopedCache scope("readonly");
  CompileRequest cached = tiny_request("cached", unique_marker("ro-cached"), 4);
  Result<CompiledModule> first = build_module(cached);
  ASSERT_TRUE(first) << first.status().message();
  chmod(scope.cache_dir().c_str(), 0555);
  ArtifactCache cache = ArtifactCache::open(tilecraft::settings());
  EXPECT_TRUE(cache.readable());
  EXPECT_FALSE(cache.writable());

  // What is already there is used; what is new is compiled privately.
  Result<CompiledModule> hit = build_module(cached);
  ASSERT_TRUE(hit) << hit.status().message();
  EXPECT_TRUE(hit->from_cache);
  EXPECT_EQ(hit->path, first->path);
  Result<CompiledModule> built = build_module(tiny_request("readonly", unique_marker("ro"), 5));
  ASSERT_TRUE(built) << built.status().message();
  EXPECT_FALSE(built->from_cache);
  EXPECT_EQ(built->path.find(scope.dir()), std::string::npos);
  EXPECT_EQ(call_answer(built->path), 5);
  chmod(scope.cache_dir().c_str(), 0700);
}

TEST(ArtifactCache, ReadOnlyRootWithoutSecretIsNotUsed) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root, whom chmod 0555 does not stop from writing";
  ScopedCache scope("readonly-empty");
  fs::create_directories(scope.cache_dir());
  chmod(scope.cache_dir().c_str(), 0555);
  ArtifactCache cache = ArtifactCache::open(tilecraft::settings());
  EXPECT_FALSE(cache.readable());
  EXPECT_FALSE(cache.writable());
  EXPECT_NE(cache.reason().find("cannot be created"), std::string::npos) << cache.reason();
  chmod(scope.cache_dir().c_str(), 0700);
}

TEST(ArtifactCache, RefusesAWorldWritableRoot) {
  ScopedCache scope("insecure");
  fs::create_directories(scope.cache_dir());
  chmod(scope.cache_dir().c_str(), 0777);
  ArtifactCache cache = ArtifactCache::open(tilecraft::settings());
  EXPECT_FALSE(cache.readable());
  EXPECT_FALSE(cache.writable());
  EXPECT_NE(cache.reason().find("writable by its group or by everyone (mode 0777)"),
            std::string::npos)
      << cache.reason();
  EXPECT_FALSE(fs::exists(scope.cache_dir() + "/v1"));
}

TEST(ArtifactCache, RefusesARootOwnedByAnotherUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a folder to another uid";
  ScopedCache scope("foreign");
  fs::create_directories(scope.cache_dir());
  ASSERT_EQ(chown(scope.cache_dir().c_str(), 54321, 54321), 0);
  ArtifactCache cache = ArtifactCache::open(tilecraft::settings());
  EXPECT_FALSE(cache.readable());
  EXPECT_NE(cache.reason().find("owned by uid 54321"), std::string::npos) << cache.reason();
}

TEST(ArtifactCache, SigningKeyIsStableAcrossOpens) {
  ScopedCache scope("stable");
  ASSERT_TRUE(ArtifactCache::open(tilecraft::settings()).writable());
  std::string key = read_file(scope.signing_key_file());
  ASSERT_EQ(key.size(), 25u + 65u);
  ArtifactCache again = ArtifactCache::open(tilecraft::settings());
  ASSERT_TRUE(again.writable());
  EXPECT_TRUE(again.repairs().empty());
  EXPECT_EQ(read_file(scope.signing_key_file()), key);
}

TEST(ArtifactCache, AliasesVerifyUnderTheSigningKeyOnly) {
  ScopedCache scope("aliases");
  const std::string kernel(64, 'a'), unit(64, 'b'), other(64, 'c');
  ArtifactCache cache = ArtifactCache::open(tilecraft::settings());
  ASSERT_TRUE(cache.writable());
  EXPECT_FALSE(cache.alias_of(kernel));
  cache.record_alias(kernel, unit);
  EXPECT_EQ(cache.alias_of(kernel), unit);
  EXPECT_FALSE(cache.alias_of(other));

  const std::string path = scope.cache_dir() + "/v1/aliases/aa/" + kernel;
  const std::string record = read_file(path);
  // Pointed at another unit without the key: refused.
  std::string forged = record;
  forged.replace(forged.find(unit), unit.size(), other);
  write_file(path, forged);
  EXPECT_FALSE(cache.alias_of(kernel));
  // Signed with another user's (here: another) key: refused.
  write_file(path, alias_text(std::string(32, 'k'), kernel, unit));
  EXPECT_FALSE(cache.alias_of(kernel));
  write_file(path, "tilecraft-alias v1\n");
  EXPECT_FALSE(cache.alias_of(kernel));
  write_file(path, record);
  EXPECT_EQ(cache.alias_of(kernel), unit);
}

// A kernel built in a unit with others is found again for its own request, as the unit's module.
TEST(ArtifactCache, AKernelRecordedAsServedByAUnitIsFoundAlone) {
  ScopedCache scope("unit-serves");
  CompileRequest unit_request = tiny_request("unit", unique_marker("unit"));
  CompileRequest alone = tiny_request("alone", unique_marker("alone"));
  Result<CompiledModule> unit = build_module(unit_request);
  ASSERT_TRUE(unit) << unit.status().message();
  EXPECT_FALSE(find_cached_modules({alone}).front());

  record_unit_serves(*unit, {alone});
  std::optional<CompiledModule> found = find_cached_modules({alone}).front();
  ASSERT_TRUE(found);
  EXPECT_EQ(found->path, unit->path);
  EXPECT_EQ(found->key, unit->key);
  EXPECT_TRUE(found->shared_unit);
  std::optional<CompiledModule> own = find_cached_modules({unit_request}).front();
  ASSERT_TRUE(own);
  EXPECT_FALSE(own->shared_unit);

  // The unit's entry gone (pruned, or never there): the alias leads nowhere, a plain miss.
  fs::remove_all(fs::path(unit->path).parent_path());
  EXPECT_FALSE(find_cached_modules({alone}).front());
}

TEST(ArtifactCache, ThreadsRacingOnOneKeyCompileOnce) {
  ScopedCache scope("threads", 4);
  CompileRequest request = tiny_request("threads", unique_marker("threads"));
  std::vector<std::optional<Result<CompiledModule>>> results(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&results, &request, i] { results[i] = build_module(request, nullptr); });
  }
  for (std::thread& thread : threads) thread.join();
  int compiled = 0;
  for (auto& result : results) {
    ASSERT_TRUE(*result) << result->status().message();
    compiled += (*result)->from_cache ? 0 : 1;
    EXPECT_EQ((*result)->path, (*results[0])->path);
  }
  EXPECT_EQ(compiled, 1);
}

// The child half of ProcessesRacingOnOneKeyCompileOnce: runs only when the parent starts this
// binary with TILECRAFT_TEST_RACE_DIR set.
TEST(ArtifactCacheRaceChild, BuildOnce) {
  const char* dir = std::getenv("TILECRAFT_TEST_RACE_DIR");
  const char* marker = std::getenv("TILECRAFT_TEST_RACE_MARKER");
  if (!dir || !marker) GTEST_SKIP() << "runs only as a child of ProcessesRacingOnOneKeyCompileOnce";
  Settings s = settings_from_environment();
  s.cache_dir = std::string(dir) + "/cache";
  s.quiet = true;
  set_settings(s);
  std::string me = std::to_string(getpid());
  write_file(std::string(dir) + "/ready-" + me, "");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(std::string(dir) + "/go") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  Result<CompiledModule> built = build_module(tiny_request("race", marker), nullptr);
  ASSERT_TRUE(built) << built.status().message();
  write_file(std::string(dir) + "/result-" + me,
             std::string(built->from_cache ? "cached " : "compiled ") + built->path);
}

TEST(ArtifactCache, ProcessesRacingOnOneKeyCompileOnce) {
  ScopedCache scope("processes");
  constexpr int kChildren = 4;
  const std::string marker = unique_marker("processes");
  std::vector<std::optional<Result<ProcessResult>>> runs(kChildren);
  std::vector<std::thread> threads;
  for (int i = 0; i < kChildren; ++i) {
    threads.emplace_back([&, i] {
      runs[i] = run_process(
          {"/proc/self/exe", "--gtest_filter=ArtifactCacheRaceChild.BuildOnce"},
          {"TILECRAFT_TEST_RACE_DIR=" + scope.dir(), "TILECRAFT_TEST_RACE_MARKER=" + marker});
    });
  }
  auto count = [&](const std::string& prefix) {
    int found = 0;
    for (const auto& entry : fs::directory_iterator(scope.dir())) {
      found += entry.path().filename().string().rfind(prefix, 0) == 0 ? 1 : 0;
    }
    return found;
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (count("ready-") < kChildren && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  write_file(scope.dir() + "/go", "");
  for (std::thread& thread : threads) thread.join();

  int compiled = 0, cached = 0;
  std::string path;
  for (const auto& run : runs) {
    ASSERT_TRUE(*run) << run->status().message();
    EXPECT_EQ((*run)->exit_code, 0) << (*run)->output;
  }
  for (const auto& entry : fs::directory_iterator(scope.dir())) {
    if (entry.path().filename().string().rfind("result-", 0) != 0) continue;
    std::string result = read_file(entry.path());
    compiled += result.rfind("compiled ", 0) == 0 ? 1 : 0;
    cached += result.rfind("cached ", 0) == 0 ? 1 : 0;
    std::string module = result.substr(result.find(' ') + 1);
    if (path.empty()) path = module;
    EXPECT_EQ(module, path);
  }
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(cached, kChildren - 1);
  EXPECT_EQ(call_answer(path), 42);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::compile
