// SM90 (CUTLASS 3.x, TMA + wgmma) descriptions shared by the SM90 describe, emitter and compile
// tests. Every builder validates (GemmDescription::make) and throws tilecraft::Error, which
// GoogleTest reports, if a description that should be valid is not.
#pragma once

#include <array>

#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft::sm90_test {

inline MathInstruction wgmma(std::array<int, 3> shape, DataType a, DataType b, DataType acc,
                             MathOperation op = MathOperation::multiply_add) {
  return MathInstruction::make(shape, a, b, acc, OpClass::TensorOp, op).value();
}

// The wgmma K for an operand type: 32 bytes.
inline int wgmma_k(DataType a) { return 256 / size_in_bits(a); }

// An operand with the 16-byte alignment TMA needs.
inline TensorDescription tma(DataType element, Layout layout) {
  return {element, layout, 128 / size_in_bits(element)};
}

inline EpilogueFunctor epilogue(DataType out, DataType acc,
                                Activation activation = Activation::identity,
                                EpilogueFusion fusion = {}, DataType compute = DataType::f32) {
  EpilogueFunctor e;
  e.kind = activation == Activation::identity ? EpilogueKind::LinearCombination
                                              : EpilogueKind::LinearCombinationGeneric;
  e.element_output = out;
  e.elements_per_access = 128 / size_in_bits(out);
  e.element_accumulator = acc;
  e.element_epilogue = compute;
  e.activation = activation;
  e.fusion = fusion;
  return e;
}

inline EpilogueFusion bias(BiasKind kind, DataType element) {
  EpilogueFusion f;
  f.bias = kind;
  f.element_bias = element;
  return f;
}

inline EpilogueFusion scales(BiasKind kind = BiasKind::none, DataType element = DataType::f32) {
  EpilogueFusion f = bias(kind, element);
  f.per_tensor_scales = true;
  return f;
}

inline EpilogueFusion bias_and_aux(BiasKind kind, DataType element_bias, DataType element_aux) {
  EpilogueFusion f = bias(kind, element_bias);
  f.aux_output = true;
  f.element_aux = element_aux;
  return f;
}

inline TileDescription tile(std::array<int, 3> shape, const MathInstruction& math, int stages = 0,
                            std::array<int, 3> cluster = {1, 1, 1},
                            KernelSchedule kernel = KernelSchedule::Auto,
                            TileScheduler scheduler = TileScheduler::Persistent) {
  return TileDescription::make_sm90(shape, stages, cluster, math, kernel, EpilogueSchedule::Auto,
                                    scheduler)
      .value();
}

inline GemmDescription gemm(const TileDescription& t, TensorDescription a, TensorDescription b,
                            TensorDescription c, const EpilogueFunctor& e,
                            Swizzle swizzle = Swizzle::IdentitySwizzle1) {
  return GemmDescription::make(90, t, a, b, c, e, swizzle).value();
}

// ---- the descriptions the emitter and compile tests build -------------------------------

// bf16 TN, cooperative (Auto at M=128), D = gelu(alpha * acc + beta * C + bias[n]), bf16 bias.
inline GemmDescription bf16_tn_coop_bias_gelu() {
  using enum DataType;
  const MathInstruction m = wgmma({64, 128, 16}, bf16, bf16, f32);
  return gemm(tile({128, 128, 64}, m), tma(bf16, Layout::RowMajor), tma(bf16, Layout::ColumnMajor),
              tma(bf16, Layout::RowMajor),
              epilogue(bf16, f32, Activation::gelu, bias(BiasKind::per_column, bf16)));
}

// tf32 TN with f32 output, 4 explicit stages, a 1x2x1 cluster.
inline GemmDescription tf32_tn_stages4_cluster1x2() {
  using enum DataType;
  const MathInstruction m = wgmma({64, 128, 8}, tf32, tf32, f32);
  return gemm(tile({128, 128, 32}, m, 4, {1, 2, 1}), tma(tf32, Layout::RowMajor),
              tma(tf32, Layout::ColumnMajor), tma(f32, Layout::RowMajor), epilogue(f32, f32));
}

