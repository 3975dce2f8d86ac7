// KernelFacts: ptxas's resource usage parsed, the facts index on real files, and the ranking
// rule that a kernel that spills never comes first when one that does not is listed.
#include "tilecraft/compile/kernel_facts.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "../discover/fake_device_views.hpp"
#include "compile/test_support.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/discover/api.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;

// As nvcc 13's ptxas prints it (nvcc -fatbin --resource-usage), with a second architecture for
// tc_kernel_0 and lines that must be ignored.
constexpr const char* kPtxasOutput =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'tc_kernel_1' for 'sm_90a'\n"
    "ptxas info    : Function properties for tc_kernel_1\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 0 barriers, 128 bytes smem\n"
    "ptxas info    : Compile time = 26.239 ms\n"
    "source.cu(12): warning: something unrelated\n"
    "ptxas info    : Compiling entry function 'tc_kernel_0' for 'sm_80'\n"
    "ptxas info    : Function properties for tc_kernel_0\n"
    "    96 bytes stack frame, 88 bytes spill stores, 120 bytes spill loads\n"
    "ptxas info    : Used 255 registers, used 1 barriers, 384 bytes cmem[0]\n"
    "ptxas info    : Compiling entry function 'tc_kernel_0' for 'sm_86'\n"
    "ptxas info    : Function properties for tc_kernel_0\n"
    "    16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
    "ptxas info    : Used 200 registers, used 1 barriers, 384 bytes cmem[0]\n"
    "ptxas info    : Function properties for _ZN7cutlass4arch12synclog_printEv\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";

TEST(KernelFacts, ParsesPtxasResourceUsagePerKernel) {
  const std::string kept = resource_usage_lines(kPtxasOutput);
  EXPECT_EQ(kept.find("warning"), std::string::npos);
  const auto facts = parse_resource_usage(kept);
  ASSERT_EQ(facts.size(), 2u) << "a device function without a register line is no kernel";
  const KernelFacts& one = facts.at("tc_kernel_1");
  EXPECT_EQ(one.source, KernelFacts::Source::compiler);
  EXPECT_EQ(one.registers, 10);
  EXPECT_EQ(one.static_smem_bytes, 128);
  EXPECT_EQ(one.spill_store_bytes, 0);
  EXPECT_FALSE(one.spills());
  const KernelFacts& zero = facts.at("tc_kernel_0");  // the larger of its two architectures
  EXPECT_EQ(zero.registers, 255);
  EXPECT_EQ(zero.stack_bytes, 96);
  EXPECT_EQ(zero.spill_store_bytes, 88);
  EXPECT_EQ(zero.spill_load_bytes, 120);
  EXPECT_EQ(zero.static_smem_bytes, 0);
  EXPECT_TRUE(zero.spills());
  EXPECT_EQ(zero.text().rfind("registers=255 spill_stores=88 spill_loads=120 stack=96", 0), 0u)
      << zero.text();
  EXPECT_TRUE(parse_resource_usage("").empty());
  EXPECT_TRUE(parse_resource_usage("garbage\nptxas info : Used registers\n").empty());
}

class FactsIndexTest : public ::testing::Test {
 protected:
  // A fresh cache folder for the test; the settings come back afterwards.
  compile::testing::ScopedCache cache_{"facts"};
  const std::string dir_ = cache_.cache_dir();
};

