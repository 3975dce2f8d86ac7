// Compile tests of convolution modules: CUTLASS 2.x ImplicitGemmConvolution entries (fprop,
// dgrad, wgrad; TensorOp and SIMT; the four iterator algorithms; both stride specializations;
// serial and parallel split-K) are emitted, compiled by nvcc, dlopen'ed (no GPU needed) and their
// host checks probed with problems they must take and problems they must refuse.
//
// With TILECRAFT_COMPILE_TESTS=standard (the default) one SM80 module of three entries is compiled
// (f16 fprop optimized, its parallel split-K companion, SIMT f32 strided dgrad), one SM90 module
// (CUTLASS 3.x ConvUniversal: bf16 fprop with a fused bias and relu, f16 wgrad), one of
// tilecraft's persistent SM90 convolutions (cooperative and ping-pong fprop, stream-K wgrad,
// ping-pong dgrad), a module of
// grouped fprop (single group, multiple groups, depthwise f16 and f32) and one of 3-D
// convolutions (CUTLASS's Conv3d: fprop, both dgrad forms, wgrad with parallel split-K, SIMT);
// full adds a module of every other kind and algorithm, SM90 dgrad and tf32 fprop, and SM90 3-D
// convolutions; few
// (a machine without a GPU, scripts/test.sh) compiles none of them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compile_tests.hpp"
#include "emit/emit_test_descriptions.hpp"
#include "emit/evt_test_graphs.hpp"
#include "emit/module_compile_support.hpp"
#include "emit/sm90_test_descriptions.hpp"
#include "tilecraft/abi/module_abi.h"
#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {
namespace {
namespace TILECRAFT_TEST_FILE {

using namespace tilecraft::emit::compile_testing;
using namespace tilecraft::emit::testing;

alignas(256) unsigned char g_dummy[256];

GemmDescription conv(ConvKind kind, IteratorAlgorithm algorithm, StrideSupport stride,
                     const GemmDescription& gemm, GroupMode group_mode = GroupMode::None) {
  TensorDescription a = gemm.A, b = gemm.B, c = gemm.C;
  a.layout = b.layout = c.layout = Layout::TensorNHWC;
  TileDescription tile = gemm.tile;
  if (group_mode == GroupMode::Depthwise) {  // two stages, one element per load
    tile.stages = 2;
    a.alignment = b.alignment = 1;
  }
  auto made = GemmDescription::make_conv2d(kind, algorithm, 80, tile, a, b, c, stride,
                                           gemm.epilogue, gemm.swizzle, group_mode);
  EXPECT_TRUE(bool(made)) << made.status().message();
  return made.value();
}

GemmDescription f16(ConvKind kind, IteratorAlgorithm algorithm,
                    StrideSupport stride = StrideSupport::Strided) {
  return conv(kind, algorithm, stride, tensorop_f16_tn());
}

GemmDescription simt(ConvKind kind, IteratorAlgorithm algorithm,
                     StrideSupport stride = StrideSupport::Strided) {
  return conv(kind, algorithm, stride, simt_f32_seed());
}

// SM90 (CUTLASS 3.x) convolutions: TmaWarpSpecialized schedule, 16-byte TMA operands.
GemmDescription sm90(ConvKind kind, DataType element, EpilogueFunctor e,
                     std::array<int, 3> shape = {128, 128, 64},
                     KernelSchedule schedule = KernelSchedule::TmaWarpSpecialized,
                     TileScheduler scheduler = TileScheduler::Persistent,
                     Layout layout = Layout::TensorNHWC) {
  using namespace tilecraft::sm90_test;
  const MathInstruction m =
      wgmma({64, shape[1], wgmma_k(element)}, element, element, DataType::f32);
  const TileDescription t = tile(shape, m, 0, {1, 1, 1}, schedule, scheduler);
  const DataType out = e.element_output;
  auto made = GemmDescription::make_conv2d(
      kind, IteratorAlgorithm::Optimized, 90, t, tma(element, layout), tma(element, layout),
      tma(out, layout), kind == ConvKind::Dgrad ? StrideSupport::Unity : StrideSupport::Strided, e,
      Swizzle::IdentitySwizzle1);
  EXPECT_TRUE(bool(made)) << made.status().message();
  return made.value();
}

tc_conv_args conv_args(const GemmDescription& d, const GemmEntry& entry) {
  tc_conv_args a = conv_block();
  a.mode =
      entry.kind == GemmEntryKind::kUniversal ? TC_CONV_MODE_RUN : TC_CONV_MODE_SPLIT_K_PARALLEL;
  a.A = a.B = a.C = a.D = g_dummy;
  if (d.epilogue.fusion.bias != BiasKind::none) a.bias = g_dummy;
  a.header.alpha = 1.0;
  a.header.beta = 0.5;
  a.header.num_activation_args = activation_argument_count(d.epilogue.activation);
  tc_conv_problem& c = a.conv;
  c.kind = static_cast<int32_t>(d.conv.kind);
  c.n = 2;
  c.h = c.w = 9;
  c.c = 64;
  c.k = 32;
  c.r = c.s = 3;
  c.pad_h = c.pad_w = c.pad_bottom = c.pad_right = 1;
  c.stride_h = c.stride_w = 1;
  c.p = c.q = 9;
  c.dilation_h = c.dilation_w = 1;
  c.split_k_slices = entry.kind == GemmEntryKind::kUniversal ? 1 : 2;
  c.groups = 1;
  if (d.has_epilogue_graph()) {
    // The graph's operands: can_implement checks their count and pointers, reads no memory.
    static tc_epilogue_tensor tensors[32];
    static double scalars[32];
    for (tc_epilogue_tensor& t : tensors) t = {g_dummy, 64, 0};
    for (double& value : scalars) value = 0.5;
    a.header.num_epilogue_tensors = static_cast<int32_t>(d.epilogue_graph->operand_nodes().size());
    a.header.epilogue_tensors = tensors;
    a.header.num_epilogue_scalars = static_cast<int32_t>(d.epilogue_graph->scalar_nodes().size());
    a.header.epilogue_scalars = scalars;
  }
  return a;
}

void check_conv_entry(const GemmEntry& spec, const tc_kernel_entry& entry) {
  const GemmDescription& d = spec.description;
  EXPECT_NE(std::string(entry.metadata).find("conv_kind=" + std::string(to_string(d.conv.kind))),
            std::string::npos)
      << entry.metadata;
  tc_conv_args good = conv_args(d, spec);
  if (d.conv.iterator_algorithm == IteratorAlgorithm::FixedChannels) good.conv.c = d.A.alignment;
  Verdict ok = can_implement(entry, good);
  EXPECT_EQ(ok.status, TC_OK) << ok.text;

  tc_conv_args other_kind = good;
  other_kind.conv.kind = (good.conv.kind + 1) % 3;
  Verdict refused = can_implement(entry, other_kind);
  EXPECT_EQ(refused.status, TC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(refused.text.find("conv kind"), std::string::npos) << refused.text;

  tc_conv_args grouped = good;
  grouped.conv.groups = 2;
  refused = can_implement(entry, grouped);
  EXPECT_NE(refused.text.find("groups=2"), std::string::npos) << refused.text;

  if (d.A.alignment > 1) {
    tc_conv_args odd = good;
    odd.conv.c = good.conv.c + 1;
    odd.conv.k = good.conv.k + 1;
    refused = can_implement(entry, odd);
    EXPECT_EQ(refused.status, TC_ERROR_INVALID_ARGUMENT);
    const char* expected =
        d.conv.iterator_algorithm == IteratorAlgorithm::FixedChannels ? "access size" : "alignment";
    EXPECT_NE(refused.text.find(expected), std::string::npos) << refused.text;
  }
  if (d.conv.kind == ConvKind::Dgrad && d.conv.stride_support == StrideSupport::Unity) {
    tc_conv_args strided = good;
    strided.conv.stride_h = 2;
    strided.conv.p = 5;
    refused = can_implement(entry, strided);
    EXPECT_NE(refused.text.find("unit strides"), std::string::npos) << refused.text;
  }
  tc_conv_args wrong_mode = good;
  wrong_mode.mode =
      good.mode == TC_CONV_MODE_RUN ? TC_CONV_MODE_SPLIT_K_PARALLEL : TC_CONV_MODE_RUN;
  refused = can_implement(entry, wrong_mode);
  EXPECT_NE(refused.text.find("mode"), std::string::npos) << refused.text;
}

// Grouped fprop: a problem each group mode takes (tile N 128), and the ones it must refuse.
void check_group_entry(const GemmEntry& spec, const tc_kernel_entry& entry) {
  const GemmDescription& d = spec.description;
  const GroupMode mode = d.conv.group_mode;
  EXPECT_NE(std::string(entry.metadata).find("group_mode=" + std::string(to_string(mode))),
            std::string::npos)
      << entry.metadata;
  tc_conv_args good = conv_args(d, spec);
  tc_conv_problem& c = good.conv;
  if (mode == GroupMode::SingleGroup) {
    c.groups = 2, c.c = 64, c.k = 256;  // 128 output channels per group: one tile N
  } else if (mode == GroupMode::MultipleGroup) {
    c.groups = 4, c.c = 64, c.k = 64;  // 16 per group: eight groups per tile
  } else {
    c.groups = c.c = c.k = 32;
  }
  Verdict ok = can_implement(entry, good);
  EXPECT_EQ(ok.status, TC_OK) << ok.text;

  tc_conv_args unfit = good;  // a group count that leaves the tile's N unfit
  if (mode == GroupMode::SingleGroup) {
    unfit.conv.k = 2 * 64;
    Verdict refused = can_implement(entry, unfit);
    EXPECT_NE(refused.text.find("multiple of this single_group kernel's tile N=128"),
              std::string::npos)
        << refused.text;
  } else if (mode == GroupMode::MultipleGroup) {
    unfit.conv.k = 4 * 48;
    Verdict refused = can_implement(entry, unfit);
    EXPECT_NE(refused.text.find("must be a multiple of K / groups = 48"), std::string::npos)
        << refused.text;
  } else {
    unfit.conv.k = 64;
    Verdict refused = can_implement(entry, unfit);
    EXPECT_NE(refused.text.find("C == K == groups"), std::string::npos) << refused.text;
  }
  tc_conv_args split = good;
  split.conv.split_k_slices = 2;
  Verdict refused = can_implement(entry, split);
  EXPECT_NE(refused.text.find("do not split K"), std::string::npos) << refused.text;

  tc_conv_args odd = good;
  if (mode == GroupMode::Depthwise) {  // one element per load: any channel count
    odd.conv.groups = odd.conv.c = odd.conv.k = 30;
    Verdict taken = can_implement(entry, odd);
    EXPECT_EQ(taken.status, TC_OK) << taken.text;
  } else {  // channels per group off the activation's access
    odd.conv.c = odd.conv.groups * 12;
    refused = can_implement(entry, odd);
    EXPECT_EQ(refused.status, TC_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(refused.text.find("A (x)"), std::string::npos) << refused.text;
  }
}

std::vector<ModuleSpec> group_specs() {
  using enum ConvKind;
  using enum IteratorAlgorithm;
  const GemmDescription simt_f16 = [] {
    using enum DataType;
    return gemm(math({1, 1, 1}, f16, f16, OpClass::Simt), {64, 64, 8}, 2, {2, 2, 1},
                {f16, Layout::RowMajor, 1}, {f16, Layout::RowMajor, 1}, {f16, Layout::RowMajor, 1},
                epilogue(EpilogueKind::LinearCombination, f16, 1, f16, f16));
  }();
  return {
      {"conv_sm80_groups",
       {{conv(Fprop, Optimized, StrideSupport::Strided, tensorop_f16_tn(), GroupMode::SingleGroup)},
        {conv(Fprop, Analytic, StrideSupport::Strided, tensorop_f16_tn(),
              GroupMode::MultipleGroup)},
        {conv(Fprop, Analytic, StrideSupport::Strided, simt_f16, GroupMode::Depthwise)},
        {conv(Fprop, Analytic, StrideSupport::Strided, simt_f32_seed(), GroupMode::Depthwise)}}}};
}

// Grouped fprop on tiles 32 output channels wide (get_kernels narrows the space's N-64 designs
// for 8 to 32 channels per group): one group of 32 per CTA (single_group, optimized iterators),
// or two groups of 16 (multiple_group, analytic).
std::vector<ModuleSpec> narrow_group_specs() {
  using enum ConvKind;
  using enum IteratorAlgorithm;
  // get_kernels' first picks for ResNeXt's 32 and 16 channels per group.
  GemmDescription single = tensorop_f16_tn();
  single.tile.threadblock_shape = {256, 32, 32};
  single.tile.warp_count = {4, 1, 1};
  single.tile.stages = 5;
  GemmDescription multiple = single;
  multiple.tile.stages = 3;
  return {{"conv_sm80_narrow_groups",
           {{conv(Fprop, Optimized, StrideSupport::Strided, single, GroupMode::SingleGroup)},
            {conv(Fprop, Analytic, StrideSupport::Strided, multiple, GroupMode::MultipleGroup)}}}};
}

// ResNeXt's 32 groups: 32 channels per group on the single-group tile, 16 on the two-group one;
// 48 per group fits neither tile.
void check_narrow_group_entry(const GemmEntry& spec, const tc_kernel_entry& entry) {
  const bool single = spec.description.conv.group_mode == GroupMode::SingleGroup;
  tc_conv_args good = conv_args(spec.description, spec);
  good.conv.groups = 32;
  good.conv.c = good.conv.k = single ? 1024 : 512;
  Verdict ok = can_implement(entry, good);
  EXPECT_EQ(ok.status, TC_OK) << ok.text;
  tc_conv_args unfit = good;
  unfit.conv.c = unfit.conv.k = 32 * 48;
  Verdict refused = can_implement(entry, unfit);
  EXPECT_EQ(refused.status, TC_ERROR_INVALID_ARGUMENT) << refused.text;
  EXPECT_NE(refused.text.find(single ? "multiple of this single_group kernel's tile N=32"
                                     : "must be a multiple of K / groups = 48"),
            std::string::npos)
      << refused.text;
}

// 3-D (TensorNDHWC) entries: 128-bit accesses on tensor cores, one element on CUDA cores.
GemmDescription conv3d(ConvKind kind, IteratorAlgorithm algorithm, StrideSupport stride,
                       const GemmDescription& gemm) {
  TensorDescription a = gemm.A, b = gemm.B, c = gemm.C;
  a.layout = b.layout = c.layout = Layout::TensorNDHWC;
  auto made = GemmDescription::make_conv2d(kind, algorithm, 80, gemm.tile, a, b, c, stride,
                                           gemm.epilogue, gemm.swizzle);
  EXPECT_TRUE(bool(made)) << made.status().message();
  return made.value();
}

void check_conv3d_entry(const GemmEntry& spec, const tc_kernel_entry& entry) {
  const GemmDescription& d = spec.description;
  tc_conv_args good = conv_args(d, spec);
  tc_conv_problem& c = good.conv;
  c.spatial_dims = 3;
  c.d = c.z = 5;
  c.t = 3;
  c.pad_front = c.pad_back = 1;
  c.stride_d = c.dilation_d = 1;
  Verdict ok = can_implement(entry, good);
  EXPECT_EQ(ok.status, TC_OK) << ok.text;

  tc_conv_args planar = conv_args(d, spec);  // a 2-D problem
  Verdict refused = can_implement(entry, planar);
  EXPECT_NE(refused.text.find("this entry computes 3-D convolutions, got a 2-D problem"),
            std::string::npos)
      << refused.text;
  tc_conv_args no_depth = good;
  no_depth.conv.t = 0;
  refused = can_implement(entry, no_depth);
  EXPECT_NE(refused.text.find("every extent must be positive"), std::string::npos) << refused.text;
  if (d.A.alignment > 1) {
    tc_conv_args odd = good;
    odd.conv.c = good.conv.c + 1;
    odd.conv.k = good.conv.k + 1;
    refused = can_implement(entry, odd);
    EXPECT_NE(refused.text.find("alignment"), std::string::npos) << refused.text;
  }
  if (d.arch == 90) {  // TMA im2col's limits hold for the depth too
    tc_conv_args deep_pad = good;
    deep_pad.conv.pad_front = 129;
    deep_pad.conv.z = good.conv.z + 128;
    refused = can_implement(entry, deep_pad);
    EXPECT_NE(refused.text.find("padding 129: TMA im2col loads take padding up to 128"),
              std::string::npos)
        << refused.text;
    tc_conv_args dilated = good;
    dilated.conv.dilation_d = 128;
    dilated.conv.d = 300;
    dilated.conv.z = 300 + 2 - 2 * 128;
    refused = can_implement(entry, dilated);
    EXPECT_NE(refused.text.find("filter T=3 R=3 S=3 dilation (128, 1, 1)"), std::string::npos)
        << refused.text;
  }
}

std::vector<ModuleSpec> conv3d_specs() {
  using enum ConvKind;
  using enum IteratorAlgorithm;
  return {{"conv3d_sm80",
           {{conv3d(Fprop, Optimized, StrideSupport::Strided, tensorop_f16_tn())},
            {conv3d(Dgrad, Optimized, StrideSupport::Unity, tensorop_f16_tn())},
            {conv3d(Dgrad, Analytic, StrideSupport::Strided, tensorop_f16_tn())},
            {conv3d(Wgrad, Optimized, StrideSupport::Strided, tensorop_f16_tn()),
             GemmEntryKind::kSplitKParallel},
            {conv3d(Fprop, Analytic, StrideSupport::Strided, simt_f32_seed())}}}};
}

std::vector<ModuleSpec> ci_specs() {
  using enum ConvKind;
  using enum IteratorAlgorithm;
  return {{"conv_sm80",
           {{f16(Fprop, Optimized)},
            {f16(Fprop, Optimized), GemmEntryKind::kSplitKParallel},
            {simt(Dgrad, Analytic)}}}};
}

std::vector<ModuleSpec> full_specs() {
  using enum ConvKind;
  using enum IteratorAlgorithm;
  return {{"conv_sm80_full",
           {{f16(Fprop, Analytic)},
            {f16(Fprop, FewChannels)},
            {f16(Fprop, FixedChannels)},
            {f16(Dgrad, Optimized, StrideSupport::Unity)},
            {f16(Dgrad, Optimized)},
            {f16(Dgrad, Analytic, StrideSupport::Unity)},
            {f16(Wgrad, Optimized)},
            {f16(Wgrad, Analytic), GemmEntryKind::kSplitKParallel},
            {simt(Fprop, Optimized)},
            {simt(Wgrad, Optimized)}}}};
}

std::vector<ModuleSpec> sm90_ci_specs() {
  using enum DataType;
  using tilecraft::sm90_test::bias;
  using tilecraft::sm90_test::epilogue;
  return {{"conv_sm90",
           {{sm90(ConvKind::Fprop, bf16,
                  epilogue(bf16, f32, Activation::relu, bias(BiasKind::per_column, bf16)))},
            {sm90(ConvKind::Wgrad, f16, epilogue(f16, f32))}}}};
}

// tilecraft's persistent SM90 convolutions: CUTLASS's cooperative and ping-pong GEMM kernels over
// the conv mainloop (jit/sm90_conv_persistent.cuh); wgrad on the stream-K tile scheduler.
std::vector<ModuleSpec> sm90_persistent_specs() {
  using enum DataType;
  using tilecraft::sm90_test::bias;
  using tilecraft::sm90_test::epilogue;
  return {{"conv_sm90_persistent",
           {{sm90(ConvKind::Fprop, f16, epilogue(f16, f32), {128, 128, 64},
                  KernelSchedule::TmaWarpSpecializedCooperative)},
            {sm90(ConvKind::Fprop, bf16,
                  epilogue(bf16, f32, Activation::relu, bias(BiasKind::per_column, bf16)),
                  {64, 128, 64}, KernelSchedule::TmaWarpSpecializedPingpong)},
            {sm90(ConvKind::Wgrad, f16, epilogue(f16, f32), {128, 64, 64},
                  KernelSchedule::TmaWarpSpecializedCooperative, TileScheduler::StreamK)},
            {sm90(ConvKind::Dgrad, f16, epilogue(f16, f32), {64, 64, 64},
                  KernelSchedule::TmaWarpSpecializedPingpong)}}}};
}

// Custom epilogues on the persistent convolutions: the issue's graph (a full input of D's type
// read as the source C, column and row inputs, a second store, a reduction along every axis) on a
// cooperative fprop, and the reductions graph on a stream-K wgrad.
std::vector<ModuleSpec> sm90_graph_specs() {
  using enum DataType;
  using tilecraft::sm90_test::epilogue;
  const auto with = [](const GemmDescription& d, const EpilogueGraph& g) {
    auto made = d.with_epilogue_graph(g);
    EXPECT_TRUE(bool(made)) << made.status().message();
    return made.value();
  };
  return {{"conv_sm90_graphs",
           {{with(sm90(ConvKind::Fprop, f16, epilogue(f16, f32), {128, 128, 64},
                       KernelSchedule::TmaWarpSpecializedCooperative),
                  issue_graph(f16))},
            {with(sm90(ConvKind::Wgrad, f16, epilogue(f32, f32), {128, 64, 64},
                       KernelSchedule::TmaWarpSpecializedCooperative, TileScheduler::StreamK),
                  reductions_graph(f32))}}}};
}

// A persistent entry takes what a ConvUniversal one takes; split-K only on the stream-K
// scheduler, and wgrad only where the tile N divides C.
void check_persistent_entry(const GemmEntry& spec, const tc_kernel_entry& entry) {
  check_conv_entry(spec, entry);
  const GemmDescription& d = spec.description;
  tc_conv_args split = conv_args(d, spec);
  split.conv.split_k_slices = 3;
  Verdict verdict = can_implement(entry, split);
  if (d.tile.tile_scheduler == TileScheduler::StreamK) {
    EXPECT_EQ(verdict.status, TC_OK) << verdict.text;
    split.conv.split_k_slices = 70000;
    verdict = can_implement(entry, split);
    EXPECT_NE(verdict.text.find("split_k_slices 70000 is above 65535"), std::string::npos)
        << verdict.text;
  } else {
    EXPECT_NE(verdict.text.find("tile_scheduler StreamK"), std::string::npos) << verdict.text;
  }
  if (d.conv.kind == ConvKind::Wgrad) {
    tc_conv_args straddling = conv_args(d, spec);
    straddling.conv.c = 96;  // a multiple of the 16-byte access, not of tile N = 64
    verdict = can_implement(entry, straddling);
    EXPECT_NE(verdict.text.find("C 96: this persistent SM90 wgrad tiles"), std::string::npos)
        << verdict.text;
  }
}

// SM90 3-D convolutions (TensorNDHWC): CUTLASS's ConvUniversal, and the persistent forms (one
// with a custom epilogue) in a module of their own (the two kinds do not build in one unit).
std::vector<ModuleSpec> sm90_conv3d_specs() {
  using enum DataType;
  using tilecraft::sm90_test::epilogue;
  constexpr Layout kNdhwc = Layout::TensorNDHWC;
  return {
      {"conv3d_sm90",
       {{sm90(ConvKind::Fprop, f16, epilogue(f16, f32), {128, 128, 64},
              KernelSchedule::TmaWarpSpecialized, TileScheduler::Persistent, kNdhwc)}}},
      {"conv3d_sm90_persistent",
       {{sm90(ConvKind::Fprop, bf16, epilogue(bf16, f32), {128, 128, 64},
              KernelSchedule::TmaWarpSpecializedCooperative, TileScheduler::Persistent, kNdhwc)},
        {sm90(ConvKind::Wgrad, f16, epilogue(f16, f32), {128, 64, 64},
              KernelSchedule::TmaWarpSpecializedCooperative, TileScheduler::StreamK, kNdhwc)},
        // A custom epilogue on a 3-D ping-pong fprop.
        {sm90(ConvKind::Fprop, f16, epilogue(f16, f32), {64, 128, 64},
              KernelSchedule::TmaWarpSpecializedPingpong, TileScheduler::Persistent, kNdhwc)
             .with_epilogue_graph(issue_graph(f16))
             .value()}}}};
}

std::vector<ModuleSpec> sm90_full_specs() {
  using enum DataType;
  using tilecraft::sm90_test::epilogue;
  return {{"conv_sm90_full",
           {{sm90(ConvKind::Dgrad, f16, epilogue(f16, f32))},
            {sm90(ConvKind::Fprop, tf32, epilogue(f32, f32), {128, 128, 32})}}}};
}

TEST(ConvModuleCompile, Sm90ConvUniversal) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "the SM90 ConvUniversal module");
  auto modules = compile_and_check("tilecraft_conv_sm90_", sm90_ci_specs(), 90, check_conv_entry);
  EXPECT_EQ(modules.size(), 1u);
}

TEST(ConvModuleCompile, Sm90Persistent) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "the persistent SM90 convolution module");
  auto modules = compile_and_check("tilecraft_conv_sm90_persistent_", sm90_persistent_specs(), 90,
                                   check_persistent_entry);
  EXPECT_EQ(modules.size(), 1u);
}

