// ---- tilecraft generated module: 1 GEMM entry (CUTLASS 2.x GemmUniversal, SM80)
#if !(defined(TILECRAFT_HOST_HALF) && defined(__CUDA_ARCH__))
#include "tilecraft/jit/module_prelude.cuh"
#include "tilecraft/jit/sm80_gemm.cuh"

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
#if defined(TILECRAFT_DEVICE_HALF)
extern "C" __global__ void tc_kernel_0(typename TcGemm0::GemmKernel::Params params) {
  extern __shared__ int SharedStorageBase[];
  typename TcGemm0::GemmKernel::SharedStorage* shared_storage =
      reinterpret_cast<typename TcGemm0::GemmKernel::SharedStorage*>(SharedStorageBase);
  TcGemm0::GemmKernel::invoke(params, *shared_storage);
  cutlass::arch::synclog_print();
}
extern "C" __device__ unsigned long long tc_kernel_0_layout[2] = {sizeof(typename TcGemm0::GemmKernel::Params), alignof(typename TcGemm0::GemmKernel::Params)};
#else
static int32_t tc_can_implement_0(const tc_args_header* args, char* error, size_t capacity) {
  return tc_gemm::universal_can_implement<TcGemm0>(args, error, capacity, 0);
}
static size_t tc_workspace_size_0(const tc_args_header* args) {
  return tc_gemm::universal_workspace_size<TcGemm0>(args, "tc_kernel_0");
}
static int32_t tc_run_0(const tc_args_header* args, void* workspace, void* stream, char* error,
    size_t capacity) {
  return tc_gemm::universal_run<TcGemm0>(args, workspace, stream, error, capacity, "tc_kernel_0");
}
#endif  // TILECRAFT_DEVICE_HALF
#if !defined(TILECRAFT_DEVICE_HALF)

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
extern "C" __attribute__((visibility("default"))) int32_t tilecraft_module_verify(
    char* report, size_t capacity) {
  const tc_image::Kernel* kernels[] = {
      &tc_gemm::gemm_kernel<TcGemm0>("tc_kernel_0"),
  };
  return tc_image::verify(kernels, sizeof(kernels) / sizeof(kernels[0]), report, capacity);
}
#endif  // !TILECRAFT_DEVICE_HALF
#endif  // !(TILECRAFT_HOST_HALF && __CUDA_ARCH__)
