#include "tilecraft/describe/epilogue_graph.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>

#include "describe/checks.hpp"
#include "tilecraft/describe/epilogue_graph_limits.hpp"

namespace tilecraft {
namespace {

// Types an epilogue reads from or writes to memory.
bool is_memory_type(DataType t) {
  using enum DataType;
  return describe::one_of(t, {f16, bf16, f32, f64, s8, u8, s32, e4m3, e5m2});
}

bool is_identifier(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// An activation reads its runtime arguments (leaky_relu's slope, clamp's bounds) as inputs after
// its operand.
int input_count(const EpilogueNode& node) {
  switch (node.kind) {
    case EpilogueNodeKind::accumulator:
    case EpilogueNodeKind::scalar:
    case EpilogueNodeKind::constant:
    case EpilogueNodeKind::tensor:
      return 0;
    case EpilogueNodeKind::binary:
      return 2;
    case EpilogueNodeKind::select:
      return 3;
    case EpilogueNodeKind::activation:
      return 1 + activation_argument_count(node.activation);
    default:
      return 1;
  }
}

bool is_output(EpilogueNodeKind kind) {
  return kind == EpilogueNodeKind::store || kind == EpilogueNodeKind::reduce;
}

bool has_name(EpilogueNodeKind kind) {
  return kind == EpilogueNodeKind::scalar || kind == EpilogueNodeKind::tensor || is_output(kind);
}

// Nodes with a dtype: an input tensor, a conversion, an output.
bool is_typed(EpilogueNodeKind kind) {
  return kind == EpilogueNodeKind::tensor || kind == EpilogueNodeKind::convert || is_output(kind);
}

std::string node_text(const std::vector<EpilogueNode>& nodes, int i) {
  return "node " + std::to_string(i) + " (" + std::string(to_string(nodes[i].kind)) +
         (nodes[i].name.empty() ? std::string() : " '" + nodes[i].name + "'") + ")";
}

std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

Status check_node(const std::vector<EpilogueNode>& nodes, int i) {
  const EpilogueNode& n = nodes[i];
  const std::string who = node_text(nodes, i);
  const std::string prefix = who + ": ";
  using describe::check_enumerator;
  TILECRAFT_RETURN_IF_ERROR(check_enumerator(prefix, "kind", "EpilogueNodeKind", n.kind));
  switch (n.kind) {
    case EpilogueNodeKind::unary:
      TILECRAFT_RETURN_IF_ERROR(check_enumerator(prefix, "op", "UnaryOp", n.unary));
      break;
    case EpilogueNodeKind::binary:
      TILECRAFT_RETURN_IF_ERROR(check_enumerator(prefix, "op", "BinaryOp", n.binary));
      break;
    case EpilogueNodeKind::activation:
      TILECRAFT_RETURN_IF_ERROR(check_enumerator(prefix, "activation", "Activation", n.activation));
      break;
    case EpilogueNodeKind::tensor:
      TILECRAFT_RETURN_IF_ERROR(check_enumerator(prefix, "broadcast", "Broadcast", n.broadcast));
      break;
    case EpilogueNodeKind::reduce:
      TILECRAFT_RETURN_IF_ERROR(check_enumerator(prefix, "op", "ReduceOp", n.reduce));
      TILECRAFT_RETURN_IF_ERROR(check_enumerator(prefix, "axis", "ReduceAxis", n.axis));
      break;
    default:
      break;
  }
  const int wanted = input_count(n);
  if (static_cast<int>(n.inputs.size()) != wanted) {
    return Status::invalid(who + ": expected " + std::to_string(wanted) + " input" +
                           (wanted == 1 ? "" : "s") + ", got " + std::to_string(n.inputs.size()));
  }
  for (int input : n.inputs) {
    if (input < 0 || input >= static_cast<int>(nodes.size())) {
      return Status::invalid(who + ": reads node " + std::to_string(input) +
                             ", which does not exist (the graph has " +
                             std::to_string(nodes.size()) + " nodes): a dangling input");
    }
    if (input >= i) {
      return Status::invalid(
          who + ": reads " + node_text(nodes, input) +
          ", which does not come before it: a cycle (a node reads only nodes made before it)");
    }
    if (nodes[input].kind == EpilogueNodeKind::reduce) {
      return Status::invalid(who + ": reads " + node_text(nodes, input) +
                             ", a reduction: its values are complete only after every tile, so "
                             "nothing in the same epilogue can read them");
    }
  }
  if (has_name(n.kind) && !is_identifier(n.name)) {
    return Status::invalid(who + ": name: expected an identifier (letters, digits, _), got '" +
                           n.name + "'");
  }
  if (is_typed(n.kind) && !is_memory_type(n.dtype)) {
    return Status::invalid(who +
                           ": dtype: expected a type a kernel reads or writes (float16, bfloat16, "
                           "float32, float64, int8, uint8, int32, float8_e4m3, float8_e5m2), got " +
                           spelled(n.dtype));
  }
  if (n.kind == EpilogueNodeKind::reduce) {
    if (is_fp8(n.dtype) || is_integer(n.dtype)) {
      return Status::invalid(who +
                             ": dtype: a reduction accumulates in float; store it as float32, "
                             "float16, bfloat16 or float64, got " +
                             spelled(n.dtype));
    }
    const EpilogueNode& source = nodes[n.inputs[0]];
    const bool fp8_source =
        (source.kind == EpilogueNodeKind::convert || source.kind == EpilogueNodeKind::store) &&
        is_fp8(source.dtype);
    if (fp8_source) {
      return Status::invalid(who + ": reduces " + node_text(nodes, n.inputs[0]) +
                             ", an fp8 value (" + spelled(source.dtype) +
                             "): reduce the value before its conversion (an fp8 scale's amax is "
                             "taken of the unscaled output)");
    }
  }
  return Status::ok();
}

}  // namespace

using describe::enum_name;

std::string_view to_string(EpilogueNodeKind kind) {
  return enum_name(kind, {"acc", "scalar", "constant", "tensor", "unary", "activation", "binary",
                          "select", "convert", "store", "reduce"});
}
bool is_valid(EpilogueNodeKind kind) { return to_string(kind) != "?"; }

std::string_view to_string(UnaryOp op) {
  return enum_name(op, {"negate", "abs", "square", "reciprocal"});
}
bool is_valid(UnaryOp op) { return to_string(op) != "?"; }

std::string_view to_string(BinaryOp op) {
  return enum_name(op, {"add", "sub", "mul", "div", "max", "min", "less", "less_equal", "greater",
                        "greater_equal", "equal", "not_equal"});
}
bool is_valid(BinaryOp op) { return to_string(op) != "?"; }

std::string_view to_string(Broadcast broadcast) {
  return enum_name(broadcast, {"full", "row", "column"});
}
bool is_valid(Broadcast broadcast) { return to_string(broadcast) != "?"; }

std::string_view to_string(ReduceOp op) { return enum_name(op, {"sum", "max", "abs_max"}); }
bool is_valid(ReduceOp op) { return to_string(op) != "?"; }

std::string_view to_string(ReduceAxis axis) { return enum_name(axis, {"row", "column", "all"}); }
bool is_valid(ReduceAxis axis) { return to_string(axis) != "?"; }

EpilogueGraph::Id EpilogueGraph::append(EpilogueNode node) {
  nodes_.push_back(std::move(node));
  return static_cast<Id>(nodes_.size()) - 1;
}

EpilogueGraph::Id EpilogueGraph::accumulator() {
  return append({.kind = EpilogueNodeKind::accumulator});
}

EpilogueGraph::Id EpilogueGraph::scalar(std::string name) {
  return append({.kind = EpilogueNodeKind::scalar, .name = std::move(name)});
}

EpilogueGraph::Id EpilogueGraph::constant(double value) {
  return append({.kind = EpilogueNodeKind::constant, .value = value});
}

EpilogueGraph::Id EpilogueGraph::tensor(std::string name, DataType dtype, Broadcast broadcast) {
  return append({.kind = EpilogueNodeKind::tensor,
                 .name = std::move(name),
                 .dtype = dtype,
                 .broadcast = broadcast});
}

EpilogueGraph::Id EpilogueGraph::unary(UnaryOp op, Id x) {
  return append({.kind = EpilogueNodeKind::unary, .inputs = {x}, .unary = op});
}

EpilogueGraph::Id EpilogueGraph::activation(Activation activation, Id x, std::vector<Id> args) {
  std::vector<int> inputs{x};
  inputs.insert(inputs.end(), args.begin(), args.end());
  return append({.kind = EpilogueNodeKind::activation,
                 .inputs = std::move(inputs),
                 .activation = activation});
}

EpilogueGraph::Id EpilogueGraph::binary(BinaryOp op, Id a, Id b) {
  return append({.kind = EpilogueNodeKind::binary, .inputs = {a, b}, .binary = op});
}

EpilogueGraph::Id EpilogueGraph::select(Id condition, Id if_true, Id if_false) {
  return append({.kind = EpilogueNodeKind::select, .inputs = {condition, if_true, if_false}});
}

EpilogueGraph::Id EpilogueGraph::convert(Id x, DataType dtype) {
  return append({.kind = EpilogueNodeKind::convert, .inputs = {x}, .dtype = dtype});
}

EpilogueGraph::Id EpilogueGraph::store(Id x, std::string name, DataType dtype) {
  return append(
      {.kind = EpilogueNodeKind::store, .inputs = {x}, .name = std::move(name), .dtype = dtype});
}

EpilogueGraph::Id EpilogueGraph::reduce(Id x, ReduceOp op, ReduceAxis axis, std::string name,
                                        DataType dtype) {
  return append({.kind = EpilogueNodeKind::reduce,
                 .inputs = {x},
                 .name = std::move(name),
                 .dtype = dtype,
                 .reduce = op,
                 .axis = axis});
}

Status EpilogueGraph::validate() const {
  if (nodes_.empty()) {
    return Status::invalid(
        "epilogue graph: no nodes; an epilogue reads the accumulator and writes at least one "
        "output");
  }
  if (nodes_.size() > static_cast<size_t>(kMaxEpilogueGraphNodes)) {
    return Status::invalid("epilogue graph: " + std::to_string(nodes_.size()) + " nodes; at most " +
                           std::to_string(kMaxEpilogueGraphNodes) +
                           " are allowed (kMaxEpilogueGraphNodes): the kernel holds an operation "
                           "per node, which nvcc instantiates nested");
  }
  const int count = static_cast<int>(nodes_.size());
  int accumulator = -1;
  std::set<std::string> inputs, outputs;
  std::vector<int> depth(count, 1);
  for (int i = 0; i < count; ++i) {
    TILECRAFT_RETURN_IF_ERROR(check_node(nodes_, i));
    const EpilogueNode& n = nodes_[i];
    for (int input : n.inputs) depth[i] = std::max(depth[i], depth[input] + 1);
    if (depth[i] > kMaxEpilogueGraphDepth) {
      return Status::invalid(node_text(nodes_, i) + ": depth " + std::to_string(depth[i]) +
                             " (the nodes on its longest chain of inputs); at most " +
                             std::to_string(kMaxEpilogueGraphDepth) +
                             " are allowed (kMaxEpilogueGraphDepth)");
    }
    if (n.kind == EpilogueNodeKind::accumulator) {
      if (accumulator >= 0) {
        return Status::invalid(node_text(nodes_, i) + ": a second accumulator (node " +
                               std::to_string(accumulator) + " is the first); read that one");
      }
      accumulator = i;
    }
    if (n.kind == EpilogueNodeKind::scalar || n.kind == EpilogueNodeKind::tensor) {
      if (!inputs.insert(n.name).second) {
        return Status::invalid(node_text(nodes_, i) + ": the input name '" + n.name +
                               "' is taken by another scalar or tensor");
      }
    }
    if (is_output(n.kind) && !outputs.insert(n.name).second) {
      return Status::invalid(node_text(nodes_, i) + ": the output name '" + n.name +
                             "' is written by another store or reduction");
    }
  }
  if (accumulator < 0) {
    return Status::invalid(
        "epilogue graph: no accumulator node; the epilogue of a GEMM reads its accumulator");
  }
  for (const std::string& name : outputs) {
    if (inputs.count(name)) {
      return Status::invalid("epilogue graph: '" + name +
                             "' names both an input and an output; an epilogue writes tensors "
                             "other than those it reads");
    }
  }
  if (outputs.empty()) {
    return Status::invalid(
        "epilogue graph: no store or reduction; the epilogue must write at least one output");
  }
  // Every node must feed an output: walk back from the outputs.
  std::vector<bool> used(count, false);
  for (int i = count - 1; i >= 0; --i) {
    if (is_output(nodes_[i].kind)) used[i] = true;
    if (!used[i]) continue;
    for (int input : nodes_[i].inputs) used[input] = true;
  }
  for (int i = 0; i < count; ++i) {
    if (!used[i]) {
      return Status::invalid(node_text(nodes_, i) +
                             ": feeds no store or reduction; store it, or leave it out");
    }
  }
  // A reduction runs over the M x N tile grid: its value must vary over it (read the
  // accumulator or a full tensor). A sum of a broadcast vector would count it M or N times.
  std::vector<bool> full(count, false);
  for (int i = 0; i < count; ++i) {
    const EpilogueNode& n = nodes_[i];
    full[i] = n.kind == EpilogueNodeKind::accumulator ||
              (n.kind == EpilogueNodeKind::tensor && n.broadcast == Broadcast::full);
    for (int input : n.inputs) full[i] = full[i] || full[input];
    if (n.kind == EpilogueNodeKind::reduce && !full[n.inputs[0]]) {
      return Status::invalid(node_text(nodes_, i) +
                             ": reduces a value that is not M x N (it reads only scalars, "
                             "constants and broadcast inputs); reduce it outside the epilogue");
    }
  }
  return Status::ok();
}

Status EpilogueGraph::validate_for(int arch) const {
  TILECRAFT_RETURN_IF_ERROR(validate());
  if (arch != 80 && arch != 90) {
    return Status::invalid("arch: expected 80 (CUTLASS 2.x visitors) or 90 (Sm90EVT), got " +
                           std::to_string(arch));
  }
  if (primary_store() < 0) {
    return Status::unsupported(
        "epilogue graph: a GEMM kernel writes D; store a value (the output named D, or the first "
        "stored one, is the kernel's D)");
  }
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    const EpilogueNode& n = nodes_[i];
    if (n.kind == EpilogueNodeKind::reduce && n.dtype != DataType::f32) {
      return Status::unsupported(node_text(nodes_, i) +
                                 ": reductions accumulate across tiles with float32 atomics; "
                                 "expected a Float32 output, got " +
                                 spelled(n.dtype));
    }
  }
  if (arch == 90) return Status::ok();
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    const EpilogueNode& n = nodes_[i];
    if (is_typed(n.kind) && is_fp8(n.dtype)) {
      return Status::unsupported(node_text(nodes_, i) + ": " + spelled(n.dtype) +
                                 " values are arch=90 epilogues (SM80 kernels have no fp8)");
    }
    if (n.kind == EpilogueNodeKind::activation &&
        std::find(std::begin(kSm90OnlyActivations), std::end(kSm90OnlyActivations), n.activation) !=
            std::end(kSm90OnlyActivations)) {
      return Status::unsupported(node_text(nodes_, i) + ": " +
                                 std::string(tilecraft::to_string(n.activation)) +
                                 " is an arch=90 activation");
    }
  }
  return Status::ok();
}

