// Elementwise functions of epilogue graph nodes (namespace tc_evt), for CUTLASS's Sm90Compute and
// 2.x VisitorCompute: each applies a scalar float function to every element of a fragment.
#pragma once

#include <cmath>
#include <limits>

#include "cutlass/cutlass.h"
#include "cutlass/numeric_types.h"
namespace tc_evt {
template <class Op, class T>
struct Lift {
  template <class... X>
  CUTLASS_HOST_DEVICE T operator()(X const&... x) const {
    return Op{}(x...);
  }
};
template <class Op, class T, int N>
struct Lift<Op, cutlass::Array<T, N>> {
  template <class... X>
  CUTLASS_HOST_DEVICE cutlass::Array<T, N> operator()(X const&... x) const {
    cutlass::Array<T, N> out;
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < N; ++i) out[i] = Op{}(x[i]...);
    return out;
  }
};
// NAME##Op applies EXPR to the float PARAMETERS; NAME<T> applies it to a T, or its elements.
#define TC_EVT_FUNCTION(NAME, PARAMETERS, EXPR)                            \
  struct NAME##Op {                                                        \
    CUTLASS_HOST_DEVICE float operator() PARAMETERS const { return EXPR; } \
  };                                                                       \
  template <class T>                                                       \
  using NAME = Lift<NAME##Op, T>;
#define TC_EVT_UNARY(NAME, EXPR) TC_EVT_FUNCTION(NAME, (float x), EXPR)
#define TC_EVT_BINARY(NAME, EXPR) TC_EVT_FUNCTION(NAME, (float x, float y), EXPR)
TC_EVT_UNARY(Identity, x)
TC_EVT_UNARY(Negate, -x)
TC_EVT_UNARY(Abs, fabsf(x))
TC_EVT_UNARY(Square, x* x)
TC_EVT_UNARY(Reciprocal, 1.0f / x)
TC_EVT_UNARY(Relu, x > 0.0f ? x : 0.0f)
TC_EVT_UNARY(Tanh, tanhf(x))
TC_EVT_UNARY(Sigmoid, 1.0f / (1.0f + expf(-x)))
TC_EVT_UNARY(Silu, x / (1.0f + expf(-x)))
TC_EVT_UNARY(Hardswish, x* fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f)
TC_EVT_UNARY(Gelu, 0.5f * x * (1.0f + erff(x * 0.70710678118654752f)))
TC_EVT_UNARY(GeluTanh,
             0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x))))
// Fast math (EpilogueGraph::set_fast_math): tanh.approx.f32 (PTX ISA: relative error at most
// 2^-11 over the whole range), __expf (2 + floor(|1.173 x|) ulps) and __fdividef (2 ulps for a
// divisor of magnitude in [2^-126, 2^126], else 0) (CUDA C Programming Guide, intrinsic
// functions), and for gelu a rational erf approximation. The host pass (never run) spells
// the precise forms of the intrinsics.
CUTLASS_HOST_DEVICE float fast_tanh(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return tanhf(x);
#endif
}
CUTLASS_HOST_DEVICE float fast_sigmoid(float x) {
#if defined(__CUDA_ARCH__)
  return __fdividef(1.0f, 1.0f + __expf(-x));
#else
  return 1.0f / (1.0f + expf(-x));
#endif
}
// gelu: erf by Abramowitz and Stegun 7.1.26 (|error| <= 1.5e-7): 1 + erf(x / sqrt 2) is 2 - r
// for x >= 0 and r for x < 0, r = erfc(|x| / sqrt 2) = t (a1 + t (a2 + ...)) exp(-a^2), t =
// 1 / (1 + p a): no cancellation in the negative tail.
CUTLASS_HOST_DEVICE float fast_gelu(float x) {
  const float a = fabsf(x) * 0.70710678118654752f;
#if defined(__CUDA_ARCH__)
  const float t = __fdividef(1.0f, fmaf(0.3275911f, a, 1.0f));
  const float e = __expf(-a * a);
#else
  const float t = 1.0f / fmaf(0.3275911f, a, 1.0f);
  const float e = expf(-a * a);
#endif
  float p = fmaf(1.061405429f, t, -1.453152027f);
  p = fmaf(p, t, 1.421413741f);
  p = fmaf(p, t, -0.284496736f);
  p = fmaf(p, t, 0.254829592f);
  const float r = p * t * e;
  return 0.5f * x * (x >= 0.0f ? 2.0f - r : r);
}
CUTLASS_HOST_DEVICE float fast_silu(float x) {
#if defined(__CUDA_ARCH__)
  return __fdividef(x, 1.0f + __expf(-x));
#else
  return x / (1.0f + expf(-x));
#endif
}
TC_EVT_UNARY(GeluFast, fast_gelu(x))
TC_EVT_UNARY(TanhFast, fast_tanh(x))
TC_EVT_UNARY(SigmoidFast, fast_sigmoid(x))
TC_EVT_UNARY(SiluFast, fast_silu(x))
TC_EVT_UNARY(GeluTanhFast,
             0.5f * x * (1.0f + fast_tanh(0.79788456080286536f * (x + 0.044715f * x * x * x))))
TC_EVT_BINARY(LeakyRelu, x > 0.0f ? x : x * y)
TC_EVT_BINARY(Add, x + y)
TC_EVT_BINARY(Sub, x - y)
TC_EVT_BINARY(Mul, x* y)
TC_EVT_BINARY(Div, x / y)
TC_EVT_BINARY(Max, fmaxf(x, y))
TC_EVT_BINARY(Min, fminf(x, y))
TC_EVT_BINARY(Less, x < y ? 1.0f : 0.0f)
TC_EVT_BINARY(LessEqual, x <= y ? 1.0f : 0.0f)
TC_EVT_BINARY(Greater, x > y ? 1.0f : 0.0f)
TC_EVT_BINARY(GreaterEqual, x >= y ? 1.0f : 0.0f)
TC_EVT_BINARY(Equal, x == y ? 1.0f : 0.0f)
TC_EVT_BINARY(NotEqual, x != y ? 1.0f : 0.0f)
TC_EVT_BINARY(First, x)
TC_EVT_FUNCTION(Clamp, (float x, float lo, float hi), fminf(fmaxf(x, lo), hi))
TC_EVT_FUNCTION(Select, (float c, float x, float y), c != 0.0f ? x : y)
#undef TC_EVT_FUNCTION
#undef TC_EVT_UNARY
#undef TC_EVT_BINARY
// Reductions: registers and warp shuffles, then float atomics across tiles.
template <class T>
using ReduceMax = cutlass::maximum<T>;
template <class T>
using ReduceAbsMax = cutlass::maximum_absolute_value_reduction<T>;
// The stride of a packed vector (or scalar) operand: only the batch stride is dynamic.
template <class Stride>
Stride vector_stride(int64_t batch_stride) {
  Stride s{};
  cute::get<2>(s) = batch_stride;
  return s;
}
}  // namespace tc_evt
