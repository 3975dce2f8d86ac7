// Compile tests of grouped GEMM modules: CUTLASS 2.x GemmGrouped (SM80, both schedulers) and
// CUTLASS 3.x pointer-array grouped kernels (SM90) are emitted, compiled by nvcc, dlopen'ed (no
// GPU needed) and their entries' host checks probed.
//
// With TILECRAFT_COMPILE_TESTS=standard (the default) one SM80 module of two entries (f16 TensorOp
// on the Device scheduler, SIMT f32 on the Host scheduler) is compiled; few compiles none; full
// adds the SM90 module
// (bf16 cooperative, f16 ping-pong with relu, fp8 with scales folded into alpha, bf16 with a
// per-problem bias and gelu).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compile_tests.hpp"
#include "emit/emit_test_descriptions.hpp"
#include "emit/module_compile_support.hpp"
#include "emit/sm90_test_descriptions.hpp"
#include "tilecraft/abi/module_abi.h"
#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {
namespace {
namespace TILECRAFT_TEST_FILE {

using namespace tilecraft::emit::compile_testing;

alignas(256) unsigned char g_dummy[256];
const void* g_pointers[2] = {g_dummy, g_dummy};
void* g_outputs[2] = {g_dummy, g_dummy};
const int64_t g_lds[2] = {64, 64};
const int32_t g_sizes[6] = {64, 64, 64, 128, 64, 64};

GemmDescription grouped(GemmDescription d, SchedulerMode mode) {
  return GemmDescription::make_grouped(d.arch, d.tile, d.A, d.B, d.C, d.epilogue, d.swizzle, mode)
      .value();
}

tc_grouped_args grouped_args(const GemmDescription& d) {
  tc_grouped_args a = grouped_block();
  a.problem_count = 2;
  a.problem_sizes = g_sizes;  // stands in for device memory: the host checks never read it
  a.host_problem_sizes = g_sizes;
  a.A_array = a.B_array = a.C_array = g_pointers;
  a.D_array = g_outputs;
  a.lda_array = a.ldb_array = a.ldc_array = a.ldd_array = g_lds;
  a.header.alpha = 1.0;
  a.header.beta = 0.5;
  a.max_k = 64;
  a.header.num_activation_args = activation_argument_count(d.epilogue.activation);
  if (d.epilogue.fusion.bias != BiasKind::none) a.bias_array = g_pointers;
  return a;
}

void check_grouped_entry(const GemmEntry& spec, const tc_kernel_entry& entry) {
  const GemmDescription& d = spec.description;
  EXPECT_NE(std::string(entry.metadata).find("kind=grouped"), std::string::npos);
  tc_grouped_args good = grouped_args(d);
  Verdict ok = can_implement(entry, good);
  EXPECT_EQ(ok.status, TC_OK) << ok.text;

  // A GEMM's block given to a grouped entry: refused by its family, before any field is read.
  tc_gemm_args plain = gemm_block();
  Verdict refused = can_implement(entry, plain);
  EXPECT_EQ(refused.status, TC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(refused.text.find("reads family 2 arguments"), std::string::npos) << refused.text;

  tc_grouped_args none = good;
  none.problem_count = 0;
  refused = can_implement(entry, none);
  EXPECT_NE(refused.text.find("problem_count"), std::string::npos) << refused.text;

  tc_grouped_args no_arrays = good;
  no_arrays.lda_array = nullptr;
  refused = can_implement(entry, no_arrays);
  EXPECT_NE(refused.text.find("lda_array"), std::string::npos) << refused.text;

  if (d.epilogue.fusion.bias != BiasKind::none) {
    tc_grouped_args no_bias = good;
    no_bias.bias_array = nullptr;
    refused = can_implement(entry, no_bias);
    EXPECT_NE(refused.text.find("bias"), std::string::npos) << refused.text;
  }
  if (d.scheduler_mode == SchedulerMode::Host) {
    tc_grouped_args device_only = good;
    device_only.host_problem_sizes = nullptr;
    refused = can_implement(entry, device_only);
    EXPECT_NE(refused.text.find("SchedulerMode.Host"), std::string::npos) << refused.text;
  }
}

std::vector<ModuleSpec> sm80_specs() {
  using namespace tilecraft::emit::testing;
  return {{"grouped_sm80",
           {{grouped(tensorop_f16_tn(), SchedulerMode::Device)},
            {grouped(simt_f32_seed(), SchedulerMode::Host)}}}};
}

std::vector<ModuleSpec> sm90_specs() {
  using namespace tilecraft::sm90_test;
  using enum DataType;
  const MathInstruction bf16_math = wgmma({64, 128, 16}, bf16, bf16, f32);
  const MathInstruction f16_math = wgmma({64, 128, 16}, f16, f16, f32);
  const MathInstruction fp8_math = wgmma({64, 128, 32}, e4m3, e4m3, f32);
  const GemmDescription coop =
      gemm(tile({128, 128, 64}, bf16_math, 0, {2, 1, 1}), tma(bf16, Layout::RowMajor),
           tma(bf16, Layout::ColumnMajor), tma(bf16, Layout::RowMajor), epilogue(bf16, f32));
  const GemmDescription pingpong =
      gemm(tile({64, 128, 64}, f16_math, 0, {1, 1, 1}, KernelSchedule::TmaWarpSpecializedPingpong),
           tma(f16, Layout::RowMajor), tma(f16, Layout::RowMajor), tma(f16, Layout::RowMajor),
           epilogue(f16, f32, Activation::relu));
  const GemmDescription fp8 = gemm(tile({128, 128, 128}, fp8_math), tma(e4m3, Layout::RowMajor),
                                   tma(e4m3, Layout::ColumnMajor), tma(bf16, Layout::RowMajor),
                                   epilogue(bf16, f32, Activation::identity, scales()));
  const GemmDescription biased =
      gemm(tile({128, 256, 64}, wgmma({64, 256, 16}, bf16, bf16, f32), 0, {2, 1, 1}),
           tma(bf16, Layout::RowMajor), tma(bf16, Layout::ColumnMajor), tma(bf16, Layout::RowMajor),
           epilogue(bf16, f32, Activation::gelu, bias(BiasKind::per_column, bf16)));
  return {{"grouped_sm90",
           {{grouped(coop, SchedulerMode::Device)},
            {grouped(pingpong, SchedulerMode::Device)},
            {grouped(fp8, SchedulerMode::Device)},
            {grouped(biased, SchedulerMode::Device)}}}};
}

TEST(GroupedModuleCompile, Sm80GemmGroupedBothSchedulers) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "the SM80 grouped GEMM module");
  auto modules =
      compile_and_check("tilecraft_grouped_sm80_", sm80_specs(), 80, check_grouped_entry);
  EXPECT_EQ(modules.size(), 1u);
}

TEST(GroupedModuleCompile, Sm90PointerArrayGrouped) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(full, "the SM90 grouped GEMM module");
  auto modules =
      compile_and_check("tilecraft_grouped_sm90_", sm90_specs(), 90, check_grouped_entry);
  EXPECT_EQ(modules.size(), 1u);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::emit
