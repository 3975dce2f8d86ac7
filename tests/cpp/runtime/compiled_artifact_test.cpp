// CompiledArtifact: an operation's kernel saved to one file and loaded again, here and in a child
// process that has no nvcc. One small SM80 kernel is compiled with nvcc for the suite (skipped,
// with the reason, without nvcc or CUTLASS); the checks of malformed files need no compiler.
#include "tilecraft/runtime/compiled_artifact.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compile/process.hpp"
#include "compile/test_support.hpp"
#include "compile_tests.hpp"
#include "runtime/simt_kernel.hpp"
#include "tilecraft/runtime/module.hpp"
#include "tilecraft/tilecraft.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;
using compile::testing::make_temp_dir;
using compile::testing::read_file;
using compile::testing::ScopedCache;
using compile::testing::write_file;
using runtime_test::missing_toolchain;
using runtime_test::simt_f32;

// A row-major problem the kernel can run, for can_implement (host code: no GPU needed).
tc_gemm_args row_major_problem(int m, int n, int k) {
  tc_gemm_args args{};
  args.header.family = TC_FAMILY_GEMM;
  args.header.family_version = TC_GEMM_ARGS_VERSION;
  args.mode = TC_GEMM_MODE_GEMM;
  args.m = m;
  args.n = n;
  args.k = k;
  args.batch_count = 1;
  args.lda = k;
  args.ldb = n;
  args.ldc = args.ldd = n;
  args.header.alpha = 1.0;
  return args;
}

int32_t can_implement(const tc_kernel_entry& entry, const tc_gemm_args& args) {
  char error[512] = "";
  return entry.can_implement(&args.header, error, sizeof(error));
}

struct HeaderLines {
  std::string format = "1";
  std::string abi = std::to_string(TILECRAFT_ABI_VERSION);
  std::string kernel = "some_kernel";
  std::string metadata = "arch=80;";
  std::string arch = "80";
};

// An artifact file as the format specifies it, recording the payload's true size and sha256.
std::string artifact_bytes(const std::string& payload, const HeaderLines& header = {}) {
  return "tilecraft-artifact\nformat " + header.format + "\nabi " + header.abi + "\nkernel " +
         header.kernel + "\nmetadata " + header.metadata + "\narch " + header.arch +
         "\npayload-bytes " + std::to_string(payload.size()) + "\npayload-sha256 " +
         compile::sha256_hex(payload) + "\n\n" + payload;
}

// Runs CompiledArtifact::load on a file of the given bytes and returns its error text.
std::string load_error(const std::string& bytes) {
  const std::string dir = make_temp_dir("artifact-bad");
  const std::string path = dir + "/bad.tca";
  write_file(path, bytes);
  Result<CompiledArtifact> loaded = CompiledArtifact::load(path);
  fs::remove_all(dir);
  EXPECT_FALSE(loaded) << "loaded " << path;
  return loaded ? "" : loaded.status().message();
}

TEST(CompiledArtifact, LoadNamesAMissingFile) {
  Result<CompiledArtifact> loaded = CompiledArtifact::load("/nonexistent/tilecraft/x.tca");
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.status().message(),
            "artifact: cannot open /nonexistent/tilecraft/x.tca: No such file or directory");
}

// Found by the randomized test of the Python surfaces: a directory gave an internal error.
TEST(CompiledArtifact, LoadNamesADirectoryAsTheCallersMistake) {
  const std::string dir = make_temp_dir("artifact-dir");
  Result<CompiledArtifact> loaded = CompiledArtifact::load(dir);
  fs::remove_all(dir);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(loaded.status().message(), "artifact: " + dir + " is not a file (a directory)");
}

TEST(CompiledArtifact, LoadRejectsAFileWithoutTheMagic) {
  const std::string dir = make_temp_dir("artifact-magic");
  const std::string path = dir + "/y.tca";
  write_file(path,
             "\x7f"
             "ELF not an artifact");
  Result<CompiledArtifact> loaded = CompiledArtifact::load(path);
  fs::remove_all(dir);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(loaded.status().message(),
            "artifact: " + path + " is not a tilecraft artifact (bad magic)");
}

TEST(CompiledArtifact, LoadRejectsAnotherAbiVersion) {
  HeaderLines header;
  header.abi = "2";
  const std::string error = load_error(artifact_bytes("payload", header));
  EXPECT_NE(error.find(": built for ABI version 2, this library speaks " +
                       std::to_string(TILECRAFT_ABI_VERSION)),
            std::string::npos)
      << error;
}

