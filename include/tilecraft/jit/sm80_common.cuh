// What every SM80 (CUTLASS 2.x) adapter shares, whatever its family's arguments (namespace
// tc_gemm): failures in words, the device-level operator under a GemmUniversal, its kernel in the
// module's device image, and the epilogue's parameters from the arguments' header.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include <cuda_runtime.h>

#include "cutlass/cutlass.h"
#include "cutlass/epilogue/thread/activation.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/epilogue/thread/linear_combination_clamp.h"
#include "cutlass/epilogue/thread/linear_combination_generic.h"
#include "cutlass/gemm/device/gemm_universal.h"
#include "cutlass/gemm/threadblock/threadblock_swizzle.h"

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

#include "tilecraft/jit/device_image.cuh"

namespace tc_gemm {

using tc_image::cutlass_verdict;
using tc_image::fail;

// A failed CUTLASS call whose cause is the CUDA runtime: both statuses, in words.
inline int32_t cuda_failure(const char* call, cutlass::Status status,
                            const tc_image::HostAdapter& adapter, char* error, size_t capacity) {
  return fail(TC_ERROR_CUDA, error, capacity, tc_image::failure_text(call, status, adapter));
}

// TC_OK when `call` succeeded, else its failure as cuda_failure() words it.
inline int32_t cuda_result(const char* call, cutlass::Status status,
                           const tc_image::HostAdapter& adapter, char* error, size_t capacity) {
  if (status == cutlass::Status::kSuccess) return TC_OK;
  return cuda_failure(call, status, adapter, error, capacity);
}

// CUTLASS's GemmUniversal for a column-major C runs the transposed problem on a row-major
// GemmUniversalBase and passes no host adapter on: entries talk to that base directly.
template <typename Gemm, typename = void>
struct Base {
  using Op = typename Gemm::Base;
  static const typename Gemm::Arguments& arguments(const typename Gemm::Arguments& a) { return a; }
};
template <typename Gemm>
struct Base<Gemm, std::void_t<typename Gemm::UnderlyingOperator>> {
  using Op = typename Gemm::UnderlyingOperator;
  static typename Op::Arguments arguments(const typename Gemm::Arguments& a) {
    return Gemm::to_underlying_arguments(a);
  }
};

template <typename Gemm>
const tc_image::Kernel& gemm_kernel(const char* name) {
  return tc_image::kernel<typename Gemm::GemmKernel>(name);
}

template <typename T, typename = void>
struct HasLeakyAlpha : std::false_type {};
template <typename T>
struct HasLeakyAlpha<T, std::void_t<decltype(std::declval<T&>().leaky_alpha)>> : std::true_type {};

// alpha, beta and the activation's arguments arrive as double; the epilogue computes in its own
// type.
template <typename Op, typename Args>
typename Op::Params epilogue_params(const Args& a) {
  using Compute = typename Op::ElementCompute;
  typename Op::Params params(static_cast<Compute>(a.header.alpha),
                             static_cast<Compute>(a.header.beta));
  if constexpr (HasLeakyAlpha<typename Op::Params>::value) {
    params.leaky_alpha =
        static_cast<Compute>(a.header.num_activation_args > 0 ? a.header.activation_args[0] : 0.0);
  }
  return params;
}

// The activation's arguments: leaky_relu's slope, or none.
template <typename Op>
std::string check_activation_args(const tc_args_header& h) {
  const int expected = HasLeakyAlpha<typename Op::Params>::value ? 1 : 0;
  if (h.num_activation_args == expected) return {};
  return "epilogue: expected " + std::to_string(expected) + " activation argument" +
         (expected == 1 ? " (leaky_relu's slope)" : "s") + ", got " +
         std::to_string(h.num_activation_args);
}

// FastLinearCombinationClamp's limit on K (max_k, when above 0); `k_name` precedes K's value.
inline std::string check_max_k(int64_t k, int max_k, const std::string& k_name) {
  if (max_k <= 0 || k <= max_k) return {};
  return k_name + std::to_string(k) + " exceeds FastLinearCombinationClamp's limit of " +
         std::to_string(max_k);
}

}  // namespace tc_gemm

#endif  // !TILECRAFT_DEVICE_HALF
