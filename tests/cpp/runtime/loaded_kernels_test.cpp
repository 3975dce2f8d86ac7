// A kernel loaded once in a process serves every later operation with the same description,
// including kernels that were compiled together in one translation unit (which the disk cache
// keeps under the unit's key, not the kernel's own). Each test compiles a module of its own: they
// run with TILECRAFT_COMPILE_TESTS=standard or full (ten minutes of nvcc each on a slow two-core
// machine, where scripts/test.sh picks few).
#include <gtest/gtest.h>

#include "compile/process.hpp"
#include "compile/test_support.hpp"
#include "compile_tests.hpp"
#include "emit/emit_test_descriptions.hpp"
#include "emit/sm90_test_descriptions.hpp"
#include "runtime/simt_kernel.hpp"
#include "tilecraft/compile/artifact_cache.hpp"
#include "tilecraft/core/program_path.hpp"
#include "tilecraft/emit/gemm_emitter.hpp"
#include "tilecraft/runtime/module.hpp"
#include "tilecraft/tilecraft.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

TEST(LoadedKernels, AKernelBuiltInASharedUnitIsFoundAgainByDescription) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "two SIMT kernels in one unit");
  const std::string missing = runtime_test::missing_toolchain();
  if (!missing.empty()) GTEST_SKIP() << missing;
  compile::testing::ScopedCache cache("loaded-kernels", /*compile_jobs=*/1);
  // Three stages: descriptions no other test in this process compiles.
  auto row = runtime_test::simt_f32(Layout::RowMajor, 3);
  auto column = runtime_test::simt_f32(Layout::ColumnMajor, 3);
  // One compile job and two kernels: they share one translation unit.
  ASSERT_TRUE(compile_operations({row, column}));
  const tc_kernel_entry* built = row->entry(GemmMode::Gemm).value();
  ASSERT_NE(built, nullptr);

  // A fresh, empty cache: anything not found in this process would be compiled anew, into a
  // module at another path, with another entry address.
  cache.set_cache_dir(cache.dir() + "/empty-cache");
  auto again = runtime_test::simt_f32(Layout::RowMajor, 3);
  EXPECT_FALSE(again->is_compiled());
  auto entry = again->entry(GemmMode::Gemm);
  ASSERT_TRUE(entry) << entry.status().message();
  EXPECT_EQ(*entry, built);
  ASSERT_TRUE(compile_operations({runtime_test::simt_f32(Layout::ColumnMajor, 3)}));
}

// Kernels compiled together in one unit are found in the disk cache when later asked for alone
// (a later process, or other company): the unit's module, not a new compile of the kernel.
TEST(LoadedKernels, AKernelBuiltInASharedUnitIsFoundOnDiskWhenAskedForAlone) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "two SIMT kernels in one unit");
  const std::string missing = runtime_test::missing_toolchain();
  if (!missing.empty()) GTEST_SKIP() << missing;
  compile::testing::ScopedCache cache("unit-alias", /*compile_jobs=*/1);
  auto row = runtime_test::simt_f32(Layout::RowMajor, 5);
  auto column = runtime_test::simt_f32(Layout::ColumnMajor, 5);
  ASSERT_TRUE(compile_operations({row, column}));

  for (const auto& op : {row, column}) {
    const emit::GemmEntry entry{op->description(), emit::GemmEntryKind::kUniversal};
    compile::CompileRequest alone;
    alone.name = emit::entry_name(entry);
    alone.source = emit::emit_gemm_module({entry});
    alone.arch_flags = emit::gemm_module_arch_flags(op->description().arch);
    std::optional<compile::CompiledModule> found = compile::find_cached_modules({alone}).front();
    ASSERT_TRUE(found) << alone.name;
    EXPECT_TRUE(found->shared_unit);
    // The module found is the one the operation runs (loading is per path): same entry.
    auto module = LoadedModule::load(found->path);
    ASSERT_TRUE(module) << module.status().message();
    EXPECT_EQ((*module)->find(alone.name), op->entry(GemmMode::Gemm).value());
  }
}

