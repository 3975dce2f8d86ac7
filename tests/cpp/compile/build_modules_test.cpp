// build_modules and cache_key: keys, compile errors, missing tools, parallel builds.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "compile/test_support.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::compile {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;
using testing::read_file;
using testing::ScopedCache;
using testing::tiny_request;
using testing::unique_marker;

TEST(CacheKey, ChangesWithSourceAndFlagsOnly) {
  ScopedCache scope("key");
  CompileRequest request = tiny_request("key", "same");
  std::string key = cache_key(request);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(cache_key(request), key);

  CompileRequest renamed = request;
  renamed.name = "another-name";
  EXPECT_EQ(cache_key(renamed), key) << "the name is a label, not part of what is compiled";

  CompileRequest other_source = request;
  other_source.source += "\n";
  EXPECT_NE(cache_key(other_source), key);

  CompileRequest other_arch = request;
  other_arch.arch_flags = {"-gencode", "arch=compute_90a,code=sm_90a"};
  EXPECT_NE(cache_key(other_arch), key);

  CompileRequest extra_flag = request;
  extra_flag.arch_flags.push_back("-lineinfo");
  EXPECT_NE(cache_key(extra_flag), key);
}

TEST(CacheKey, ChangesWithTheCutlassVersionHeader) {
  ScopedCache scope("cutlass-key");
  CompileRequest request = tiny_request("key", "same");
  std::string key = cache_key(request);
  // A copy of CUTLASS's version.h elsewhere, edited: another CUTLASS, another key.
  std::string fake = scope.dir() + "/cutlass";
  fs::create_directories(fake + "/include/cutlass");
  std::string header = read_file(settings().cutlass_dir + "/include/cutlass/version.h");
  ASSERT_FALSE(header.empty());
  testing::write_file(fake + "/include/cutlass/version.h", header);
  Settings s = settings();
  s.cutlass_dir = fake;
  set_settings(s);
  std::string moved = cache_key(request);
  EXPECT_NE(moved, key);  // the include paths are flags
  testing::write_file(fake + "/include/cutlass/version.h", header + "\n// patched\n");
  // The toolchain is identified once per process per (nvcc, CUTLASS folder): a header edited in
  // place while the process runs is seen by the next process.
  EXPECT_EQ(cache_key(request), moved);
}

// A stand-in host compiler at `path` that answers --version with `says`, its target, and (as
// clang does) the folder it is installed in.
void write_host_compiler(const std::string& path, const std::string& says) {
  fs::create_directories(fs::path(path).parent_path());
  testing::write_file(path, "#!/bin/sh\necho '" + says + "'\necho 'Target: x86_64-linux-gnu'\n" +
                                "echo 'InstalledDir: " + fs::path(path).parent_path().string() +
                                "'\n");
  fs::permissions(path, fs::perms::owner_all);
}

TEST(CacheKey, ChangesWithTheHostCompilerButNotWithItsPath) {
  ScopedCache scope("host-key");
  CompileRequest request = tiny_request("key", "same");
  const std::string usual = cache_key(request);
  write_host_compiler(scope.dir() + "/one/c++", "fakecc (test) 12.3.0");
  write_host_compiler(scope.dir() + "/two/c++", "fakecc (test) 12.3.0");
  write_host_compiler(scope.dir() + "/three/c++", "fakecc (test) 13.1.0");
  auto key_with = [&](const std::string& compiler) {
    testing::ScopedEnv ccbin("NVCC_CCBIN", compiler);
    return cache_key(request);
  };
  const std::string one = key_with(scope.dir() + "/one/c++");
  EXPECT_NE(one, usual) << "another host compiler, the same key";
  EXPECT_EQ(key_with(scope.dir() + "/two/c++"), one) << "the same compiler elsewhere, another key";
  EXPECT_NE(key_with(scope.dir() + "/three/c++"), one) << "another version, the same key";
  EXPECT_EQ(cache_key(request), usual);
}

// The child half of ChangesWithTheContentOfAnyCutlassHeader: prints the key of a request made
// with the CUTLASS folder $TILECRAFT_TEST_KEY_CUTLASS into $TILECRAFT_TEST_KEY_OUT.
TEST(CacheKeyChild, Print) {
  const char* cutlass = std::getenv("TILECRAFT_TEST_KEY_CUTLASS");
  if (!cutlass) GTEST_SKIP() << "runs only as the child of a CacheKey test";
  Settings s = settings_from_environment();
  s.cutlass_dir = cutlass;
  s.cache_dir = std::getenv("TILECRAFT_TEST_KEY_CACHE");
  set_settings(s);
  testing::write_file(std::getenv("TILECRAFT_TEST_KEY_OUT"),
                      cache_key(tiny_request("key", "same")));
}

