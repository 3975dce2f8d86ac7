// The epilogue graph of the C++ core (issue 15): building, the canonical text and key, and each
// rule validate() enforces, with the node it names.
#include "tilecraft/describe/epilogue_graph.hpp"

#include <gtest/gtest.h>

#include <ctime>
#include <deque>
#include <string>

#include "tilecraft/describe/epilogue_graph_limits.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;

// D = relu(alpha * acc + beta * C + bias); amax = max |D| (the issue's example).
EpilogueGraph example() {
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int alpha = g.scalar("alpha");
  const int c = g.tensor("C", f16);
  const int beta = g.scalar("beta");
  const int bias = g.tensor("bias", f16, Broadcast::column);
  const int scaled_acc = g.mul(alpha, acc);  // one node per statement: arguments of one call
  const int scaled_c = g.mul(beta, c);       // are evaluated in no fixed order
  const int z = g.add(g.add(scaled_acc, scaled_c), bias);
  const int d = g.store(g.activation(Activation::relu, z), "D", f16);
  g.reduce(d, ReduceOp::abs_max, ReduceAxis::all, "amax", f32);
  return g;
}

std::string error_of(const EpilogueGraph& g, int arch = 0) {
  const Status s = arch ? g.validate_for(arch) : g.validate();
  return s ? std::string("(no error)") : s.message();
}

