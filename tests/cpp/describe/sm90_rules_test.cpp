// SM90 (CUTLASS 3.x) description rules: valid descriptions across element types, schedules,
// clusters, stream-K and epilogue fusions get the expected procedural names and resolved
// schedules; bad ones are refused before anything is emitted, with a message that names the
// argument, what was expected and what was given, and with kInvalidArgument for a value that
// is wrong in itself vs kNotSupported for a valid value no SM90 kernel serves.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "emit/sm90_test_descriptions.hpp"
#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

using namespace sm90_test;
using enum DataType;
using KS = KernelSchedule;
using ES = EpilogueSchedule;
using TS = TileScheduler;
constexpr Layout R = Layout::RowMajor;
constexpr Layout C = Layout::ColumnMajor;

::testing::AssertionResult fails_with(const Status& status, StatusCode code,
                                      const std::vector<std::string>& parts) {
  if (status.is_ok()) return ::testing::AssertionFailure() << "was accepted";
  if (status.code() != code) {
    return ::testing::AssertionFailure() << "code " << to_string(status.code()) << ", expected "
                                         << to_string(code) << ": " << status.message();
  }
  for (const std::string& part : parts) {
    if (status.message().find(part) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "message lacks \"" << part << "\": " << status.message();
    }
  }
  return ::testing::AssertionSuccess();
}

Status sm90_tile(std::array<int, 3> shape, const MathInstruction& math, int stages = 0,
                 std::array<int, 3> cluster = {1, 1, 1}, KS kernel = KS::Auto,
                 ES epilogue_schedule = ES::Auto, TS scheduler = TS::Persistent) {
  return TileDescription::make_sm90(shape, stages, cluster, math, kernel, epilogue_schedule,
                                    scheduler)
      .status();
}

Status wgmma_status(std::array<int, 3> shape, DataType a, DataType b, DataType acc,
                    MathOperation op = MathOperation::multiply_add,
                    OpClass op_class = OpClass::TensorOp) {
  return MathInstruction::make(shape, a, b, acc, op_class, op).status();
}

Status gemm_status(int arch, const TileDescription& t, TensorDescription a, TensorDescription b,
                   TensorDescription c, const EpilogueFunctor& e,
                   Swizzle swizzle = Swizzle::IdentitySwizzle1) {
  return GemmDescription::make(arch, t, a, b, c, e, swizzle).status();
}

MathInstruction bf16_math() { return wgmma({64, 128, 16}, bf16, bf16, f32); }
TileDescription bf16_tile() { return tile({128, 128, 64}, bf16_math()); }
MathInstruction fp8_math() { return wgmma({64, 128, 32}, e4m3, e4m3, f32); }
TileDescription fp8_tile() { return tile({128, 128, 128}, fp8_math()); }
MathInstruction s8_math() { return wgmma({64, 128, 32}, s8, s8, s32); }
TileDescription s8_tile() { return tile({128, 128, 128}, s8_math()); }
MathInstruction sm80_bf16_math() {
  return MathInstruction::make({16, 8, 16}, bf16, bf16, f32, OpClass::TensorOp,
                               MathOperation::multiply_add)
      .value();
}
TileDescription sm80_bf16_tile() {
  return TileDescription::make({128, 128, 32}, 3, {2, 2, 1}, sm80_bf16_math()).value();
}

// ---- valid descriptions -------------------------------------------------------------------

struct ValidCase {
  std::string name;
  std::function<GemmDescription()> make;
  std::string procedural_name;
  KS kernel_schedule;
  ES epilogue_schedule;
};