// More kernels than compile jobs: kernels share translation units, but a unit holds one arch.
// (An SM80 and an SM90 convolution once landed in one unit, which the emitter refused.)
TEST(LoadedKernels, ConvolutionsOfTwoArchsCompiledTogetherTakeUnitsOfTheirOwn) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "an SM80 and an SM90 convolution");
  const std::string missing = runtime_test::missing_toolchain();
  if (!missing.empty()) GTEST_SKIP() << missing;
  compile::testing::ScopedCache cache("conv-archs", /*compile_jobs=*/1);
  using enum DataType;
  const GemmDescription simt = emit::testing::simt_f32_seed();
  TensorDescription a = simt.A, b = simt.B, c = simt.C;
  a.layout = b.layout = c.layout = Layout::TensorNHWC;
  auto sm80 = GemmDescription::make_conv2d(ConvKind::Wgrad, IteratorAlgorithm::Analytic, 80,
                                           simt.tile, a, b, c, StrideSupport::Strided,
                                           simt.epilogue, Swizzle::IdentitySwizzle1);
  ASSERT_TRUE(sm80) << sm80.status().message();
  const MathInstruction m = sm90_test::wgmma({64, 64, 16}, f16, f16, f32);
  auto sm90 = GemmDescription::make_conv2d(
      ConvKind::Fprop, IteratorAlgorithm::Optimized, 90,
      sm90_test::tile({64, 64, 64}, m, 0, {1, 1, 1}, KernelSchedule::TmaWarpSpecialized),
      sm90_test::tma(f16, Layout::TensorNHWC), sm90_test::tma(f16, Layout::TensorNHWC),
      sm90_test::tma(f16, Layout::TensorNHWC), StrideSupport::Strided,
      sm90_test::epilogue(f16, f32), Swizzle::IdentitySwizzle1);
  ASSERT_TRUE(sm90) << sm90.status().message();
  auto first = GemmOperation::make(*sm80);
  auto second = GemmOperation::make(*sm90);
  ASSERT_TRUE(first && second);
  const std::vector<std::shared_ptr<GemmOperation>> operations{first.value(), second.value()};
  const std::vector<Status> built = compile_each_operation(operations);
  ASSERT_EQ(built.size(), 2u);
  EXPECT_TRUE(built[0]) << built[0].message();
  EXPECT_TRUE(built[1]) << built[1].message();
}

// ROB-1: a module in the cache that verifies but cannot be loaded (here a shared object exporting
// no kernel table, as the audit imported one) is a miss that compiles again, never a lasting error.
TEST(LoadedKernels, ACachedModuleThatCannotBeLoadedIsCompiledAgain) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "a SIMT kernel compiled again");
  const std::string missing = runtime_test::missing_toolchain();
  if (!missing.empty()) GTEST_SKIP() << missing;
  const std::string gxx = find_program_on_path("g++");
  if (gxx.empty()) GTEST_SKIP() << "no g++ on PATH to build the unloadable module";
  compile::testing::ScopedCache cache("unloadable", /*compile_jobs=*/1);
  auto op = runtime_test::simt_f32(Layout::RowMajor, 6);  // no other test compiles it
  const emit::GemmEntry entry{op->description(), emit::GemmEntryKind::kUniversal};
  compile::CompileRequest request;
  request.name = emit::entry_name(entry);
  request.source = emit::emit_gemm_module({entry});
  request.arch_flags = emit::gemm_module_arch_flags(80);
  const std::string key = compile::cache_key(request);

  const std::string empty = cache.dir() + "/empty.cpp";
  compile::testing::write_file(empty, "int tilecraft_test_nothing_here() { return 0; }\n");
  auto made = compile::run_process({gxx, "-shared", "-fPIC", "-o", cache.dir() + "/x.so", empty});
  ASSERT_TRUE(made && made->exit_code == 0) << (made ? made->output : made.status().message());
  const std::string planted = compile::testing::read_file(cache.dir() + "/x.so");
  compile::ArtifactCache store = compile::ArtifactCache::open(settings());
  auto build = store.make_build_dir(key);
  ASSERT_TRUE(build) << build.status().message();
  compile::testing::write_file(build->path() + "/module.so", planted);
  compile::testing::write_file(build->path() + "/source.cu", request.source);
  ASSERT_TRUE(store.commit(key, *build, "planted"));
  ASSERT_TRUE(store.lookup(key).module_path) << "signed as valid, as an import would be";

  Status compiled = compile_operations({op});
  ASSERT_TRUE(compiled) << compiled.message();
  EXPECT_TRUE(op->is_compiled());
  const compile::LookupResult rebuilt = store.lookup(key);
  ASSERT_TRUE(rebuilt.module_path) << rebuilt.invalid_reason;
  EXPECT_NE(compile::testing::read_file(*rebuilt.module_path), planted);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
