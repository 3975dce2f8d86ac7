// build_modules and cache_key: keys, compile errors, missing tools, parallel builds.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "compile/test_support.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::compile {
namespace {

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
  ScopedCache scope("parallel", 2);
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

}  // namespace
}  // namespace tilecraft::compile
