// What the APIs of every family ask of a caller's arguments, and how a kernel's refusal of them
// is worded ("Operand `A` is unsupported: Expected ...").
#pragma once

#include <cmath>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/types.hpp"
#include "tilecraft/discover/api.hpp"

namespace tilecraft::api {

// A tf32 kernel reads f32 tensors; every other kernel reads its own element type.
inline bool element_matches(DataType kernel, DataType tensor) {
  return kernel == tensor || (kernel == DataType::tf32 && tensor == DataType::f32);
}

inline Status unsupported_operand(const char* operand, const std::string& what) {
  return Status::invalid(std::string("Operand `") + operand + "` is unsupported: " + what);
}

inline Status unsupported_epilogue(const std::string& expected, const std::string& got) {
  return Status::invalid("Epilogue is unsupported: Expected " + expected + ", got " + got);
}

inline Status check_element(const char* operand, DataType kernel, DataType tensor) {
  if (element_matches(kernel, tensor)) return Status::ok();
  return unsupported_operand(
      operand, "Expected element type " + dsl_name(kernel) + ", got " + dsl_name(tensor));
}

// `strides_of`: a tensor whose strides the message shows.
inline Status check_layout(const char* operand, Layout kernel, Layout given,
                           const TensorView* strides_of = nullptr) {
  if (kernel == given) return Status::ok();
  return unsupported_operand(
      operand, "Expected layout " + std::string(to_string(kernel)) + ", got " +
                   std::string(to_string(given)) +
                   (strides_of ? " (strides of " + strides_of->describe() + ")" : std::string()));
}

// "Expected alignment <kernel> elements<what_allows><given>", then ": <tensor>" when given one.
inline Status check_alignment(const char* operand, int kernel, int given, const char* what_allows,
                              const TensorView* tensor = nullptr) {
  if (given % kernel == 0) return Status::ok();
  return unsupported_operand(operand, "Expected alignment " + std::to_string(kernel) + " elements" +
                                          what_allows + std::to_string(given) +
                                          (tensor ? ": " + tensor->describe() : std::string()));
}

inline Status check_accumulator(DataType kernel, DataType given) {
  if (kernel == given) return Status::ok();
  return Status::invalid("Accumulator type is unsupported: Expected " + dsl_name(kernel) +
                         ", got " + dsl_name(given));
}

inline Status check_activation(Activation kernel, Activation given) {
  if (kernel == given) return Status::ok();
  return unsupported_epilogue("activation " + std::string(to_string(kernel)),
                              std::string(to_string(given)));
}

// ---- the arguments themselves ----------------------------------------------------------------

inline Status check_accumulator_type(DataType type) {
  if (type == DataType::f32 || type == DataType::f16 || type == DataType::s32 ||
      type == DataType::f64) {
    return Status::ok();
  }
  return Status::invalid("accumulator_type: expected Float32, Float16, Int32 or Float64, got " +
                         dsl_name(type));
}

// Each epilogue scalar by name.
inline Status check_finite(std::initializer_list<std::pair<const char*, double>> scalars) {
  for (const auto& [name, value] : scalars) {
    if (!std::isfinite(value)) {
      return Status::invalid(std::string("epilogue.") + name + ": expected a finite number, got " +
                             std::to_string(value));
    }
  }
  return Status::ok();
}

// `c_name`: how the family calls C in its messages.
inline Status check_beta_has_c(double beta, bool has_c, const char* c_name) {
  if (beta == 0 || has_c) return Status::ok();
  return Status::invalid(std::string(c_name) +
                         ": required when beta != 0 (beta = " + std::to_string(beta) + ")");
}

inline Status check_activation_args(Activation activation, const std::vector<double>& args) {
  const int wanted = activation_argument_count(activation);
  if (static_cast<int>(args.size()) == wanted) return Status::ok();
  return Status::invalid("epilogue.activation_args: " + std::string(to_string(activation)) +
                         " takes " + std::to_string(wanted) + ", got " +
                         std::to_string(args.size()));
}

inline bool is_bias_type(DataType type) {
  return type == DataType::f32 || type == DataType::f16 || type == DataType::bf16;
}

// How messages name a convolution's activations x (N, C, H, W), filter w (K, C, R, S) and output
// activations y (N, K, P, Q): by the operand each is for `kind`.
struct ConvTensorNames {
  const char* x;
  const char* w;
  const char* y;
};

inline ConvTensorNames conv_tensor_names(ConvKind kind) {
  switch (kind) {
    case ConvKind::Fprop:
      return {"A (x)", "B (w)", "out (y)"};
    case ConvKind::Dgrad:
      return {"out (dx)", "B (w)", "A (dy)"};
    case ConvKind::Wgrad:
      break;
  }
  return {"B (x)", "out (dw)", "A (dy)"};
}

}  // namespace tilecraft::api
