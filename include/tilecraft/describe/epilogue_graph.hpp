// A custom fused epilogue as a graph (seed 002's "Epilogue Visitor Tree"): what one GEMM kernel
// computes from its accumulator before anything leaves the chip. Nodes read the accumulator,
// runtime scalars, constants and input tensors (full, or broadcast along rows or columns),
// combine them elementwise, and end in stores (a node's values to an output tensor) and
// reductions (row, column or whole-tensor sums, maxima or absolute maxima to an output vector or
// scalar). Emitted as CUTLASS's EVT (Sm90EVT for 3.x kernels, the 2.x visitors for SM80).
//
//   EpilogueGraph g;
//   auto acc = g.accumulator();
//   auto scaled = g.mul(g.scalar("alpha"), acc);
//   auto z = g.add(scaled, g.tensor("bias", DataType::f16, Broadcast::row));
//   auto d = g.store(g.activation(Activation::relu, z), "D", DataType::f16);
//   g.reduce(d, ReduceOp::abs_max, ReduceAxis::all, "amax", DataType::f32);
//
// Node ids are indices into nodes(); a node reads only nodes made before it when built through
// these methods. Nodes are numbered in the order they are made: two builder calls among one
// call's arguments run in no fixed order, so make them in separate statements where the graph's
// text (its key) must not depend on the compiler. validate() checks graphs made any way
// (deserialized, edited) and says what is wrong with which node.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/types.hpp"
#include "tilecraft/describe/epilogue.hpp"

namespace tilecraft {

enum class EpilogueNodeKind : uint8_t {
  accumulator,  // the GEMM's accumulator, M x N
  scalar,       // a runtime scalar argument, by name (alpha, beta, ...)
  constant,     // a number fixed in the kernel
  tensor,       // an input tensor, by name: M x N, or broadcast (one value per row or column)
  unary,        // UnaryOp of one input
  activation,   // an Activation of its first input; its arguments (slope, bounds) follow
  binary,       // BinaryOp of two inputs
  select,       // inputs (condition, if_true, if_false): condition != 0 ? if_true : if_false
  convert,      // its input rounded to dtype (fp8 outputs, saturating as CUTLASS converts)
  store,        // writes its input to the output tensor `name` of dtype, M x N
  reduce,       // ReduceOp of its input along ReduceAxis into the output `name` of dtype
};
std::string_view to_string(EpilogueNodeKind kind);
bool is_valid(EpilogueNodeKind kind);

enum class UnaryOp : uint8_t { negate, abs, square, reciprocal };
std::string_view to_string(UnaryOp op);
bool is_valid(UnaryOp op);

enum class BinaryOp : uint8_t {
  add,
  sub,
  mul,
  div,
  max,
  min,
  less,  // 1 where a < b, else 0
  less_equal,
  greater,
  greater_equal,
  equal,
  not_equal,
};
std::string_view to_string(BinaryOp op);
bool is_valid(BinaryOp op);

// An input tensor's shape: the full M x N, one value per row (M values), one per column (N).
enum class Broadcast : uint8_t { full, row, column };
std::string_view to_string(Broadcast broadcast);
bool is_valid(Broadcast broadcast);

enum class ReduceOp : uint8_t { sum, max, abs_max };
std::string_view to_string(ReduceOp op);
bool is_valid(ReduceOp op);

// row: one value per row (M values, reduced over the columns); column: one per column (N);
// all: one value for the whole tile grid (a scalar, e.g. an fp8 scale's amax).
enum class ReduceAxis : uint8_t { row, column, all };
std::string_view to_string(ReduceAxis axis);
bool is_valid(ReduceAxis axis);

// Whether a graph built with fast math computes the activation in an approximate form (tanh,
// sigmoid, silu, gelu, gelu_tanh).
bool has_fast_form(Activation activation);

struct EpilogueNode {
  EpilogueNodeKind kind = EpilogueNodeKind::accumulator;
  std::vector<int> inputs{};
  std::string name{};              // scalar, tensor, store and reduce
  DataType dtype = DataType::f32;  // tensor, convert, store, reduce
  double value = 0.0;              // constant
  UnaryOp unary = UnaryOp::negate;
  BinaryOp binary = BinaryOp::add;
  Activation activation = Activation::identity;
  Broadcast broadcast = Broadcast::full;
  ReduceOp reduce = ReduceOp::sum;
  ReduceAxis axis = ReduceAxis::all;
  friend bool operator==(const EpilogueNode&, const EpilogueNode&) = default;
};

class EpilogueGraph {
 public:
  using Id = int;