bool has_fast_form(Activation activation) {
  return activation == Activation::tanh || activation == Activation::sigmoid ||
         activation == Activation::silu || activation == Activation::gelu ||
         activation == Activation::gelu_tanh;
}

std::string EpilogueGraph::to_string() const {
  std::string out;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const EpilogueNode& n = nodes_[i];
    if (!out.empty()) out += ' ';
    out += std::to_string(i) + ":";
    switch (n.kind) {
      case EpilogueNodeKind::unary:
        out += tilecraft::to_string(n.unary);
        break;
      case EpilogueNodeKind::binary:
        out += tilecraft::to_string(n.binary);
        break;
      case EpilogueNodeKind::activation:
        out += tilecraft::to_string(n.activation);
        break;
      default:
        out += tilecraft::to_string(n.kind);
    }
    std::string args;
    const auto arg = [&args](std::string_view text) {
      if (!args.empty()) args += ',';
      args += text;
    };
    for (int input : n.inputs) arg(std::to_string(input));
    if (has_name(n.kind)) arg(n.name);
    if (n.kind == EpilogueNodeKind::constant) arg(number_text(n.value));
    if (n.kind == EpilogueNodeKind::tensor) arg(tilecraft::to_string(n.broadcast));
    if (n.kind == EpilogueNodeKind::reduce) {
      arg(tilecraft::to_string(n.reduce));
      arg(tilecraft::to_string(n.axis));
    }
    if (is_typed(n.kind)) arg(short_name(n.dtype));
    if (!args.empty()) out += "(" + args + ")";
  }
  if (fast_math_) out += " fast_math";
  return out;
}

