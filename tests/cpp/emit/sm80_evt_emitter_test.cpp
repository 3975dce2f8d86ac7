// Tests of the SM80 emission of epilogue graphs (CUTLASS 2.x epilogue visitor trees on
// DefaultGemmWithVisitor kernels): the lowered tree, the visitor each node becomes (with CUTLASS's
// row/column naming swapped against ours), the arguments filled from tc_gemm_args, the
// reductions reset before each launch, module structure, and the descriptions refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "emit/device_image_text.hpp"
#include "emit/evt/evt_text.hpp"
#include "emit/evt/evt_tree.hpp"
#include "emit/evt_test_graphs.hpp"
#include "emit/jit_header_text.hpp"
#include "emit/sm80_gemm_parts.hpp"

namespace tilecraft::emit {
namespace {
namespace TILECRAFT_TEST_FILE {

using namespace tilecraft::emit::testing;
using enum DataType;

constexpr const char* kThreadblock = "cutlass::epilogue::threadblock::";

std::string entry_of(const GemmDescription& d) { return universal_entry_text({d}, 0); }

::testing::AssertionResult contains_all(const std::string& text,
                                        const std::vector<std::string>& parts) {
  std::string missing;
  for (const std::string& part : parts) {
    if (text.find(part) == std::string::npos) missing += "\n  missing: " + part;
  }
  if (missing.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << missing;
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

std::string visitor(const std::string& name) { return kThreadblock + name; }

TEST(Sm80EvtTree, NodesReadingDReadItsValueAndTheRootStoresIt) {
  const EpilogueGraph g = issue_graph();
  ASSERT_TRUE(g.validate_for(80)) << g.validate_for(80).message();
  const EvtVisitors tree = lower_epilogue_graph(g);
  const EvtNode& root = tree.nodes[tree.root];
  EXPECT_EQ(root.role, EvtRole::root);
  EXPECT_EQ(root.source, g.primary_store());
  std::vector<int> sinks;
  for (const EvtNode& t : tree.nodes) {
    // No store is ever a value node: nodes reading D (its reductions) read D's value.
    if (t.role == EvtRole::value) {
      EXPECT_NE(g.nodes()[t.source].kind, EpilogueNodeKind::store) << "tree node of " << t.source;
    }
    if (t.role == EvtRole::sink) sinks.push_back(t.source);
  }
  // Each extra output is written once: Z, amax, rowsum, colmax.
  std::sort(sinks.begin(), sinks.end());
  std::vector<int> outputs;
  for (int i = 0; i < static_cast<int>(g.nodes().size()); ++i) {
    const EpilogueNodeKind kind = g.nodes()[i].kind;
    if ((kind == EpilogueNodeKind::store || kind == EpilogueNodeKind::reduce) &&
        i != g.primary_store()) {
      outputs.push_back(i);
    }
  }
  EXPECT_EQ(sinks, outputs);
  // D's reductions wrap D's own value under the root; only Z (which D does not need) hangs beside
  // it, under one keep node.
  int keeps = 0;
  for (const EvtNode& t : tree.nodes) keeps += t.role == EvtRole::keep;
  EXPECT_EQ(keeps, 1);
}

TEST(Sm80EvtTree, ASinkReadingAnotherStoreFollowsIt) {
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int side = g.store(g.add(acc, g.constant(1.0)), "side", f32);
  g.reduce(side, ReduceOp::sum, ReduceAxis::all, "total", f32);
  g.store(acc, "D", f16);
  ASSERT_TRUE(g.validate_for(80)) << g.validate_for(80).message();
  const EvtVisitors tree = lower_epilogue_graph(g);
  int stores = 0, reductions = 0;
  for (const EvtNode& t : tree.nodes) {
    if (t.role != EvtRole::sink) continue;
    const EpilogueNodeKind kind = g.nodes()[t.source].kind;
    stores += kind == EpilogueNodeKind::store;
    if (kind == EpilogueNodeKind::reduce) {
      ++reductions;
      // The reduction wraps the store of `side`, which wraps side's value.
      ASSERT_EQ(t.children.size(), 1u);
      EXPECT_EQ(tree.nodes[t.children[0]].source, side);
    }
  }
  EXPECT_EQ(stores, 1);
  EXPECT_EQ(reductions, 1);
}

TEST(Sm80EvtEmitter, TheIssueGraphBecomesA2xVisitorTreeOnDefaultGemmWithVisitor) {
  const std::string text = entry_of(sm80_graph_gemm(issue_graph()));
  EXPECT_TRUE(contains_all(
      text, {visitor("OutputTileThreadLayout<cutlass::gemm::GemmShape<128, 128, 32>, "
                     "cutlass::gemm::GemmShape<64, 64, 32>, ElementD, 8, 1>"),
             "typename cutlass::gemm::kernel::DefaultGemmWithVisitor<",
             "cutlass::half_t, cutlass::layout::RowMajor, 8,\n    float, float, "
             "cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,",
             "FusionCallbacks, cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>, 3, "
             "cutlass::arch::OpMultiplyAdd, 1>::GemmKernel;",
             "using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;",
             "using TcGemm0 = tc_entry_0::Gemm;",
             // Loads: scalars, C (full), bias (N values: CUTLASS's row broadcast), rowscale (M
             // values: its column broadcast).
             visitor("VisitorScalarBroadcast<ElementCompute>"),
             visitor("VisitorAuxLoad<OutputTileThreadMap, cutlass::half_t, "
                     "cute::Stride<int64_t, cute::_1, int64_t>>"),
             visitor("VisitorRowBroadcast<OutputTileThreadMap, float, "
                     "cute::Stride<cute::_0, cute::_1, int64_t>>"),
             visitor("VisitorColBroadcast<OutputTileThreadMap, float, "
                     "cute::Stride<cute::_1, cute::_0, int64_t>>"),
             visitor("VisitorCompute<tc_evt::Relu, ElementCompute, ElementCompute, "
                     "cutlass::FloatRoundStyle::round_to_nearest>"),
             // Outputs: Z, the reductions (M values: CUTLASS's column reduction), D at the root.
             visitor("VisitorAuxStore<OutputTileThreadMap, cutlass::bfloat16_t, "
                     "cutlass::FloatRoundStyle::round_to_nearest, "
                     "cute::Stride<int64_t, cute::_1, int64_t>>"),
             visitor("VisitorScalarReduction<tc_evt::ReduceAbsMax, tc_evt::LaneAtomicMax, "
                     "OutputTileThreadMap, float, ElementCompute, "
                     "cutlass::FloatRoundStyle::round_to_nearest, cute::Stride<cute::_0, cute::_0, "
                     "int>>"),
             visitor("VisitorColReduction<cutlass::plus, cutlass::atomic_add, OutputTileThreadMap, "
                     "float, ElementCompute, cutlass::FloatRoundStyle::round_to_nearest, "
                     "cute::Stride<cute::_1, cute::_0, int64_t>>"),
             visitor("VisitorRowReduction<tc_evt::ReduceMax, cutlass::atomic_maximum, "
                     "OutputTileThreadMap, float, ElementCompute, "
                     "cutlass::FloatRoundStyle::round_to_nearest, "
                     "cute::Stride<cute::_0, cute::_1, int64_t>>"),
             visitor("VisitorCompute<tc_evt::First, ElementCompute, ElementCompute, "),
             "using Evt20 = " + visitor("Sm80EVT<") +
                 visitor("VisitorAuxStore<OutputTileThreadMap, ElementD, "),
             "using FusionCallbacks = Evt20;"}));
  // acc is read twice (alpha * acc, 2 * acc) and computed twice; D's value once.
  EXPECT_EQ(count_of(text, visitor("VisitorAccFetch;")), 2u);
  EXPECT_EQ(count_of(text, visitor("VisitorRowBroadcast<")), 1u);
}

TEST(Sm80EvtEmitter, ArgumentsComeFromTheAbiOperandsAndD) {
  const std::string text = entry_of(sm80_graph_gemm(issue_graph()));
  EXPECT_TRUE(contains_all(
      text,
      {"using FusionArguments = typename FusionCallbacks::Arguments;",
       "inline void fill_fusion(FusionArguments& f, const tc_gemm_args& a) {",
       "{{ElementCompute(a.header.epilogue_scalars[0])}}",
       "{{ElementCompute(a.header.epilogue_scalars[1])}}", "{{ElementCompute(float(2))}}",
       "{static_cast<cutlass::half_t*>(T[0].data), cutlass::half_t(0), {int64_t(T[0].ld), "
       "cute::_1{}, int64_t(T[0].batch_stride)}}",
       "{static_cast<float*>(T[1].data), float(0), tc_evt::vector_stride<cute::Stride<cute::_0, "
       "cute::_1, int64_t>>(T[1].batch_stride)}",
       "{static_cast<float*>(T[2].data), float(0), tc_evt::vector_stride<cute::Stride<cute::_1, "
       "cute::_0, int64_t>>(T[2].batch_stride)}",
       "{static_cast<float*>(T[3].data), 0.0f, tc_evt::vector_stride<cute::Stride<cute::_0, "
       "cute::_0, int>>(T[3].batch_stride)}",
       "{static_cast<cutlass::bfloat16_t*>(T[4].data), {int64_t(T[4].ld), cute::_1{}, "
       "int64_t(T[4].batch_stride)}}",
       "{static_cast<float*>(T[6].data), -std::numeric_limits<float>::infinity(), "
       "tc_evt::vector_stride<cute::Stride<cute::_0, cute::_1, int64_t>>(T[6].batch_stride)}",
       "{static_cast<ElementD*>(a.D), {int64_t(a.ldd), cute::_1{}, int64_t(a.batch_stride_D)}}"}));
  EXPECT_EQ(text.find("T[-1]"), std::string::npos);
}

TEST(Sm80EvtEmitter, ReductionOutputsAreResetToTheirIdentityBeforeEachLaunch) {
  const std::string text = entry_of(sm80_graph_gemm(issue_graph()));
  // amax (one value), rowsum (M values), colmax (N values): operands 3, 5, 6 of 7.
  EXPECT_TRUE(contains_all(text, {"constexpr tc_gemm::ResetOutput kResets[] = {\n"
                                  "    {3, 0, 0.0f},\n"
                                  "    {5, 1, 0.0f},\n"
                                  "    {6, 2, -std::numeric_limits<float>::infinity()},\n};\n",
                                  "constexpr tc_gemm::VisitorTraits kTraits{7, 2, kResets, 3};"}));
  EpilogueGraph no_reductions;
  no_reductions.store(no_reductions.accumulator(), "D", f16);
  const std::string plain = entry_of(sm80_graph_gemm(no_reductions));
  EXPECT_TRUE(contains_all(plain, {"constexpr tc_gemm::VisitorTraits kTraits{0, 0, nullptr, 0};"}));
  EXPECT_EQ(plain.find("kResets"), std::string::npos);
  // The adapter fills them on the stream after initialize() and before the GEMM's launch.
  const std::string adapter = testing::jit_header_text("sm80_epilogue_graph.cuh");
  const size_t initialize = adapter.find("gemm.initialize(");
  const size_t reset = adapter.find("status = reset_outputs(a, t, adapter, cuda_stream);");
  const size_t run = adapter.find("status = gemm.run(cuda_stream, &adapter);");
  ASSERT_NE(reset, std::string::npos);
  EXPECT_LT(initialize, reset);
  EXPECT_LT(reset, run);
  EXPECT_NE(adapter.find("adapter.memsetDevice("), std::string::npos);
}

TEST(Sm80EvtEmitter, EachReductionOpAndAxisHasItsVisitor) {
  const std::string text = entry_of(sm80_graph_gemm(reductions_graph(), f32));
  const std::string tail = ", OutputTileThreadMap, float, ElementCompute, ";
  EXPECT_TRUE(contains_all(
      text, {visitor("VisitorColReduction<cutlass::plus, cutlass::atomic_add") + tail,
             visitor("VisitorRowReduction<cutlass::plus, cutlass::atomic_add") + tail,
             visitor("VisitorScalarReduction<cutlass::plus, tc_evt::LaneAtomicAdd") + tail,
             visitor("VisitorColReduction<tc_evt::ReduceMax, cutlass::atomic_maximum") + tail,
             visitor("VisitorRowReduction<tc_evt::ReduceMax, cutlass::atomic_maximum") + tail,
             visitor("VisitorScalarReduction<tc_evt::ReduceMax, tc_evt::LaneAtomicMax") + tail,
             visitor("VisitorColReduction<tc_evt::ReduceAbsMax, cutlass::atomic_maximum") + tail,
             visitor("VisitorRowReduction<tc_evt::ReduceAbsMax, cutlass::atomic_maximum") + tail,
             visitor("VisitorScalarReduction<tc_evt::ReduceAbsMax, tc_evt::LaneAtomicMax") + tail,
             "ElementD, 4, 1>;", "using ElementD = float;"}));
  EXPECT_TRUE(contains_all(
      text, {"constexpr tc_gemm::VisitorTraits kTraits{9, 0, kResets, 9};", "    {1, 2, 0.0f},\n",
             "    {4, 2, -std::numeric_limits<float>::infinity()},\n", "    {8, 0, 0.0f},\n};"}));
}

TEST(Sm80EvtEmitter, EveryElementwiseNodeUsesItsFunction) {
  const std::string text = entry_of(sm80_graph_gemm(elementwise_graph(bf16), bf16));
  std::vector<std::string> parts;
  for (const char* f :
       {"Negate",    "Abs",      "Square",    "Reciprocal", "Add",       "Sub",     "Mul",
        "Div",       "Max",      "Min",       "Less",       "LessEqual", "Greater", "GreaterEqual",
        "Equal",     "NotEqual", "Identity",  "Relu",       "Tanh",      "Sigmoid", "Silu",
        "Hardswish", "Gelu",     "LeakyRelu", "Select"}) {
    parts.push_back(visitor("VisitorCompute<tc_evt::") + f + ", ElementCompute, ElementCompute, ");
  }
  // Conversions round to their type; the chain's values stay in ElementCompute.
  parts.push_back(
      visitor("VisitorCompute<tc_evt::Identity, cutlass::bfloat16_t, ElementCompute, "));
  parts.push_back(visitor("VisitorCompute<tc_evt::Identity, cutlass::half_t, ElementCompute, "));
  parts.push_back("{{ElementCompute(std::numeric_limits<float>::infinity())}}");
  parts.push_back("{{ElementCompute(a.header.epilogue_scalars[0])}}");
  parts.push_back("using ElementD = cutlass::bfloat16_t;");
  EXPECT_TRUE(contains_all(text, parts));
}

TEST(Sm80EvtEmitter, LoadsAndStoresOfEachTypeBesideD) {
  const std::string text = entry_of(sm80_graph_gemm(loads_and_stores_graph()));
  EXPECT_TRUE(
      contains_all(text, {visitor("VisitorColBroadcast<OutputTileThreadMap, cutlass::bfloat16_t, "),
                          visitor("VisitorRowBroadcast<OutputTileThreadMap, cutlass::half_t, "),
                          visitor("VisitorAuxLoad<OutputTileThreadMap, float, "),
                          visitor("VisitorAuxLoad<OutputTileThreadMap, cutlass::bfloat16_t, "),
                          visitor("VisitorAuxStore<OutputTileThreadMap, float, "),
                          visitor("VisitorAuxStore<OutputTileThreadMap, cutlass::half_t, "),
                          "constexpr tc_gemm::VisitorTraits kTraits{6, 0, nullptr, 0};"}));
}

TEST(Sm80EvtEmitter, TheEntryCallsTheVisitorAdaptersWithItsTraits) {
  const std::string text = entry_of(sm80_graph_gemm(issue_graph()));
  EXPECT_TRUE(contains_all(
      text,
      {"extern \"C\" __global__ void tc_kernel_0(typename TcGemm0::GemmKernel::Params params)",
       "TcGemm0::GemmKernel::invoke(params, *shared_storage);",
       "return tc_gemm::visitor_can_implement<TcGemm0, false>(args, error, capacity, "
       "tc_entry_0::kTraits, &tc_entry_0::fill_fusion);",
       "return tc_gemm::visitor_workspace_size<TcGemm0, false>(args, \"tc_kernel_0\", "
       "tc_entry_0::kTraits, &tc_entry_0::fill_fusion);",
       "return tc_gemm::visitor_run<TcGemm0, false>(args, workspace, stream, error, capacity, "
       "\"tc_kernel_0\",\n      tc_entry_0::kTraits, &tc_entry_0::fill_fusion);"}));
  // The host-only parts stay out of the device half.
  const size_t host = text.find("#if !defined(TILECRAFT_DEVICE_HALF)");
  ASSERT_NE(host, std::string::npos);
  EXPECT_LT(host, text.find("constexpr tc_gemm::VisitorTraits"));
  EXPECT_LT(text.find("constexpr tc_gemm::VisitorTraits"), text.find("#endif  // !TILECRAFT"));
}

TEST(Sm80EvtEmitter, OnlyModulesWithAGraphCarryTheVisitorTexts) {
  const GemmDescription plain_d = tensorop_f16_tn();
  const GemmDescription graph_d = sm80_graph_gemm(issue_graph());
  const std::string plain = emit_gemm_module({{plain_d}});
  const std::string mixed = emit_gemm_module({{plain_d}, {graph_d}});
  const std::string include = jit_include("sm80_epilogue_graph.cuh");
  EXPECT_EQ(plain.find(include), std::string::npos);
  EXPECT_NE(mixed.find(include), std::string::npos);
  // The plain entry's text is the same beside a graph entry.
  EXPECT_NE(mixed.find(universal_entry_text({plain_d}, 0)), std::string::npos);
  EXPECT_NE(mixed.find(universal_entry_text({graph_d}, 1)), std::string::npos);
  EXPECT_NE(mixed.find("&tc_gemm::gemm_kernel<TcGemm1>(\"tc_kernel_1\"),"), std::string::npos);
  // Names and keys: the graph's key is in the entry's name.
  EXPECT_NE(mixed.find("\"" + graph_d.procedural_name() + "\""), std::string::npos);
  EXPECT_NE(graph_d.procedural_name().find("_evt" + issue_graph().key()), std::string::npos);
  EXPECT_EQ(emit_gemm_module({{graph_d}}), emit_gemm_module({{sm80_graph_gemm(issue_graph())}}));
}

TEST(Sm80EvtEmitter, SplitKParallelEntriesWithAGraphAreRefused) {
  try {
    (void)emit_gemm_module({{sm80_graph_gemm(issue_graph()), GemmEntryKind::kSplitKParallel}});
    FAIL() << "expected tilecraft::Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.status().code(), StatusCode::kNotSupported);
    EXPECT_NE(std::string(error.what()).find("GemmSplitKParallel"), std::string::npos)
        << error.what();
  }
}

TEST(Sm80EvtDescription, SimtF64AndInterleavedOutputsAreRefused) {
  GemmDescription simt = simt_f32_seed();
  simt.epilogue = epilogue(EpilogueKind::LinearCombination, f32, 1, f32, f32);
  simt.epilogue_graph = reductions_graph(f32);
  const Status simt_status = simt.validate();
  EXPECT_EQ(simt_status.code(), StatusCode::kNotSupported);
  EXPECT_NE(simt_status.message().find("epilogue graphs on arch=80 run on TensorOp kernels"),
            std::string::npos)
      << simt_status.message();

  GemmDescription interleaved = int8_interleaved();
  interleaved.epilogue = epilogue(EpilogueKind::LinearCombination, s8, 8, s32, f32);
  EpilogueGraph s8_graph;
  s8_graph.store(s8_graph.accumulator(), "D", s8);
  interleaved.epilogue_graph = s8_graph;
  const Status interleaved_status = interleaved.validate();
  EXPECT_EQ(interleaved_status.code(), StatusCode::kNotSupported);
  EXPECT_NE(interleaved_status.message().find(
                "C: epilogue graphs on arch=80 write a row- or column-major D"),
            std::string::npos)
      << interleaved_status.message();

  GemmDescription f64 =
      gemm(math({8, 8, 4}, DataType::f64, DataType::f64, OpClass::TensorOp), {64, 64, 16}, 3,
           {2, 2, 1}, {DataType::f64, Layout::RowMajor, 1}, {DataType::f64, Layout::ColumnMajor, 1},
           {DataType::f64, Layout::RowMajor, 1},
           epilogue(EpilogueKind::LinearCombination, DataType::f64, 1, DataType::f64, f32));
  EpilogueGraph f64_graph;
  f64_graph.store(f64_graph.accumulator(), "D", DataType::f64);
  f64.epilogue_graph = f64_graph;
  const Status f64_status = f64.validate();
  EXPECT_EQ(f64_status.code(), StatusCode::kNotSupported);
  EXPECT_NE(f64_status.message().find("would round a Float64 GEMM's accumulator"),
            std::string::npos)
      << f64_status.message();

  EXPECT_TRUE(sm80_graph_gemm(issue_graph()).validate());
  EXPECT_TRUE(sm80_graph_gemm(elementwise_graph(bf16), bf16).validate());
  EXPECT_TRUE(sm80_graph_gemm(reductions_graph(), f32).validate());
  EXPECT_TRUE(sm80_graph_gemm(loads_and_stores_graph()).validate());
  EXPECT_TRUE(sm80_graph_gemm(issue_graph(), f16, Layout::ColumnMajor).validate());
}

// A column-major D is the transpose of the kernel's row-major D^T = B^T A^T: A and B exchange
// (transposed), and M values (one per row of D) are one per column of the kernel's output.
TEST(Sm80EvtEmitter, AColumnMajorDIsTheTransposedProblem) {
  const GemmDescription d = sm80_graph_gemm(issue_graph(), f16, Layout::ColumnMajor);
  EXPECT_TRUE(sm80_evt_transposed(d));
  EXPECT_FALSE(sm80_evt_transposed(sm80_graph_gemm(issue_graph())));
  const std::string text = entry_of(d);
  EXPECT_TRUE(contains_all(
      text,
      {// A' = B^T (column-major B read row-major), B' = A^T; the kernel writes rows.
       "DefaultGemmWithVisitor<\n"
       "    cutlass::half_t, cutlass::layout::RowMajor, cutlass::ComplexTransform::kNone, 8,\n"
       "    cutlass::half_t, cutlass::layout::ColumnMajor, cutlass::ComplexTransform::kNone, 8,\n"
       "    cutlass::half_t, cutlass::layout::RowMajor, 8,",
       // bias (N values) is one per row of D^T; rowscale (M values) one per column.
       visitor("VisitorColBroadcast<OutputTileThreadMap, float, "
               "cute::Stride<cute::_1, cute::_0, int64_t>>"),
       visitor("VisitorRowBroadcast<OutputTileThreadMap, float, "
               "cute::Stride<cute::_0, cute::_1, int64_t>>"),
       // rowsum (M values) is CUTLASS's row reduction there, colmax its column reduction.
       visitor("VisitorRowReduction<cutlass::plus, cutlass::atomic_add, "),
       visitor("VisitorColReduction<tc_evt::ReduceMax, cutlass::atomic_maximum, "),
       "{static_cast<float*>(T[1].data), float(0), tc_evt::vector_stride<cute::Stride<cute::_1, "
       "cute::_0, int64_t>>(T[1].batch_stride)}",
       "{static_cast<float*>(T[2].data), float(0), tc_evt::vector_stride<cute::Stride<cute::_0, "
       "cute::_1, int64_t>>(T[2].batch_stride)}",
       // Full tensors and D keep their leading dimensions (a column-major M x N is a row-major
       // N x M).
       "{static_cast<cutlass::half_t*>(T[0].data), cutlass::half_t(0), {int64_t(T[0].ld), "
       "cute::_1{}, int64_t(T[0].batch_stride)}}",
       "{static_cast<ElementD*>(a.D), {int64_t(a.ldd), cute::_1{}, int64_t(a.batch_stride_D)}}",
       // The resets count M and N as the caller does.
       "    {5, 1, 0.0f},\n", "    {6, 2, -std::numeric_limits<float>::infinity()},\n",
       "tc_gemm::visitor_can_implement<TcGemm0, true>(",
       "tc_gemm::visitor_workspace_size<TcGemm0, true>(", "tc_gemm::visitor_run<TcGemm0, true>("}));
  EXPECT_EQ(text.find(visitor("VisitorColReduction<cutlass::plus")), std::string::npos);
  // The adapter exchanges A and B and M and N for it.
  const std::string adapter = testing::jit_header_text("sm80_epilogue_graph.cuh");
  EXPECT_NE(adapter.find("cutlass::gemm::GemmCoord(a.n, a.m, a.k), a.batch_count,\n"
                         "                                    callbacks, a.B, a.A,"),
            std::string::npos);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::emit