std::vector<ValidCase> valid_cases() {
  using enum Activation;
  return {
      {"bf16_tn_coop_column_bias_gelu", bf16_tn_coop_bias_gelu,
       "tilecraft_sm90_tensorop_gemm_bf16bf16_f32acc_bf16_128x128x64_c1x1x1_s0_coop_tnt_"
       "align8x8x8_gelu_bcol_bf16",
       KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecializedCooperative},
      {"tf32_tn_stages4_cluster1x2", tf32_tn_stages4_cluster1x2,
       "tilecraft_sm90_tensorop_gemm_tf32tf32_f32acc_f32_128x128x32_c1x2x1_s4_coop_tnt_"
       "align4x4x4",
       KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecializedCooperative},
      {"f32_operands_as_tf32_pingpong",
       [] {
         return gemm(tile({64, 64, 32}, wgmma({64, 64, 8}, f32, f32, f32)), tma(f32, R),
                     tma(f32, C), tma(f32, R), epilogue(f32, f32));
       },
       "tilecraft_sm90_tensorop_gemm_f32f32_f32acc_f32_64x64x32_c1x1x1_s0_pingpong_tnt_"
       "align4x4x4",
       KS::TmaWarpSpecializedPingpong, ES::TmaWarpSpecialized},
      {"f16_acc_pingpong_clamp_column_major_c", f16_acc_pingpong_clamp,
       "tilecraft_sm90_tensorop_gemm_f16f16_f16acc_f16_64x128x64_c1x1x1_s0_pingpong_tnn_"
       "align8x8x8_actclamp_ef32_swzh",
       KS::TmaWarpSpecializedPingpong, ES::TmaWarpSpecialized},
      {"f16_nt_all_four_layouts_for_16_bit",
       [] {
         return gemm(tile({128, 128, 64}, wgmma({64, 128, 16}, f16, f16, f32)), tma(f16, C),
                     tma(f16, R), tma(f16, C), epilogue(f16, f32));
       },
       "tilecraft_sm90_tensorop_gemm_f16f16_f32acc_f16_128x128x64_c1x1x1_s0_coop_ntn_align8x8x8",
       KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecializedCooperative},
      {"fp8_e4m3_fast_accum_scaled_row_bias", fp8_scaled_fast_accum,
       "tilecraft_sm90_tensorop_fastaccumgemm_e4m3e4m3_f32acc_bf16_128x128x128_c2x1x1_s0_coop_"
       "tnt_align16x16x8_brow_bf16_scaled",
       KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecializedCooperative},
      {"fp8_e4m3_e5m2_to_e4m3_relu_scaled", fp8_out_e4m3_e5m2_relu,
       "tilecraft_sm90_tensorop_gemm_e4m3e5m2_f32acc_e4m3_128x256x128_c1x1x1_s0_coop_tnt_"
       "align16x16x16_relu_scaled",
       KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecializedCooperative},
      {"fp8_e5m2_e4m3_to_f16",
       [] {
         return gemm(tile({64, 128, 128}, wgmma({64, 128, 32}, e5m2, e4m3, f32)), tma(e5m2, R),
                     tma(e4m3, C), tma(f16, R), epilogue(f16, f32, identity, scales()));
       },
       "tilecraft_sm90_tensorop_gemm_e5m2e4m3_f32acc_f16_64x128x128_c1x1x1_s0_pingpong_tnt_"
       "align16x16x8_scaled",
       KS::TmaWarpSpecializedPingpong, ES::TmaWarpSpecialized},
      {"int8_to_s32",
       [] {
         return gemm(s8_tile(), tma(s8, R), tma(s8, C), tma(s32, R),
                     epilogue(s32, s32, identity, {}, s32));
       },
       "tilecraft_sm90_tensorop_gemm_s8s8_s32acc_s32_128x128x128_c1x1x1_s0_coop_tnt_align16x16x4",
       KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecializedCooperative},
      {"int8_to_s8_f32_compute", int8_tn_s8_out,
       "tilecraft_sm90_tensorop_gemm_s8s8_s32acc_s8_128x128x128_c1x1x1_s0_coop_tnt_"
       "align16x16x16_ef32",
       KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecializedCooperative},
      {"int8_to_f32_with_row_bias",
       [] {
         return gemm(s8_tile(), tma(s8, R), tma(s8, C), tma(f32, R),
                     epilogue(f32, s32, identity, bias(BiasKind::per_row, f32)));
       },
       "tilecraft_sm90_tensorop_gemm_s8s8_s32acc_f32_128x128x128_c1x1x1_s0_coop_tnt_"
       "align16x16x4_brow_f32_ef32",
       KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecializedCooperative},
      {"bf16_nt_stream_k_swizzle4", bf16_nt_stream_k,
       "tilecraft_sm90_tensorop_gemm_bf16bf16_f32acc_f32_128x256x64_c1x1x1_s0_coop_streamk_ntt_"
       "align8x8x4_swz4",
       KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecializedCooperative},
      {"f16_aux_gelu_tanh_cluster4x1", f16_aux_gelu_tanh,
       "tilecraft_sm90_tensorop_gemm_f16f16_f32acc_f16_128x128x64_c4x1x1_s0_coop_tnt_"
       "align8x8x8_gelu_tanh_brow_f16_aux_f16",
       KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecializedCooperative},
      {"bf16_explicit_pingpong_m128",
       [] {
         return gemm(
             tile({128, 128, 64}, bf16_math(), 0, {1, 1, 1}, KS::TmaWarpSpecializedPingpong),
             tma(bf16, R), tma(bf16, C), tma(bf16, R), epilogue(bf16, f32));
       },
       "tilecraft_sm90_tensorop_gemm_bf16bf16_f32acc_bf16_128x128x64_c1x1x1_s0_pingpong_tnt_"
       "align8x8x8",
       KS::TmaWarpSpecializedPingpong, ES::TmaWarpSpecialized},
      {"bf16_plain_warp_specialized_m64_leaky_relu_aux_f32",
       [] {
         return gemm(tile({64, 128, 64}, bf16_math(), 0, {1, 1, 1}, KS::TmaWarpSpecialized),
                     tma(bf16, R), tma(bf16, C), tma(bf16, R),
                     epilogue(bf16, f32, leaky_relu, bias_and_aux(BiasKind::per_column, f32, f32)));
       },
       "tilecraft_sm90_tensorop_gemm_bf16bf16_f32acc_bf16_64x128x64_c1x1x1_s0_ws_tnt_align8x8x8_"
       "leaky_relu_bcol_f32_aux_f32",
       KS::TmaWarpSpecialized, ES::TmaWarpSpecialized},
      {"bf16_256x128_cluster2x2_stages3",
       [] {
         return gemm(tile({256, 128, 64}, bf16_math(), 3, {2, 2, 1}), tma(bf16, R), tma(bf16, C),
                     tma(bf16, R), epilogue(bf16, f32, silu));
       },
       "tilecraft_sm90_tensorop_gemm_bf16bf16_f32acc_bf16_256x128x64_c2x2x1_s3_coop_tnt_"
       "align8x8x8_silu",
       KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecializedCooperative},
      {"bf16_cluster1x4_aux_without_bias",
       [] {
         EpilogueFusion aux_only;
         aux_only.aux_output = true;
         aux_only.element_aux = bf16;
         return gemm(tile({128, 64, 64}, wgmma({64, 64, 16}, bf16, bf16, f32), 0, {1, 4, 1}),
                     tma(bf16, R), tma(bf16, C), tma(bf16, R), epilogue(bf16, f32, relu, aux_only));
       },
       "tilecraft_sm90_tensorop_gemm_bf16bf16_f32acc_bf16_128x64x64_c1x4x1_s0_coop_tnt_"
       "align8x8x8_relu_aux_bf16",
       KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecializedCooperative},
  };
}

