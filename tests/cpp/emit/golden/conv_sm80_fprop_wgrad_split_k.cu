// ---- tilecraft generated module: 3 convolution entries (CUTLASS 2.x ImplicitGemmConvolution, SM80)
#if !(defined(TILECRAFT_HOST_HALF) && defined(__CUDA_ARCH__))
#include "tilecraft/jit/module_prelude.cuh"
#include "tilecraft/jit/sm80_conv.cuh"

// ---- entry 0: tilecraft_sm80_tensorop_16816fprop_optimized_f16f16_f32acc_f16_128x128_32x3_w2x2x1_nhwcnhwcnhwc_align8x8x8
using TcConv0 = cutlass::conv::device::ImplicitGemmConvolution<typename cutlass::conv::kernel::DefaultConv2dFprop<
    cutlass::half_t, cutlass::layout::TensorNHWC,
    cutlass::half_t, cutlass::layout::TensorNHWC,
    cutlass::half_t, cutlass::layout::TensorNHWC,
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 32>,
    cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<cutlass::half_t, 8, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>,
    3, cutlass::arch::OpMultiplyAdd,
    cutlass::conv::IteratorAlgorithm::kOptimized,
    cutlass::conv::StrideSupport::kStrided,
    8, 8>::Kernel>;
#if defined(TILECRAFT_DEVICE_HALF)
extern "C" __global__ void tc_kernel_0(typename TcConv0::UnderlyingKernel::Params params) {
  extern __shared__ int SharedStorageBase[];
  typename TcConv0::UnderlyingKernel::SharedStorage* shared_storage =
      reinterpret_cast<typename TcConv0::UnderlyingKernel::SharedStorage*>(SharedStorageBase);
  TcConv0::UnderlyingKernel op;
  op(params, *shared_storage);
  cutlass::arch::synclog_print();
}
extern "C" __device__ unsigned long long tc_kernel_0_layout[2] = {sizeof(typename TcConv0::UnderlyingKernel::Params), alignof(typename TcConv0::UnderlyingKernel::Params)};
#else
static int32_t tc_can_implement_0(const tc_args_header* args, char* error, size_t capacity) {
  return tc_conv::can_implement<TcConv0>(args, error, capacity, 0);
}
static size_t tc_workspace_size_0(const tc_args_header* args) {
  return tc_conv::workspace_size<TcConv0>(args);
}
static int32_t tc_run_0(const tc_args_header* args, void* workspace, void* stream, char* error,
    size_t capacity) {
  return tc_conv::run<TcConv0>(args, workspace, stream, error, capacity, "tc_kernel_0");
}
#endif  // TILECRAFT_DEVICE_HALF

// ---- entry 1: tilecraft_sm80_tensorop_16816wgrad_optimized_f16f16_f32acc_f16_128x128_32x3_w2x2x1_nhwcnhwcnhwc_align8x8x8
using TcConv1 = cutlass::conv::device::ImplicitGemmConvolution<typename cutlass::conv::kernel::DefaultConv2dWgrad<
    cutlass::half_t, cutlass::layout::TensorNHWC,
    cutlass::half_t, cutlass::layout::TensorNHWC,
    cutlass::half_t, cutlass::layout::TensorNHWC,
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 32>,
    cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<cutlass::half_t, 8, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>,
    3, cutlass::arch::OpMultiplyAdd,
    cutlass::conv::IteratorAlgorithm::kOptimized,
    cutlass::conv::StrideSupport::kStrided,
    8, 8>::Kernel>;