TEST(CacheKey, ChangesWithTheContentOfAnyCutlassHeader) {
  ScopedCache scope("cutlass-content");
  const std::string fake = scope.dir() + "/cutlass";
  fs::create_directories(fake + "/include/cutlass/gemm");
  testing::write_file(fake + "/include/cutlass/version.h",
                      read_file(settings().cutlass_dir + "/include/cutlass/version.h"));
  testing::write_file(fake + "/include/cutlass/gemm/gemm.h", "struct Gemm {};\n");
  auto key_in_a_new_process = [&] {
    const std::string out = scope.dir() + "/key";
    fs::remove(out);
    pid_t child =
        testing::spawn_self("CacheKeyChild.Print", {"TILECRAFT_TEST_KEY_CUTLASS=" + fake,
                                                    "TILECRAFT_TEST_KEY_CACHE=" + scope.cache_dir(),
                                                    "TILECRAFT_TEST_KEY_OUT=" + out});
    EXPECT_EQ(testing::wait_exit_code(child), 0);
    return read_file(out);
  };
  const std::string before = key_in_a_new_process();
  ASSERT_EQ(before.size(), 64u);
  // A kernel developer edits a header that is not version.h: stale modules must not be reused.
  testing::write_file(fake + "/include/cutlass/gemm/gemm.h", "struct Gemm { int patched; };\n");
  const std::string edited = key_in_a_new_process();
  EXPECT_NE(edited, before);
  // Written again with the same bytes (a checkout, a touch): the same key.
  testing::write_file(fake + "/include/cutlass/gemm/gemm.h", "struct Gemm { int patched; };\n");
  EXPECT_EQ(key_in_a_new_process(), edited);
}

TEST(BuildModules, CompileErrorCarriesNvccsMessageTheCommandAndTheKeptSource) {
  ScopedCache scope("error");
  CompileRequest request;
  request.name = "broken kernel";
  request.source = "// " + unique_marker("error") +
                   "\nextern \"C\" int broken() { return tilecraft_undeclared_identifier; }\n";
  request.arch_flags = {"-gencode", "arch=compute_80,code=sm_80"};
  Result<CompiledModule> built = build_module(request, nullptr);
  ASSERT_FALSE(built);
  EXPECT_EQ(built.status().code(), StatusCode::kCompileError);
  const std::string& message = built.status().message();
  EXPECT_NE(message.find("nvcc could not compile 'broken kernel'"), std::string::npos) << message;
  EXPECT_NE(message.find("tilecraft_undeclared_identifier"), std::string::npos) << message;
  EXPECT_NE(message.find("command: " + settings().nvcc), std::string::npos) << message;
  EXPECT_NE(message.find("-DNDEBUG"), std::string::npos) << message;
  size_t kept_at = message.find("source kept at: ");
  ASSERT_NE(kept_at, std::string::npos) << message;
  std::string kept = message.substr(kept_at + std::string("source kept at: ").size());
  kept = kept.substr(0, kept.find('\n'));
  EXPECT_EQ(read_file(kept), request.source);
  EXPECT_EQ(kept.rfind(scope.cache_dir() + "/v1/failed/broken_kernel-", 0), 0u) << kept;
  EXPECT_TRUE(fs::exists(kept.substr(0, kept.size() - 3) + ".log"));
  EXPECT_TRUE(fs::is_empty(scope.cache_dir() + "/v1/tmp"));
}

TEST(BuildModules, LongCompilerOutputIsTrimmed) {
  ScopedCache scope("long-error");
  CompileRequest request;
  request.name = "many-errors";
  request.source = "// " + unique_marker("long") + "\n";
  for (int i = 0; i < 80; ++i) {
    request.source +=
        "int f" + std::to_string(i) + "() { return undeclared_" + std::to_string(i) + "; }\n";
  }
  Result<CompiledModule> built = build_module(request, nullptr);
  ASSERT_FALSE(built);
  const std::string& message = built.status().message();
  EXPECT_NE(message.find("more lines of compiler output]"), std::string::npos) << message;
  EXPECT_NE(message.find("undeclared_0"), std::string::npos);
  EXPECT_EQ(message.find("undeclared_79"), std::string::npos);
}

TEST(BuildModules, MissingNvccNamesTheSetting) {
  ScopedCache scope("no-nvcc");
  Settings s = settings();
  s.nvcc = "/nonexistent/bin/nvcc";
  set_settings(s);
  Result<CompiledModule> built = build_module(tiny_request("x", "no-nvcc"), nullptr);
  ASSERT_FALSE(built);
  EXPECT_NE(built.status().message().find("TILECRAFT_NVCC"), std::string::npos);
  EXPECT_NE(built.status().message().find("/nonexistent/bin/nvcc"), std::string::npos);

  s.nvcc = "";
  set_settings(s);
  built = build_module(tiny_request("x", "no-nvcc"), nullptr);
  ASSERT_FALSE(built);
  EXPECT_NE(built.status().message().find("searched"), std::string::npos);
  EXPECT_NE(built.status().message().find("TILECRAFT_NVCC"), std::string::npos);
}