class Sm90ValidDescription : public ::testing::TestWithParam<ValidCase> {};

TEST_P(Sm90ValidDescription, HasTheExpectedNameAndSchedules) {
  const ValidCase& c = GetParam();
  const GemmDescription d = c.make();
  EXPECT_EQ(d.arch, 90);
  EXPECT_TRUE(d.tile.is_sm90());
  EXPECT_EQ(d.procedural_name(), c.procedural_name);
  EXPECT_EQ(d.tile.kernel_schedule, c.kernel_schedule) << to_string(d.tile.kernel_schedule);
  EXPECT_EQ(d.tile.epilogue_schedule, c.epilogue_schedule) << to_string(d.tile.epilogue_schedule);
  EXPECT_TRUE(d.validate());
  EXPECT_TRUE(d.epilogue.needs_sm90() || !d.epilogue.fusion.any());
}

INSTANTIATE_TEST_SUITE_P(Sm90, Sm90ValidDescription, ::testing::ValuesIn(valid_cases()),
                         [](const auto& param_info) { return param_info.param.name; });

TEST(Sm90Schedules, AutoResolvesByTileMAndScheduler) {
  const MathInstruction m = bf16_math();
  struct Case {
    std::array<int, 3> shape;
    TS scheduler;
    KS kernel;
    ES epilogue;
    const char* name_part;
  };
  const Case cases[] = {
      {{64, 128, 64},
       TS::Persistent,
       KS::TmaWarpSpecializedPingpong,
       ES::TmaWarpSpecialized,
       "_pingpong"},
      {{128, 128, 64},
       TS::Persistent,
       KS::TmaWarpSpecializedCooperative,
       ES::TmaWarpSpecializedCooperative,
       "_coop"},
      {{256, 128, 64},
       TS::Persistent,
       KS::TmaWarpSpecializedCooperative,
       ES::TmaWarpSpecializedCooperative,
       "_coop"},
      {{128, 128, 64},
       TS::StreamK,
       KS::TmaWarpSpecializedCooperative,
       ES::TmaWarpSpecializedCooperative,
       "_coop_streamk"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name_part);
    auto t = TileDescription::make_sm90(c.shape, 0, {1, 1, 1}, m, KS::Auto, ES::Auto, c.scheduler);
    ASSERT_TRUE(t) << t.status().message();
    EXPECT_EQ(t->kernel_schedule, c.kernel);
    EXPECT_EQ(t->epilogue_schedule, c.epilogue);
    EXPECT_NE(t->procedural_name().find(c.name_part), std::string::npos) << t->procedural_name();
  }
  // An explicit kernel schedule with an Auto epilogue schedule gets the matching epilogue.
  auto plain = TileDescription::make_sm90(
      {128, 64, 64}, 0, {1, 1, 1}, wgmma({64, 64, 16}, bf16, bf16, f32), KS::TmaWarpSpecialized);
  ASSERT_TRUE(plain) << plain.status().message();
  EXPECT_EQ(plain->epilogue_schedule, ES::TmaWarpSpecialized);
  EXPECT_EQ(plain->procedural_name(), "128x64x64_c1x1x1_s0_ws");
  // Explicit matching schedules are kept.
  auto coop =
      TileDescription::make_sm90({128, 128, 64}, 4, {2, 1, 1}, m, KS::TmaWarpSpecializedCooperative,
                                 ES::TmaWarpSpecializedCooperative, TS::StreamK);
  ASSERT_TRUE(coop) << coop.status().message();
  EXPECT_EQ(coop->procedural_name(), "128x128x64_c2x1x1_s4_coop_streamk");
}

TEST(Sm90Tile, EveryWgmmaRuleTakesItsKAndEveryNInSteps8) {
  for (const WgmmaRule& rule : wgmma_rules()) {
    SCOPED_TRACE(std::string(long_name(rule.element_a)) + " x " +
                 std::string(long_name(rule.element_b)) + " -> " +
                 std::string(long_name(rule.element_accumulator)) + " " +
                 std::string(to_string(rule.math_operation)));
    const int k = wgmma_k(rule.element_a);
    for (int n = 8; n <= 256; n += 8) {
      auto m =
          MathInstruction::make({64, n, k}, rule.element_a, rule.element_b,
                                rule.element_accumulator, OpClass::TensorOp, rule.math_operation);
      ASSERT_TRUE(m) << "N=" << n << ": " << m.status().message();
      EXPECT_TRUE(m->is_wgmma());
    }
    // A 128xNx(4 K) cooperative tile of each instruction is valid.
    auto m =
        MathInstruction::make({64, 128, k}, rule.element_a, rule.element_b,
                              rule.element_accumulator, OpClass::TensorOp, rule.math_operation);
    ASSERT_TRUE(m);
    auto t = TileDescription::make_sm90({128, 128, 4 * k}, 0, {1, 1, 1}, *m);
    EXPECT_TRUE(t) << t.status().message();
  }
}