#if defined(TILECRAFT_DEVICE_HALF)
extern "C" __global__ void tc_kernel_1(typename TcConv1::UnderlyingKernel::Params params) {
  extern __shared__ int SharedStorageBase[];
  typename TcConv1::UnderlyingKernel::SharedStorage* shared_storage =
      reinterpret_cast<typename TcConv1::UnderlyingKernel::SharedStorage*>(SharedStorageBase);
  TcConv1::UnderlyingKernel op;
  op(params, *shared_storage);
  cutlass::arch::synclog_print();
}
extern "C" __device__ unsigned long long tc_kernel_1_layout[2] = {sizeof(typename TcConv1::UnderlyingKernel::Params), alignof(typename TcConv1::UnderlyingKernel::Params)};
#else
static int32_t tc_can_implement_1(const tc_args_header* args, char* error, size_t capacity) {
  return tc_conv::can_implement<TcConv1>(args, error, capacity, 0);
}
static size_t tc_workspace_size_1(const tc_args_header* args) {
  return tc_conv::workspace_size<TcConv1>(args);
}
static int32_t tc_run_1(const tc_args_header* args, void* workspace, void* stream, char* error,
    size_t capacity) {
  return tc_conv::run<TcConv1>(args, workspace, stream, error, capacity, "tc_kernel_1");
}
#endif  // TILECRAFT_DEVICE_HALF

// ---- entry 2: tilecraft_sm80_tensorop_16816wgrad_optimized_f16f16_f32acc_f16_128x128_32x3_w2x2x1_nhwcnhwcnhwc_align8x8x8_splitk_parallel
using TcPartial2 = cutlass::conv::device::ImplicitGemmConvolution<typename cutlass::conv::kernel::DefaultConv2dWgrad<
    cutlass::half_t, cutlass::layout::TensorNHWC,
    cutlass::half_t, cutlass::layout::TensorNHWC,
    float, cutlass::layout::TensorNHWC,
    float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 32>,
    cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>,
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>,
    3, cutlass::arch::OpMultiplyAdd,
    cutlass::conv::IteratorAlgorithm::kOptimized,
    cutlass::conv::StrideSupport::kStrided,
    8, 8>::Kernel>;
using TcReduction2 = cutlass::reduction::device::ReduceSplitK<
    cutlass::reduction::kernel::ReduceSplitK<cutlass::MatrixShape<4, 256>,
        cutlass::epilogue::thread::LinearCombination<cutlass::half_t, 8, float, float>,
        cutlass::reduction::thread::ReduceAdd<float, float, 8>>>;
#if defined(TILECRAFT_DEVICE_HALF)
extern "C" __global__ void tc_kernel_2_partial(typename TcPartial2::UnderlyingKernel::Params params) {
  extern __shared__ int SharedStorageBase[];
  typename TcPartial2::UnderlyingKernel::SharedStorage* shared_storage =
      reinterpret_cast<typename TcPartial2::UnderlyingKernel::SharedStorage*>(SharedStorageBase);
  TcPartial2::UnderlyingKernel op;
  op(params, *shared_storage);
  cutlass::arch::synclog_print();
}
extern "C" __device__ unsigned long long tc_kernel_2_partial_layout[2] = {sizeof(typename TcPartial2::UnderlyingKernel::Params), alignof(typename TcPartial2::UnderlyingKernel::Params)};
extern "C" __global__ void tc_kernel_2_reduction(typename TcReduction2::ReductionKernel::Params params) {
  extern __shared__ int SharedStorageBase[];
  typename TcReduction2::ReductionKernel::SharedStorage* shared_storage =
      reinterpret_cast<typename TcReduction2::ReductionKernel::SharedStorage*>(SharedStorageBase);
  TcReduction2::ReductionKernel op;
  op(params, *shared_storage);
  cutlass::arch::synclog_print();
}
extern "C" __device__ unsigned long long tc_kernel_2_reduction_layout[2] = {sizeof(typename TcReduction2::ReductionKernel::Params), alignof(typename TcReduction2::ReductionKernel::Params)};
#else
static int32_t tc_can_implement_2(const tc_args_header* args, char* error, size_t capacity) {
  return tc_conv::split_k_can_implement<TcPartial2, TcReduction2>(args, error, capacity, 0);
}
static size_t tc_workspace_size_2(const tc_args_header* args) {
  return tc_conv::split_k_workspace_size<TcPartial2>(args);
}
static int32_t tc_run_2(const tc_args_header* args, void* workspace, void* stream, char* error,
    size_t capacity) {
  return tc_conv::split_k_run<TcPartial2, TcReduction2>(args, workspace, stream, error, capacity, "tc_kernel_2_partial", "tc_kernel_2_reduction");
}
#endif  // TILECRAFT_DEVICE_HALF
#if !defined(TILECRAFT_DEVICE_HALF)

