// Epilogue graphs and SM80 GEMM descriptions carrying them, shared by the SM80 EVT emitter test
// and the compile tests: together they use every node kind, both broadcasts, extra stores and
// every reduction (op and axis), with f16, bf16 and f32 outputs.
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "emit/emit_test_descriptions.hpp"
#include "tilecraft/describe/epilogue_graph.hpp"
#include "tilecraft/describe/epilogue_graph_limits.hpp"

namespace tilecraft::emit::testing {

// The issue's example: D = relu(alpha * acc + beta * C + bias[N]) * rowscale[M]; amax = max |D|;
// Z = 2 * acc (an extra store D does not need); rowsum = D summed along N; colmax = D's column
// maxima.
inline EpilogueGraph issue_graph(DataType out = DataType::f16) {
  using enum DataType;
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int alpha = g.scalar("alpha");
  const int c = g.tensor("C", out);
  const int beta = g.scalar("beta");
  const int bias = g.tensor("bias", f32, Broadcast::column);
  const int rowscale = g.tensor("rowscale", f32, Broadcast::row);
  const int scaled_acc = g.mul(alpha, acc);
  const int scaled_c = g.mul(beta, c);
  const int sum = g.add(scaled_acc, scaled_c);
  const int z = g.add(sum, bias);
  const int relu = g.activation(Activation::relu, z);
  const int d = g.store(g.mul(relu, rowscale), "D", out);
  g.reduce(d, ReduceOp::abs_max, ReduceAxis::all, "amax", f32);
  const int two = g.constant(2.0);
  g.store(g.mul(acc, two), "Z", bf16);
  g.reduce(d, ReduceOp::sum, ReduceAxis::row, "rowsum", f32);
  g.reduce(d, ReduceOp::max, ReduceAxis::column, "colmax", f32);
  return g;
}

// Every elementwise node: each unary and binary op, select, each arch-80 activation (leaky_relu
// with a runtime slope), conversions, constants (an infinity among them).
inline EpilogueGraph elementwise_graph(DataType out = DataType::f16) {
  using enum DataType;
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int slope = g.scalar("slope");
  const int x = g.tensor("X", f16);
  const int y = g.tensor("Y", f32);
  int v = acc;
  for (UnaryOp op : {UnaryOp::negate, UnaryOp::abs, UnaryOp::square, UnaryOp::reciprocal}) {
    v = g.add(v, g.unary(op, x));
  }
  for (BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div, BinaryOp::max,
                      BinaryOp::min, BinaryOp::less, BinaryOp::less_equal, BinaryOp::greater,
                      BinaryOp::greater_equal, BinaryOp::equal, BinaryOp::not_equal}) {
    v = g.binary(op, v, y);
  }
  for (Activation a :
       {Activation::identity, Activation::relu, Activation::tanh, Activation::sigmoid,
        Activation::silu, Activation::hardswish, Activation::gelu}) {
    v = g.activation(a, v);
  }
  v = g.activation(Activation::leaky_relu, v, {slope});
  const int inf = g.constant(std::numeric_limits<double>::infinity());
  v = g.binary(BinaryOp::min, v, inf);
  const int positive = g.binary(BinaryOp::greater, v, g.constant(0.0));
  v = g.select(positive, g.convert(v, bf16), g.convert(acc, f16));
  g.store(v, "D", out);
  return g;
}

// Every activation with a fast form (EpilogueGraph::set_fast_math): D = tanh(acc) + sigmoid(acc)
// * X + gelu(acc), S = silu(acc), and on SM90 (with_gelu_tanh) G = gelu_tanh(acc).
inline EpilogueGraph fast_math_graph(bool with_gelu_tanh, DataType out = DataType::f16) {
  using enum DataType;
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int x = g.tensor("X", f32);
  const int t = g.activation(Activation::tanh, acc);
  const int s = g.activation(Activation::sigmoid, acc);
  const int gated = g.mul(s, x);
  const int gelu = g.activation(Activation::gelu, acc);
  const int sum = g.add(t, gated);
  g.store(g.add(sum, gelu), "D", out);
  g.store(g.activation(Activation::silu, acc), "S", f32);
  if (with_gelu_tanh) g.store(g.activation(Activation::gelu_tanh, acc), "G", f16);
  g.set_fast_math(true);
  return g;
}