TEST(Sm90Names, EverySettingThatChangesTheKernelChangesTheName) {
  using enum Activation;
  const MathInstruction m = bf16_math();
  const TensorDescription a = tma(bf16, R), b = tma(bf16, C), c = tma(bf16, R);
  const std::vector<GemmDescription> variants = {
      gemm(tile({128, 128, 64}, m), a, b, c, epilogue(bf16, f32)),
      gemm(tile({128, 128, 64}, m, 4), a, b, c, epilogue(bf16, f32)),
      gemm(tile({128, 128, 64}, m, 0, {2, 1, 1}), a, b, c, epilogue(bf16, f32)),
      gemm(tile({128, 128, 64}, m, 0, {1, 2, 1}), a, b, c, epilogue(bf16, f32)),
      gemm(tile({128, 128, 64}, m, 0, {1, 1, 1}, KS::TmaWarpSpecializedPingpong), a, b, c,
           epilogue(bf16, f32)),
      gemm(tile({128, 128, 64}, m, 0, {1, 1, 1}, KS::Auto, TS::StreamK), a, b, c,
           epilogue(bf16, f32)),
      gemm(tile({128, 128, 32}, m), a, b, c, epilogue(bf16, f32)),
      gemm(tile({128, 128, 64}, m), a, b, c, epilogue(bf16, f32, gelu)),
      gemm(tile({128, 128, 64}, m), a, b, c, epilogue(bf16, f32, gelu_tanh)),
      gemm(tile({128, 128, 64}, m), a, b, c, epilogue(bf16, f32, clamp)),
      gemm(tile({128, 128, 64}, m), a, b, c,
           epilogue(bf16, f32, identity, bias(BiasKind::per_row, bf16))),
      gemm(tile({128, 128, 64}, m), a, b, c,
           epilogue(bf16, f32, identity, bias(BiasKind::per_column, bf16))),
      gemm(tile({128, 128, 64}, m), a, b, c,
           epilogue(bf16, f32, identity, bias(BiasKind::per_column, f32))),
      gemm(tile({128, 128, 64}, m), a, b, c,
           epilogue(bf16, f32, identity, bias_and_aux(BiasKind::per_column, f32, f32))),
      gemm(tile({128, 128, 64}, m), a, b, c,
           epilogue(bf16, f32, identity, bias_and_aux(BiasKind::per_column, f32, bf16))),
      gemm(tile({128, 128, 64}, m), a, b, c, epilogue(bf16, f32), Swizzle::IdentitySwizzle2),
      gemm(tile({128, 128, 64}, m), a, b, c, epilogue(bf16, f32), Swizzle::HorizontalSwizzle),
      gemm(tile({128, 128, 64}, m), tma(bf16, C), b, c, epilogue(bf16, f32)),
      gemm(tile({128, 128, 64}, m), a, b, tma(f32, R), epilogue(f32, f32)),
  };
  std::set<std::string> names;
  for (const GemmDescription& d : variants) {
    EXPECT_TRUE(names.insert(d.procedural_name()).second) << "repeated: " << d.procedural_name();
  }
  // And an SM90 name never equals the SM80 name of the same element types and layouts.
  const GemmDescription sm80 =
      GemmDescription::make(80, sm80_bf16_tile(), tma(bf16, R), tma(bf16, C), tma(bf16, R),
                            EpilogueFunctor::linear_combination(bf16, 8, f32, f32).value(),
                            Swizzle::IdentitySwizzle1)
          .value();
  EXPECT_EQ(names.count(sm80.procedural_name()), 0u);
  EXPECT_EQ(sm80.procedural_name().rfind("tilecraft_sm80_", 0), 0u);
}

TEST(Sm90Epilogue, FusionsAndSm90ActivationsNeedSm90) {
  const EpilogueFunctor plain = EpilogueFunctor::linear_combination(bf16, 8, f32, f32).value();
  EXPECT_FALSE(plain.needs_sm90());
  auto biased = plain.with_fusion(bias(BiasKind::per_row, bf16));
  ASSERT_TRUE(biased) << biased.status().message();
  EXPECT_TRUE(biased->needs_sm90());
  EXPECT_EQ(biased->procedural_name(), "brow_bf16");
  for (Activation a : kSm90OnlyActivations) {
    auto e = EpilogueFunctor::linear_combination_generic(a, bf16, 8, f32, f32);
    ASSERT_TRUE(e) << e.status().message();
    EXPECT_TRUE(e->needs_sm90()) << to_string(a);
  }
  for (Activation a : kAllActivations) {
    auto e = EpilogueFunctor::linear_combination_generic(a, bf16, 8, f32, f32);
    ASSERT_TRUE(e) << e.status().message();
    EXPECT_FALSE(e->needs_sm90()) << to_string(a);
  }
  EXPECT_EQ(activation_argument_count(Activation::clamp), 2);
  EXPECT_EQ(activation_argument_count(Activation::gelu_tanh), 0);
}

// An fp8 output is described like any other: the factories accept it and with_fusion adds the
// scales it needs (the GEMM rules, not the functor, demand them).
TEST(Sm90Epilogue, Fp8OutputFromTheFactoriesWithScales) {
  for (DataType out : {e4m3, e5m2}) {
    SCOPED_TRACE(long_name(out));
    auto plain = EpilogueFunctor::linear_combination(out, 16, f32, f32);
    ASSERT_TRUE(plain) << plain.status().message();
    auto scaled = plain->with_fusion(scales());
    ASSERT_TRUE(scaled) << scaled.status().message();
    EXPECT_EQ(scaled->procedural_name(), "scaled");
    auto act = EpilogueFunctor::linear_combination_generic(Activation::relu, out, 16, f32, f32);
    ASSERT_TRUE(act) << act.status().message();
    auto act_scaled = act->with_fusion(scales(BiasKind::per_column, f16));
    ASSERT_TRUE(act_scaled) << act_scaled.status().message();
    EXPECT_TRUE(GemmDescription::make(90, fp8_tile(), tma(e4m3, R), tma(e4m3, C), tma(out, R),
                                      *act_scaled, Swizzle::IdentitySwizzle1));
  }
}

