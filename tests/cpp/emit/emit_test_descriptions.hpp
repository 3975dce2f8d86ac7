// Descriptions the emitter tests build by field (the seed examples and a few CUTLASS-tested
// shapes), shared by the golden and the compile tests.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "tilecraft/describe/gemm_operation.hpp"
#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit::testing {

inline MathInstruction math(std::array<int, 3> shape, DataType ab, DataType acc, OpClass op_class,
                            MathOperation operation = MathOperation::multiply_add) {
  MathInstruction m;
  m.instruction_shape = shape;
  m.element_a = ab;
  m.element_b = ab;
  m.element_accumulator = acc;
  m.opcode_class = op_class;
  m.math_operation = operation;
  return m;
}

inline GemmDescription gemm(const MathInstruction& m, std::array<int, 3> tile, int stages,
                            std::array<int, 3> warps, TensorDescription a, TensorDescription b,
                            TensorDescription c, EpilogueFunctor epilogue,
                            Swizzle swizzle = Swizzle::IdentitySwizzle1) {
  GemmDescription d;
  d.arch = 80;
  d.tile.threadblock_shape = tile;
  d.tile.stages = stages;
  d.tile.warp_count = warps;
  d.tile.math_instruction = m;
  d.A = a;
  d.B = b;
  d.C = c;
  d.epilogue = epilogue;
  d.swizzle = swizzle;
  return d;
}

inline EpilogueFunctor epilogue(EpilogueKind kind, DataType out, int count, DataType acc,
                                DataType compute, Activation activation = Activation::identity) {
  EpilogueFunctor e;
  e.kind = kind;
  e.element_output = out;
  e.elements_per_access = count;
  e.element_accumulator = acc;
  e.element_epilogue = compute;
  e.activation = activation;
  return e;
}

// Seed 004: SIMT f32, 128x128x8 tile, 4 stages, 2x4x1 warps, all row-major, alignment 1.
inline GemmDescription simt_f32_seed() {
  using enum DataType;
  return gemm(math({1, 1, 1}, f32, f32, OpClass::Simt), {128, 128, 8}, 4, {2, 4, 1},
              {f32, Layout::RowMajor, 1}, {f32, Layout::RowMajor, 1}, {f32, Layout::RowMajor, 1},
              epilogue(EpilogueKind::LinearCombination, f32, 1, f32, f32));
}

// f16 16x8x16 with f32 accumulation, A row-major and B column-major ("tn"), alignment 8.
inline GemmDescription tensorop_f16_tn(EpilogueFunctor e = epilogue(EpilogueKind::LinearCombination,
                                                                    DataType::f16, 8, DataType::f32,
                                                                    DataType::f32),
                                       Swizzle swizzle = Swizzle::IdentitySwizzle1) {
  using enum DataType;
  return gemm(math({16, 8, 16}, f16, f32, OpClass::TensorOp), {128, 128, 32}, 3, {2, 2, 1},
              {f16, Layout::RowMajor, 8}, {f16, Layout::ColumnMajor, 8},
              {e.element_output, Layout::RowMajor, e.elements_per_access}, e, swizzle);
}

// The interleaved int8 GEMM of CUTLASS's sm80 tests: A n32, B t32, C n32, clamped int8 out.
inline GemmDescription int8_interleaved() {
  using enum DataType;
  return gemm(math({16, 8, 32}, s8, s32, OpClass::TensorOp, MathOperation::multiply_add_saturate),
              {128, 128, 64}, 3, {2, 2, 1}, {s8, Layout::ColumnMajorInterleaved32, 16},
              {s8, Layout::RowMajorInterleaved32, 16}, {s8, Layout::ColumnMajorInterleaved32, 8},
              epilogue(EpilogueKind::LinearCombinationClamp, s8, 8, s32, f32));
}

}  // namespace tilecraft::emit::testing