TEST(CompiledArtifact, LoadRejectsAnotherFormatVersion) {
  HeaderLines header;
  header.format = "2";
  const std::string error = load_error(artifact_bytes("payload", header));
  EXPECT_NE(error.find(": file format version 2, this library reads version 1"), std::string::npos)
      << error;
}

TEST(CompiledArtifact, LoadRejectsATruncatedPayload) {
  std::string bytes = artifact_bytes(std::string(1000, 'x'));
  bytes.resize(bytes.size() - 10);
  const std::string error = load_error(bytes);
  EXPECT_NE(error.find(": payload sha256 mismatch (file truncated or corrupt): the header records "
                       "1000 bytes with sha256 "),
            std::string::npos)
      << error;
  EXPECT_NE(error.find(", the file holds 990 bytes with sha256 "), std::string::npos) << error;
}

TEST(CompiledArtifact, LoadRejectsMalformedHeaders) {
  HeaderLines bad_arch;
  bad_arch.arch = "sm80";
  EXPECT_NE(load_error(artifact_bytes("p", bad_arch))
                .find(": the header's 'arch' must be a non-negative integer, got 'sm80'"),
            std::string::npos);
  EXPECT_NE(load_error("tilecraft-artifact\nformat 1\nabi " +
                       std::to_string(TILECRAFT_ABI_VERSION) + "\n\npayload")
                .find(": the header has no 'kernel' line"),
            std::string::npos);
  EXPECT_NE(load_error("tilecraft-artifact\nformat 1\n").find(": the header does not end"),
            std::string::npos);
}

// The child half of CompiledArtifactModule.LoadsInAProcessWithoutNvcc: runs only when that test
// starts this binary with TILECRAFT_TEST_ARTIFACT set, and writes what it loaded to a report.
TEST(CompiledArtifactChild, LoadsWithoutCompiler) {
  const char* artifact = std::getenv("TILECRAFT_TEST_ARTIFACT");
  const char* report = std::getenv("TILECRAFT_TEST_ARTIFACT_REPORT");
  if (!artifact || !report) {
    GTEST_SKIP() << "runs only as a child of CompiledArtifactModule.LoadsInAProcessWithoutNvcc";
  }
  ASSERT_NE(access(settings().nvcc.c_str(), X_OK), 0) << "nvcc is reachable: " << settings().nvcc;
  Result<CompiledArtifact> loaded = CompiledArtifact::load(artifact);
  ASSERT_TRUE(loaded) << loaded.status().message();
  EXPECT_EQ(can_implement(*loaded->entry(), row_major_problem(256, 256, 64)), TC_OK);
  auto operation = simt_f32();
  ASSERT_TRUE(operation->use_artifact(*loaded));
  Result<const tc_kernel_entry*> entry = operation->entry(GemmMode::Gemm);
  ASSERT_TRUE(entry) << entry.status().message();
  EXPECT_EQ(*entry, loaded->entry());
  write_file(report, loaded->kernel_name() + "\n" + loaded->entry()->metadata + "\n" +
                         std::to_string(loaded->arch()) + "\n" + loaded->module()->path() + "\n");
}

// PATH without the folders that hold an nvcc.
std::string path_without_nvcc() {
  std::stringstream all(std::getenv("PATH") ? std::getenv("PATH") : "");
  std::string kept, folder;
  while (std::getline(all, folder, ':')) {
    if (folder.empty() || access((folder + "/nvcc").c_str(), X_OK) == 0) continue;
    kept += (kept.empty() ? "" : ":") + folder;
  }
  return kept;
}

// The suite compiles the kernel once (into the cache this binary's processes share) and saves its
// artifact into a fresh cache; it runs with TILECRAFT_COMPILE_TESTS=standard or full (ctest's
// parallel processes wait on the one compile, ten minutes on a slow two-core machine).
class CompiledArtifactModule : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_reason_ = compile_tests::skip_unless(compile_tests::Level::standard,
                                              "the artifact suite's SIMT kernel");
    if (skip_reason_.empty()) skip_reason_ = missing_toolchain();
    if (!skip_reason_.empty()) return;
    cache_ = std::make_unique<ScopedCache>("artifact");
    operation_ = simt_f32();
    // ctest runs each test of the suite in a process of its own: they share one compile.
    Result<CompiledArtifact> artifact = [] {
      compile::testing::SharedKernelCache shared;
      return CompiledArtifact::of(*operation_);
    }();
    if (!artifact) {
      failure_ = "compiling: " + artifact.status().message();
      return;
    }
    artifact_.emplace(std::move(*artifact));
    saved_path_ = cache_->dir() + "/simt_f32.tca";
    if (Status saved = artifact_->save(saved_path_); !saved) failure_ = saved.message();
  }
  static void TearDownTestSuite() {
    artifact_.reset();
    operation_.reset();
    cache_.reset();
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_TRUE(failure_.empty()) << failure_;
  }

  static const CompiledArtifact& artifact() { return *artifact_; }
  static std::string payload() { return read_file(artifact_->module()->path()); }

  static inline std::string skip_reason_;
  static inline std::string failure_;
  static inline std::unique_ptr<ScopedCache> cache_;
  static inline std::shared_ptr<GemmOperation> operation_;
  static inline std::optional<CompiledArtifact> artifact_;
  static inline std::string saved_path_;
};