TEST(EpilogueGraph, TheIssuesExampleIsValidForBothFamilies) {
  const EpilogueGraph g = example();
  EXPECT_TRUE(g.validate()) << error_of(g);
  EXPECT_TRUE(g.validate_for(80)) << error_of(g, 80);
  EXPECT_TRUE(g.validate_for(90)) << error_of(g, 90);
  EXPECT_EQ(g.scalar_names(), (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_EQ(g.input_names(), (std::vector<std::string>{"C", "bias"}));
  EXPECT_EQ(g.output_names(), (std::vector<std::string>{"D", "amax"}));
}

TEST(EpilogueGraph, TheCanonicalTextAndKeyAreStableAndTellGraphsApart) {
  const EpilogueGraph g = example();
  EXPECT_EQ(g.to_string(),
            "0:acc 1:scalar(alpha) 2:tensor(C,full,f16) 3:scalar(beta) 4:tensor(bias,column,f16) "
            "5:mul(1,0) 6:mul(3,2) 7:add(5,6) 8:add(7,4) 9:relu(8) 10:store(9,D,f16) "
            "11:reduce(10,amax,abs_max,all,f32)");
  EXPECT_EQ(g.key(), example().key());
  EXPECT_EQ(g.key().size(), 16u);
  EpilogueGraph other = example();
  other.constant(0.5);  // an extra node changes the text and the key
  EXPECT_NE(other.key(), g.key());
  EpilogueGraph row_bias;
  const int acc = row_bias.accumulator();
  row_bias.store(row_bias.add(acc, row_bias.tensor("bias", f16, Broadcast::row)), "D", f16);
  EpilogueGraph column_bias;
  const int acc2 = column_bias.accumulator();
  column_bias.store(column_bias.add(acc2, column_bias.tensor("bias", f16, Broadcast::column)), "D",
                    f16);
  EXPECT_NE(row_bias.key(), column_bias.key());
}

TEST(EpilogueGraph, EveryNodeKindBuilds) {
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int slope = g.scalar("slope");
  const int leaky = g.activation(Activation::leaky_relu, acc, {slope});
  const int positive = g.binary(BinaryOp::greater, acc, g.constant(0.0));
  const int chosen = g.select(positive, g.unary(UnaryOp::square, acc), leaky);
  const int scaled = g.div(chosen, g.tensor("scale", f32, Broadcast::row));
  g.store(scaled, "aux", bf16);
  g.store(g.convert(scaled, e4m3), "D", e4m3);
  g.reduce(scaled, ReduceOp::max, ReduceAxis::row, "row_max", f32);
  g.reduce(scaled, ReduceOp::sum, ReduceAxis::column, "column_sum", f32);
  EXPECT_TRUE(g.validate_for(90)) << error_of(g, 90);
  EXPECT_NE(error_of(g, 80).find("float8_e4m3 values are arch=90 epilogues"), std::string::npos)
      << error_of(g, 80);
}

EpilogueNode node(EpilogueNodeKind kind, std::vector<int> inputs, std::string name = "",
                  DataType dtype = f16) {
  EpilogueNode n;
  n.kind = kind;
  n.inputs = std::move(inputs);
  n.name = std::move(name);
  n.dtype = dtype;
  return n;
}

struct Broken {
  const char* what;
  EpilogueGraph graph;
  const char* expected;
};

EpilogueGraph with_node(EpilogueNode node, bool store_it = true) {
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int n = g.append(std::move(node));
  if (store_it) g.store(g.add(acc, n), "D", f16);
  return g;
}

TEST(EpilogueGraph, EachRuleNamesTheNodeThatBreaksIt) {
  std::vector<Broken> cases;
  {
    EpilogueGraph g;
    const int acc = g.accumulator();
    g.append(node(EpilogueNodeKind::binary, {acc, 2}));
    g.store(1, "D", f16);
    cases.push_back({"cycle", g,
                     "node 1 (binary): reads node 2 (store 'D'), which does not come "
                     "before it: a cycle"});
  }
  {
    EpilogueGraph g;
    g.accumulator();
    g.append(node(EpilogueNodeKind::store, {7}, "D"));
    cases.push_back({"dangling", g,
                     "node 1 (store 'D'): reads node 7, which does not exist (the "
                     "graph has 2 nodes): a dangling input"});
  }
  {
    EpilogueGraph g;
    const int acc = g.accumulator();
    g.append(node(EpilogueNodeKind::binary, {acc}));
    cases.push_back({"input count", g, "node 1 (binary): expected 2 inputs, got 1"});
  }
  {
    EpilogueGraph g;
    const int acc = g.accumulator();
    g.store(g.activation(Activation::leaky_relu, acc), "D", f16);
    cases.push_back({"activation args", g, "node 1 (activation): expected 2 inputs, got 1"});
  }
  {
    EpilogueGraph g;
    const int a = g.accumulator();
    const int b = g.accumulator();
    g.store(g.add(a, b), "D", f16);
    cases.push_back({"two accumulators", g, "node 1 (acc): a second accumulator"});
  }
  {
    EpilogueGraph g;
    g.store(g.scalar("alpha"), "D", f16);
    cases.push_back({"no accumulator", g, "no accumulator node"});
  }
  {
    EpilogueGraph g;
    g.accumulator();
    cases.push_back({"no output", g, "no store or reduction"});
  }
  {
    EpilogueGraph g;
    const int acc = g.accumulator();
    g.scalar("unused");
    g.store(acc, "D", f16);
    cases.push_back({"unused", g, "node 1 (scalar 'unused'): feeds no store or reduction"});
  }
  {
    EpilogueGraph g;
    const int acc = g.accumulator();
    g.store(acc, "D", f16);
    g.store(acc, "D", f32);
    cases.push_back({"two outputs named D", g,
                     "node 2 (store 'D'): the output name 'D' is "
                     "written by another store or reduction"});
  }
  {
    EpilogueGraph g;
    const int acc = g.accumulator();
    g.store(g.add(acc, g.tensor("C", f16)), "C", f16);
    cases.push_back({"in and out", g, "'C' names both an input and an output"});
  }
  cases.push_back({"name", with_node(node(EpilogueNodeKind::scalar, {}, "2x")),
                   "node 1 (scalar '2x'): name: expected an identifier"});
  {
    EpilogueGraph g;
    g.store(g.accumulator(), "D", tf32);
    cases.push_back({"tf32 store", g,
                     "node 1 (store 'D'): dtype: expected a type a kernel reads "
                     "or writes"});
  }
  {
    EpilogueGraph g;
    const int d = g.store(g.convert(g.accumulator(), e4m3), "D", e4m3);
    g.reduce(d, ReduceOp::abs_max, ReduceAxis::all, "amax", f32);
    cases.push_back({"fp8 reduction", g,
                     "node 3 (reduce 'amax'): reduces node 2 (store 'D'), an "
                     "fp8 value (float8_e4m3)"});
  }
  {
    EpilogueGraph g;
    g.reduce(g.accumulator(), ReduceOp::sum, ReduceAxis::row, "sums", s32);
    cases.push_back({"int reduction", g, "a reduction accumulates in float"});
  }
  {
    EpilogueGraph g;
    const int acc = g.accumulator();
    const int r = g.reduce(acc, ReduceOp::max, ReduceAxis::row, "row_max", f32);
    g.store(g.sub(acc, r), "D", f16);
    cases.push_back({"reads a reduction", g,
                     "node 2 (binary): reads node 1 (reduce 'row_max'), "
                     "a reduction"});
  }
  {
    EpilogueNode bad = node(EpilogueNodeKind::unary, {0});
    bad.unary = static_cast<UnaryOp>(99);
    cases.push_back({"enumerator", with_node(bad), "node 1 (unary): op: expected an UnaryOp"});
  }
  for (const Broken& c : cases) {
    EXPECT_NE(error_of(c.graph).find(c.expected), std::string::npos)
        << c.what << ": " << error_of(c.graph) << "\n  graph: " << c.graph.to_string();
  }
  EXPECT_NE(error_of(EpilogueGraph{}).find("no nodes"), std::string::npos);
}

// x_0 = acc * alpha, x_i = x_{i-1} * alpha, D = x_last: length + 3 nodes, length + 2 deep.
EpilogueGraph chain(int length) {
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int alpha = g.scalar("alpha");
  int x = g.mul(acc, alpha);
  for (int i = 1; i < length; ++i) x = g.mul(x, alpha);
  g.store(x, "D", f16);
  return g;
}

// Exactly `nodes` nodes (at least 3), shallow: D is a balanced sum of nodes - 1 terms acc.
EpilogueGraph wide(int nodes) {
  EpilogueGraph g;
  const int acc = g.accumulator();
  std::deque<int> terms(nodes - 1, acc);
  while (terms.size() > 1) {
    const int a = terms.front();
    terms.pop_front();
    const int b = terms.front();
    terms.pop_front();
    terms.push_back(g.add(a, b));
  }
  g.store(terms.front(), "D", f16);
  return g;
}

TEST(EpilogueGraph, NodeCountIsBoundedAndTheRefusalNamesTheLimit) {
  const EpilogueGraph at_limit = wide(kMaxEpilogueGraphNodes);
  ASSERT_EQ(static_cast<int>(at_limit.nodes().size()), kMaxEpilogueGraphNodes);
  EXPECT_TRUE(at_limit.validate()) << error_of(at_limit);
  const EpilogueGraph over = wide(kMaxEpilogueGraphNodes + 1);
  EXPECT_EQ(error_of(over).rfind("epilogue graph: " + std::to_string(kMaxEpilogueGraphNodes + 1) +
                                     " nodes; at most " + std::to_string(kMaxEpilogueGraphNodes) +
                                     " are allowed (kMaxEpilogueGraphNodes)",
                                 0),
            0u)
      << error_of(over);
  // CRASH-1's graph: 100,000 chained nodes are refused at once, by count, before any node is
  // looked at (validate is linear; this one is constant).
  const EpilogueGraph huge = chain(100000);
  const std::clock_t start = std::clock();
  const std::string refusal = error_of(huge, 80);
  EXPECT_LT(static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC, 0.1);
  EXPECT_NE(refusal.find("100003 nodes; at most"), std::string::npos) << refusal;
}

TEST(EpilogueGraph, DepthIsBoundedAndTheRefusalNamesTheNode) {
  // chain(L) is L + 2 deep at its store.
  const EpilogueGraph at_limit = chain(kMaxEpilogueGraphDepth - 2);
  EXPECT_TRUE(at_limit.validate()) << error_of(at_limit);
  const EpilogueGraph over = chain(kMaxEpilogueGraphDepth - 1);
  const int store = static_cast<int>(over.nodes().size()) - 1;
  EXPECT_EQ(error_of(over), "node " + std::to_string(store) + " (store 'D'): depth " +
                                std::to_string(kMaxEpilogueGraphDepth + 1) +
                                " (the nodes on its longest chain of inputs); at most " +
                                std::to_string(kMaxEpilogueGraphDepth) +
                                " are allowed (kMaxEpilogueGraphDepth)");
  // A node deeper than the bound is named even when it is not the last.
  EpilogueGraph deep_inside = chain(kMaxEpilogueGraphDepth + 5);
  EXPECT_NE(error_of(deep_inside)
                .find("node " + std::to_string(kMaxEpilogueGraphDepth + 1) + " (binary): depth " +
                      std::to_string(kMaxEpilogueGraphDepth + 1)),
            std::string::npos)
      << error_of(deep_inside);
}

TEST(EpilogueGraph, ArchitectureRules) {
  EpilogueGraph g;
  g.store(g.activation(Activation::gelu_tanh, g.accumulator()), "D", bf16);
  EXPECT_TRUE(g.validate_for(90)) << error_of(g, 90);
  EXPECT_NE(error_of(g, 80).find("gelu_tanh is an arch=90 activation"), std::string::npos)
      << error_of(g, 80);
  EXPECT_NE(error_of(g, 70).find("arch: expected 80"), std::string::npos);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
