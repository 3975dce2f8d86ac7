// Compile tests of the SM80 GEMM emitter: emitted modules are compiled by nvcc, dlopen'ed (no GPU
// needed), and their ABI table is checked: version, entries, names, and can_implement on good and
// bad problems. Each module's compile time is printed.
//
// The seed's SIMT f32 kernel compiles at every TILECRAFT_COMPILE_TESTS level. With standard (the
// default) four more modules are compiled: a TensorOp f16 kernel with its split-K-parallel
// companion, the interleaved int8 kernel, kernels with an epilogue graph (CUTLASS's 2.x epilogue
// visitor tree) and one with shared values (its topological visitor). The full set, one module
// per row of the math-instruction table plus modules covering every epilogue, activation, swizzle
// and epilogue graph node, runs with
//   TILECRAFT_COMPILE_TESTS=full ./tilecraft_tests --gtest_filter='GemmModuleCompile*'
// (tens of minutes on two cores). At most two nvcc processes run at once; nvcc and the CUTLASS
// headers come from tilecraft::settings() (TILECRAFT_NVCC, TILECRAFT_CUTLASS_DIR).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "compile_tests.hpp"
#include "emit/emit_test_descriptions.hpp"
#include "emit/evt/evt_tree.hpp"
#include "emit/evt_test_graphs.hpp"
#include "emit/module_compile_support.hpp"
#include "tilecraft/abi/module_abi.h"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::emit {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;
using namespace tilecraft::emit::testing;

using namespace tilecraft::emit::compile_testing;

// Compiles the modules, two nvcc processes at a time.

int64_t leading_dimension(Layout layout, int rows, int cols) {
  switch (layout) {
    case Layout::RowMajor:
      return cols;
    case Layout::ColumnMajor:
      return rows;
    case Layout::RowMajorInterleaved32:
      return int64_t(32) * cols;
    case Layout::ColumnMajorInterleaved32:
      return int64_t(32) * rows;
    default:
      return 0;
  }
}

// A problem every entry of the sets below can run: sizes divisible by every alignment, tight
// leading dimensions, and the entry kind's mode.
tc_gemm_args problem(const GemmEntry& entry, int m, int n, int k) {
  const GemmDescription& d = entry.description;
  tc_gemm_args a = gemm_block();
  a.mode = entry.kind == GemmEntryKind::kSplitKParallel ? TC_GEMM_MODE_GEMM_SPLIT_K_PARALLEL
                                                        : TC_GEMM_MODE_GEMM;
  a.m = m;
  a.n = n;
  a.k = k;
  a.batch_count = entry.kind == GemmEntryKind::kSplitKParallel ? 4 : 1;
  a.lda = leading_dimension(d.A.layout, m, k);
  a.ldb = leading_dimension(d.B.layout, k, n);
  a.ldc = a.ldd = leading_dimension(d.C.layout, m, n);
  a.header.alpha = 1.0;
  a.header.beta = 0.5;
  a.header.num_activation_args = d.epilogue.activation == Activation::leaky_relu ? 1 : 0;
  a.header.activation_args[0] = 0.1;
  if (d.has_epilogue_graph()) {
    // The graph's operands: never read by can_implement, so one aligned host address serves.
    alignas(16) static char storage[16];
    static tc_epilogue_tensor tensors[32];
    static double scalars[32];
    for (tc_epilogue_tensor& t : tensors) t = {storage, n, 0};
    for (double& value : scalars) value = 0.5;
    a.header.num_epilogue_tensors = static_cast<int32_t>(d.epilogue_graph->operand_nodes().size());
    a.header.epilogue_tensors = tensors;
    a.header.num_epilogue_scalars = static_cast<int32_t>(d.epilogue_graph->scalar_nodes().size());
    a.header.epilogue_scalars = scalars;
  }
  return a;
}

