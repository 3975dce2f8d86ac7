// ---- tilecraft generated module: 1 GEMM entry (CUTLASS 2.x GemmUniversal, SM80)
#if !(defined(TILECRAFT_HOST_HALF) && defined(__CUDA_ARCH__))
#include "tilecraft/jit/module_prelude.cuh"
#include "tilecraft/jit/sm80_grouped.cuh"

// ---- entry 0: tilecraft_sm80_tensorop_16816gemm_grouped_host_f16f16_f32acc_f16_128x128_32x3_w2x2x1_tnt_align8x8x8
using TcGrouped0 = typename cutlass::gemm::kernel::DefaultGemmGrouped<
    cutlass::half_t, cutlass::layout::RowMajor, cutlass::ComplexTransform::kNone, 8,
    cutlass::half_t, cutlass::layout::ColumnMajor, cutlass::ComplexTransform::kNone, 8,
    cutlass::half_t, cutlass::layout::RowMajor, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 32>,
    cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<cutlass::half_t, 8, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>, 3,
    cutlass::gemm::kernel::GroupScheduleMode::kHostPrecompute,
    cutlass::arch::OpMultiplyAdd>::GemmKernel;
#if defined(TILECRAFT_DEVICE_HALF)
extern "C" __global__ void tc_kernel_0(typename TcGrouped0::Params params) {
  extern __shared__ int SharedStorageBase[];
  typename TcGrouped0::SharedStorage* shared_storage =
      reinterpret_cast<typename TcGrouped0::SharedStorage*>(SharedStorageBase);
  TcGrouped0 op;
  op(params, *shared_storage);
  cutlass::arch::synclog_print();
}
extern "C" __device__ unsigned long long tc_kernel_0_layout[2] = {sizeof(typename TcGrouped0::Params), alignof(typename TcGrouped0::Params)};
#else
static int32_t tc_can_implement_0(const tc_args_header* args, char* error, size_t capacity) {
  return tc_grouped::can_implement<TcGrouped0>(args, error, capacity, 0);
}
static size_t tc_workspace_size_0(const tc_args_header* args) {
  return tc_grouped::workspace_size<TcGrouped0>(args, "tc_kernel_0");
}
static int32_t tc_run_0(const tc_args_header* args, void* workspace, void* stream, char* error,
    size_t capacity) {
  return tc_grouped::run<TcGrouped0>(args, workspace, stream, error, capacity, "tc_kernel_0", 0);
}
#endif  // TILECRAFT_DEVICE_HALF
#if !defined(TILECRAFT_DEVICE_HALF)

// ---- the module table
static const tc_kernel_entry tc_entries[] = {
    {"tilecraft_sm80_tensorop_16816gemm_grouped_host_f16f16_f32acc_f16_128x128_32x3_w2x2x1_tnt_align8x8x8",
     "kind=grouped;scheduler_mode=Host;arch=80;op_class=TensorOp;inst_shape=16x8x16;math_operation=multiply_add;element_a=f16;element_b=f16;element_c=f16;element_accumulator=f32;layout_a=RowMajor;layout_b=ColumnMajor;layout_c=RowMajor;alignment_a=8;alignment_b=8;alignment_c=8;tile=128x128x32;stages=3;warps=2x2x1;epilogue=LinearCombination;element_epilogue=f32;epilogue_vector=8;activation=identity;swizzle=IdentitySwizzle1",
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
      &tc_image::kernel<TcGrouped0>("tc_kernel_0"),
  };
  return tc_image::verify(kernels, sizeof(kernels) / sizeof(kernels[0]), report, capacity);
}
#endif  // !TILECRAFT_DEVICE_HALF
#endif  // !(TILECRAFT_HOST_HALF && __CUDA_ARCH__)
