// ---- tilecraft generated module: 1 convolution entry (CUTLASS 3.x ConvUniversalAdapter, SM90)
#define CUTLASS_ENABLE_GDC_FOR_SM90 1
#if !(defined(TILECRAFT_HOST_HALF) && defined(__CUDA_ARCH__))
#include "tilecraft/jit/module_prelude.cuh"
#include "tilecraft/jit/sm90_conv.cuh"

// ---- entry 0: tilecraft_sm90_tensorop_fprop_optimized_bf16bf16_f32acc_bf16_128x128x64_c1x1x1_s0_ws_nhwcnhwcnhwc_align8x8x8_relu_bcol_bf16
namespace tc_entry_0 {
using ElementA = cutlass::bfloat16_t;
using LayoutA = cutlass::layout::TensorNHWC;
constexpr int AlignmentA = 8;
using ElementB = cutlass::bfloat16_t;
using LayoutB = cutlass::layout::TensorNHWC;
constexpr int AlignmentB = 8;
using ElementC = cutlass::bfloat16_t;
using ElementD = ElementC;
using LayoutC = cutlass::layout::TensorNHWC;
constexpr int AlignmentC = 8;
using ElementAccumulator = float;
using ElementCompute = float;
using ElementBias = cutlass::bfloat16_t;
using TileShape = cute::Shape<cute::_128, cute::_128, cute::Shape<cute::_64>>;
using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
using FusionOp = cutlass::epilogue::fusion::LinCombPerColBiasEltAct<cutlass::epilogue::thread::ReLu, ElementD, ElementCompute, ElementBias, ElementC, ElementCompute>;
using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementCompute,
    ElementC, LayoutC, AlignmentC, ElementD, LayoutC, AlignmentC,
    cutlass::epilogue::TmaWarpSpecialized, FusionOp>::CollectiveOp;
using CollectiveMainloop = typename cutlass::conv::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::conv::Operator::kFprop,
    ElementA, LayoutA, AlignmentA, ElementB, LayoutB, AlignmentB, ElementAccumulator,
    TileShape, ClusterShape, cutlass::conv::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;
using ProblemShape = cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kFprop, 2>;
using Kernel = cutlass::conv::kernel::ConvUniversal<ProblemShape, CollectiveMainloop,
    CollectiveEpilogue>;
using Gemm = cutlass::conv::device::ConvUniversalAdapter<Kernel>;
#if defined(TILECRAFT_DEVICE_HALF)
}  // namespace tc_entry_0
extern "C" __global__ void __launch_bounds__(tc_entry_0::Kernel::MaxThreadsPerBlock, tc_entry_0::Kernel::MinBlocksPerMultiprocessor)
tc_kernel_0(CUTLASS_GRID_CONSTANT typename tc_entry_0::Kernel::Params const params) {
  extern __shared__ char smem[];
  tc_entry_0::Kernel op;
  op(params, smem);
  cutlass::arch::synclog_print();
}
extern "C" __device__ unsigned long long tc_kernel_0_layout[2] = {sizeof(typename tc_entry_0::Kernel::Params), alignof(typename tc_entry_0::Kernel::Params)};
#else
constexpr tc_sm90::EntryTraits kTraits{1, 0, false, true, false, 0, "tc_kernel_0"};
using FusionArguments = decltype(typename Gemm::Arguments{}.epilogue.thread);
inline void fill_fusion(FusionArguments& f, const tc_conv_args& a) {
  f.alpha = ElementCompute(a.header.alpha);
  f.beta = ElementCompute(a.header.beta);
  f.bias_ptr = static_cast<const ElementBias*>(a.bias);
}
}  // namespace tc_entry_0
static int32_t tc_can_implement_0(const tc_args_header* args, char* error, size_t capacity) {
  return tc_sm90::can_implement<tc_entry_0::Gemm>(args, tc_entry_0::kTraits, &tc_entry_0::fill_fusion, error, capacity);
}
static size_t tc_workspace_size_0(const tc_args_header* args) {
  return tc_sm90::workspace_size<tc_entry_0::Gemm>(args, tc_entry_0::kTraits, &tc_entry_0::fill_fusion);
}
static int32_t tc_run_0(const tc_args_header* args, void* workspace, void* stream, char* error,
    size_t capacity) {
  return tc_sm90::run<tc_entry_0::Gemm>(args, tc_entry_0::kTraits, &tc_entry_0::fill_fusion, workspace, stream, error, capacity);
}
#endif  // TILECRAFT_DEVICE_HALF
#if !defined(TILECRAFT_DEVICE_HALF)

// ---- the module table
static const tc_kernel_entry tc_entries[] = {
    {"tilecraft_sm90_tensorop_fprop_optimized_bf16bf16_f32acc_bf16_128x128x64_c1x1x1_s0_ws_nhwcnhwcnhwc_align8x8x8_relu_bcol_bf16",
     "kind=universal;conv_kind=fprop;iterator_algorithm=optimized;stride_support=strided;arch=90;op_class=TensorOp;inst_shape=64x128x16;math_operation=multiply_add;element_a=bf16;element_b=bf16;element_c=bf16;element_accumulator=f32;layout_a=TensorNHWC;layout_b=TensorNHWC;layout_c=TensorNHWC;alignment_a=8;alignment_b=8;alignment_c=8;tile=128x128x64;stages=0;warps=0x0x0;epilogue=LinearCombinationGeneric;element_epilogue=f32;epilogue_vector=8;activation=relu;swizzle=IdentitySwizzle1;cluster=1x1x1;kernel_schedule=TmaWarpSpecialized;epilogue_schedule=TmaWarpSpecialized;tile_scheduler=Persistent;bias=per_column;element_bias=bf16;aux=none;scales=none",
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
      &tc_image::kernel<tc_entry_0::Kernel>("tc_kernel_0"),
  };
  return tc_image::verify(kernels, sizeof(kernels) / sizeof(kernels[0]), report, capacity);
}
#endif  // !TILECRAFT_DEVICE_HALF
#endif  // !(TILECRAFT_HOST_HALF && __CUDA_ARCH__)
