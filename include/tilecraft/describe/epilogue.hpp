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
bool is_valid(EpilogueKind kind);  // one of the enumerators (so for the next two)

enum class Activation : uint8_t {
  identity,
  relu,
  leaky_relu,
  tanh,
  sigmoid,
  silu,
  hardswish,
  gelu,       // x * Phi(x), with erf
  gelu_tanh,  // the tanh approximation of gelu (SM90)
  clamp,      // min(max(x, lower), upper) with runtime bounds (SM90)
};
inline constexpr Activation kAllActivations[] = {
    Activation::relu, Activation::leaky_relu, Activation::tanh, Activation::sigmoid,
    Activation::silu, Activation::hardswish,  Activation::gelu};
// What SM90 epilogues add to the SM80 set.
inline constexpr Activation kSm90OnlyActivations[] = {Activation::gelu_tanh, Activation::clamp};
std::string_view to_string(Activation activation);
bool is_valid(Activation activation);
// Runtime arguments the activation takes after alpha and beta (leaky_relu: its slope; clamp: lower
// and upper bound).
int activation_argument_count(Activation activation);

// K must not exceed this for FastLinearCombinationClamp (its int32 -> float conversion trick).
inline constexpr int kFastLinearCombinationClampMaxK = 256;

enum class BiasKind : uint8_t {
  none,
  per_row,     // a vector of M values, one per row of D, added before the activation
  per_column,  // a vector of N values, one per column of D
};
std::string_view to_string(BiasKind bias);
bool is_valid(BiasKind bias);

// SM90 epilogue fusions on CUTLASS's epilogue visitor trees, beyond D = act(alpha * acc + beta *
// C):
//   Z = scale_a * scale_b * alpha * acc + scale_c * beta * C + bias   (scales: per_tensor_scales)
//   aux = Z                                                           (aux_output)
//   D = scale_d * act(Z)                   (scale_d applies to fp8 D only, as in CUTLASS)
struct EpilogueFusion {
  BiasKind bias = BiasKind::none;
  DataType element_bias = DataType::f32;
  bool aux_output = false;
  DataType element_aux = DataType::f32;
  bool per_tensor_scales = false;
  bool any() const { return bias != BiasKind::none || aux_output || per_tensor_scales; }
  friend bool operator==(const EpilogueFusion&, const EpilogueFusion&) = default;
};

struct EpilogueFunctor {
  EpilogueKind kind = EpilogueKind::LinearCombination;
  DataType element_output = DataType::f32;
  int elements_per_access = 1;
  DataType element_accumulator = DataType::f32;
  DataType element_epilogue = DataType::f32;  // the compute type of alpha, beta and the activation
  Activation activation = Activation::identity;
  EpilogueFusion fusion;

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
  // The functor with SM90 fusions added (validated).
  Result<EpilogueFunctor> with_fusion(const EpilogueFusion& fusion) const;
  // Whether only SM90 kernels can run it (fusions, or an SM90-only activation).
  bool needs_sm90() const;
  Status validate() const;
  // "" for LinearCombination, "clamp", "relu", ...; fusions add "_brow_f32", "_aux_bf16",
  // "_scaled".
  std::string procedural_name() const;
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
