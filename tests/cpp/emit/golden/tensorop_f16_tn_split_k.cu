// ---- tilecraft generated module: 2 GEMM entries (CUTLASS 2.x GemmUniversal, SM80)
#if !(defined(TILECRAFT_HOST_HALF) && defined(__CUDA_ARCH__))
#include "tilecraft/jit/module_prelude.cuh"
#include "tilecraft/jit/sm80_gemm.cuh"
#include "tilecraft/jit/sm80_split_k_parallel.cuh"

// ---- entry 0: tilecraft_sm80_tensorop_16816gemm_f16f16_f32acc_f16_128x128_32x3_w2x2x1_tnt_align8x8x8
using TcGemm0 = cutlass::gemm::device::GemmUniversal<
    cutlass::half_t, cutlass::layout::RowMajor,
    cutlass::half_t, cutlass::layout::ColumnMajor,
    cutlass::half_t, cutlass::layout::RowMajor,
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 32>,
    cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<cutlass::half_t, 8, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>,
    3, 8, 8, cutlass::arch::OpMultiplyAdd>;
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

// ---- entry 1: tilecraft_sm80_tensorop_16816gemm_f16f16_f32acc_f16_128x128_32x3_w2x2x1_tnt_align8x8x8_splitk_parallel
using TcPartial1 = cutlass::gemm::device::GemmUniversal<
    cutlass::half_t, cutlass::layout::RowMajor,
    cutlass::half_t, cutlass::layout::ColumnMajor,
    float, cutlass::layout::RowMajor,
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 32>,
    cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>,
    3, 8, 8, cutlass::arch::OpMultiplyAdd>;
using TcReduction1 = cutlass::reduction::device::ReduceSplitK<
    cutlass::reduction::kernel::ReduceSplitK<cutlass::MatrixShape<4, 256>,
        cutlass::epilogue::thread::LinearCombination<cutlass::half_t, 8, float, float>,
        cutlass::reduction::thread::ReduceAdd<float, float, 8>>>;
#if defined(TILECRAFT_DEVICE_HALF)
extern "C" __global__ void tc_kernel_1_partial(typename TcPartial1::GemmKernel::Params params) {
  extern __shared__ int SharedStorageBase[];
  typename TcPartial1::GemmKernel::SharedStorage* shared_storage =
      reinterpret_cast<typename TcPartial1::GemmKernel::SharedStorage*>(SharedStorageBase);
  TcPartial1::GemmKernel::invoke(params, *shared_storage);
  cutlass::arch::synclog_print();
}
extern "C" __device__ unsigned long long tc_kernel_1_partial_layout[2] = {sizeof(typename TcPartial1::GemmKernel::Params), alignof(typename TcPartial1::GemmKernel::Params)};
extern "C" __global__ void tc_kernel_1_reduction(typename TcReduction1::ReductionKernel::Params params) {
  extern __shared__ int SharedStorageBase[];
  typename TcReduction1::ReductionKernel::SharedStorage* shared_storage =
      reinterpret_cast<typename TcReduction1::ReductionKernel::SharedStorage*>(SharedStorageBase);
  TcReduction1::ReductionKernel op;
  op(params, *shared_storage);
  cutlass::arch::synclog_print();
}
extern "C" __device__ unsigned long long tc_kernel_1_reduction_layout[2] = {sizeof(typename TcReduction1::ReductionKernel::Params), alignof(typename TcReduction1::ReductionKernel::Params)};
#else
static int32_t tc_can_implement_1(const tc_args_header* args, char* error, size_t capacity) {
  return tc_gemm::split_k_can_implement<TcPartial1, TcReduction1>(args, error, capacity, 0);
}
static size_t tc_workspace_size_1(const tc_args_header* args) {
  return tc_gemm::split_k_workspace_size<TcPartial1>(args);
}
static int32_t tc_run_1(const tc_args_header* args, void* workspace, void* stream, char* error,
    size_t capacity) {
  return tc_gemm::split_k_run<TcPartial1, TcReduction1>(args, workspace, stream, error, capacity, "tc_kernel_1_partial", "tc_kernel_1_reduction");
}
#endif  // TILECRAFT_DEVICE_HALF
#if !defined(TILECRAFT_DEVICE_HALF)

// ---- the module table
static const tc_kernel_entry tc_entries[] = {
    {"tilecraft_sm80_tensorop_16816gemm_f16f16_f32acc_f16_128x128_32x3_w2x2x1_tnt_align8x8x8",
     "kind=universal;arch=80;op_class=TensorOp;inst_shape=16x8x16;math_operation=multiply_add;element_a=f16;element_b=f16;element_c=f16;element_accumulator=f32;layout_a=RowMajor;layout_b=ColumnMajor;layout_c=RowMajor;alignment_a=8;alignment_b=8;alignment_c=8;tile=128x128x32;stages=3;warps=2x2x1;epilogue=LinearCombination;element_epilogue=f32;epilogue_vector=8;activation=identity;swizzle=IdentitySwizzle1",
     &tc_can_implement_0, &tc_workspace_size_0, &tc_run_0},
    {"tilecraft_sm80_tensorop_16816gemm_f16f16_f32acc_f16_128x128_32x3_w2x2x1_tnt_align8x8x8_splitk_parallel",
     "kind=split_k_parallel;arch=80;op_class=TensorOp;inst_shape=16x8x16;math_operation=multiply_add;element_a=f16;element_b=f16;element_c=f16;element_accumulator=f32;layout_a=RowMajor;layout_b=ColumnMajor;layout_c=RowMajor;alignment_a=8;alignment_b=8;alignment_c=8;tile=128x128x32;stages=3;warps=2x2x1;epilogue=LinearCombination;element_epilogue=f32;epilogue_vector=8;activation=identity;swizzle=IdentitySwizzle1",
     &tc_can_implement_1, &tc_workspace_size_1, &tc_run_1},
};

extern "C" __attribute__((visibility("default"))) const tc_module_table*
tilecraft_module_table(void) {
  static const tc_module_table table = {TILECRAFT_ABI_VERSION, 2u, tc_entries};
  return &table;
}
extern "C" __attribute__((visibility("default"))) int32_t tilecraft_module_verify(
    char* report, size_t capacity) {
  const tc_image::Kernel* kernels[] = {
      &tc_gemm::gemm_kernel<TcGemm0>("tc_kernel_0"),
      &tc_gemm::gemm_kernel<TcPartial1>("tc_kernel_1_partial"),
      &tc_image::kernel<TcReduction1::ReductionKernel>("tc_kernel_1_reduction"),
  };
  return tc_image::verify(kernels, sizeof(kernels) / sizeof(kernels[0]), report, capacity);
}
#endif  // !TILECRAFT_DEVICE_HALF
#endif  // !(TILECRAFT_HOST_HALF && __CUDA_ARCH__)
