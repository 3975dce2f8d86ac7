// ---- tilecraft generated module: 1 GEMM entry (CUTLASS 2.x GemmUniversal, SM80)
#if !(defined(TILECRAFT_HOST_HALF) && defined(__CUDA_ARCH__))
#include "tilecraft/jit/module_prelude.cuh"
#include "tilecraft/jit/sm80_gemm.cuh"

// ---- entry 0: tilecraft_sm80_simt_gemm_f32f32_f32acc_f32_128x128_8x4_w2x4x1_ttt_align1x1x1
using TcGemm0 = cutlass::gemm::device::GemmUniversal<
    float, cutlass::layout::RowMajor,
    float, cutlass::layout::RowMajor,
    float, cutlass::layout::RowMajor,
    float, cutlass::arch::OpClassSimt, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 8>,
    cutlass::gemm::GemmShape<64, 32, 8>,
    cutlass::gemm::GemmShape<1, 1, 1>,
    cutlass::epilogue::thread::LinearCombination<float, 1, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>,
    4, 1, 1, cutlass::arch::OpMultiplyAdd>;
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
    {"tilecraft_sm80_simt_gemm_f32f32_f32acc_f32_128x128_8x4_w2x4x1_ttt_align1x1x1",
     "kind=universal;arch=80;op_class=Simt;inst_shape=1x1x1;math_operation=multiply_add;element_a=f32;element_b=f32;element_c=f32;element_accumulator=f32;layout_a=RowMajor;layout_b=RowMajor;layout_c=RowMajor;alignment_a=1;alignment_b=1;alignment_c=1;tile=128x128x8;stages=4;warps=2x4x1;epilogue=LinearCombination;element_epilogue=f32;epilogue_vector=1;activation=identity;swizzle=IdentitySwizzle1",
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
