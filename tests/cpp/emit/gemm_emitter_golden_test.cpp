// Golden tests of the SM80 GEMM emitter: the emitted text of a few descriptions, byte for byte
// (emit/golden_support.hpp).
#include <gtest/gtest.h>

#include <string>

#include "emit/emit_test_descriptions.hpp"
#include "emit/evt_test_graphs.hpp"
#include "emit/golden_support.hpp"

namespace tilecraft::emit {
namespace {
namespace TILECRAFT_TEST_FILE {

using testing::expect_golden;

TEST(GemmEmitterGolden, SimtF32Seed) {
  expect_golden("simt_f32_seed", emit_gemm_module({{testing::simt_f32_seed()}}));
}

TEST(GemmEmitterGolden, TensorOpF16WithSplitKParallel) {
  const GemmDescription d = testing::tensorop_f16_tn();
  expect_golden("tensorop_f16_tn_split_k", emit_gemm_module({{d, GemmEntryKind::kUniversal},
                                                             {d, GemmEntryKind::kSplitKParallel}}));
}

// CUTLASS 2.x GemmGrouped on the Host scheduler.
TEST(GemmEmitterGolden, GroupedTensorOpF16Host) {
  const GemmDescription d = testing::tensorop_f16_tn();
  expect_golden(
      "grouped_tensorop_f16_host",
      emit_gemm_module({{GemmDescription::make_grouped(d.arch, d.tile, d.A, d.B, d.C, d.epilogue,
                                                       d.swizzle, SchedulerMode::Host)
                             .value()}}));
}

TEST(GemmEmitterGolden, Int8Interleaved) {
  expect_golden("int8_interleaved", emit_gemm_module({{testing::int8_interleaved()}}));
}

// An epilogue graph (the issue's example) as a CUTLASS 2.x visitor tree.
TEST(GemmEmitterGolden, EpilogueGraphVisitorTree) {
  expect_golden("sm80_epilogue_graph",
                emit_gemm_module({{testing::sm80_graph_gemm(testing::issue_graph())}}));
}

// An epilogue graph whose values are read more than once, as one CUTLASS 2.x topological visitor
// (each node once).
TEST(GemmEmitterGolden, EpilogueGraphTopologicalVisitor) {
  expect_golden("sm80_epilogue_graph_shared",
                emit_gemm_module({{testing::sm80_graph_gemm(testing::shared_value_graph())}}));
}

TEST(GemmEmitter, IncludesTheJitHeadersOfItsEntriesOnly) {
  const std::string plain = emit_gemm_module({{testing::simt_f32_seed()}});
  EXPECT_EQ(plain.find(module_open_text()), plain.find('\n') + 1);
  EXPECT_NE(plain.find(jit_include("sm80_gemm.cuh")), std::string::npos);
  for (const char* header :
       {"sm80_split_k_parallel.cuh", "sm80_grouped.cuh", "sm80_epilogue_graph.cuh", "sm90.cuh"}) {
    EXPECT_EQ(plain.find(header), std::string::npos) << header;
  }
  const GemmDescription d = testing::tensorop_f16_tn();
  const std::string split = emit_gemm_module({{d, GemmEntryKind::kSplitKParallel}});
  EXPECT_NE(split.find(jit_include("sm80_split_k_parallel.cuh")), std::string::npos);
}

TEST(GemmEmitter, EntryNamesAreProceduralNames) {
  const GemmDescription d = testing::tensorop_f16_tn();
  EXPECT_EQ(entry_name({d, GemmEntryKind::kUniversal}), d.procedural_name());
  EXPECT_EQ(entry_name({d, GemmEntryKind::kSplitKParallel}),
            d.procedural_name() + "_splitk_parallel");
}

TEST(GemmEmitter, OneTableRowPerEntryInOrder) {
  const GemmDescription d = testing::tensorop_f16_tn();
  const std::string text =
      emit_gemm_module({{d, GemmEntryKind::kSplitKParallel}, {testing::simt_f32_seed()}});
  const size_t first = text.find("\"" + entry_name({d, GemmEntryKind::kSplitKParallel}) + "\"");
  const size_t second = text.find("\"" + testing::simt_f32_seed().procedural_name() + "\"");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(second, std::string::npos);
  EXPECT_LT(first, second);
  EXPECT_NE(text.find("{TILECRAFT_ABI_VERSION, 2u, tc_entries}"), std::string::npos);
  EXPECT_NE(text.find(jit_include("sm80_split_k_parallel.cuh")), std::string::npos);
}

TEST(GemmEmitter, UniversalOnlyModulesLeaveTheReductionOut) {
  const std::string text = emit_gemm_module({{testing::simt_f32_seed()}});
  EXPECT_EQ(text.find("sm80_split_k_parallel.cuh"), std::string::npos);
  EXPECT_EQ(text.find("split_k_run"), std::string::npos);
}

TEST(GemmEmitter, MetadataDescribesTheDescription) {
  const std::string text = emit_gemm_module({{testing::simt_f32_seed()}});
  EXPECT_NE(text.find("\"kind=universal;arch=80;op_class=Simt;inst_shape=1x1x1;"
                      "math_operation=multiply_add;element_a=f32;element_b=f32;element_c=f32;"
                      "element_accumulator=f32;layout_a=RowMajor;layout_b=RowMajor;"
                      "layout_c=RowMajor;alignment_a=1;alignment_b=1;alignment_c=1;"
                      "tile=128x128x8;stages=4;warps=2x4x1;epilogue=LinearCombination;"
                      "element_epilogue=f32;epilogue_vector=1;activation=identity;"
                      "swizzle=IdentitySwizzle1\""),
            std::string::npos);
}

TEST(GemmEmitter, SplitKParallelRefusesInterleavedOutput) {
  try {
    (void)emit_gemm_module({{testing::int8_interleaved(), GemmEntryKind::kSplitKParallel}});
    FAIL() << "expected tilecraft::Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.status().code(), StatusCode::kNotSupported);
    EXPECT_NE(std::string(error.what()).find("ColumnMajorInterleaved32"), std::string::npos);
  }
}

TEST(GemmEmitter, ArchFlagsBuildSm80AndSm90FromOneFrontEndPass) {
  const auto flags = gemm_module_arch_flags(80);
  ASSERT_EQ(flags.size(), 3u);
  EXPECT_EQ(flags[0], "-gencode=arch=compute_80,code=sm_80");
  EXPECT_EQ(flags[1], "-gencode=arch=compute_80,code=sm_90");
  EXPECT_EQ(flags[2], "-gencode=arch=compute_80,code=compute_80");
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::emit
