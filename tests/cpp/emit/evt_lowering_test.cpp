// The lowering of epilogue graphs to CUTLASS visitors, and its cost (issue 27, CRASH-1 and DOS-1):
// a value read twice is computed once (one topological visitor holding each node once), graphs
// without one keep the nested tree, deep graphs never nest past kMaxEvtTreeDepth, and the
// emitted text grows linearly with the graph, quickly, without recursion, even for graphs past
// the description's bounds (built by hand, never validated).
#include <gtest/gtest.h>

#include <ctime>
#include <string>
#include <vector>

#include "emit/evt/evt_text.hpp"
#include "emit/evt/evt_tree.hpp"
#include "emit/evt_test_graphs.hpp"
#include "emit/sm90_test_descriptions.hpp"

namespace tilecraft::emit {
namespace {
namespace TILECRAFT_TEST_FILE {

using namespace tilecraft::emit::testing;
using enum DataType;

// How many lowered nodes stand for graph node `node` (as a value or a sink).
int copies_of(const EvtVisitors& visitors, int node) {
  int count = 0;
  for (const EvtNode& t : visitors.nodes) {
    count += (t.role == EvtRole::value || t.role == EvtRole::sink) && t.source == node;
  }
  return count;
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++count;
  }
  return count;
}

// Processor time, which a busy machine does not stretch.
double cpu_seconds_since(std::clock_t start) {
  return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
}

GemmDescription sm90_graph_gemm(const EpilogueGraph& graph) {
  namespace sm90 = tilecraft::sm90_test;
  const MathInstruction m = sm90::wgmma({64, 128, 16}, f16, f16, f32);
  GemmDescription d = sm90::gemm(
      sm90::tile({128, 128, 64}, m, 0, {1, 1, 1}, KernelSchedule::TmaWarpSpecializedCooperative),
      sm90::tma(f16, Layout::RowMajor), sm90::tma(f16, Layout::ColumnMajor),
      sm90::tma(f16, Layout::RowMajor), sm90::epilogue(f16, f32));
  d.epilogue_graph = graph;  // unvalidated: emission must hold for any graph
  return d;
}

// Both families' emitted visitor text for `graph` (types and arguments).
std::string emitted_text(const EpilogueGraph& graph) {
  const GemmDescription sm80 = sm80_graph_gemm(graph);
  const GemmDescription sm90 = sm90_graph_gemm(graph);
  return sm80_evt_types_text(sm80) + sm80_evt_fill_text(sm80) +
         sm90_evt_types_text(sm90, "cutlass::epilogue::TmaWarpSpecializedCooperative") +
         sm90_evt_fill_text(sm90);
}

TEST(EvtLowering, GraphsWithoutSharedValuesKeepTheTree) {
  for (const EpilogueGraph& g : {issue_graph(), reductions_graph()}) {
    const EvtVisitors visitors = lower_epilogue_graph(g);
    EXPECT_EQ(visitors.form, EvtForm::tree) << g.to_string();
  }
}

TEST(EvtLowering, ASharedValueIsOneOperationOfATopologicalVisitor) {
  const EpilogueGraph g = shared_value_graph();
  ASSERT_TRUE(g.validate_for(80)) << g.validate_for(80).message();
  const EvtVisitors visitors = lower_epilogue_graph(g);
  ASSERT_EQ(visitors.form, EvtForm::topological);
  // Every graph node but D's store is one operation, in node order; D's store is the root, last.
  const int primary = g.primary_store();
  ASSERT_EQ(visitors.nodes.size(), g.nodes().size());
  for (int i = 0; i < static_cast<int>(g.nodes().size()); ++i) {
    EXPECT_EQ(copies_of(visitors, i), i == primary ? 0 : 1) << "graph node " << i;
  }
  ASSERT_EQ(visitors.root, static_cast<int>(visitors.nodes.size()) - 1);
  const EvtNode& root = visitors.nodes[visitors.root];
  EXPECT_EQ(root.role, EvtRole::root);
  EXPECT_EQ(root.source, primary);
  // Edges point back, to operations of the graph nodes read; a node reading a store reads the
  // stored value's operation.
  std::vector<int> op_of(g.nodes().size(), -1);
  for (int op = 0; op < static_cast<int>(visitors.nodes.size()); ++op) {
    const EvtNode& t = visitors.nodes[op];
    for (int child : t.children) EXPECT_LT(child, op);
    if (t.role == EvtRole::value || t.role == EvtRole::sink) op_of[t.source] = op;
  }
  const auto value_op = [&](int node) {
    while (g.nodes()[node].kind == EpilogueNodeKind::store) node = g.nodes()[node].inputs[0];
    return op_of[node];
  };
  for (int op = 0; op + 1 < static_cast<int>(visitors.nodes.size()); ++op) {
    const EvtNode& t = visitors.nodes[op];
    const std::vector<int>& inputs = g.nodes()[t.source].inputs;
    ASSERT_EQ(t.children.size(), inputs.size()) << "operation " << op;
    for (size_t k = 0; k < inputs.size(); ++k) EXPECT_EQ(t.children[k], value_op(inputs[k]));
  }
  EXPECT_EQ(root.children, std::vector<int>{value_op(primary)});
}

TEST(EvtLowering, ATensorReadTwiceIsLoadedOnceAndFreeFetchesMayRepeat) {
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int c = g.tensor("C", f16);
  g.store(g.mul(g.add(acc, c), g.add(acc, g.constant(1.0))), "D", f16);
  EXPECT_EQ(lower_epilogue_graph(g).form, EvtForm::tree);  // acc twice: fetched twice
  EpilogueGraph twice;
  const int acc2 = twice.accumulator();
  const int c2 = twice.tensor("C", f16);
  twice.store(twice.mul(twice.add(acc2, c2), c2), "D", f16);
  const EvtVisitors visitors = lower_epilogue_graph(twice);
  EXPECT_EQ(visitors.form, EvtForm::topological);
  EXPECT_EQ(copies_of(visitors, c2), 1);
}

TEST(EvtLowering, DeepGraphsAreNotNestedPastTheTreeBound) {
  // chain_graph(L) lowers to a tree L + 2 deep (its root replaces the store).
  EXPECT_EQ(lower_epilogue_graph(chain_graph(kMaxEvtTreeDepth - 2)).form, EvtForm::tree);
  EXPECT_EQ(lower_epilogue_graph(chain_graph(kMaxEvtTreeDepth - 1)).form, EvtForm::topological);
}

// The SM80 text of a small shared graph, whole: the operations, the edges (children by
// operation index, in the order each reads them) and the arguments, one member per operation.
TEST(EvtLowering, TheTopologicalVisitorsTextAndArguments) {
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int alpha = g.scalar("alpha");
  const int t = g.mul(alpha, acc);
  g.store(g.add(g.mul(t, t), t), "D", f16);
  const GemmDescription d = sm80_graph_gemm(g);
  const std::string types = sm80_evt_types_text(d);
  const std::string compute =
      "cutlass::epilogue::threadblock::VisitorCompute<tc_evt::%, ElementCompute, "
      "ElementCompute, cutlass::FloatRoundStyle::round_to_nearest>;\n";
  const auto compute_of = [&](const std::string& f) {
    std::string text = compute;
    return text.replace(text.find('%'), 1, f);
  };
  EXPECT_NE(types.find("using Evt0 = cutlass::epilogue::threadblock::VisitorAccFetch;\n"
                       "using Evt1 = cutlass::epilogue::threadblock::VisitorScalarBroadcast<"
                       "ElementCompute>;\n"
                       "using Evt2 = " +
                       compute_of("Mul") + "using Evt3 = " + compute_of("Mul") +
                       "using Evt4 = " + compute_of("Add") +
                       "using Evt5 = cutlass::epilogue::threadblock::VisitorAuxStore<"
                       "OutputTileThreadMap, ElementD, cutlass::FloatRoundStyle::round_to_nearest, "
                       "cute::Stride<int64_t, cute::_1, int64_t>>;\n"
                       "using FusionCallbacks = cutlass::epilogue::threadblock::"
                       "Sm80TopologicalVisitor<\n"
                       "    ElementCompute,\n"
                       "    cute::tuple<\n"
                       "        cute::seq<>,\n"
                       "        cute::seq<>,\n"
                       "        cute::seq<1, 0>,\n"
                       "        cute::seq<2, 2>,\n"
                       "        cute::seq<3, 2>,\n"
                       "        cute::seq<4>>,\n"
                       "    Evt0,\n    Evt1,\n    Evt2,\n    Evt3,\n    Evt4,\n    Evt5>;\n"),
            std::string::npos)
      << types;
  const std::string fill = sm80_evt_fill_text(d);
  EXPECT_NE(fill.find("  f = FusionArguments{\n"
                      "    {},\n"
                      "    {{ElementCompute(a.header.epilogue_scalars[0])}},\n"
                      "    {},\n"
                      "    {},\n"
                      "    {},\n"
                      "    {static_cast<ElementD*>(a.D), {int64_t(a.ldd), cute::_1{}, "
                      "int64_t(a.batch_stride_D)}}};\n"),
            std::string::npos)
      << fill;
}

TEST(EvtLowering, Sm90TopologicalVisitorEndsInDsConversion) {
  const GemmDescription d = sm90_graph_gemm(shared_value_graph());
  const std::string types =
      sm90_evt_types_text(d, "cutlass::epilogue::TmaWarpSpecializedCooperative");
  const size_t visitor = types.find(
      "using FusionOp = cutlass::epilogue::fusion::Sm90TopologicalVisitor<\n    ElementCompute,\n");
  ASSERT_NE(visitor, std::string::npos) << types;
  EXPECT_EQ(count_of(types, "Sm90EVT<"), 0u);
  // C (read twice) is the source C, loaded once; one aux store (T); the root converts D's value.
  EXPECT_EQ(count_of(types, "Sm90SrcFetch<ElementC>"), 1u);
  EXPECT_EQ(count_of(types, "Sm90AuxLoad<"), 0u);
  EXPECT_EQ(count_of(types, "AuxLoadDescriptor<"), 0u);
  EXPECT_EQ(count_of(types, "Sm90AuxStore<"), 1u);
  EXPECT_NE(types.find("Sm90Compute<tc_evt::Identity, ElementD, ElementCompute"),
            std::string::npos);
  const std::string fill = sm90_evt_fill_text(d);
  EXPECT_NE(fill.find("f = FusionArguments{\n    {},\n"), std::string::npos) << fill;
}

// DOS-1: x_i = x_{i-1} + x_{i-1}. In a tree, 16 lines emitted 57 MB; here the text grows by a
// bounded amount per node.
TEST(EvtLowering, EmittedTextIsLinearInAGraphOfSharedValues) {
  const size_t small = emitted_text(doubling_graph(8)).size();
  const std::clock_t start = std::clock();
  const size_t large = emitted_text(doubling_graph(kMaxEpilogueGraphDepth - 2)).size();
  EXPECT_LT(cpu_seconds_since(start), 2.0);
  const size_t per_node = (large - small) / (kMaxEpilogueGraphDepth - 2 - 8);
  EXPECT_LT(per_node, 1000u) << "small " << small << ", large " << large;
  EXPECT_LT(large, small + 1000u * kMaxEpilogueGraphDepth);
}

// CRASH-1: 100,000 chained nodes overflowed the stack in sm80_evt_types_text. Past every bound
// (the description refuses it first), emission still ends quickly, in linear space.
TEST(EvtLowering, AHugeUnvalidatedChainIsEmittedWithoutRecursion) {
  const EpilogueGraph huge = chain_graph(100000);
  const std::clock_t start = std::clock();
  const EvtVisitors visitors = lower_epilogue_graph(huge);
  EXPECT_EQ(visitors.form, EvtForm::topological);
  EXPECT_EQ(visitors.nodes.size(), huge.nodes().size());
  const GemmDescription d = sm80_graph_gemm(huge);
  const size_t size = sm80_evt_types_text(d).size() + sm80_evt_fill_text(d).size();
  EXPECT_LT(cpu_seconds_since(start), 30.0);  // about 1 s (Release); hours if quadratic
  EXPECT_LT(size, size_t(1000) * huge.nodes().size());
  // The description refuses it, by its size.
  const Result<GemmDescription> described =
      sm80_graph_gemm(issue_graph()).with_epilogue_graph(huge);
  ASSERT_FALSE(described);
  EXPECT_NE(described.status().message().find("100003 nodes; at most"), std::string::npos)
      << described.status().message();
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::emit
