// Golden convolution modules (SM80 and SM90), and the host half of every golden module compiled
// with nvcc: the headers of include/tilecraft/jit that each family's modules include, compiled in
// CI on a representative module of every family (GEMM, split-K, int8 interleaved, grouped,
// epilogue graphs, convolutions; SM80 and SM90) without a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "compile/process.hpp"
#include "compile/test_support.hpp"
#include "compile_tests.hpp"
#include "emit/emit_test_descriptions.hpp"
#include "emit/golden_support.hpp"
#include "emit/sm90_test_descriptions.hpp"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;

GemmDescription sm80_conv(ConvKind kind, IteratorAlgorithm algorithm) {
  const GemmDescription gemm = testing::tensorop_f16_tn();
  TensorDescription a = gemm.A, b = gemm.B, c = gemm.C;
  a.layout = b.layout = c.layout = Layout::TensorNHWC;
  return GemmDescription::make_conv2d(kind, algorithm, 80, gemm.tile, a, b, c,
                                      StrideSupport::Strided, gemm.epilogue, gemm.swizzle)
      .value();
}

GemmDescription sm90_conv_bf16_bias_relu() {
  using namespace tilecraft::sm90_test;
  using enum DataType;
  const MathInstruction m = wgmma({64, 128, wgmma_k(bf16)}, bf16, bf16, f32);
  const TileDescription t =
      tile({128, 128, 64}, m, 0, {1, 1, 1}, KernelSchedule::TmaWarpSpecialized);
  return GemmDescription::make_conv2d(
             ConvKind::Fprop, IteratorAlgorithm::Optimized, 90, t, tma(bf16, Layout::TensorNHWC),
             tma(bf16, Layout::TensorNHWC), tma(bf16, Layout::TensorNHWC), StrideSupport::Strided,
             epilogue(bf16, f32, Activation::relu, bias(BiasKind::per_column, bf16)),
             Swizzle::IdentitySwizzle1)
      .value();
}

TEST(ConvEmitterGolden, Sm80FpropAndWgradWithParallelSplitK) {
  const GemmDescription wgrad = sm80_conv(ConvKind::Wgrad, IteratorAlgorithm::Optimized);
  testing::expect_golden(
      "conv_sm80_fprop_wgrad_split_k",
      emit_gemm_module({{sm80_conv(ConvKind::Fprop, IteratorAlgorithm::Optimized)},
                        {wgrad},
                        {wgrad, GemmEntryKind::kSplitKParallel}}));
}

TEST(ConvEmitterGolden, Sm90FpropBiasRelu) {
  testing::expect_golden("conv_sm90_fprop_bias_relu",
                         emit_gemm_module({{sm90_conv_bf16_bias_relu()}}));
}

// Every golden module's host half (the part the jit headers' adapters live in), compiled as the
// toolchain compiles it but at -O0 and without linking: a compile error in a family's header
// fails here, on a machine without a GPU, in seconds rather than at a user's first call.
class GoldenHostHalf : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenHostHalf, Compiles) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(few, "the host half of every golden module");
  if (access(settings().nvcc.c_str(), X_OK) != 0) GTEST_SKIP() << "no nvcc at " << settings().nvcc;
  const fs::path cutlass = settings().cutlass_dir;
  if (!fs::exists(cutlass / "include/cutlass/cutlass.h")) {
    GTEST_SKIP() << "no CUTLASS headers under '" << cutlass.string() << "'";
  }
  const std::string name = GetParam();
  const fs::path source = testing::golden_path(name);
  ASSERT_TRUE(fs::exists(source)) << source;
  const std::string out = compile::testing::make_temp_dir("golden-host");
  const bool sm90 = name.rfind("sm90", 0) == 0 || name.find("_sm90_") != std::string::npos;
  const std::vector<std::string> command = {settings().nvcc,
                                            "-std=c++17",
                                            "-O0",
                                            "--expt-relaxed-constexpr",
                                            "-I" + settings().jit_include_dir,
                                            "-I" + (cutlass / "include").string(),
                                            "-I" + (cutlass / "tools/util/include").string(),
                                            sm90 ? "-arch=sm_90a" : "-arch=sm_80",
                                            "-c",
                                            "-DTILECRAFT_HOST_HALF=1",
                                            "-o",
                                            out + "/host.o",
                                            source.string()};
  Result<compile::ProcessResult> run = compile::run_process(command, {}, nullptr, 600);
  fs::remove_all(out);
  ASSERT_TRUE(run) << run.status().message();
  EXPECT_EQ(run->exit_code, 0) << compile::format_command(command) << "\n" << run->output;
}

// One module per set of headers (the seed's SIMT module is compiled whole by
// GemmModuleCompile.SeedModule; int8 interleaved and the topological visitor reach the same
// headers as the split-K and visitor-tree modules).
INSTANTIATE_TEST_SUITE_P(EveryFamily, GoldenHostHalf,
                         ::testing::Values("tensorop_f16_tn_split_k", "grouped_tensorop_f16_host",
                                           "sm80_epilogue_graph", "conv_sm80_fprop_wgrad_split_k",
                                           "sm90_bf16_tn_coop_bias_gelu",
                                           "sm90_grouped_bf16_bias_gelu",
                                           "conv_sm90_fprop_bias_relu"));

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::emit