TEST_F(FactsIndexTest, RecordsSurviveAndDamagedRecordsReadAsUnknown) {
  EXPECT_FALSE(compiled_kernel_facts("kernel_a").has_value());
  KernelFacts facts = parse_resource_usage(kPtxasOutput).at("tc_kernel_0");
  record_kernel_facts("kernel_a", facts);
  record_kernel_facts("kernel_b", parse_resource_usage(kPtxasOutput).at("tc_kernel_1"));
  // What another process reads: the files, not this process's memory.
  Settings s = settings();
  s.cache_dir = dir_ + "/../" + fs::path(dir_).filename().string();
  set_settings(s);
  auto a = compiled_kernel_facts("kernel_a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->registers, 255);
  EXPECT_EQ(a->spill_store_bytes, 88);
  EXPECT_TRUE(a->spills());
  ASSERT_TRUE(compiled_kernel_facts("kernel_b").has_value());
  EXPECT_FALSE(compiled_kernel_facts("kernel_c").has_value());
  int damaged = 0;
  for (const auto& file : fs::directory_iterator(dir_ + "/facts/v1")) {
    std::ofstream(file.path(), std::ios::trunc)
        << "tilecraft-kernel-facts 1\nkernel kernel_a\nregis";
    ++damaged;
  }
  EXPECT_EQ(damaged, 2);
  s.cache_dir = dir_;
  set_settings(s);
  EXPECT_FALSE(compiled_kernel_facts("kernel_a").has_value());
  EXPECT_FALSE(compiled_kernel_facts("kernel_b").has_value()) << "a record under another name";
}

// Facts steer the ranking, so they are trusted like modules: a record written without this user's
// signing key (planted, or by another user) reads as unknown, and so does a fifo, which is never
// opened in a way that blocks (HANG-1).
TEST_F(FactsIndexTest, UnsignedRecordsAndFifosReadAsUnknownAtOnce) {
  record_kernel_facts("kernel_a", parse_resource_usage(kPtxasOutput).at("tc_kernel_0"));
  std::vector<fs::path> files;
  for (const auto& file : fs::directory_iterator(dir_ + "/facts/v1")) files.push_back(file.path());
  ASSERT_EQ(files.size(), 1u);
  const std::string signed_text = compile::testing::read_file(files[0].string());
  Settings s = settings();
  s.signing_key_file = cache_.dir() + "/another-user/signing-key";
  s.cache_dir = dir_ + "/../" + fs::path(dir_).filename().string();
  set_settings(s);
  EXPECT_FALSE(compiled_kernel_facts("kernel_a").has_value()) << "signed with another key";

  std::ofstream(files[0], std::ios::trunc) << signed_text.substr(0, signed_text.find("hmac"));
  s.cache_dir = dir_ + "/./";
  set_settings(s);
  EXPECT_FALSE(compiled_kernel_facts("kernel_a").has_value()) << "no signature at all";

  fs::remove(files[0]);
  ASSERT_EQ(mkfifo(files[0].c_str(), 0600), 0);
  s.cache_dir = dir_ + "/.";
  set_settings(s);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(compiled_kernel_facts("kernel_a").has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

using api::testing::cuda;
using api::testing::transposed;

api::GemmArguments fp8_arguments(bool fast_accum) {
  api::EpilogueArguments e;
  e.scale_a = ScaleArgument{true, 0.5, {}};
  e.scale_b = ScaleArgument{true, 2.0, {}};
  auto args = api::GemmArguments::make(
      cuda(DataType::e4m3, {4096, 4096}), transposed(cuda(DataType::e4m3, {4096, 4096})),
      cuda(DataType::bf16, {4096, 4096}), DataType::f32, e, fast_accum);
  EXPECT_TRUE(args) << args.status().message();
  return *args;
}

TEST(KernelFactsRanking, SpillingKernelsNeverRankFirstAndFastAccumulationIsAskedFor) {
  for (bool fast : {false, true}) {
    const api::GemmArguments args = fp8_arguments(fast);
    const auto kernels = api::get_kernels(&args, {}, 90);
    ASSERT_FALSE(kernels.empty());
    bool any_clean = false, any_fast = false;
    for (const auto& k : kernels) {
      EXPECT_TRUE(k.metadata().facts.known()) << k.metadata().kernel_name;
      any_clean = any_clean || !k.metadata().facts.spills();
      any_fast = any_fast || k.description().tile.math_instruction.math_operation ==
                                 MathOperation::multiply_add_fast_accum;
    }
    ASSERT_TRUE(any_clean);
    EXPECT_FALSE(kernels.front().metadata().facts.spills())
        << kernels.front().metadata().kernel_name << ": "
        << kernels.front().metadata().facts.text();
    bool seen_spill = false;
    for (const auto& k : kernels) {
      if (k.metadata().facts.spills())
        seen_spill = true;
      else
        EXPECT_FALSE(seen_spill) << "a clean kernel after a spilling one: "
                                 << k.metadata().kernel_name;
    }
    EXPECT_EQ(any_fast, fast) << "use_fast_accum=" << fast;
  }
}

TEST(KernelFactsRanking, PredictsTheFp8DefaultAccumulation128x256CooperativeTileSpills) {
  int checked = 0;
  const api::GemmArguments args = fp8_arguments(false);
  for (const auto& k : api::get_kernels(&args, {}, 90)) {
    const auto& d = k.description();
    if (d.tile.threadblock_shape[0] != 128 || d.tile.threadblock_shape[1] != 256 ||
        d.tile.kernel_schedule != KernelSchedule::TmaWarpSpecializedCooperative) {
      continue;
    }
    ++checked;
    if (k.metadata().facts.source == KernelFacts::Source::predicted) {
      EXPECT_TRUE(k.metadata().facts.spills()) << k.metadata().kernel_name;
    }
  }
  EXPECT_GT(checked, 0) << "no fp8 128x256 cooperative kernel is listed";
}

TEST(KernelFactsRanking, FastAccumulationOnNonFp8OperandsIsRefused) {
  auto args =
      api::GemmArguments::make(cuda(DataType::bf16, {64, 64}), cuda(DataType::bf16, {64, 64}),
                               cuda(DataType::bf16, {64, 64}), DataType::f32, {}, true);
  ASSERT_FALSE(args);
  EXPECT_NE(args.status().message().find("use_fast_accum"), std::string::npos);
  EXPECT_NE(args.status().message().find("BFloat16"), std::string::npos);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