TEST_F(CompiledArtifactModule, OfGivesTheOperationsUniversalKernel) {
  EXPECT_EQ(artifact().kernel_name(), operation_->procedural_name());
  EXPECT_EQ(artifact().arch(), 80);
  ASSERT_NE(artifact().entry(), nullptr);
  EXPECT_EQ(std::string(artifact().entry()->name), artifact().kernel_name());
  EXPECT_NE(std::string(artifact().entry()->metadata).find("arch=80;"), std::string::npos);
  EXPECT_EQ(artifact().module()->find(artifact().kernel_name()), artifact().entry());
}

TEST_F(CompiledArtifactModule, SaveWritesTheHeaderThenTheModule) {
  HeaderLines header;
  header.kernel = artifact().kernel_name();
  header.metadata = artifact().entry()->metadata;
  EXPECT_EQ(read_file(saved_path_), artifact_bytes(payload(), header));
  for (const auto& entry : fs::directory_iterator(fs::path(saved_path_).parent_path())) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
        << "a temporary file was left: " << entry.path();
  }
}

TEST_F(CompiledArtifactModule, LoadRoundTripsInThisProcess) {
  Result<CompiledArtifact> loaded = CompiledArtifact::load(saved_path_);
  ASSERT_TRUE(loaded) << loaded.status().message();
  EXPECT_EQ(loaded->kernel_name(), artifact().kernel_name());
  EXPECT_EQ(loaded->arch(), 80);
  EXPECT_STREQ(loaded->entry()->metadata, artifact().entry()->metadata);
  EXPECT_EQ(loaded->module()->path(),
            cache_->cache_dir() + "/artifacts/" + compile::sha256_hex(payload()) + ".so");
  EXPECT_NE(loaded->module()->path(), artifact().module()->path());
  EXPECT_EQ(can_implement(*loaded->entry(), row_major_problem(256, 256, 64)), TC_OK);

  Result<CompiledArtifact> again = CompiledArtifact::load(saved_path_);
  ASSERT_TRUE(again) << again.status().message();
  EXPECT_EQ(again->module(), loaded->module());
  EXPECT_EQ(again->entry(), loaded->entry());
}

TEST_F(CompiledArtifactModule, LoadsInAProcessWithoutNvcc) {
  const std::string report = cache_->dir() + "/child-report";
  const std::string child_cache = cache_->dir() + "/child-cache";
  // TILECRAFT_NVCC names a missing file so that the fallbacks (CUDA_HOME, /usr/local/cuda) find
  // no compiler either.
  Result<compile::ProcessResult> child = compile::run_process(
      {"/proc/self/exe", "--gtest_filter=CompiledArtifactChild.LoadsWithoutCompiler"},
      {"TILECRAFT_TEST_ARTIFACT=" + saved_path_, "TILECRAFT_TEST_ARTIFACT_REPORT=" + report,
       "PATH=" + path_without_nvcc(), "TILECRAFT_NVCC=" + cache_->dir() + "/no-nvcc-here",
       "CUDA_HOME=", "CUDA_PATH=", "CUDA_INSTALL_PATH=", "TILECRAFT_CACHE_DIR=" + child_cache,
       "TILECRAFT_QUIET=1"});
  ASSERT_TRUE(child) << child.status().message();
  ASSERT_EQ(child->exit_code, 0) << child->output;
  const std::string module_path =
      child_cache + "/artifacts/" + compile::sha256_hex(payload()) + ".so";
  EXPECT_EQ(read_file(report), artifact().kernel_name() + "\n" + artifact().entry()->metadata +
                                   "\n80\n" + module_path + "\n")
      << child->output;
}

