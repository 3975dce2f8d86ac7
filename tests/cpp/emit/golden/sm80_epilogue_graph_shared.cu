// ---- tilecraft generated module: 1 GEMM entry (CUTLASS 2.x GemmUniversal, SM80)
#if !(defined(TILECRAFT_HOST_HALF) && defined(__CUDA_ARCH__))
#include "tilecraft/jit/module_prelude.cuh"
#include "tilecraft/jit/sm80_gemm.cuh"
#include "tilecraft/jit/sm80_epilogue_graph.cuh"

// ---- entry 0: tilecraft_sm80_tensorop_16816gemm_f16f16_f32acc_f16_128x128_32x3_w2x2x1_tnt_align8x8x8_evt42c50f96e6d23e37
namespace tc_entry_0 {
using ElementD = cutlass::half_t;
using ElementCompute = float;
using OutputTileThreadMap = cutlass::epilogue::threadblock::OutputTileThreadLayout<cutlass::gemm::GemmShape<128, 128, 32>, cutlass::gemm::GemmShape<64, 64, 32>, ElementD, 8, 1>;
using Evt0 = cutlass::epilogue::threadblock::VisitorAccFetch;
using Evt1 = cutlass::epilogue::threadblock::VisitorScalarBroadcast<ElementCompute>;
using Evt2 = cutlass::epilogue::threadblock::VisitorAuxLoad<OutputTileThreadMap, cutlass::half_t, cute::Stride<int64_t, cute::_1, int64_t>>;
using Evt3 = cutlass::epilogue::threadblock::VisitorRowBroadcast<OutputTileThreadMap, float, cute::Stride<cute::_0, cute::_1, int64_t>>;
using Evt4 = cutlass::epilogue::threadblock::VisitorCompute<tc_evt::Mul, ElementCompute, ElementCompute, cutlass::FloatRoundStyle::round_to_nearest>;
using Evt5 = cutlass::epilogue::threadblock::VisitorCompute<tc_evt::Add, ElementCompute, ElementCompute, cutlass::FloatRoundStyle::round_to_nearest>;
using Evt6 = cutlass::epilogue::threadblock::VisitorCompute<tc_evt::Mul, ElementCompute, ElementCompute, cutlass::FloatRoundStyle::round_to_nearest>;
using Evt7 = cutlass::epilogue::threadblock::VisitorCompute<tc_evt::Add, ElementCompute, ElementCompute, cutlass::FloatRoundStyle::round_to_nearest>;
using Evt8 = cutlass::epilogue::threadblock::VisitorCompute<tc_evt::Sub, ElementCompute, ElementCompute, cutlass::FloatRoundStyle::round_to_nearest>;
using Evt9 = cutlass::epilogue::threadblock::VisitorCompute<tc_evt::Add, ElementCompute, ElementCompute, cutlass::FloatRoundStyle::round_to_nearest>;
using Evt10 = cutlass::epilogue::threadblock::VisitorCompute<tc_evt::Mul, ElementCompute, ElementCompute, cutlass::FloatRoundStyle::round_to_nearest>;
using Evt11 = cutlass::epilogue::threadblock::VisitorAuxStore<OutputTileThreadMap, float, cutlass::FloatRoundStyle::round_to_nearest, cute::Stride<int64_t, cute::_1, int64_t>>;
using Evt12 = cutlass::epilogue::threadblock::VisitorColReduction<cutlass::plus, cutlass::atomic_add, OutputTileThreadMap, float, ElementCompute, cutlass::FloatRoundStyle::round_to_nearest, cute::Stride<cute::_1, cute::_0, int64_t>>;
using Evt13 = cutlass::epilogue::threadblock::VisitorScalarReduction<tc_evt::ReduceAbsMax, tc_evt::LaneAtomicMax, OutputTileThreadMap, float, ElementCompute, cutlass::FloatRoundStyle::round_to_nearest, cute::Stride<cute::_0, cute::_0, int>>;
using Evt14 = cutlass::epilogue::threadblock::VisitorAuxStore<OutputTileThreadMap, ElementD, cutlass::FloatRoundStyle::round_to_nearest, cute::Stride<int64_t, cute::_1, int64_t>>;
using FusionCallbacks = cutlass::epilogue::threadblock::Sm80TopologicalVisitor<
    ElementCompute,
    cute::tuple<
        cute::seq<>,
        cute::seq<>,
        cute::seq<>,
        cute::seq<>,
        cute::seq<1, 0>,
        cute::seq<4, 2>,
        cute::seq<5, 5>,
        cute::seq<6, 5>,
        cute::seq<7, 2>,
        cute::seq<8, 3>,
        cute::seq<9, 3>,
        cute::seq<5>,
        cute::seq<5>,
        cute::seq<10>,
        cute::seq<10>>,
    Evt0,
    Evt1,
    Evt2,
    Evt3,
    Evt4,
    Evt5,
    Evt6,
    Evt7,
    Evt8,
    Evt9,
    Evt10,
    Evt11,
    Evt12,
    Evt13,
    Evt14>;
using GemmKernel = typename cutlass::gemm::kernel::DefaultGemmWithVisitor<
    cutlass::half_t, cutlass::layout::RowMajor, cutlass::ComplexTransform::kNone, 8,
    cutlass::half_t, cutlass::layout::ColumnMajor, cutlass::ComplexTransform::kNone, 8,
    cutlass::half_t, cutlass::layout::RowMajor, 8,
    float, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 32>,
    cutlass::gemm::GemmShape<64, 64, 32>,
    cutlass::gemm::GemmShape<16, 8, 16>,
    FusionCallbacks, cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>, 3, cutlass::arch::OpMultiplyAdd, 1>::GemmKernel;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;
#if !defined(TILECRAFT_DEVICE_HALF)
constexpr tc_gemm::ResetOutput kResets[] = {
    {3, 1, 0.0f},
    {4, 0, 0.0f},
};
constexpr tc_gemm::VisitorTraits kTraits{5, 1, kResets, 2};
using FusionArguments = typename FusionCallbacks::Arguments;
inline void fill_fusion(FusionArguments& f, const tc_gemm_args& a) {
  [[maybe_unused]] const tc_epilogue_tensor* T = a.header.epilogue_tensors;
  f = FusionArguments{
    {},
    {{ElementCompute(a.header.epilogue_scalars[0])}},
    {static_cast<cutlass::half_t*>(T[0].data), cutlass::half_t(0), {int64_t(T[0].ld), cute::_1{}, int64_t(T[0].batch_stride)}},
    {static_cast<float*>(T[1].data), float(0), tc_evt::vector_stride<cute::Stride<cute::_0, cute::_1, int64_t>>(T[1].batch_stride)},
    {},
    {},
    {},
    {},
    {},
    {},
    {},
    {static_cast<float*>(T[2].data), {int64_t(T[2].ld), cute::_1{}, int64_t(T[2].batch_stride)}},
    {static_cast<float*>(T[3].data), 0.0f, tc_evt::vector_stride<cute::Stride<cute::_1, cute::_0, int64_t>>(T[3].batch_stride)},
    {static_cast<float*>(T[4].data), 0.0f, tc_evt::vector_stride<cute::Stride<cute::_0, cute::_0, int>>(T[4].batch_stride)},
    {static_cast<ElementD*>(a.D), {int64_t(a.ldd), cute::_1{}, int64_t(a.batch_stride_D)}}};
}
#endif  // !TILECRAFT_DEVICE_HALF
}  // namespace tc_entry_0
using TcGemm0 = tc_entry_0::Gemm;
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
  return tc_gemm::visitor_can_implement<TcGemm0, false>(args, error, capacity, tc_entry_0::kTraits, &tc_entry_0::fill_fusion);
}
static size_t tc_workspace_size_0(const tc_args_header* args) {
  return tc_gemm::visitor_workspace_size<TcGemm0, false>(args, "tc_kernel_0", tc_entry_0::kTraits, &tc_entry_0::fill_fusion);
}
static int32_t tc_run_0(const tc_args_header* args, void* workspace, void* stream, char* error,
    size_t capacity) {
  return tc_gemm::visitor_run<TcGemm0, false>(args, workspace, stream, error, capacity, "tc_kernel_0",
      tc_entry_0::kTraits, &tc_entry_0::fill_fusion);
}
#endif  // TILECRAFT_DEVICE_HALF
#if !defined(TILECRAFT_DEVICE_HALF)

// ---- the module table
static const tc_kernel_entry tc_entries[] = {
    {"tilecraft_sm80_tensorop_16816gemm_f16f16_f32acc_f16_128x128_32x3_w2x2x1_tnt_align8x8x8_evt42c50f96e6d23e37",
     "kind=universal;arch=80;op_class=TensorOp;inst_shape=16x8x16;math_operation=multiply_add;element_a=f16;element_b=f16;element_c=f16;element_accumulator=f32;layout_a=RowMajor;layout_b=ColumnMajor;layout_c=RowMajor;alignment_a=8;alignment_b=8;alignment_c=8;tile=128x128x32;stages=3;warps=2x2x1;epilogue=LinearCombination;element_epilogue=f32;epilogue_vector=8;activation=identity;swizzle=IdentitySwizzle1",
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