  Id accumulator();
  Id scalar(std::string name);
  Id constant(double value);
  Id tensor(std::string name, DataType dtype, Broadcast broadcast = Broadcast::full);
  Id unary(UnaryOp op, Id x);
  // args: leaky_relu's slope, clamp's lower and upper bound (scalars or constants).
  Id activation(Activation activation, Id x, std::vector<Id> args = {});
  Id binary(BinaryOp op, Id a, Id b);
  Id add(Id a, Id b) { return binary(BinaryOp::add, a, b); }
  Id sub(Id a, Id b) { return binary(BinaryOp::sub, a, b); }
  Id mul(Id a, Id b) { return binary(BinaryOp::mul, a, b); }
  Id div(Id a, Id b) { return binary(BinaryOp::div, a, b); }
  Id select(Id condition, Id if_true, Id if_false);
  Id convert(Id x, DataType dtype);
  Id store(Id x, std::string name, DataType dtype);
  Id reduce(Id x, ReduceOp op, ReduceAxis axis, std::string name, DataType dtype);
  // Appends a node as given (inputs unchecked until validate()).
  Id append(EpilogueNode node);

  const std::vector<EpilogueNode>& nodes() const { return nodes_; }

  // Fast math: tanh, sigmoid, silu and gelu_tanh computed with the hardware's approximations
  // (tanh.approx.f32, whose relative error is at most 2^-11; __expf and __fdividef, 2 + |1.173 x|
  // and 2 ulps) in place of tanhf, expf and IEEE division, as nvcc's --use_fast_math would, and
  // gelu's erf by Abramowitz and Stegun's rational approximation 7.1.26 (absolute error at most
  // 1.5e-7) with those intrinsics in place of erff. Part of the graph's text and key.
  void set_fast_math(bool fast) { fast_math_ = fast; }
  bool fast_math() const { return fast_math_; }

  // The rules every graph obeys, whatever kernel runs it: at most kMaxEpilogueGraphNodes nodes,
  // none deeper than kMaxEpilogueGraphDepth (epilogue_graph_limits.hpp); one accumulator; inputs
  // that name earlier nodes (else a cycle or a dangling input); the right input count per kind;
  // known enumerators; identifiers, distinct among inputs and among outputs; stored and reduced
  // types a kernel can write; no reduction of fp8; an output, fed by every node. Linear time.
  Status validate() const;
  // What the kernel family (arch 80: CUTLASS 2.x visitors; 90: Sm90EVT) can fuse of it.
  Status validate_for(int arch) const;

  // A canonical text of the graph ("0:acc 1:scalar(alpha) 2:mul(1,0) ..."), equal for equal
  // graphs; procedural names and cache keys use it (key(): 16 hex digits of its hash).
  std::string to_string() const;
  std::string key() const;

  // Names of the graph's runtime scalars, input tensors and outputs, in node order.
  std::vector<std::string> scalar_names() const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;

  // The store a GEMM kernel writes as its D: the one named "D", else the first; -1 without one.
  int primary_store() const;
  // The nodes whose tensors a kernel is given at launch (tc_args_header.epilogue_tensors), in node
  // order: input tensors, stores other than the primary one, reductions.
  std::vector<int> operand_nodes() const;
  // The runtime scalar nodes (tc_args_header.epilogue_scalars), in node order.
  std::vector<int> scalar_nodes() const;

  friend bool operator==(const EpilogueGraph&, const EpilogueGraph&) = default;

 private:
  std::vector<EpilogueNode> nodes_;
  bool fast_math_ = false;
};

}  // namespace tilecraft