// The SM80 checks of each entry: a runnable problem, a refused one, null arguments.
std::vector<std::unique_ptr<Module>> compile_and_check(const std::vector<ModuleSpec>& specs) {
  return compile_testing::compile_and_check(
      "tilecraft-emit-compile-", specs, 80,
      [](const GemmEntry& spec, const tc_kernel_entry& entry) {
        const int k =
            spec.description.epilogue.kind == EpilogueKind::FastLinearCombinationClamp ? 256 : 512;
        const Verdict good = can_implement(entry, problem(spec, 256, 256, k));
        EXPECT_EQ(good.status, TC_OK) << good.text;
        const Verdict negative = can_implement(entry, problem(spec, -1, 256, k));
        EXPECT_EQ(negative.status, TC_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(negative.text.find("M, N and K must be positive"), std::string::npos)
            << negative.text;
        EXPECT_EQ(entry.can_implement(nullptr, nullptr, 0), TC_ERROR_INVALID_ARGUMENT);
        // Another family's block, or another version of the GEMM block: refused by the header.
        const Verdict conv = can_implement(entry, conv_block());
        EXPECT_EQ(conv.text, "arguments: this entry reads family 1 arguments, version " +
                                 std::to_string(TC_GEMM_ARGS_VERSION) + "; got family 3, version " +
                                 std::to_string(TC_CONV_ARGS_VERSION));
        tc_gemm_args newer = problem(spec, 256, 256, k);
        newer.header.family_version += 1;
        EXPECT_EQ(can_implement(entry, newer).status, TC_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(entry.workspace_size(&newer.header), 0u);
      });
}

void skip_without_toolchain() {
  if (access(settings().nvcc.c_str(), X_OK) != 0) GTEST_SKIP() << "no nvcc at " << settings().nvcc;
  if (!fs::exists(fs::path(settings().cutlass_dir) / "include/cutlass/cutlass.h")) {
    GTEST_SKIP() << "no CUTLASS headers under '" << settings().cutlass_dir << "'";
  }
}

TEST(GemmModuleCompile, SeedModule) {
  skip_without_toolchain();
  if (::testing::Test::IsSkipped()) return;
  const GemmDescription simt = simt_f32_seed();
  const auto modules = compile_and_check({{"simt_f32_seed", {{simt}}}});
  if (::testing::Test::HasFatalFailure()) return;

  // The seed's kernel: tight leading dimensions pass, a short one is named.
  if (const tc_module_table* table = modules[0]->table()) {
    const tc_kernel_entry& entry = table->entries[0];
    tc_gemm_args args = problem({simt}, 512, 256, 128);
    EXPECT_EQ(can_implement(entry, args).status, TC_OK);
    args.lda = 127;
    EXPECT_EQ(can_implement(entry, args).text,
              "A: leading dimension 127 is smaller than K=128 of the row-major MxK matrix");
    args = problem({simt}, 512, 256, 128);
    args.mode = TC_GEMM_MODE_GEMM_SPLIT_K_PARALLEL;
    EXPECT_NE(can_implement(entry, args).text.find("_splitk_parallel entry"), std::string::npos);
    args.mode = TC_GEMM_MODE_BATCHED;
    args.batch_count = 3;
    args.batch_stride_A = int64_t(512) * 128;
    EXPECT_EQ(can_implement(entry, args).status, TC_OK);
    args.batch_count = 70000;
    EXPECT_EQ(can_implement(entry, args).text, "batch_count 70000 is outside [1, 65535]");
  }
}

TEST(GemmModuleCompile, CiModules) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "the SM80 TensorOp, int8 and epilogue graph modules");
  skip_without_toolchain();
  if (::testing::Test::IsSkipped()) return;
  const GemmDescription f16 = tensorop_f16_tn();
  const GemmDescription int8 = int8_interleaved();
  const GemmDescription graph = sm80_graph_gemm(issue_graph());
  const GemmDescription column_graph =
      sm80_graph_gemm(issue_graph(), DataType::f16, Layout::ColumnMajor);
  const std::vector<ModuleSpec> specs = {
      {"tensorop_f16_tn_split_k",
       {{f16, GemmEntryKind::kUniversal}, {f16, GemmEntryKind::kSplitKParallel}}},
      {"int8_interleaved", {{int8}}},
      {"epilogue_graph", {{graph}, {column_graph}}},
      {"epilogue_graph_shared_values", {{sm80_graph_gemm(shared_value_graph())}}},
  };
  const auto modules = compile_and_check(specs);
  if (::testing::Test::HasFatalFailure()) return;

  // The f16 kernel and its split-K-parallel companion.
  if (const tc_module_table* table = modules[0]->table()) {
    const tc_kernel_entry& universal = table->entries[0];
    const tc_kernel_entry& split_k = table->entries[1];
    tc_gemm_args args = problem({f16}, 13, 7, 5);
    EXPECT_EQ(can_implement(universal, args).text,
              "problem size 13x7x5: K=5 is not a multiple of the 8-element alignment of A "
              "(row-major MxK)");
    args = problem({f16}, 128, 12, 64);
    args.ldc = args.ldd = 16;
    EXPECT_EQ(can_implement(universal, args).text,
              "problem size 128x12x64: N=12 is not a multiple of the 8-element alignment of C "
              "(row-major MxN)");
    args = problem({f16, GemmEntryKind::kSplitKParallel}, 128, 128, 4096);
    EXPECT_EQ(can_implement(split_k, args).status, TC_OK);
    EXPECT_EQ(split_k.workspace_size(&args.header), size_t(128) * 128 * 4 * sizeof(float));
    args.mode = TC_GEMM_MODE_GEMM;
    EXPECT_NE(can_implement(split_k, args).text.find("runs only GemmSplitKParallel"),
              std::string::npos);
  }
  // The interleaved int8 kernel checks what CUTLASS's interleaved layouts demand.
  if (const tc_module_table* table = modules[1]->table()) {
    const tc_kernel_entry& entry = table->entries[0];
    tc_gemm_args args = problem({int8}, 128, 128, 48);
    EXPECT_EQ(can_implement(entry, args).text,
              "problem size 128x128x48: K=48 is not a multiple of the 32-element alignment of A "
              "(column-major interleaved MxK)");
    args = problem({int8}, 128, 128, 128);
    EXPECT_EQ(can_implement(entry, args).status, TC_OK);
    args.lda = 32;
    EXPECT_EQ(can_implement(entry, args).text,
              "A: leading dimension 32 is smaller than 32*M=4096 of the column-major interleaved "
              "MxK matrix");
  }
  // The epilogue graph's kernel (CUTLASS's 2.x visitor): Gemm and Batched, its operands counted.
  if (const tc_module_table* table = modules[2]->table()) {
    const tc_kernel_entry& entry = table->entries[0];
    tc_gemm_args args = problem({graph}, 200, 136, 64);
    EXPECT_EQ(can_implement(entry, args).status, TC_OK) << can_implement(entry, args).text;
    args.mode = TC_GEMM_MODE_BATCHED;
    args.batch_count = 3;
    EXPECT_EQ(can_implement(entry, args).status, TC_OK) << can_implement(entry, args).text;
    args.mode = TC_GEMM_MODE_GEMM;
    EXPECT_EQ(can_implement(entry, args).text,
              "split_k_slices 3: SM80 kernels with an epilogue graph (CUTLASS's 2.x epilogue "
              "visitor) do not split K; expected 1");
    args.mode = TC_GEMM_MODE_ARRAY;
    EXPECT_EQ(can_implement(entry, args).text,
              "mode Array: SM80 kernels with an epilogue graph (CUTLASS's 2.x epilogue visitor) "
              "run modes Gemm and Batched");
    args = problem({graph}, 200, 136, 64);
    args.mode = TC_GEMM_MODE_GEMM_SPLIT_K_PARALLEL;
    EXPECT_NE(can_implement(entry, args)
                  .text.find("mode GemmSplitKParallel: SM80 kernels with "
                             "an epilogue graph"),
              std::string::npos);
    args = problem({graph}, 200, 136, 64);
    args.header.num_epilogue_tensors = 6;
    EXPECT_EQ(can_implement(entry, args).text,
              "epilogue graph: expected 7 operand tensor(s), got 6");
    args = problem({graph}, 200, 136, 64);
    args.header.num_epilogue_scalars = 0;
    EXPECT_EQ(can_implement(entry, args).text, "epilogue graph: expected 2 scalar(s), got 0");
    args = problem({graph}, 200, 132, 64);
    EXPECT_EQ(can_implement(entry, args).text,
              "problem size 200x132x64: N=132 is not a multiple of the 8-element alignment of D "
              "(row-major MxN)");
    args = problem({graph}, 200, 136, 64);
    tc_epilogue_tensor operands[7];
    for (int i = 0; i < 7; ++i) operands[i] = args.header.epilogue_tensors[i];
    operands[4].data = nullptr;
    args.header.epilogue_tensors = operands;
    EXPECT_EQ(can_implement(entry, args).text,
              "epilogue graph: operand tensor 4 is a null pointer");
    EXPECT_EQ(entry.workspace_size(&args.header), 0u);
    // A column-major D (the transposed problem inside) is checked as the caller describes it.
    const tc_kernel_entry& column = table->entries[1];
    args = problem({column_graph}, 200, 132, 64);
    EXPECT_EQ(can_implement(column, args).status, TC_OK) << can_implement(column, args).text;
    args = problem({column_graph}, 196, 136, 64);
    EXPECT_EQ(can_implement(column, args).text,
              "problem size 196x136x64: M=196 is not a multiple of the 8-element alignment of D "
              "(column-major MxN)");
    args = problem({column_graph}, 200, 136, 60);
    EXPECT_EQ(can_implement(column, args).text,
              "problem size 200x136x60: K=60 is not a multiple of the 8-element alignment of A "
              "(row-major MxK)");
  }
}