// ---- bad descriptions ---------------------------------------------------------------------

struct BadCase {
  std::string name;
  std::function<Status()> make;
  StatusCode code;
  std::vector<std::string> parts;  // key substrings of the message
};

// gtest prints a parameter in test listings: the case's name, not its bytes.
void PrintTo(const BadCase& bad, std::ostream* os) { *os << bad.name; }

std::vector<BadCase> bad_cases() {
  using enum Activation;
  using SC = StatusCode;
  const SC invalid = SC::kInvalidArgument;
  const SC unsupported = SC::kNotSupported;
  return {
      // TMA moves 16-byte vectors.
      {"tma_alignment_a_4_bf16",
       [] {
         return gemm_status(90, bf16_tile(), {bf16, R, 4}, tma(bf16, C), tma(bf16, R),
                            epilogue(bf16, f32));
       },
       invalid,
       {"A: alignment 4 of bfloat16 is 64 bits", "16-byte (128-bit)", "expected alignment 8"}},
      {"tma_alignment_c_2_f32",
       [] {
         EpilogueFunctor e = epilogue(f32, f32);
         e.elements_per_access = 2;
         return gemm_status(90, bf16_tile(), tma(bf16, R), tma(bf16, C), {f32, R, 2}, e);
       },
       invalid,
       {"C: alignment 2 of float32 is 64 bits", "expected alignment 4"}},
      // wgmma reads 32- and 8-bit operands K-major only.
      {"tf32_not_tn",
       [] {
         const TileDescription t = tile({128, 128, 32}, wgmma({64, 128, 8}, tf32, tf32, f32));
         return gemm_status(90, t, tma(tf32, C), tma(tf32, C), tma(f32, R), epilogue(f32, f32));
       },
       unsupported,
       {"layouts:", "tfloat32", "A RowMajor and B ColumnMajor (TN)",
        "got A ColumnMajor, B ColumnMajor"}},
      {"fp8_not_tn",
       [] {
         return gemm_status(90, fp8_tile(), tma(e4m3, R), tma(e4m3, R), tma(bf16, R),
                            epilogue(bf16, f32, identity, scales()));
       },
       unsupported,
       {"layouts:", "float8_e4m3", "(TN)", "got A RowMajor, B RowMajor"}},
      {"int8_not_tn",
       [] {
         return gemm_status(90, s8_tile(), tma(s8, C), tma(s8, C), tma(s32, R),
                            epilogue(s32, s32, identity, {}, s32));
       },
       unsupported,
       {"layouts:", "int8", "(TN)", "got A ColumnMajor, B ColumnMajor"}},
      {"interleaved_layout",
       [] {
         return gemm_status(90, s8_tile(), {s8, Layout::ColumnMajorInterleaved32, 16},
                            {s8, Layout::RowMajorInterleaved32, 16}, tma(s32, R),
                            epilogue(s32, s32, identity, {}, s32));
       },
       unsupported,
       {"A: SM90 GEMMs take RowMajor or ColumnMajor operands, got ColumnMajorInterleaved32"}},
      // Schedules.
      {"cooperative_with_m64",
       [] {
         return sm90_tile({64, 128, 64}, bf16_math(), 0, {1, 1, 1},
                          KS::TmaWarpSpecializedCooperative);
       },
       invalid,
       {"TileDescription (SM90)", "kernel_schedule TmaWarpSpecializedCooperative",
        "threadblock M must be 128 or 256, got 64"}},
      {"pingpong_with_stream_k",
       [] {
         return sm90_tile({128, 128, 64}, bf16_math(), 0, {1, 1, 1}, KS::TmaWarpSpecializedPingpong,
                          ES::Auto, TS::StreamK);
       },
       unsupported,
       {"tile_scheduler StreamK", "TmaWarpSpecializedCooperative",
        "got TmaWarpSpecializedPingpong"}},
      {"plain_warp_specialized_with_stream_k",
       [] {
         return sm90_tile({128, 128, 64}, bf16_math(), 0, {1, 1, 1}, KS::TmaWarpSpecialized,
                          ES::Auto, TS::StreamK);
       },
       unsupported,
       {"tile_scheduler StreamK", "got TmaWarpSpecialized"}},
      {"epilogue_schedule_mismatch",
       [] {
         return sm90_tile({128, 128, 64}, bf16_math(), 0, {1, 1, 1},
                          KS::TmaWarpSpecializedCooperative, ES::TmaWarpSpecialized);
       },
       invalid,
       {"epilogue_schedule TmaWarpSpecialized does not fit kernel_schedule "
        "TmaWarpSpecializedCooperative",
        "expected TmaWarpSpecializedCooperative (or Auto)"}},
      {"epilogue_schedule_cooperative_on_pingpong",
       [] {
         return sm90_tile({64, 128, 64}, bf16_math(), 0, {1, 1, 1}, KS::TmaWarpSpecializedPingpong,
                          ES::TmaWarpSpecializedCooperative);
       },
       invalid,
       {"epilogue_schedule TmaWarpSpecializedCooperative does not fit",
        "expected TmaWarpSpecialized (or Auto)"}},
      // Clusters.
      {"cluster_3x1x1",
       [] {
         return sm90_tile({128, 128, 64}, bf16_math(), 0, {3, 1, 1});
       },
       invalid,
       {"cluster_shape [3, 1, 1]", "expected [1|2|4, 1|2|4, 1]", "at most 4 CTAs"}},
      {"cluster_4x4x1",
       [] {
         return sm90_tile({128, 128, 64}, bf16_math(), 0, {4, 4, 1});
       },
       invalid,
       {"cluster_shape [4, 4, 1]", "at most 4 CTAs"}},
      {"cluster_z_2",
       [] {
         return sm90_tile({128, 128, 64}, bf16_math(), 0, {1, 1, 2});
       },
       invalid,
       {"cluster_shape [1, 1, 2]", "expected [1|2|4, 1|2|4, 1]"}},
      {"cluster_zero",
       [] {
         return sm90_tile({128, 128, 64}, bf16_math(), 0, {0, 1, 1});
       },
       invalid,
       {"cluster_shape [0, 1, 1]"}},
      // Tile shape.
      {"tile_m_192",
       [] {
         return sm90_tile({192, 128, 64}, bf16_math());
       },
       invalid,
       {"threadblock_shape [192, 128, 64]", "M must be 64, 128 or 256"}},
      {"tile_k_not_multiple_of_instruction_k",
       [] {
         return sm90_tile({128, 128, 40}, bf16_math());
       },
       invalid,
       {"threadblock_shape [128, 128, 40]", "K must be a multiple of 16",
        "(the wgmma K for bfloat16)"}},
      {"tile_k_over_256_bytes",
       [] {
         return sm90_tile({128, 128, 256}, bf16_math());
       },
       invalid,
       {"threadblock_shape [128, 128, 256]", "between 16 and 128"}},
      {"tile_n_not_multiple_of_16",
       [] {
         return sm90_tile({128, 72, 64}, wgmma({64, 8, 16}, bf16, bf16, f32));
       },
       invalid,
       {"threadblock_shape [128, 72, 64]", "N must be a multiple of 16 in [16, 256]"}},
      {"tile_n_not_multiple_of_instruction_n",
       [] {
         return sm90_tile({128, 64, 64}, bf16_math());
       },
       invalid,
       {"threadblock_shape N 64 is not a multiple of the instruction's N 128"}},
      {"accumulators_256x256_cooperative",
       [] {
         return sm90_tile({256, 256, 64}, wgmma({64, 256, 16}, bf16, bf16, f32));
       },
       invalid,
       {"threadblock_shape [256, 256, 64] with TmaWarpSpecializedCooperative",
        "needs 256 accumulator registers per thread", "at most 128"}},
      {"accumulators_128x256_pingpong",
       [] {
         return sm90_tile({128, 256, 64}, wgmma({64, 256, 16}, bf16, bf16, f32), 0, {1, 1, 1},
                          KS::TmaWarpSpecializedPingpong);
       },
       invalid,
       {"needs 256 accumulator registers per thread", "or the cooperative schedule"}},
      // Stages.
      {"stages_1",
       [] {
         return sm90_tile({128, 128, 64}, bf16_math(), 1);
       },
       invalid,
       {"stages must be 0 (as many as fit) or in [2, 12], got 1"}},
      {"stages_too_many_for_shared_memory",
       [] {
         return sm90_tile({128, 256, 64}, wgmma({64, 256, 16}, bf16, bf16, f32), 10);
       },
       invalid,
       {"threadblock_shape [128, 256, 64] with 10 stages needs 480 KiB", "SM90 allows 227 KiB",
        "use fewer stages or stages=0"}},
      {"stages_with_the_epilogue_share",
       [] {
         // 6 x 32 KiB fits the tile rule; with an f32 epilogue the whole does not fit.
         return gemm_status(90, tile({128, 128, 64}, bf16_math(), 6), tma(bf16, R), tma(bf16, C),
                            tma(f32, R), epilogue(f32, f32));
       },
       invalid,
       {"tile_description: 6 stages of threadblock_shape [128, 128, 64] take 192 KiB",
        "epilogue about", "SM90 allows 227 KiB", "use fewer stages"}},
      // wgmma instructions.
      {"wgmma_n_12",
       [] {
         return wgmma_status({64, 12, 16}, bf16, bf16, f32);
       },
       invalid,
       {"MathInstruction (SM90 wgmma [64, 12, 16])",
        "instruction_shape: N must be a multiple of 8 in [8, 256], got 12"}},
      {"wgmma_n_264",
       [] {
         return wgmma_status({64, 264, 16}, bf16, bf16, f32);
       },
       invalid,
       {"got 264"}},
      {"wgmma_k_32_for_bf16",
       [] {
         return wgmma_status({64, 128, 32}, bf16, bf16, f32);
       },
       invalid,
       {"K must be 16 for bfloat16 operands (32 bytes), got 32"}},
      {"wgmma_k_16_for_fp8",
       [] {
         return wgmma_status({64, 128, 16}, e4m3, e4m3, f32);
       },
       invalid,
       {"K must be 32 for float8_e4m3 operands", "got 16"}},
      {"wgmma_bf16_accumulator",
       [] {
         return wgmma_status({64, 128, 16}, bf16, bf16, bf16);
       },
       invalid,
       {"no wgmma takes bfloat16 x bfloat16 with a bfloat16 accumulator",
        "(bfloat16, bfloat16, float32)"}},
      {"wgmma_mixed_f16_bf16",
       [] {
         return wgmma_status({64, 128, 16}, f16, bf16, f32);
       },
       invalid,
       {"no wgmma takes float16 x bfloat16"}},
      {"wgmma_fast_accum_on_bf16",
       [] {
         return wgmma_status({64, 128, 16}, bf16, bf16, f32,
                             MathOperation::multiply_add_fast_accum);
       },
       invalid,
       {"math_operation multiply_add_fast_accum is not valid", "expected one of multiply_add"}},
      {"wgmma_on_simt",
       [] {
         return wgmma_status({64, 128, 16}, bf16, bf16, f32, MathOperation::multiply_add,
                             OpClass::Simt);
       },
       invalid,
       {"opcode_class must be TensorOp, got Simt"}},
      {"make_sm90_with_an_sm80_instruction",
       [] {
         return sm90_tile({128, 128, 32}, sm80_bf16_math());
       },
       invalid,
       {"math_instruction: an SM90 tile needs a wgmma instruction", "got [16, 8, 16]"}},
      // fp8 and per-tensor scales.
      {"fp8_operands_without_scales",
       [] {
         return gemm_status(90, fp8_tile(), tma(e4m3, R), tma(e4m3, C), tma(bf16, R),
                            epilogue(bf16, f32));
       },
       invalid,
       {"epilogue_functor: fp8 (float8_e4m3) operands carry per-tensor scales", "scales=True"}},
      {"fp8_output_without_scales",
       [] {
         return gemm_status(90, fp8_tile(), tma(e4m3, R), tma(e4m3, C), tma(e4m3, R),
                            epilogue(e4m3, f32));
       },
       invalid,
       {"epilogue_functor:", "per-tensor scales", "scales=True"}},
      {"fp8_output_from_bf16_operands",
       [] {
         return gemm_status(90, bf16_tile(), tma(bf16, R), tma(bf16, C), tma(e4m3, R),
                            epilogue(e4m3, f32));
       },
       unsupported,
       {"C: SM90 GEMMs on bfloat16 operands write float16, bfloat16 or float32; got "
        "float8_e4m3"}},
      {"scales_with_bf16_operands",
       [] {
         return gemm_status(90, bf16_tile(), tma(bf16, R), tma(bf16, C), tma(bf16, R),
                            epilogue(bf16, f32, identity, scales()));
       },
       unsupported,
       {"per-tensor scales are for fp8 operands; got bfloat16"}},
      {"aux_with_scales",
       [] {
         EpilogueFusion f = scales();
         f.aux_output = true;
         return EpilogueFunctor::linear_combination(bf16, 8, f32, f32)
             .value()
             .with_fusion(f)
             .status();
       },
       unsupported,
       {"aux output together with per-tensor scales"}},
      {"fp8_to_int8_output",
       [] {
         return gemm_status(90, fp8_tile(), tma(e4m3, R), tma(e4m3, C), tma(s8, R),
                            epilogue(s8, f32, identity, scales()));
       },
       unsupported,
       {"C: SM90 GEMMs on float8_e4m3 operands write float16, bfloat16, float32 or fp8; got int8"}},
      // int8.
      {"int8_with_activation",
       [] {
         return gemm_status(90, s8_tile(), tma(s8, R), tma(s8, C), tma(s8, R),
                            epilogue(s8, s32, relu));
       },
       unsupported,
       {"integer epilogues are plain LinearCombination (no activation, bias or aux output)"}},
      {"int8_s32_output_with_bias",
       [] {
         return gemm_status(90, s8_tile(), tma(s8, R), tma(s8, C), tma(s32, R),
                            epilogue(s32, s32, identity, bias(BiasKind::per_row, f32)));
       },
       unsupported,
       {"integer epilogues are plain LinearCombination"}},
      {"int8_to_uint8",
       [] {
         return gemm_status(90, s8_tile(), tma(s8, R), tma(s8, C), tma(u8, R), epilogue(u8, s32));
       },
       unsupported,
       {"C: SM90 GEMMs on int8 operands write int8, int32 or float32; got uint8"}},
      // Epilogue kinds and types.
      {"linear_combination_clamp_on_arch_90",
       [] {
         return gemm_status(90, s8_tile(), tma(s8, R), tma(s8, C), tma(s8, R),
                            EpilogueFunctor::linear_combination_clamp(s8, 16, s32, f32).value());
       },
       unsupported,
       {"SM90 kernels take LinearCombination or LinearCombinationGeneric",
        "LinearCombinationGeneric(clamp)", "got LinearCombinationClamp"}},
      {"fast_linear_combination_clamp_on_arch_90",
       [] {
         return gemm_status(90, s8_tile(), tma(s8, R), tma(s8, C), tma(s8, R),
                            EpilogueFunctor::fast_linear_combination_clamp(s8, 16).value());
       },
       unsupported,
       {"got FastLinearCombinationClamp"}},
      {"bf16_compute",
       [] {
         return gemm_status(90, bf16_tile(), tma(bf16, R), tma(bf16, C), tma(bf16, R),
                            epilogue(bf16, f32, identity, {}, bf16));
       },
       unsupported,
       {"SM90 epilogues compute in float32", "element_epilogue is bfloat16"}},
      {"element_bias_int8",
       [] {
         return EpilogueFunctor::linear_combination(bf16, 8, f32, f32)
             .value()
             .with_fusion(bias(BiasKind::per_row, s8))
             .status();
       },
       invalid,
       {"element_bias must be float32, float16 or bfloat16, got int8"}},
      {"accumulator_mismatch",
       [] {
         return gemm_status(90, bf16_tile(), tma(bf16, R), tma(bf16, C), tma(bf16, R),
                            epilogue(bf16, f16));
       },
       invalid,
       {"epilogue_functor: element_accumulator float16 does not match the math instruction's "
        "accumulator float32"}},
      {"operand_type_mismatch",
       [] {
         return gemm_status(90, bf16_tile(), tma(f16, R), tma(bf16, C), tma(bf16, R),
                            epilogue(bf16, f32));
       },
       invalid,
       {"A: element float16 does not match the math instruction's element_a bfloat16"}},
      {"batched_swizzle_with_stream_k",
       [] {
         return gemm_status(90,
                            tile({128, 128, 64}, bf16_math(), 0, {1, 1, 1}, KS::Auto, TS::StreamK),
                            tma(bf16, R), tma(bf16, C), tma(bf16, R), epilogue(bf16, f32),
                            Swizzle::BatchedIdentitySwizzle);
       },
       unsupported,
       {"swizzling_functor", "BatchedIdentitySwizzle", "StreamK", "use IdentitySwizzle1"}},
      // Arch against tile and epilogue.
      {"sm80_tile_with_arch_90",
       [] {
         return gemm_status(90, sm80_bf16_tile(), tma(bf16, R), tma(bf16, C), tma(bf16, R),
                            epilogue(bf16, f32));
       },
       invalid,
       {"tile_description: arch 90 builds CUTLASS 3.x kernels from a wgmma math instruction",
        "got an SM80 instruction shape [16, 8, 16]", "use arch=80"}},
      {"wgmma_tile_with_arch_80",
       [] {
         return gemm_status(80, bf16_tile(), tma(bf16, R), tma(bf16, C), tma(bf16, R),
                            epilogue(bf16, f32));
       },
       invalid,
       {"tile_description: a wgmma instruction shape [64, N, K]", "pass arch=90"}},
      {"bias_fusion_on_arch_80",
       [] {
         return gemm_status(80, sm80_bf16_tile(), tma(bf16, R), tma(bf16, C), tma(bf16, R),
                            epilogue(bf16, f32, identity, bias(BiasKind::per_column, bf16)));
       },
       unsupported,
       {"epilogue_functor:", "SM90 epilogue fusions", "pass arch=90"}},
      {"gelu_tanh_on_arch_80",
       [] {
         return gemm_status(80, sm80_bf16_tile(), tma(bf16, R), tma(bf16, C), tma(bf16, R),
                            epilogue(bf16, f32, gelu_tanh));
       },
       unsupported,
       {"gelu_tanh, clamp", "pass arch=90"}},
      {"fp8_output_on_arch_80",
       [] {
         return gemm_status(80, sm80_bf16_tile(), tma(bf16, R), tma(bf16, C), tma(e4m3, R),
                            epilogue(e4m3, f32, identity, scales()));
       },
       unsupported,
       {"pass arch=90"}},
      {"sm90_settings_on_an_sm80_tile",
       [] {
         TileDescription t = sm80_bf16_tile();
         t.cluster_shape = {2, 1, 1};
         return t.validate();
       },
       invalid,
       {"cluster_shape, kernel_schedule, epilogue_schedule, tile_scheduler and "
        "mma_promotion_interval are SM90"}},
      {"arch_89",
       [] {
         return gemm_status(89, bf16_tile(), tma(bf16, R), tma(bf16, C), tma(bf16, R),
                            epilogue(bf16, f32));
       },
       unsupported,
       {"arch: expected 80", "or 90", "got 89"}},
      // The caller's input, not a broken invariant: an invalid argument naming the field.
      {"unresolved_schedules_built_by_hand",
       [] {
         TileDescription t = bf16_tile();
         t.kernel_schedule = KS::Auto;
         return t.validate();
       },
       SC::kInvalidArgument,
       {"kernel_schedule: Auto is resolved when the tile is made", "make_sm90"}},
  };
}