TEST(BuildModules, MissingCutlassNamesTheSetting) {
  ScopedCache scope("no-cutlass");
  Settings s = settings();
  s.cutlass_dir = scope.dir() + "/no-cutlass-here";
  set_settings(s);
  Result<CompiledModule> built = build_module(tiny_request("x", "no-cutlass"), nullptr);
  ASSERT_FALSE(built);
  EXPECT_EQ(built.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(built.status().message().find("TILECRAFT_CUTLASS_DIR"), std::string::npos);
  EXPECT_NE(built.status().message().find(s.cutlass_dir), std::string::npos);

  // Set through CUTLASS_DIR, to an empty folder: the error names CUTLASS_DIR, what the user set.
  fs::create_directories(scope.dir() + "/empty");
  s.cutlass_dir = scope.dir() + "/empty";
  s.cutlass_dir_variable = "CUTLASS_DIR";
  set_settings(s);
  built = build_module(tiny_request("x", "no-cutlass"), nullptr);
  ASSERT_FALSE(built);
  EXPECT_EQ(built.status().message().rfind("CUTLASS_DIR: expected a folder holding "
                                           "include/cutlass/version.h, got '" +
                                               s.cutlass_dir + "' from CUTLASS_DIR",
                                           0),
            0u)
      << built.status().message();
}

TEST(BuildModules, RelativeOrUnfoundNvccIsRefusedNamingTheSetting) {
  ScopedCache scope("relative-nvcc");
  Settings s = settings();
  s.nvcc = "nvcc-not-on-any-path";
  set_settings(s);
  Result<CompiledModule> built = build_module(tiny_request("x", "relative-nvcc"), nullptr);
  ASSERT_FALSE(built);
  EXPECT_NE(built.status().message().find("TILECRAFT_NVCC: expected an executable nvcc"),
            std::string::npos)
      << built.status().message();
  EXPECT_NE(built.status().message().find("is not on PATH"), std::string::npos);
}

TEST(BuildModules, EmptySourceIsInvalid) {
  ScopedCache scope("empty");
  CompileRequest request = tiny_request("empty", "x");
  request.source.clear();
  Result<CompiledModule> built = build_module(request, nullptr);
  ASSERT_FALSE(built);
  EXPECT_EQ(built.status().code(), StatusCode::kInvalidArgument);
}

TEST(BuildModules, ParallelBuildReturnsResultsInRequestOrder) {
  ScopedCache scope("parallel", 4);  // two module builds at once
  std::string marker = unique_marker("parallel");
  std::vector<CompileRequest> requests = {tiny_request("first", marker, 1),
                                          tiny_request("second", marker, 2),
                                          tiny_request("third", marker, 3)};
  std::vector<std::string> lines;
  auto started = std::chrono::steady_clock::now();
  std::vector<Result<CompiledModule>> results =
      build_modules(requests, [&lines](std::string_view line) { lines.emplace_back(line); });
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ASSERT_EQ(results.size(), 3u);
  for (size_t i = 0; i < results.size(); ++i) {
    ASSERT_TRUE(results[i]) << results[i].status().message();
    EXPECT_FALSE(results[i]->from_cache);
    EXPECT_EQ(results[i]->key, cache_key(requests[i]));
    EXPECT_EQ(read_file(fs::path(results[i]->path).parent_path() / "source.cu"),
              requests[i].source);
  }
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "tilecraft: compiling 3 kernels with 2 parallel jobs (cache miss)");
  int progress_lines = 0;
  for (const std::string& line : lines) {
    progress_lines += line.find("/3] compiled ") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(progress_lines, 3);
  EXPECT_EQ(lines.back().rfind("tilecraft: [3/3] compiled ", 0), 0u) << lines.back();
  double serial = 0;
  for (const auto& result : results) serial += result->compile_seconds;
  EXPECT_LT(seconds, serial) << "two jobs should overlap";

  // Built again (one new request among them): only the new one compiles.
  requests.push_back(tiny_request("fourth", marker, 4));
  lines.clear();
  results = build_modules(requests, [&lines](std::string_view line) { lines.emplace_back(line); });
  ASSERT_EQ(results.size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(results[i]->from_cache);
  EXPECT_FALSE(results[3]->from_cache);
  EXPECT_EQ(lines.front(), "tilecraft: compiling 1 kernel with 1 parallel job (cache miss)");
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::compile