TEST(ConvModuleCompile, Sm90PersistentEpilogueGraphs) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(full, "custom epilogues on persistent SM90 convolutions");
  auto modules =
      compile_and_check("tilecraft_conv_sm90_graphs_", sm90_graph_specs(), 90,
                        [](const GemmEntry& spec, const tc_kernel_entry& entry) {
                          check_persistent_entry(spec, entry);
                          tc_conv_args fewer = conv_args(spec.description, spec);
                          const int tensors = fewer.header.num_epilogue_tensors;
                          fewer.header.num_epilogue_tensors -= 1;
                          EXPECT_EQ(can_implement(entry, fewer).text,
                                    "epilogue graph: expected " + std::to_string(tensors) +
                                        " operand tensor(s), got " + std::to_string(tensors - 1));
                        });
  EXPECT_EQ(modules.size(), 1u);
}

TEST(ConvModuleClasses, PersistentSm90ConvolutionsHaveUnitsOfTheirOwn) {
  // CUTLASS's ConvUniversal kernels fail to build beside CUTLASS's GEMM kernels, which the
  // persistent convolutions include (two specializations of GemmUniversal match).
  using enum DataType;
  using tilecraft::sm90_test::epilogue;
  const GemmDescription stock = sm90(ConvKind::Fprop, f16, epilogue(f16, f32));
  for (KernelSchedule schedule : {KernelSchedule::TmaWarpSpecializedCooperative,
                                  KernelSchedule::TmaWarpSpecializedPingpong}) {
    const GemmDescription persistent = sm90(ConvKind::Fprop, f16, epilogue(f16, f32),
                                            schedule == KernelSchedule::TmaWarpSpecializedPingpong
                                                ? std::array<int, 3>{64, 128, 64}
                                                : std::array<int, 3>{128, 128, 64},
                                            schedule);
    EXPECT_NE(module_class(stock), module_class(persistent));
    EXPECT_NE(emit_gemm_module({{persistent}}).find("sm90_conv_persistent.cuh"), std::string::npos);
  }
  EXPECT_EQ(emit_gemm_module({{stock}}).find("sm90_conv_persistent.cuh"), std::string::npos);
}

