// Compile tests of the SM90 GEMM emitter: emitted CUTLASS 3.x modules are compiled by nvcc for
// sm_90a, dlopen'ed (no GPU needed) and their ABI table is checked: version, entries, names,
// metadata, and can_implement on good and bad problems (checked on the host; without a GPU the
// SM count is 0, which can_implement does not use). Each module's compile time is printed.
//
// With TILECRAFT_COMPILE_TESTS=standard (the default) one module is compiled (about two minutes
// on two fast cores, over half an hour on a slow two-core CI machine, so few skips it): bf16 TN,
// cooperative, with a column-bias + gelu epilogue. The full
// set, a custom epilogue whose values are shared, tf32, fp8 (scaled, fast accumulation, and an
// fp8 output), int8, an aux output, stream-K, ping-pong and custom epilogues at the bounds on
// their size, runs with
//   TILECRAFT_COMPILE_TESTS=full ./tilecraft_tests --gtest_filter='Sm90ModuleCompile*'
// (TILECRAFT_COMPILE_TESTS_ONLY=<part of a module name> narrows it). SM90 modules are compiled
// one at a time (each nvcc takes gigabytes) unless TILECRAFT_COMPILE_JOBS is set; nvcc and the
// CUTLASS headers come from tilecraft::settings() (TILECRAFT_NVCC, TILECRAFT_CUTLASS_DIR).
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
#include "emit/evt/evt_tree.hpp"
#include "emit/evt_test_graphs.hpp"
#include "emit/module_compile_support.hpp"
#include "emit/sm90_test_descriptions.hpp"
#include "tilecraft/abi/module_abi.h"
#include "tilecraft/core/settings.hpp"
#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {
namespace {
namespace TILECRAFT_TEST_FILE {

namespace fs = std::filesystem;
using namespace tilecraft::sm90_test;

using namespace tilecraft::emit::compile_testing;

// Stand-in addresses for can_implement, which checks shapes, strides and alignment but reads no
// memory: 256-byte aligned and never dereferenced.
alignas(256) unsigned char g_dummy[256];

int64_t leading_dimension(Layout layout, int rows, int cols) {
  return layout == Layout::RowMajor ? cols : rows;
}

// A problem the entry can run: tight leading dimensions, the operands its epilogue needs.
tc_gemm_args problem(const GemmDescription& d, int m, int n, int k) {
  tc_gemm_args a = gemm_block();
  a.mode = TC_GEMM_MODE_GEMM;
  a.m = m;
  a.n = n;
  a.k = k;
  a.batch_count = 1;
  a.A = a.B = a.C = g_dummy;
  a.D = g_dummy;
  a.lda = leading_dimension(d.A.layout, m, k);
  a.ldb = leading_dimension(d.B.layout, k, n);
  a.ldc = a.ldd = leading_dimension(d.C.layout, m, n);
  a.header.alpha = 1.0;
  a.header.beta = 0.5;
  a.header.num_activation_args = activation_argument_count(d.epilogue.activation);
  a.header.activation_args[0] = d.epilogue.activation == Activation::clamp ? -1.0 : 0.1;
  a.header.activation_args[1] = 1.0;
  const EpilogueFusion& f = d.epilogue.fusion;
  if (f.bias != BiasKind::none) a.bias = g_dummy;
  if (f.aux_output) {
    a.aux = g_dummy;
    a.ldaux = a.ldd;
  }
  a.scale_a = a.scale_b = a.scale_c = a.scale_d = 1.0;
  if (d.has_epilogue_graph()) {
    // The graph's operands: can_implement checks their count and pointers, reads no memory.
    static tc_epilogue_tensor tensors[32];
    static double scalars[32];
    for (tc_epilogue_tensor& t : tensors) t = {g_dummy, n, 0};
    for (double& value : scalars) value = 0.5;
    a.header.num_epilogue_tensors = static_cast<int32_t>(d.epilogue_graph->operand_nodes().size());
    a.header.epilogue_tensors = tensors;
    a.header.num_epilogue_scalars = static_cast<int32_t>(d.epilogue_graph->scalar_nodes().size());
    a.header.epilogue_scalars = scalars;
  }
  return a;
}

// The SM90 checks of each entry: a runnable problem, and each refusal the module words itself
// (modes, activation arguments, split-K without stream-K, missing bias or aux, TMA extents).
std::vector<std::unique_ptr<Module>> compile_and_check(const std::vector<ModuleSpec>& specs) {
  return compile_testing::compile_and_check(
      "tilecraft-sm90-compile-", specs, 90,
      [](const GemmEntry& spec, const tc_kernel_entry& entry) {
        const GemmDescription& d = spec.description;
        const Verdict good = can_implement(entry, problem(d, 256, 256, 512));
        EXPECT_EQ(good.status, TC_OK) << good.text;
        const Verdict negative = can_implement(entry, problem(d, -1, 256, 512));
        EXPECT_EQ(negative.status, TC_ERROR_INVALID_ARGUMENT);
        EXPECT_NE(negative.text.find("M, N and K must be positive"), std::string::npos)
            << negative.text;
        tc_gemm_args array = problem(d, 256, 256, 512);
        array.mode = TC_GEMM_MODE_ARRAY;
        EXPECT_NE(can_implement(entry, array).text.find("SM90 kernels run Gemm"),
                  std::string::npos);
        tc_gemm_args args = problem(d, 256, 256, 512);
        args.header.num_activation_args = 3;
        EXPECT_EQ(can_implement(entry, args).status, TC_ERROR_INVALID_ARGUMENT);
        args = problem(d, 256, 256, 512);
        args.batch_count = 2;  // serial split-K
        const Verdict split = can_implement(entry, args);
        if (d.tile.tile_scheduler == TileScheduler::StreamK) {
          EXPECT_EQ(split.status, TC_OK) << split.text;
        } else {
          EXPECT_NE(split.text.find("split_k_slices 2: serial split-K on SM90 needs a kernel built "
                                    "with tile_scheduler StreamK"),
                    std::string::npos)
              << split.text;
        }
        if (d.epilogue.fusion.bias != BiasKind::none) {
          args = problem(d, 256, 256, 512);
          args.bias = nullptr;
          EXPECT_EQ(can_implement(entry, args).text,
                    "bias: the kernel adds a bias vector; got none");
        }
        if (d.epilogue.fusion.aux_output) {
          args = problem(d, 256, 256, 512);
          args.aux = nullptr;
          EXPECT_EQ(can_implement(entry, args).text,
                    "aux: the kernel writes an aux output; got none");
        }
        // TMA: a row-major A's K must be a multiple of its 16-byte alignment.
        if (d.A.layout == Layout::RowMajor) {
          args = problem(d, 256, 256, 512 + d.A.alignment / 2);
          const Verdict ragged = can_implement(entry, args);
          EXPECT_EQ(ragged.status, TC_ERROR_INVALID_ARGUMENT) << ragged.text;
          EXPECT_NE(ragged.text.find("CUTLASS can_implement"), std::string::npos) << ragged.text;
        }
      });
}

void skip_without_toolchain() {
  if (access(settings().nvcc.c_str(), X_OK) != 0) GTEST_SKIP() << "no nvcc at " << settings().nvcc;
  if (!fs::exists(fs::path(settings().cutlass_dir) / "include/cutlass/cutlass.h")) {
    GTEST_SKIP() << "no CUTLASS headers under '" << settings().cutlass_dir << "'";
  }
  if (!fs::exists(fs::path(settings().cutlass_dir) /
                  "include/cutlass/gemm/collective/collective_builder.hpp")) {
    GTEST_SKIP() << "the CUTLASS headers under '" << settings().cutlass_dir
                 << "' have no 3.x collective builders";
  }
}

// The CI module, compiled once per process for the tests that probe it.
struct CiModule {
  GemmDescription description = bf16_tn_coop_bias_gelu();
  std::vector<std::unique_ptr<Module>> modules;
  bool ok = false;
};

const CiModule& ci_module() {
  static CiModule* module = [] {
    auto* m = new CiModule;
    m->modules = compile_and_check({{"sm90_bf16_tn_coop_bias_gelu", {{m->description}}}});
    m->ok = !::testing::Test::HasFailure() && m->modules[0]->table() != nullptr;
    return m;
  }();
  return *module;
}

TEST(Sm90ModuleCompile, CiModule) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "the SM90 CI module");
  skip_without_toolchain();
  if (::testing::Test::IsSkipped()) return;
  const CiModule& ci = ci_module();
  ASSERT_TRUE(ci.ok) << "the module did not compile or load";
  const GemmDescription& d = ci.description;
  const tc_kernel_entry& entry = ci.modules[0]->table()->entries[0];
  // N is D's (and C's) contiguous extent: TMA needs a multiple of 8 bf16.
  tc_gemm_args args = problem(d, 128, 100, 64);
  args.ldc = args.ldd = 104;
  const Verdict ragged_n = can_implement(entry, args);
  EXPECT_EQ(ragged_n.status, TC_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(ragged_n.text.find("problem size 128x100x64: CUTLASS can_implement"), std::string::npos)
      << ragged_n.text;
  // Batched problems are served.
  args = problem(d, 128, 128, 64);
  args.mode = TC_GEMM_MODE_BATCHED;
  args.batch_count = 3;
  args.batch_stride_A = args.batch_stride_B = args.batch_stride_C = args.batch_stride_D =
      int64_t(128) * 128;
  EXPECT_EQ(can_implement(entry, args).status, TC_OK) << can_implement(entry, args).text;
  args.batch_count = 70000;
  EXPECT_EQ(can_implement(entry, args).text, "batch_count 70000 is outside [1, 65535]");
  // The metadata names what the kernel was built with.
  EXPECT_NE(std::string(entry.metadata).find("kernel_schedule=TmaWarpSpecializedCooperative;"),
            std::string::npos);
  EXPECT_NE(std::string(entry.metadata).find("bias=per_column;element_bias=bf16;"),
            std::string::npos);
}

// Null arguments, and a block of another family, are refused (TC_ERROR_INVALID_ARGUMENT,
// workspace 0), as the SM80 adapters do. The calls run in a forked child (gtest's "fast" death-test
// style, which reuses the module compiled in this process), so that a crash would fail only this
// test.
TEST(Sm90ModuleCompile, NullArgumentsAreRefused) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "the SM90 CI module");
  skip_without_toolchain();
  if (::testing::Test::IsSkipped()) return;
  const CiModule& ci = ci_module();
  ASSERT_TRUE(ci.ok) << "the module did not compile or load";
  const tc_kernel_entry& entry = ci.modules[0]->table()->entries[0];
  EXPECT_EXIT(
      {
        char error[128] = "";
        const bool refused =
            entry.can_implement(nullptr, error, sizeof error) == TC_ERROR_INVALID_ARGUMENT;
        const bool no_workspace = entry.workspace_size(nullptr) == 0;
        const tc_grouped_args grouped = grouped_block();
        const bool other_family =
            can_implement(entry, grouped).text.find("reads family 1 arguments") !=
                std::string::npos &&
            entry.workspace_size(&grouped.header) == 0;
        std::exit(refused && no_workspace && other_family ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// A custom epilogue whose values are read more than once (one Sm90TopologicalVisitor: a value
// read three times, stored and reduced through its store; a full tensor and a column bias read
// twice). Part of the full set (CI compiles the SM80 topological visitor; the GPU suite
// tests/python/gpu_evt runs SM90 ones).
TEST(Sm90ModuleCompile, EpilogueGraphWithSharedValues) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(
      full, "an SM90 custom epilogue with shared values (one Sm90TopologicalVisitor)");
  skip_without_toolchain();
  if (::testing::Test::IsSkipped()) return;
  const GemmDescription d = f16_tn_coop_graph(emit::testing::shared_value_graph());
  const auto modules = compile_and_check({{"sm90_f16_evt_shared_values", {{d}}}});
  const tc_module_table* table = modules[0]->table();
  ASSERT_NE(table, nullptr);
  tc_gemm_args args = problem(d, 256, 256, 512);
  args.header.num_epilogue_tensors -= 1;
  EXPECT_EQ(can_implement(table->entries[0], args).text,
            "epilogue graph: expected 5 operand tensor(s), got 4");
}

TEST(Sm90ModuleCompile, FullSet) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(
      full, "SM90 modules for tf32, fp8, int8, aux outputs, stream-K and ping-pong");
  skip_without_toolchain();
  if (::testing::Test::IsSkipped()) return;
  std::vector<ModuleSpec> specs = {
      {"sm90_tf32_tn_stages4_cluster1x2", {{tf32_tn_stages4_cluster1x2()}}},
      {"sm90_fp8_scaled_fast_accum", {{fp8_scaled_fast_accum()}}},
      {"sm90_fp8_out_e4m3_e5m2_relu", {{fp8_out_e4m3_e5m2_relu()}}},
      {"sm90_int8_tn_s8_out", {{int8_tn_s8_out()}}},
      {"sm90_f16_aux_gelu_tanh", {{f16_aux_gelu_tanh()}}},
      {"sm90_bf16_nt_stream_k", {{bf16_nt_stream_k()}}},
      {"sm90_f16_acc_pingpong_clamp", {{f16_acc_pingpong_clamp()}}},
      // A custom epilogue in fast math (tanh.approx, __expf, __fdividef).
      {"sm90_evt_fast_math", {{f16_tn_coop_graph(emit::testing::fast_math_graph(true))}}},
      // Custom epilogues at the bounds: the deepest tree, the deepest graph, the most nodes.
      {"sm90_evt_bounds",
       {{f16_tn_coop_graph(emit::testing::chain_graph(emit::kMaxEvtTreeDepth - 2))},
        {f16_tn_coop_graph(emit::testing::chain_graph(kMaxEpilogueGraphDepth - 2))},
        {f16_tn_coop_graph(emit::testing::widest_graph())}}},
  };
  if (const char* only = std::getenv("TILECRAFT_COMPILE_TESTS_ONLY")) {
    std::erase_if(specs,
                  [&](const ModuleSpec& s) { return s.name.find(only) == std::string::npos; });
  }
  (void)compile_and_check(specs);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::emit