TEST_F(CompiledArtifactModule, UseArtifactAttachesTheKernel) {
  Result<CompiledArtifact> loaded = CompiledArtifact::load(saved_path_);
  ASSERT_TRUE(loaded) << loaded.status().message();
  auto operation = simt_f32();
  ASSERT_FALSE(operation->is_compiled());
  ASSERT_TRUE(operation->use_artifact(*loaded));
  EXPECT_TRUE(operation->is_compiled());
  Result<const tc_kernel_entry*> entry = operation->entry(GemmMode::Gemm);
  ASSERT_TRUE(entry) << entry.status().message();
  EXPECT_EQ(*entry, loaded->entry());
}

TEST_F(CompiledArtifactModule, UseArtifactRejectsAnotherOperation) {
  auto column_major_b = simt_f32(Layout::ColumnMajor);
  Status used = column_major_b->use_artifact(artifact());
  ASSERT_FALSE(used);
  EXPECT_EQ(used.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(used.message(), "use_artifact: the artifact holds kernel " + artifact().kernel_name() +
                                ", but this operation is " + column_major_b->procedural_name());
  EXPECT_FALSE(column_major_b->is_compiled());
}

TEST_F(CompiledArtifactModule, LoadRejectsATruncatedSavedFile) {
  std::string bytes = read_file(saved_path_);
  bytes.resize(bytes.size() / 2);
  const std::string error = load_error(bytes);
  EXPECT_NE(error.find(": payload sha256 mismatch (file truncated or corrupt)"), std::string::npos)
      << error;
}

TEST_F(CompiledArtifactModule, LoadRejectsAKernelTheModuleLacks) {
  HeaderLines header;
  header.kernel = "not_in_this_module";
  header.metadata = artifact().entry()->metadata;
  const std::string error = load_error(artifact_bytes(payload(), header));
  EXPECT_NE(error.find(": module has no entry named not_in_this_module (its entries: " +
                       artifact().kernel_name() + ")"),
            std::string::npos)
      << error;
}

TEST_F(CompiledArtifactModule, UnusableCacheLoadsFromAPrivateTemporaryFolder) {
  ScopedCache scope("artifact-unusable");
  write_file(scope.dir() + "/a-file", "");
  scope.set_cache_dir(scope.dir() + "/a-file/cache");  // cannot be created, even by root
  Result<CompiledArtifact> loaded = CompiledArtifact::load(saved_path_);
  ASSERT_TRUE(loaded) << loaded.status().message();
  EXPECT_EQ(loaded->kernel_name(), artifact().kernel_name());
  const std::string path = loaded->module()->path();
  EXPECT_EQ(path.rfind(scope.dir(), 0), std::string::npos) << path;
  EXPECT_EQ(path.rfind(fs::temp_directory_path().string(), 0), 0u) << path;
}

// Runs the loaded kernel on a GPU and checks every element.
TEST_F(CompiledArtifactModule, LoadedKernelRunsOnAGpu) {
  if (Status status = cuda_device_available(); !status) {
    GTEST_SKIP() << "no GPU: " << status.message();
  }
  Result<CompiledArtifact> loaded = CompiledArtifact::load(saved_path_);
  ASSERT_TRUE(loaded) << loaded.status().message();
  auto operation = simt_f32();
  ASSERT_TRUE(operation->use_artifact(*loaded));
  const GemmCoord size{37, 91, 13};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> values(-4, 4);
  std::vector<float> A(size.m * size.k), B(size.k * size.n), C(size.m * size.n),
      D(size.m * size.n, std::nanf(""));
  for (auto* v : {&A, &B, &C}) {
    for (float& x : *v) x = static_cast<float>(values(rng));
  }
  GemmProblem problem;
  problem.problem_size = size;
  problem.A = TensorView::host_contiguous(A.data(), DataType::f32, {size.m, size.k});
  problem.B = TensorView::host_contiguous(B.data(), DataType::f32, {size.k, size.n});
  problem.C = TensorView::host_contiguous(C.data(), DataType::f32, {size.m, size.n});
  problem.D = TensorView::host_contiguous(D.data(), DataType::f32, {size.m, size.n});
  problem.output_op = operation->epilogue_type(1.0, 1.0).value();
  auto args = GemmArguments::make(*operation, problem);
  ASSERT_TRUE(args) << args.status().message();
  ASSERT_TRUE(operation->run(**args));
  Status synced = (*args)->sync();
  ASSERT_TRUE(synced) << synced.message();
  int mismatches = 0;
  for (int i = 0; i < size.m; ++i) {
    for (int j = 0; j < size.n; ++j) {
      double expected = C[i * size.n + j];
      for (int k = 0; k < size.k; ++k) expected += double(A[i * size.k + k]) * B[k * size.n + j];
      mismatches += double(D[i * size.n + j]) != expected ? 1 : 0;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