// ---- the full set -------------------------------------------------------------------------

int access_width(DataType type) { return 128 / size_in_bits(type); }

// One module per row of the math-instruction table: the universal kernel and its split-K-parallel
// companion, with a tile CUTLASS's own SM80 tests use for that instruction.
std::vector<ModuleSpec> math_instruction_modules() {
  using enum DataType;
  std::vector<ModuleSpec> specs;
  for (const MathInstructionRule& rule : math_instruction_rules()) {
    const MathInstruction m =
        math(rule.instruction_shape, rule.element_ab, rule.element_accumulator, rule.opcode_class,
             rule.math_operation);
    const DataType ab = rule.element_ab;
    const DataType acc = rule.element_accumulator;
    GemmDescription d;
    if (rule.opcode_class == OpClass::Simt) {
      d = gemm(m, {64, 64, 8}, 4, {2, 2, 1}, {ab, Layout::RowMajor, 1}, {ab, Layout::RowMajor, 1},
               {acc, Layout::RowMajor, 1},
               epilogue(EpilogueKind::LinearCombination, acc, 1, acc, acc));
    } else if (ab == f64) {
      d = gemm(m, {64, 64, 16}, 3, {2, 2, 1}, {f64, Layout::RowMajor, 1},
               {f64, Layout::ColumnMajor, 1}, {f64, Layout::RowMajor, 1},
               epilogue(EpilogueKind::LinearCombination, f64, 1, f64, f64));
    } else if (ab == s8) {
      d = gemm(m, {128, 128, 64}, 3, {2, 2, 1}, {s8, Layout::RowMajor, 16},
               {s8, Layout::ColumnMajor, 16}, {s32, Layout::RowMajor, 4},
               epilogue(EpilogueKind::LinearCombination, s32, 4, s32, s32));
    } else {
      // f16 accumulation keeps f16 output; otherwise 16-bit inputs write 16-bit output.
      const DataType out = (ab == f16 || ab == bf16) ? ab : f32;
      const DataType compute = acc;
      const int k_tile = rule.math_operation == MathOperation::multiply_add_fast_f32 ? 16 : 32;
      d = gemm(m, {128, 128, k_tile}, 3, {2, 2, 1}, {ab, Layout::RowMajor, access_width(ab)},
               {ab, Layout::ColumnMajor, access_width(ab)},
               {out, Layout::RowMajor, access_width(out)},
               epilogue(EpilogueKind::LinearCombination, out, access_width(out), acc, compute));
    }
    std::string name = "row_" + std::string(to_string(rule.opcode_class)) + "_" +
                       std::string(short_name(ab)) + "_" + std::string(short_name(acc)) + "_" +
                       std::to_string(rule.instruction_shape[0]) + "x" +
                       std::to_string(rule.instruction_shape[1]) + "x" +
                       std::to_string(rule.instruction_shape[2]) + "_" +
                       std::string(to_string(rule.math_operation));
    specs.push_back({name, {{d, GemmEntryKind::kUniversal}, {d, GemmEntryKind::kSplitKParallel}}});
  }
  return specs;
}

