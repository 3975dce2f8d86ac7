#include <charconv>
#include <cmath>

#include "emit/evt/evt_text.hpp"

namespace tilecraft::emit {
namespace {

std::string_view unary_function(UnaryOp op) {
  switch (op) {
    case UnaryOp::negate:
      return "Negate";
    case UnaryOp::abs:
      return "Abs";
    case UnaryOp::square:
      return "Square";
    case UnaryOp::reciprocal:
      return "Reciprocal";
  }
  return "?";
}

std::string_view binary_function(BinaryOp op) {
  switch (op) {
    case BinaryOp::add:
      return "Add";
    case BinaryOp::sub:
      return "Sub";
    case BinaryOp::mul:
      return "Mul";
    case BinaryOp::div:
      return "Div";
    case BinaryOp::max:
      return "Max";
    case BinaryOp::min:
      return "Min";
    case BinaryOp::less:
      return "Less";
    case BinaryOp::less_equal:
      return "LessEqual";
    case BinaryOp::greater:
      return "Greater";
    case BinaryOp::greater_equal:
      return "GreaterEqual";
    case BinaryOp::equal:
      return "Equal";
    case BinaryOp::not_equal:
      return "NotEqual";
  }
  return "?";
}

std::string_view activation_function(Activation activation) {
  switch (activation) {
    case Activation::identity:
      return "Identity";
    case Activation::relu:
      return "Relu";
    case Activation::leaky_relu:
      return "LeakyRelu";
    case Activation::tanh:
      return "Tanh";
    case Activation::sigmoid:
      return "Sigmoid";
    case Activation::silu:
      return "Silu";
    case Activation::hardswish:
      return "Hardswish";
    case Activation::gelu:
      return "Gelu";
    case Activation::gelu_tanh:
      return "GeluTanh";
    case Activation::clamp:
      return "Clamp";
  }
  return "?";
}

}  // namespace

std::string evt_compute_function(const EpilogueNode& node) {
  std::string_view name = "Identity";  // convert: the node's output type rounds
  switch (node.kind) {
    case EpilogueNodeKind::unary:
      name = unary_function(node.unary);
      break;
    case EpilogueNodeKind::binary:
      name = binary_function(node.binary);
      break;
    case EpilogueNodeKind::activation:
      name = activation_function(node.activation);
      break;
    case EpilogueNodeKind::select:
      name = "Select";
      break;
    default:
      break;
  }
  return "tc_evt::" + std::string(name);
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
