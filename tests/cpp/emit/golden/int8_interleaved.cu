// <module_abi.h>

// ---- tilecraft generated module: 1 GEMM entry (CUTLASS 2.x GemmUniversal, SM80)
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
// <universal adapter>

// ---- entry 0: tilecraft_sm80_tensorop_16832gemm_s8s8_s32acc_s8_128x128_64x3_w2x2x1_n32t32n32_align16x16x8_clamp_ef32
using TcGemm0 = cutlass::gemm::device::GemmUniversal<
    int8_t, cutlass::layout::ColumnMajorInterleaved<32>,
    int8_t, cutlass::layout::RowMajorInterleaved<32>,
    int8_t, cutlass::layout::ColumnMajorInterleaved<32>,
    int32_t, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 64>,
    cutlass::gemm::GemmShape<64, 64, 64>,
    cutlass::gemm::GemmShape<16, 8, 32>,
    cutlass::epilogue::thread::LinearCombinationClamp<int8_t, 8, int32_t, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>,
    3, 16, 16, cutlass::arch::OpMultiplyAddSaturate>;
static int32_t tc_can_implement_0(const tc_gemm_args* args, char* error, size_t capacity) {
  return tc_gemm::universal_can_implement<TcGemm0>(args, error, capacity, 0);
}
static size_t tc_workspace_size_0(const tc_gemm_args* args) {
  return tc_gemm::universal_workspace_size<TcGemm0>(args);
}
static int32_t tc_run_0(const tc_gemm_args* args, void* workspace, void* stream, char* error,
    size_t capacity) {
  return tc_gemm::universal_run<TcGemm0>(args, workspace, stream, error, capacity);
}

// ---- the module table
static const tc_kernel_entry tc_entries[] = {
    {"tilecraft_sm80_tensorop_16832gemm_s8s8_s32acc_s8_128x128_64x3_w2x2x1_n32t32n32_align16x16x8_clamp_ef32",
     "kind=universal;arch=80;op_class=TensorOp;inst_shape=16x8x32;math_operation=multiply_add_saturate;element_a=s8;element_b=s8;element_c=s8;element_accumulator=s32;layout_a=ColumnMajorInterleaved32;layout_b=RowMajorInterleaved32;layout_c=ColumnMajorInterleaved32;alignment_a=16;alignment_b=16;alignment_c=8;tile=128x128x64;stages=3;warps=2x2x1;epilogue=LinearCombinationClamp;element_epilogue=f32;epilogue_vector=8;activation=identity;swizzle=IdentitySwizzle1",
     &tc_can_implement_0, &tc_workspace_size_0, &tc_run_0},
};

extern "C" __attribute__((visibility("default"))) const tc_module_table*
tilecraft_module_table(void) {
  static const tc_module_table table = {TILECRAFT_ABI_VERSION, 1u, tc_entries};
  return &table;
}