std::vector<ModuleSpec> epilogue_and_swizzle_modules() {
  using enum DataType;
  std::vector<ModuleSpec> specs;
  // Activations, four entries a module (f16 out, f32 compute).
  std::vector<GemmEntry> generic;
  for (Activation activation : kAllActivations) {
    generic.push_back({tensorop_f16_tn(
        epilogue(EpilogueKind::LinearCombinationGeneric, f16, 8, f32, f32, activation))});
  }
  generic.push_back({tensorop_f16_tn(
      epilogue(EpilogueKind::LinearCombinationGeneric, f16, 8, f32, f32, Activation::identity))});
  for (size_t i = 0; i < generic.size(); i += 4) {
    specs.push_back({"activations_" + std::to_string(i / 4),
                     {generic.begin() + i, generic.begin() + std::min(i + 4, generic.size())}});
  }
  // Clamping epilogues on int8 output, with a split-K-parallel companion (reduction clamps).
  const MathInstruction s8_math =
      math({16, 8, 32}, s8, s32, OpClass::TensorOp, MathOperation::multiply_add_saturate);
  auto int8_tn = [&](EpilogueFunctor e) {
    return gemm(s8_math, {128, 128, 64}, 3, {2, 2, 1}, {s8, Layout::RowMajor, 16},
                {s8, Layout::ColumnMajor, 16}, {s8, Layout::RowMajor, 16}, e);
  };
  const GemmDescription clamp =
      int8_tn(epilogue(EpilogueKind::LinearCombinationClamp, s8, 16, s32, f32));
  const GemmDescription fast =
      int8_tn(epilogue(EpilogueKind::FastLinearCombinationClamp, s8, 16, s32, f32));
  specs.push_back({"clamp_epilogues", {{clamp}, {clamp, GemmEntryKind::kSplitKParallel}, {fast}}});
  // Swizzles (IdentitySwizzle1 is everywhere else).
  std::vector<GemmEntry> swizzles;
  for (Swizzle swizzle : kAllSwizzles) {
    if (swizzle == Swizzle::IdentitySwizzle1) continue;
    swizzles.push_back(
        {tensorop_f16_tn(epilogue(EpilogueKind::LinearCombination, f16, 8, f32, f32), swizzle)});
  }
  specs.push_back({"swizzles", swizzles});
  // A column-major C, whose split-K reduction runs on the transposed view.
  GemmDescription column_c = tensorop_f16_tn();
  column_c.C.layout = Layout::ColumnMajor;
  specs.push_back({"column_major_c", {{column_c}, {column_c, GemmEntryKind::kSplitKParallel}}});
  // Epilogue graphs (CUTLASS's 2.x visitor): every node kind, both broadcasts, extra stores, each
  // reduction, with f16, bf16 and f32 outputs.
  specs.push_back({"epilogue_graphs",
                   {{sm80_graph_gemm(elementwise_graph(bf16), bf16)},
                    {sm80_graph_gemm(reductions_graph(f32), f32)},
                    {sm80_graph_gemm(loads_and_stores_graph())},
                    {sm80_graph_gemm(reductions_graph(f32), f32, Layout::ColumnMajor)},
                    {sm80_graph_gemm(fast_math_graph(false))}}});
  // Epilogue graphs at the bounds on their size: the deepest tree, the deepest graph (one
  // topological visitor), the most nodes.
  specs.push_back({"epilogue_graph_bounds",
                   {{sm80_graph_gemm(chain_graph(kMaxEvtTreeDepth - 2))},
                    {sm80_graph_gemm(chain_graph(kMaxEpilogueGraphDepth - 2))},
                    {sm80_graph_gemm(widest_graph())}}});
  return specs;
}

TEST(GemmModuleCompile, FullSet) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(
      full, "one SM80 module per math instruction, epilogue, activation and swizzle");
  skip_without_toolchain();
  if (::testing::Test::IsSkipped()) return;
  std::vector<ModuleSpec> specs = math_instruction_modules();
  for (ModuleSpec& spec : epilogue_and_swizzle_modules()) specs.push_back(std::move(spec));
  if (const char* only = std::getenv("TILECRAFT_COMPILE_TESTS_ONLY")) {
    std::erase_if(specs,
                  [&](const ModuleSpec& s) { return s.name.find(only) == std::string::npos; });
  }
  (void)compile_and_check(specs);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::emit
