#include <charconv>
#include <cmath>

#include "emit/cutlass_names.hpp"
#include "emit/evt/evt_text.hpp"

namespace tilecraft::emit {
std::string evt_compute_function(const EpilogueNode& node, bool fast_math) {
  switch (node.kind) {
    case EpilogueNodeKind::unary:
      return "tc_evt::" + camel_case(to_string(node.unary));
    case EpilogueNodeKind::binary:
      return "tc_evt::" + camel_case(to_string(node.binary));
    case EpilogueNodeKind::activation:
      return "tc_evt::" + camel_case(to_string(node.activation)) +
             (fast_math && has_fast_form(node.activation) ? "Fast" : "");
    case EpilogueNodeKind::select:
      return "tc_evt::Select";
    default:
      return "tc_evt::Identity";  // convert: the node's output type rounds
  }
}

std::string evt_float_literal(double value) {
  if (std::isnan(value)) return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(value)) {
    return value > 0 ? "std::numeric_limits<float>::infinity()"
                     : "-std::numeric_limits<float>::infinity()";
  }
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return "float(" + std::string(buffer, result.ptr) + ")";
}

std::string evt_reduction_identity(ReduceOp op) {
  return op == ReduceOp::max ? "-std::numeric_limits<float>::infinity()" : "0.0f";
}

}  // namespace tilecraft::emit
