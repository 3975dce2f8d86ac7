// Epilogue functors: what happens to the accumulators before D is written (seed 002).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/types.hpp"

namespace tilecraft {

enum class EpilogueKind : uint8_t {
  LinearCombination,           // D = alpha * acc + beta * C
  LinearCombinationClamp,      // the same, clamped to D's range
  FastLinearCombinationClamp,  // int8 out, int32 acc, f32 compute, K <= 256
  LinearCombinationGeneric,    // D = activation(alpha * acc + beta * C)
};
std::string_view to_string(EpilogueKind kind);

enum class Activation : uint8_t {
  identity,
  relu,
  leaky_relu,
  tanh,
  sigmoid,
  silu,
  hardswish,
  gelu
};
inline constexpr Activation kAllActivations[] = {
    Activation::relu, Activation::leaky_relu, Activation::tanh, Activation::sigmoid,
    Activation::silu, Activation::hardswish,  Activation::gelu};
std::string_view to_string(Activation activation);
// Runtime arguments the activation takes after alpha and beta (leaky_relu: its slope).
int activation_argument_count(Activation activation);

// K must not exceed this for FastLinearCombinationClamp (its int32 -> float conversion trick).
inline constexpr int kFastLinearCombinationClampMaxK = 256;

struct EpilogueFunctor {
  EpilogueKind kind = EpilogueKind::LinearCombination;
  DataType element_output = DataType::f32;
  int elements_per_access = 1;
  DataType element_accumulator = DataType::f32;
  DataType element_epilogue = DataType::f32;  // the compute type of alpha, beta and the activation
  Activation activation = Activation::identity;

  static Result<EpilogueFunctor> linear_combination(DataType element_output,
                                                    int elements_per_access,
                                                    DataType element_accumulator,
                                                    DataType element_epilogue);
  static Result<EpilogueFunctor> linear_combination_clamp(DataType element_output,
                                                          int elements_per_access,
                                                          DataType element_accumulator,
                                                          DataType element_epilogue);
  static Result<EpilogueFunctor> fast_linear_combination_clamp(DataType element_output,
                                                               int elements_per_access);
  static Result<EpilogueFunctor> linear_combination_generic(Activation activation,
                                                            DataType element_output,
                                                            int elements_per_access,
                                                            DataType element_accumulator,
                                                            DataType element_epilogue);
  Status validate() const;
  std::string procedural_name() const;  // "" for LinearCombination, "clamp", "relu", ...
  friend bool operator==(const EpilogueFunctor&, const EpilogueFunctor&) = default;
};

// Runtime values of the epilogue: operation.epilogue_type(alpha, beta, *activation_args).
struct EpilogueParams {
  double alpha = 1.0;
  double beta = 0.0;
  std::vector<double> activation_args;
  friend bool operator==(const EpilogueParams&, const EpilogueParams&) = default;
};

// Checks params against the functor: argument count, and integral epilogues' ranges.
Status validate_epilogue_params(const EpilogueFunctor& functor, const EpilogueParams& params);

}  // namespace tilecraft