// e4m3 x e4m3 with fast accumulation, bf16 output, per-tensor scales and a per-row bf16 bias, on
// a 2x1x1 cluster.
inline GemmDescription fp8_scaled_fast_accum() {
  using enum DataType;
  const MathInstruction m =
      wgmma({64, 128, 32}, e4m3, e4m3, f32, MathOperation::multiply_add_fast_accum);
  return gemm(tile({128, 128, 128}, m, 0, {2, 1, 1}), tma(e4m3, Layout::RowMajor),
              tma(e4m3, Layout::ColumnMajor), tma(bf16, Layout::RowMajor),
              epilogue(bf16, f32, Activation::identity, scales(BiasKind::per_row, bf16)));
}

// e4m3 x e5m2 writing e4m3 (scale_d applies), relu, per-tensor scales.
inline GemmDescription fp8_out_e4m3_e5m2_relu() {
  using enum DataType;
  const MathInstruction m = wgmma({64, 256, 32}, e4m3, e5m2, f32);
  return gemm(tile({128, 256, 128}, m), tma(e4m3, Layout::RowMajor), tma(e5m2, Layout::ColumnMajor),
              tma(e4m3, Layout::RowMajor), epilogue(e4m3, f32, Activation::relu, scales()));
}

// int8 TN, int32 accumulation, int8 output computed in float32.
inline GemmDescription int8_tn_s8_out() {
  using enum DataType;
  const MathInstruction m = wgmma({64, 128, 32}, s8, s8, s32);
  return gemm(tile({128, 128, 128}, m), tma(s8, Layout::RowMajor), tma(s8, Layout::ColumnMajor),
              tma(s8, Layout::RowMajor), epilogue(s8, s32));
}

// f16 TN with gelu_tanh, a per-row f16 bias and the pre-activation value written to an f16 aux
// tensor; a 4x1x1 cluster.
inline GemmDescription f16_aux_gelu_tanh() {
  using enum DataType;
  const MathInstruction m = wgmma({64, 128, 16}, f16, f16, f32);
  return gemm(tile({128, 128, 64}, m, 0, {4, 1, 1}), tma(f16, Layout::RowMajor),
              tma(f16, Layout::ColumnMajor), tma(f16, Layout::RowMajor),
              epilogue(f16, f32, Activation::gelu_tanh, bias_and_aux(BiasKind::per_row, f16, f16)));
}

// bf16 NT (A column-major, B row-major) on the stream-K tile scheduler, f32 output,
// IdentitySwizzle4.
inline GemmDescription bf16_nt_stream_k() {
  using enum DataType;
  const MathInstruction m = wgmma({64, 256, 16}, bf16, bf16, f32);
  return gemm(tile({128, 256, 64}, m, 0, {1, 1, 1}, KernelSchedule::Auto, TileScheduler::StreamK),
              tma(bf16, Layout::ColumnMajor), tma(bf16, Layout::RowMajor),
              tma(f32, Layout::RowMajor), epilogue(f32, f32), Swizzle::IdentitySwizzle4);
}

// f16 x f16 with f16 accumulation, ping-pong (Auto at M=64), clamp with runtime bounds,
// column-major C and D, HorizontalSwizzle.
inline GemmDescription f16_acc_pingpong_clamp() {
  using enum DataType;
  const MathInstruction m = wgmma({64, 128, 16}, f16, f16, f16);
  return gemm(tile({64, 128, 64}, m), tma(f16, Layout::RowMajor), tma(f16, Layout::ColumnMajor),
              tma(f16, Layout::ColumnMajor), epilogue(f16, f16, Activation::clamp),
              Swizzle::HorizontalSwizzle);
}

// f16 TN, cooperative, f32 accumulation, f16 D computed by `graph` (a custom epilogue, whose D
// output must be f16).
inline GemmDescription f16_tn_coop_graph(const EpilogueGraph& graph) {
  using enum DataType;
  const MathInstruction m = wgmma({64, 128, 16}, f16, f16, f32);
  return gemm(tile({128, 128, 64}, m, 0, {1, 1, 1}, KernelSchedule::TmaWarpSpecializedCooperative),
              tma(f16, Layout::RowMajor), tma(f16, Layout::ColumnMajor), tma(f16, Layout::RowMajor),
              epilogue(f16, f32))
      .with_epilogue_graph(graph)
      .value();
}

}  // namespace tilecraft::sm90_test