// ---- the module table
static const tc_kernel_entry tc_entries[] = {
    {"tilecraft_sm80_tensorop_16816fprop_optimized_f16f16_f32acc_f16_128x128_32x3_w2x2x1_nhwcnhwcnhwc_align8x8x8",
     "kind=universal;conv_kind=fprop;iterator_algorithm=optimized;stride_support=strided;arch=80;op_class=TensorOp;inst_shape=16x8x16;math_operation=multiply_add;element_a=f16;element_b=f16;element_c=f16;element_accumulator=f32;layout_a=TensorNHWC;layout_b=TensorNHWC;layout_c=TensorNHWC;alignment_a=8;alignment_b=8;alignment_c=8;tile=128x128x32;stages=3;warps=2x2x1;epilogue=LinearCombination;element_epilogue=f32;epilogue_vector=8;activation=identity;swizzle=IdentitySwizzle1",
     &tc_can_implement_0, &tc_workspace_size_0, &tc_run_0},
    {"tilecraft_sm80_tensorop_16816wgrad_optimized_f16f16_f32acc_f16_128x128_32x3_w2x2x1_nhwcnhwcnhwc_align8x8x8",
     "kind=universal;conv_kind=wgrad;iterator_algorithm=optimized;stride_support=strided;arch=80;op_class=TensorOp;inst_shape=16x8x16;math_operation=multiply_add;element_a=f16;element_b=f16;element_c=f16;element_accumulator=f32;layout_a=TensorNHWC;layout_b=TensorNHWC;layout_c=TensorNHWC;alignment_a=8;alignment_b=8;alignment_c=8;tile=128x128x32;stages=3;warps=2x2x1;epilogue=LinearCombination;element_epilogue=f32;epilogue_vector=8;activation=identity;swizzle=IdentitySwizzle1",
     &tc_can_implement_1, &tc_workspace_size_1, &tc_run_1},
    {"tilecraft_sm80_tensorop_16816wgrad_optimized_f16f16_f32acc_f16_128x128_32x3_w2x2x1_nhwcnhwcnhwc_align8x8x8_splitk_parallel",
     "kind=split_k_parallel;conv_kind=wgrad;iterator_algorithm=optimized;stride_support=strided;arch=80;op_class=TensorOp;inst_shape=16x8x16;math_operation=multiply_add;element_a=f16;element_b=f16;element_c=f16;element_accumulator=f32;layout_a=TensorNHWC;layout_b=TensorNHWC;layout_c=TensorNHWC;alignment_a=8;alignment_b=8;alignment_c=8;tile=128x128x32;stages=3;warps=2x2x1;epilogue=LinearCombination;element_epilogue=f32;epilogue_vector=8;activation=identity;swizzle=IdentitySwizzle1",
     &tc_can_implement_2, &tc_workspace_size_2, &tc_run_2},
};

extern "C" __attribute__((visibility("default"))) const tc_module_table*
tilecraft_module_table(void) {
  static const tc_module_table table = {TILECRAFT_ABI_VERSION, 3u, tc_entries};
  return &table;
}
extern "C" __attribute__((visibility("default"))) int32_t tilecraft_module_verify(
    char* report, size_t capacity) {
  const tc_image::Kernel* kernels[] = {
      &tc_image::kernel<TcConv0::UnderlyingKernel>("tc_kernel_0"),
      &tc_image::kernel<TcConv1::UnderlyingKernel>("tc_kernel_1"),
      &tc_image::kernel<TcPartial2::UnderlyingKernel>("tc_kernel_2_partial"),
      &tc_image::kernel<TcReduction2::ReductionKernel>("tc_kernel_2_reduction"),
  };
  return tc_image::verify(kernels, sizeof(kernels) / sizeof(kernels[0]), report, capacity);
}
#endif  // !TILECRAFT_DEVICE_HALF
#endif  // !(TILECRAFT_HOST_HALF && __CUDA_ARCH__)