std::string EpilogueGraph::key() const {
  uint64_t hash = 1469598103934665603ull;  // FNV-1a, 64 bits
  for (unsigned char c : to_string()) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

namespace {

std::vector<std::string> names_of(const std::vector<EpilogueNode>& nodes,
                                  bool (*wanted)(EpilogueNodeKind)) {
  std::vector<std::string> out;
  for (const EpilogueNode& n : nodes) {
    if (wanted(n.kind)) out.push_back(n.name);
  }
  return out;
}

}  // namespace

std::vector<std::string> EpilogueGraph::scalar_names() const {
  return names_of(nodes_, [](EpilogueNodeKind kind) { return kind == EpilogueNodeKind::scalar; });
}

std::vector<std::string> EpilogueGraph::input_names() const {
  return names_of(nodes_, [](EpilogueNodeKind kind) { return kind == EpilogueNodeKind::tensor; });
}

std::vector<std::string> EpilogueGraph::output_names() const { return names_of(nodes_, is_output); }

int EpilogueGraph::primary_store() const {
  int first = -1;
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    if (nodes_[i].kind != EpilogueNodeKind::store) continue;
    if (nodes_[i].name == "D") return i;
    if (first < 0) first = i;
  }
  return first;
}

std::vector<int> EpilogueGraph::operand_nodes() const {
  const int primary = primary_store();
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    const EpilogueNodeKind kind = nodes_[i].kind;
    if ((kind == EpilogueNodeKind::tensor || is_output(kind)) && i != primary) out.push_back(i);
  }
  return out;
}

std::vector<int> EpilogueGraph::scalar_nodes() const {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    if (nodes_[i].kind == EpilogueNodeKind::scalar) out.push_back(i);
  }
  return out;
}

}  // namespace tilecraft