class Sm90BadDescription : public ::testing::TestWithParam<BadCase> {};

TEST_P(Sm90BadDescription, IsRefusedWithAMessageNamingIt) {
  const BadCase& c = GetParam();
  EXPECT_TRUE(fails_with(c.make(), c.code, c.parts));
}

INSTANTIATE_TEST_SUITE_P(Sm90, Sm90BadDescription, ::testing::ValuesIn(bad_cases()),
                         [](const auto& param_info) { return param_info.param.name; });

TEST(Sm90BadDescriptions, AtLeastFifteenDistinctCases) { EXPECT_GE(bad_cases().size(), 15u); }

// ---- gaps these tests found, now closed --------------------------------------------------------

// With StreamK and kernel_schedule Auto at M=64 the message names StreamK, which is what needs
// the cooperative schedule and so threadblock M 128 or 256.
TEST(Sm90FormerGaps, StreamKAtM64NamesTheScheduler) {
  EXPECT_TRUE(fails_with(
      sm90_tile({64, 128, 64}, bf16_math(), 0, {1, 1, 1}, KS::Auto, ES::Auto, TS::StreamK),
      StatusCode::kInvalidArgument, {"StreamK", "got 64"}));
}

// stages=0 ("as many as fit") must leave room for two stages: beside an f32 epilogue only one
// 96 KiB stage of a 256x128x128 bf16 tile fits, and nvcc would stop at CUTLASS's static_assert
// "Specialization requires Stages set to value 2 or more.".
TEST(Sm90FormerGaps, AutoStagesMustLeaveRoomForTwo) {
  const TileDescription t = tile({256, 128, 128}, bf16_math());
  EXPECT_TRUE(
      fails_with(gemm_status(90, t, tma(bf16, R), tma(bf16, C), tma(f32, R), epilogue(f32, f32)),
                 StatusCode::kInvalidArgument, {"stages", "KiB", "227"}));
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
