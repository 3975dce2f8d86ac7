// A kernel loaded once in a process serves every later operation with the same description,
// including kernels that were compiled together in one translation unit (which the disk cache
// keeps under the unit's key, not the kernel's own).
#include <gtest/gtest.h>

#include "compile/test_support.hpp"
#include "runtime/simt_kernel.hpp"
#include "tilecraft/tilecraft.hpp"

namespace tilecraft {
namespace {

TEST(LoadedKernels, AKernelBuiltInASharedUnitIsFoundAgainByDescription) {
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

}  // namespace
}  // namespace tilecraft