// Each reduction op along each axis, of acc and of D, with D = acc.
inline EpilogueGraph reductions_graph(DataType out = DataType::f32) {
  using enum DataType;
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int d = g.store(acc, "D", out);
  const std::pair<ReduceOp, const char*> ops[] = {
      {ReduceOp::sum, "sum"}, {ReduceOp::max, "max"}, {ReduceOp::abs_max, "absmax"}};
  const std::pair<ReduceAxis, const char*> axes[] = {
      {ReduceAxis::row, "row"}, {ReduceAxis::column, "col"}, {ReduceAxis::all, "all"}};
  for (const auto& [op, op_name] : ops) {
    for (const auto& [axis, axis_name] : axes) {
      g.reduce(axis == ReduceAxis::all ? acc : d, op, axis, std::string(op_name) + "_" + axis_name,
               f32);
    }
  }
  return g;
}

// Loads and stores of each type beside an f16 D: full tensors, row and column broadcasts, two
// extra stores, one of a value D does not need.
inline EpilogueGraph loads_and_stores_graph() {
  using enum DataType;
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int r16 = g.tensor("r16", bf16, Broadcast::row);
  const int c16 = g.tensor("c16", f16, Broadcast::column);
  const int full32 = g.tensor("full32", f32);
  const int fullbf = g.tensor("fullbf", bf16);
  const int a = g.add(acc, r16);
  const int b = g.add(a, c16);
  const int s = g.store(b, "pre", f32);
  const int t = g.mul(s, full32);
  g.store(g.add(t, fullbf), "D", f16);
  g.store(g.sub(acc, full32), "side", f16);
  return g;
}

// Values read more than once (the topological form): t = alpha * acc + C is read three times
// (D = t * t + t - C), stored as T (f32) and reduced through that store (row sums); C and the
// column bias are read twice; D's absolute maximum is taken.
inline EpilogueGraph shared_value_graph(DataType out = DataType::f16) {
  using enum DataType;
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int alpha = g.scalar("alpha");
  const int c = g.tensor("C", out);
  const int bias = g.tensor("bias", f32, Broadcast::column);
  const int scaled = g.mul(alpha, acc);
  const int t = g.add(scaled, c);
  const int square = g.mul(t, t);
  const int sum = g.add(square, t);
  const int less_c = g.sub(sum, c);
  const int biased = g.add(less_c, bias);
  const int d = g.store(g.mul(biased, bias), "D", out);
  const int stored_t = g.store(t, "T", f32);
  g.reduce(stored_t, ReduceOp::sum, ReduceAxis::row, "t_rowsum", f32);
  g.reduce(d, ReduceOp::abs_max, ReduceAxis::all, "amax", f32);
  return g;
}

// x_0 = alpha * acc, x_i = x_{i-1} + x_{i-1} (i < doublings), D = x_last: a tree would compute
// alpha * acc 2^(doublings - 1) times. `doublings` + 3 nodes, `doublings` + 2 deep.
inline EpilogueGraph doubling_graph(int doublings) {
  EpilogueGraph g;
  const int acc = g.accumulator();
  int x = g.mul(g.scalar("alpha"), acc);
  for (int i = 1; i < doublings; ++i) x = g.add(x, x);
  g.store(x, "D", DataType::f16);
  return g;
}

// x_0 = alpha * acc, x_i = x_{i-1} * alpha (i < length), D = x_last: `length` + 3 nodes,
// `length` + 2 deep (the store).
inline EpilogueGraph chain_graph(int length) {
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int alpha = g.scalar("alpha");
  int x = g.mul(alpha, acc);
  for (int i = 1; i < length; ++i) x = g.mul(x, alpha);
  g.store(x, "D", DataType::f16);
  return g;
}

// kMaxEpilogueGraphNodes nodes, all but three in a balanced sum of x = alpha * acc (read
// kMaxEpilogueGraphNodes - 4 times): the largest topological visitor a graph can make, 10 deep.
inline EpilogueGraph widest_graph() {
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int x = g.mul(g.scalar("alpha"), acc);
  std::vector<int> terms(kMaxEpilogueGraphNodes - 3, x);
  for (size_t next = 0; next + 1 < terms.size(); next += 2) {
    terms.push_back(g.add(terms[next], terms[next + 1]));
  }
  g.store(terms.back(), "D", DataType::f16);
  return g;
}

// An SM80 f16 tensor-op GEMM (tn, 128x128x32, 3 stages) whose epilogue is `graph`, writing D of
// `out` (alignment 8, or 4 for f32) in `layout`.
inline GemmDescription sm80_graph_gemm(const EpilogueGraph& graph, DataType out = DataType::f16,
                                       Layout layout = Layout::RowMajor) {
  using enum DataType;
  const int alignment = out == f32 ? 4 : 8;
  GemmDescription d = tensorop_f16_tn(
      epilogue(EpilogueKind::LinearCombination, out, alignment, DataType::f32, DataType::f32));
  d.C.layout = layout;
  d.epilogue_graph = graph;
  return d;
}

}  // namespace tilecraft::emit::testing