TEST(ConvModuleCompile, Sm90DgradAndTf32) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(full, "the SM90 dgrad and tf32 convolution modules");
  auto modules =
      compile_and_check("tilecraft_conv_sm90_full_", sm90_full_specs(), 90, check_conv_entry);
  EXPECT_EQ(modules.size(), 1u);
}

TEST(ConvModuleCompile, Sm80ImplicitGemmConvolution) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "the SM80 implicit-GEMM convolution module");
  auto modules = compile_and_check("tilecraft_conv_sm80_", ci_specs(), 80, check_conv_entry);
  EXPECT_EQ(modules.size(), 1u);
}

TEST(ConvModuleCompile, Sm80GroupedAndDepthwiseFprop) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "the SM80 grouped and depthwise fprop module");
  auto modules =
      compile_and_check("tilecraft_conv_sm80_groups_", group_specs(), 80, check_group_entry);
  EXPECT_EQ(modules.size(), 1u);
}

TEST(ConvModuleCompile, Sm90Conv3d) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(full, "the SM90 3-D convolution module");
  auto modules =
      compile_and_check("tilecraft_conv3d_sm90_", sm90_conv3d_specs(), 90, check_conv3d_entry);
  EXPECT_EQ(modules.size(), 2u);
}

TEST(ConvModuleCompile, Sm80NarrowGroupTiles) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "the SM80 grouped fprop module of 32-wide tiles");
  auto modules = compile_and_check("tilecraft_conv_sm80_narrow_groups_", narrow_group_specs(), 80,
                                   check_narrow_group_entry);
  EXPECT_EQ(modules.size(), 1u);
}

TEST(ConvModuleCompile, Sm80Conv3d) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "the SM80 3-D convolution module");
  auto modules =
      compile_and_check("tilecraft_conv3d_sm80_", conv3d_specs(), 80, check_conv3d_entry);
  EXPECT_EQ(modules.size(), 1u);
}

TEST(ConvModuleCompile, Sm80EveryKindAndAlgorithm) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(full, "the full set of SM80 convolution modules");
  auto modules = compile_and_check("tilecraft_conv_sm80_full_", full_specs(), 80, check_conv_entry);
  EXPECT_EQ(modules.size(), 1u);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::emit
