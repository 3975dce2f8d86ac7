// Tests of the SM90 GEMM emitter (CUTLASS 3.x CollectiveBuilder + GemmUniversalAdapter): the
// CUTLASS types each description turns into, the metadata the module table carries, module-level
// structure, and golden modules (emit/golden_support.hpp).
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "emit/device_image_text.hpp"
#include "emit/emit_test_descriptions.hpp"
#include "emit/evt/evt_text.hpp"
#include "emit/golden_support.hpp"
#include "emit/jit_header_text.hpp"
#include "emit/sm80_gemm_parts.hpp"
#include "emit/sm90_gemm_parts.hpp"
#include "emit/sm90_test_descriptions.hpp"

namespace tilecraft::emit {
namespace {
namespace TILECRAFT_TEST_FILE {

using namespace tilecraft::sm90_test;
using enum DataType;

std::string module_of(const GemmDescription& d) { return emit_gemm_module({{d}}); }
// The entry's own text (types, traits, fusion arguments, ABI functions), without the fixed
// adapters, which name every type an entry might use.
std::string entry_of(const GemmDescription& d) { return sm90_entry_text({d}, 0); }

// Expects every part in text, naming the missing ones.
::testing::AssertionResult contains_all(const std::string& text,
                                        const std::vector<std::string>& parts) {
  std::string missing;
  for (const std::string& part : parts) {
    if (text.find(part) == std::string::npos) missing += "\n  missing: " + part;
  }
  if (missing.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << missing;
}

::testing::AssertionResult contains_none(const std::string& text,
                                         const std::vector<std::string>& parts) {
  std::string present;
  for (const std::string& part : parts) {
    if (text.find(part) != std::string::npos) present += "\n  present: " + part;
  }
  if (present.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << present;
}

std::string metadata_of(const GemmDescription& d) { return gemm_metadata({d}); }

// ---- CUTLASS types ------------------------------------------------------------------------

TEST(Sm90Emitter, Bf16CooperativeColumnBiasGelu) {
  const std::string text = entry_of(bf16_tn_coop_bias_gelu());
  EXPECT_TRUE(contains_all(
      text, {"using ElementA = cutlass::bfloat16_t;",
             "using LayoutA = cutlass::layout::RowMajor;",
             "constexpr int AlignmentA = 8;",
             "using LayoutB = cutlass::layout::ColumnMajor;",
             "using ElementAccumulator = float;",
             "using ElementCompute = float;",
             "using ElementBias = cutlass::bfloat16_t;",
             "using TileShape = cute::Shape<cute::_128, cute::_128, cute::_64>;",
             "using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;",
             "using FusionOp = cutlass::epilogue::fusion::LinCombPerColBiasEltAct<"
             "cutlass::epilogue::thread::GELU, ElementD, ElementCompute, ElementBias, ElementC, "
             "ElementCompute>;",
             "cutlass::epilogue::collective::CollectiveBuilder<",
             "cutlass::gemm::collective::CollectiveBuilder<",
             "cutlass::arch::Sm90",
             "cutlass::arch::OpClassTensorOp",
             "cutlass::epilogue::collective::EpilogueTileAuto",
             "cutlass::epilogue::TmaWarpSpecializedCooperative, FusionOp>::CollectiveOp;",
             "cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;",
             "cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename "
             "CollectiveEpilogue::SharedStorage))>",
             "cutlass::gemm::PersistentScheduler>;",
             "using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;",
             "f.bias_ptr = static_cast<const ElementBias*>(a.bias);"}));
  EXPECT_TRUE(contains_none(text, {"FP8FastAccum", "StreamKScheduler", "StageCount<", "ElementAux",
                                   "scale_a", "f.activation."}));
}

TEST(Sm90Emitter, Fp8ScaledFastAccum) {
  const std::string text = entry_of(fp8_scaled_fast_accum());
  EXPECT_TRUE(contains_all(
      text, {"using ElementA = cutlass::float_e4m3_t;", "constexpr int AlignmentA = 16;",
             "using ElementB = cutlass::float_e4m3_t;", "using ElementC = cutlass::bfloat16_t;",
             "using ClusterShape = cute::Shape<cute::_2, cute::_1, cute::_1>;",
             "cutlass::gemm::KernelTmaWarpSpecializedCooperativeFP8FastAccum>",
             "cutlass::epilogue::fusion::ScaledLinCombPerRowBiasEltAct<"
             "cutlass::epilogue::thread::Identity, ElementD, ElementCompute, ElementBias, "
             "ElementC, ElementCompute>",
             "f.scale_a = ElementCompute(a.scale_a);", "f.scale_a_ptr = a.scale_a_ptr;",
             "f.scale_b_ptr = a.scale_b_ptr;", "f.scale_c_ptr = a.scale_c_ptr;",
             "f.scale_d = ElementCompute(a.scale_d);", "f.scale_d_ptr = a.scale_d_ptr;"}));
}

TEST(Sm90Emitter, Fp8WithoutFastAccumUsesThePlainSchedule) {
  const std::string text = entry_of(fp8_out_e4m3_e5m2_relu());
  EXPECT_TRUE(contains_all(
      text, {"using ElementB = cutlass::float_e5m2_t;", "using ElementC = cutlass::float_e4m3_t;",
             "cutlass::gemm::KernelTmaWarpSpecializedCooperative>",
             "ScaledLinCombPerRowBiasEltAct<cutlass::epilogue::thread::"
             "ReLu, ElementD, ElementCompute, ElementBias"}));
  EXPECT_TRUE(contains_none(text, {"FP8FastAccum"}));
}

TEST(Sm90Emitter, ExplicitStagesStreamKAndSwizzle) {
  const std::string stages = entry_of(tf32_tn_stages4_cluster1x2());
  EXPECT_TRUE(contains_all(
      stages, {"using ElementA = cutlass::tfloat32_t;", "cutlass::gemm::collective::StageCount<4>,",
               "using ClusterShape = cute::Shape<cute::_1, cute::_2, cute::_1>;",
               "cutlass::epilogue::fusion::LinearCombination<ElementD, "
               "ElementCompute, ElementC, ElementCompute>"}));
  EXPECT_TRUE(contains_none(stages, {"StageCountAutoCarveout", "ElementBias"}));

  const std::string stream_k = entry_of(bf16_nt_stream_k());
  EXPECT_TRUE(contains_all(
      stream_k,
      {"cutlass::gemm::StreamKScheduler>;", "using LayoutA = cutlass::layout::ColumnMajor;",
       "using LayoutB = cutlass::layout::RowMajor;",
       // max swizzle 4, heuristic raster, stream-K, no bias, no aux, 0 args
       "constexpr tc_sm90::EntryTraits kTraits{4, 0, true, false, false, 0, \"tc_kernel_0\"};"}));
  EXPECT_TRUE(contains_none(stream_k, {"PersistentScheduler"}));
}

TEST(Sm90Emitter, AuxOutput) {
  const std::string text = entry_of(f16_aux_gelu_tanh());
  EXPECT_TRUE(contains_all(
      text, {"using ElementAux = cutlass::half_t;", "using ElementBias = cutlass::half_t;",
             "using ClusterShape = cute::Shape<cute::_4, cute::_1, cute::_1>;",
             "cutlass::epilogue::fusion::LinCombPerRowBiasEltActAux<LayoutC, "
             "cutlass::epilogue::thread::GELU_taylor, ElementD, ElementCompute, ElementAux, "
             "ElementBias, ElementC, ElementCompute>",
             "f.aux_ptr = static_cast<ElementAux*>(a.aux);",
             "f.dAux = tc_sm90::make_stride<decltype(f.dAux)>(a.ldaux, a.batch_stride_aux);",
             "kTraits{1, 0, false, true, true, 0, \"tc_kernel_0\"};"}));
}

TEST(Sm90Emitter, PingpongClampAndHorizontalSwizzle) {
  const std::string text = entry_of(f16_acc_pingpong_clamp());
  EXPECT_TRUE(contains_all(
      text, {"using ElementAccumulator = cutlass::half_t;", "using ElementCompute = float;",
             "using LayoutC = cutlass::layout::ColumnMajor;",
             "cutlass::gemm::KernelTmaWarpSpecializedPingpong>",
             "    cutlass::epilogue::TmaWarpSpecialized, FusionOp>",
             "cutlass::epilogue::fusion::LinCombEltAct<cutlass::epilogue::thread::Clamp, "
             "ElementD, ElementCompute, ElementC, ElementCompute>",
             "f.activation.lower_bound = ElementCompute(a.header.activation_args[0]);",
             "f.activation.upper_bound = ElementCompute(a.header.activation_args[1]);",
             // raster along N, two activation arguments
             "kTraits{1, 2, false, false, false, 2, \"tc_kernel_0\"};"}));
  EXPECT_TRUE(contains_none(text, {"Cooperative"}));
}

TEST(Sm90Emitter, FusionTypeForEachEpilogueShape) {
  using enum Activation;
  const MathInstruction m = wgmma({64, 128, 16}, bf16, bf16, f32);
  const TileDescription t = tile({128, 128, 64}, m);
  auto fusion = [&](EpilogueFunctor e) {
    return sm90_fusion_type(gemm(t, tma(bf16, Layout::RowMajor), tma(bf16, Layout::ColumnMajor),
                                 tma(bf16, Layout::RowMajor), e));
  };
  const std::string ns = "cutlass::epilogue::fusion::";
  EXPECT_EQ(fusion(epilogue(bf16, f32)),
            ns + "LinearCombination<ElementD, ElementCompute, ElementC, ElementCompute>");
  EXPECT_EQ(fusion(epilogue(bf16, f32, relu)),
            ns + "LinCombEltAct<cutlass::epilogue::thread::ReLu, ElementD, ElementCompute, "
                 "ElementC, ElementCompute>");
  EXPECT_EQ(fusion(epilogue(bf16, f32, identity, bias(BiasKind::per_row, f32))),
            ns + "LinCombPerRowBias<ElementD, ElementCompute, ElementBias, ElementC, "
                 "ElementCompute>");
  EXPECT_EQ(fusion(epilogue(bf16, f32, identity, bias(BiasKind::per_column, f32))),
            ns + "LinCombPerColBias<ElementD, ElementCompute, ElementBias, ElementC, "
                 "ElementCompute>");
  EXPECT_EQ(fusion(epilogue(bf16, f32, silu, bias(BiasKind::per_row, bf16))),
            ns + "LinCombPerRowBiasEltAct<cutlass::epilogue::thread::SiLu, ElementD, "
                 "ElementCompute, ElementBias, ElementC, ElementCompute>");
  EXPECT_EQ(fusion(epilogue(bf16, f32, identity, bias_and_aux(BiasKind::per_column, f32, bf16))),
            ns + "LinCombPerColBiasEltActAux<LayoutC, cutlass::epilogue::thread::Identity, "
                 "ElementD, ElementCompute, ElementAux, ElementBias, ElementC, ElementCompute>");
}

TEST(Sm90Emitter, LeakyReluPassesItsSlope) {
  const MathInstruction m = wgmma({64, 128, 16}, bf16, bf16, f32);
  const std::string text = entry_of(
      gemm(tile({128, 128, 64}, m), tma(bf16, Layout::RowMajor), tma(bf16, Layout::ColumnMajor),
           tma(bf16, Layout::RowMajor), epilogue(bf16, f32, Activation::leaky_relu)));
  EXPECT_TRUE(
      contains_all(text, {"cutlass::epilogue::thread::LeakyReLU",
                          "f.activation.leaky_alpha = ElementCompute(a.header.activation_args[0]);",
                          "kTraits{1, 0, false, false, false, 1, \"tc_kernel_0\"};"}));
}

// ---- metadata -----------------------------------------------------------------------------

TEST(Sm90Emitter, MetadataOfTheCiModule) {
  EXPECT_EQ(metadata_of(bf16_tn_coop_bias_gelu()),
            "kind=universal;arch=90;op_class=TensorOp;inst_shape=64x128x16;"
            "math_operation=multiply_add;element_a=bf16;element_b=bf16;element_c=bf16;"
            "element_accumulator=f32;layout_a=RowMajor;layout_b=ColumnMajor;layout_c=RowMajor;"
            "alignment_a=8;alignment_b=8;alignment_c=8;tile=128x128x64;stages=0;warps=0x0x0;"
            "epilogue=LinearCombinationGeneric;element_epilogue=f32;epilogue_vector=8;"
            "activation=gelu;swizzle=IdentitySwizzle1;cluster=1x1x1;"
            "kernel_schedule=TmaWarpSpecializedCooperative;"
            "epilogue_schedule=TmaWarpSpecializedCooperative;tile_scheduler=Persistent;"
            "bias=per_column;element_bias=bf16;aux=none;scales=none");
}

TEST(Sm90Emitter, MetadataKeys) {
  EXPECT_TRUE(
      contains_all(metadata_of(fp8_scaled_fast_accum()),
                   {";cluster=2x1x1;", ";math_operation=multiply_add_fast_accum;",
                    ";bias=per_row;element_bias=bf16;", ";aux=none;", ";scales=per_tensor"}));
  EXPECT_TRUE(
      contains_all(metadata_of(f16_aux_gelu_tanh()),
                   {";cluster=4x1x1;", ";activation=gelu_tanh;", ";aux=f16;", ";scales=none"}));
  EXPECT_TRUE(contains_all(metadata_of(bf16_nt_stream_k()),
                           {";tile_scheduler=StreamK;", ";bias=none;aux=none;scales=none",
                            ";swizzle=IdentitySwizzle4;"}));
  EXPECT_TRUE(contains_all(metadata_of(f16_acc_pingpong_clamp()),
                           {";kernel_schedule=TmaWarpSpecializedPingpong;",
                            ";epilogue_schedule=TmaWarpSpecialized;", ";activation=clamp;"}));
  EXPECT_TRUE(
      contains_all(metadata_of(tf32_tn_stages4_cluster1x2()), {";stages=4;", ";cluster=1x2x1;"}));
  // The metadata is what the module table carries.
  const GemmDescription d = f16_aux_gelu_tanh();
  EXPECT_NE(module_of(d).find("\"" + metadata_of(d) + "\""), std::string::npos);
  // SM80 metadata has no SM90 keys.
  EXPECT_TRUE(contains_none(
      metadata_of(testing::tensorop_f16_tn()),
      {"cluster=", "kernel_schedule=", "tile_scheduler=", "bias=", "aux=", "scales="}));
}

// ---- the module ---------------------------------------------------------------------------

TEST(Sm90Emitter, ModuleStructure) {
  const GemmDescription a = bf16_tn_coop_bias_gelu();
  const GemmDescription b = fp8_scaled_fast_accum();
  const std::string text = emit_gemm_module({{a}, {b}});
  EXPECT_TRUE(contains_all(
      text, {module_open_text(), jit_include("sm90_gemm.cuh"),
             "(CUTLASS 3.x GemmUniversalAdapter, SM90)", "namespace tc_entry_0 {",
             "namespace tc_entry_1 {", "// ---- entry 0: " + a.procedural_name(),
             "// ---- entry 1: " + b.procedural_name(), "{TILECRAFT_ABI_VERSION, 2u, tc_entries}",
             "&tc_can_implement_1, &tc_workspace_size_1, &tc_run_1"}));
  EXPECT_TRUE(contains_none(
      text, {"sm80_gemm.cuh", "sm80_split_k_parallel.cuh", "sm90_conv.cuh", "evt_functions.cuh"}));
  EXPECT_LT(text.find("\"" + a.procedural_name() + "\""),
            text.find("\"" + b.procedural_name() + "\""));
  EXPECT_EQ(entry_name({a}), a.procedural_name());
}

TEST(Sm90Emitter, GridDependencyControlEarlyTriggerUnlessAnEntryIsStreamK) {
  const std::string full = "#define CUTLASS_ENABLE_GDC_FOR_SM90 1\n";
  const std::string waits =
      "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
      "#define CUTLASS_GDC_ENABLED\n#endif\n";
  const GemmDescription persistent = bf16_tn_coop_bias_gelu();
  const GemmDescription stream_k = bf16_nt_stream_k();
  EXPECT_TRUE(triggers_dependent_launch_early(persistent));
  EXPECT_FALSE(triggers_dependent_launch_early(stream_k));
  const std::string includes = module_open_text();
  for (const auto& [text, expected, absent] :
       {std::tuple{module_of(persistent), full, waits},
        std::tuple{module_of(stream_k), waits, full},
        std::tuple{emit_gemm_module({{persistent}, {stream_k}}), waits, full}}) {
    ASSERT_NE(text.find(expected), std::string::npos) << expected;
    EXPECT_LT(text.find(expected), text.find(includes)) << "must come before CUTLASS's headers";
    EXPECT_TRUE(contains_none(text, {absent}));
  }
  EXPECT_TRUE(contains_all(testing::jit_header_text("sm90.cuh"),
                           {"launch_params, a->header.launch_with_pdl != 0)"}));
  // Kernels that differ in the signal never share a translation unit.
  EXPECT_NE(module_class(persistent), module_class(stream_k));
  EXPECT_EQ(module_class(persistent), "sm90 gemm early");
}

TEST(Sm90Emitter, ArchFlagsTargetSm90a) {
  const auto flags = gemm_module_arch_flags(90);
  ASSERT_EQ(flags.size(), 1u);
  EXPECT_EQ(flags[0], "-gencode=arch=compute_90a,code=sm_90a");
}

TEST(Sm90Emitter, RefusesSplitKParallelEntries) {
  try {
    (void)emit_gemm_module({{bf16_tn_coop_bias_gelu(), GemmEntryKind::kSplitKParallel}});
    FAIL() << "expected tilecraft::Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.status().code(), StatusCode::kNotSupported);
    EXPECT_NE(std::string(error.what()).find("GemmSplitKParallel is an SM80 mode"),
              std::string::npos)
        << error.what();
    EXPECT_NE(std::string(error.what()).find("StreamK"), std::string::npos) << error.what();
  }
}

TEST(Sm90Emitter, RefusesModulesMixingArchitectures) {
  try {
    (void)emit_gemm_module({{testing::tensorop_f16_tn()}, {bf16_tn_coop_bias_gelu()}});
    FAIL() << "expected tilecraft::Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(error.what()).find("one module holds kernels of one arch; got 80 and 90"),
              std::string::npos)
        << error.what();
  }
}

// ---- golden -------------------------------------------------------------------------------

void expect_sm90_golden(const std::string& name, const GemmDescription& d) {
  testing::expect_golden(name, module_of(d));
}

TEST(Sm90EmitterGolden, Bf16CooperativeColumnBiasGelu) {
  expect_sm90_golden("sm90_bf16_tn_coop_bias_gelu", bf16_tn_coop_bias_gelu());
}

// The grouped variant: pointer-array layouts and schedules, and the bias per problem spelled out
// as an epilogue tree.
TEST(Sm90EmitterGolden, GroupedBf16BiasPerProblemGelu) {
  const GemmDescription d = bf16_tn_coop_bias_gelu();
  expect_sm90_golden("sm90_grouped_bf16_bias_gelu",
                     GemmDescription::make_grouped(d.arch, d.tile, d.A, d.B, d.C, d.epilogue,
                                                   d.swizzle, SchedulerMode::Device)
                         .value());
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::emit
