#include "tilecraft/describe/epilogue.hpp"

#include <cmath>
#include <tuple>

#include "describe/checks.hpp"

namespace tilecraft {

using describe::enum_name;

std::string_view to_string(EpilogueKind kind) {
  return enum_name(kind, {"LinearCombination", "LinearCombinationClamp",
                          "FastLinearCombinationClamp", "LinearCombinationGeneric"});
}

std::string_view to_string(Activation activation) {
  return enum_name(activation, {"identity", "relu", "leaky_relu", "tanh", "sigmoid", "silu",
                                "hardswish", "gelu", "gelu_tanh", "clamp"});
}

std::string_view to_string(BiasKind bias) {
  return enum_name(bias, {"none", "per_row", "per_column"});
}

bool is_valid(EpilogueKind kind) { return to_string(kind) != "?"; }
bool is_valid(Activation activation) { return to_string(activation) != "?"; }
bool is_valid(BiasKind bias) { return to_string(bias) != "?"; }

int activation_argument_count(Activation activation) {
  if (activation == Activation::clamp) return 2;
  return activation == Activation::leaky_relu ? 1 : 0;
}

namespace {

Result<EpilogueFunctor> checked(const EpilogueFunctor& functor) {
  if (Status status = functor.validate(); !status) return status;
  return functor;
}

}  // namespace

Result<EpilogueFunctor> EpilogueFunctor::with_fusion(const EpilogueFusion& added) const {
  EpilogueFunctor functor = *this;
  functor.fusion = added;
  return checked(functor);
}

bool EpilogueFunctor::needs_sm90() const {
  return fusion.any() || activation == Activation::gelu_tanh || activation == Activation::clamp ||
         element_output == DataType::e4m3 || element_output == DataType::e5m2;
}

Result<EpilogueFunctor> EpilogueFunctor::linear_combination(DataType element_output,
                                                            int elements_per_access,
                                                            DataType element_accumulator,
                                                            DataType element_epilogue) {
  return checked({EpilogueKind::LinearCombination, element_output, elements_per_access,
                  element_accumulator, element_epilogue, Activation::identity, EpilogueFusion()});
}

Result<EpilogueFunctor> EpilogueFunctor::linear_combination_clamp(DataType element_output,
                                                                  int elements_per_access,
                                                                  DataType element_accumulator,
                                                                  DataType element_epilogue) {
  return checked({EpilogueKind::LinearCombinationClamp, element_output, elements_per_access,
                  element_accumulator, element_epilogue, Activation::identity, EpilogueFusion()});
}

Result<EpilogueFunctor> EpilogueFunctor::fast_linear_combination_clamp(DataType element_output,
                                                                       int elements_per_access) {
  return checked({EpilogueKind::FastLinearCombinationClamp, element_output, elements_per_access,
                  DataType::s32, DataType::f32, Activation::identity, EpilogueFusion()});
}

Result<EpilogueFunctor> EpilogueFunctor::linear_combination_generic(Activation activation,
                                                                    DataType element_output,
                                                                    int elements_per_access,
                                                                    DataType element_accumulator,
                                                                    DataType element_epilogue) {
  return checked({EpilogueKind::LinearCombinationGeneric, element_output, elements_per_access,
                  element_accumulator, element_epilogue, activation, EpilogueFusion()});
}

Status EpilogueFunctor::validate() const {
  using describe::check_enumerator, describe::one_of;
  TILECRAFT_RETURN_IF_ERROR(check_enumerator("EpilogueFunctor: ", "kind", "EpilogueKind", kind));
  const std::string who = std::string(to_string(kind)) + ": ";
  TILECRAFT_RETURN_IF_ERROR(check_enumerator(who, "element_output", "DataType", element_output));
  TILECRAFT_RETURN_IF_ERROR(
      check_enumerator(who, "element_accumulator", "DataType", element_accumulator));
  TILECRAFT_RETURN_IF_ERROR(
      check_enumerator(who, "element_epilogue", "DataType", element_epilogue));
  TILECRAFT_RETURN_IF_ERROR(check_enumerator(who, "activation", "Activation", activation));
  TILECRAFT_RETURN_IF_ERROR(check_enumerator(who, "bias", "BiasKind", fusion.bias));
  TILECRAFT_RETURN_IF_ERROR(check_enumerator(who, "element_bias", "DataType", fusion.element_bias));
  TILECRAFT_RETURN_IF_ERROR(check_enumerator(who, "element_aux", "DataType", fusion.element_aux));
  if (elements_per_access < 1 || (elements_per_access & (elements_per_access - 1)) != 0 ||
      int64_t{elements_per_access} * size_in_bits(element_output) > 128) {
    return Status::invalid(
        who + "elements_per_access must be a power of two with at most 128 bits of " +
        spelled(element_output) + ", got " + std::to_string(elements_per_access));
  }
  using enum DataType;
  if (!one_of(element_epilogue, {f64, f32, f16, bf16, s32})) {
    return Status::invalid(who +
                           "element_epilogue (the compute type) must be float64, float32, float16, "
                           "bfloat16 or int32, got " +
                           spelled(element_epilogue));
  }
  if (!one_of(element_accumulator, {f64, f32, f16, s32})) {  // what the math instructions make
    return Status::invalid(who +
                           "element_accumulator must be float64, float32, float16 or int32 (the "
                           "accumulators of the math instructions), got " +
                           spelled(element_accumulator));
  }
  if (element_output == DataType::tf32) {
    return Status::unsupported(who +
                               "element_output: no epilogue writes tfloat32; use float32 output");
  }
  if (fusion.any() || needs_sm90()) {
    if (kind != EpilogueKind::LinearCombination && kind != EpilogueKind::LinearCombinationGeneric) {
      // Say which of the SM90 features this functor asks for.
      std::string asked;
      if (fusion.any()) asked = "bias, aux output and per-tensor scales";
      if (activation == Activation::gelu_tanh || activation == Activation::clamp) {
        asked += (asked.empty() ? "" : "; ") + std::string("activation ") +
                 std::string(to_string(activation));
      }
      if (element_output == DataType::e4m3 || element_output == DataType::e5m2) {
        asked += (asked.empty() ? "" : "; ") + std::string("element_output ") +
                 spelled(element_output) + " (an fp8 output)";
      }
      return Status::unsupported(
          who + asked +
          ": offered on LinearCombination and LinearCombinationGeneric (SM90 epilogues) only");
    }
    if (!is_float(element_epilogue)) {
      return Status::invalid(
          who +
          "fused epilogues compute in floating point; element_epilogue must be a float type, got " +
          spelled(element_epilogue));
    }
    for (const auto& [what, type, used] :
         {std::tuple{"element_bias", fusion.element_bias, fusion.bias != BiasKind::none},
          std::tuple{"element_aux", fusion.element_aux, fusion.aux_output}}) {
      if (used && !one_of(type, {f32, f16, bf16})) {
        return Status::invalid(who + what + " must be float32, float16 or bfloat16, got " +
                               spelled(type));
      }
    }
    if (fusion.aux_output && fusion.per_tensor_scales) {
      return Status::unsupported(
          who +
          "an aux output together with per-tensor scales (CUTLASS's amax variant) is not offered");
    }
  }
  if (kind == EpilogueKind::LinearCombinationClamp && !one_of(element_output, {s8, u8, s32, f16})) {
    // CUTLASS's LinearCombinationClamp clamps to numeric_limits<element_output>::lowest() and
    // max(), which cutlass::platform defines for these types only.
    return Status::unsupported(who +
                               "element_output must be int8, uint8, int32 or float16 (the types "
                               "whose range CUTLASS's clamp knows), got " +
                               spelled(element_output));
  }
  if (kind == EpilogueKind::FastLinearCombinationClamp) {
    if (element_output != DataType::s8 && element_output != DataType::u8) {
      return Status::invalid(who + "element_output must be int8 or uint8, got " +
                             spelled(element_output));
    }
    if (element_accumulator != DataType::s32 || element_epilogue != DataType::f32) {
      return Status::invalid(who + "expects an int32 accumulator and float32 compute");
    }
  }
  if (kind == EpilogueKind::LinearCombinationGeneric) {
    if (activation == Activation::identity) {
      return Status::invalid(who +
                             "needs an activation (relu, leaky_relu, tanh, sigmoid, silu, "
                             "hardswish, gelu, gelu_tanh or clamp)");
    }
    if (!is_float(element_epilogue)) {
      return Status::invalid(
          who +
          "activations compute in floating point; element_epilogue must be a float type, got " +
          spelled(element_epilogue));
    }
  } else if (activation != Activation::identity) {
    return Status::invalid(who + "takes no activation; use LinearCombinationGeneric for " +
                           std::string(to_string(activation)));
  }
  return Status::ok();
}

std::string EpilogueFunctor::procedural_name() const {
  std::string out;
  switch (kind) {
    case EpilogueKind::LinearCombination:
      break;
    case EpilogueKind::LinearCombinationClamp:
      out = "clamp";
      break;
    case EpilogueKind::FastLinearCombinationClamp:
      out = "fastclamp";
      break;
    case EpilogueKind::LinearCombinationGeneric:
      out = activation == Activation::clamp ? "actclamp" : std::string(to_string(activation));
      break;
  }
  auto append = [&out](const std::string& part) { out += (out.empty() ? "" : "_") + part; };
  if (fusion.bias != BiasKind::none) {
    append(std::string(fusion.bias == BiasKind::per_row ? "brow_" : "bcol_") +
           std::string(short_name(fusion.element_bias)));
  }
  if (fusion.aux_output) append("aux_" + std::string(short_name(fusion.element_aux)));
  if (fusion.per_tensor_scales) append("scaled");
  return out;
}

Status validate_epilogue_params(const EpilogueFunctor& functor, const EpilogueParams& params) {
  const int expected = activation_argument_count(functor.activation);
  if (static_cast<int>(params.activation_args.size()) != expected) {
    return Status::invalid("output_op: " + std::string(to_string(functor.kind)) +
                           (functor.kind == EpilogueKind::LinearCombinationGeneric
                                ? "(" + std::string(to_string(functor.activation)) + ")"
                                : std::string()) +
                           " takes alpha, beta" +
                           (expected ? " and " + std::to_string(expected) + " activation argument" +
                                           (expected > 1 ? "s" : "")
                                     : "") +
                           "; got " + std::to_string(params.activation_args.size()) +
                           " activation argument(s)");
  }
  if (functor.activation == Activation::clamp &&
      !(params.activation_args[0] <= params.activation_args[1])) {
    return Status::invalid("output_op: clamp's bounds must satisfy lower <= upper, got lower=" +
                           std::to_string(params.activation_args[0]) +
                           ", upper=" + std::to_string(params.activation_args[1]));
  }
  auto finite = [](double v) { return std::isfinite(v); };
  if (!finite(params.alpha) || !finite(params.beta)) {
    return Status::invalid("output_op: alpha and beta must be finite, got alpha=" +
                           std::to_string(params.alpha) + ", beta=" + std::to_string(params.beta));
  }
  if (is_integer(functor.element_epilogue)) {
    for (const auto& [what, value] : {std::pair{"alpha", params.alpha}, {"beta", params.beta}}) {
      if (value != std::trunc(value) || std::fabs(value) > 2147483647.0) {
        return Status::invalid(std::string("output_op: ") + what + " is computed in " +
                               spelled(functor.element_epilogue) +
                               " by this epilogue; expected a whole number in int32's range, got " +
                               std::to_string(value));
      }
    }
  }
  return Status::ok();
}

}  // namespace tilecraft
