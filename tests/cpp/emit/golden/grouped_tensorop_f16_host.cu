// <module_abi.h>

// ---- tilecraft generated module: 1 GEMM entry (CUTLASS 2.x GemmUniversal, SM80)
#if defined(TILECRAFT_HOST_HALF) && defined(__CUDA_ARCH__)
// The host half's device pass: the kernels are compiled in the device half, nothing to do here.
#else
#if !defined(TILECRAFT_HOST_HALF) && !defined(TILECRAFT_DEVICE_HALF)
#error "a tilecraft module is compiled in two halves: -DTILECRAFT_DEVICE_HALF=1 (nvcc -fatbin) and -DTILECRAFT_HOST_HALF=1 (nvcc -c), linked with the fatbinary as tc_device_image"
#endif
#if defined(TILECRAFT_HOST_HALF)
// Host half: CUTLASS launches and sizes through a CudaHostAdapter (tc_image::HostAdapter), never
// through kernel symbols of this translation unit.
#define CUTLASS_ENABLE_CUDA_HOST_ADAPTER true
#endif
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
#include <vector>
#include "cutlass/gemm/kernel/default_gemm_grouped.h"
#include "cutlass/gemm/kernel/gemm_grouped.h"
#if !defined(TILECRAFT_DEVICE_HALF)
// <device image runtime>
// <universal adapter>
// <grouped argument checks>
// <SM80 grouped adapter>
#endif  // !TILECRAFT_DEVICE_HALF

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
static int32_t tc_can_implement_0(const tc_gemm_args* args, char* error, size_t capacity) {
  return tc_grouped::can_implement<TcGrouped0>(args, error, capacity, 0);
}
static size_t tc_workspace_size_0(const tc_gemm_args* args) {
  return tc_grouped::workspace_size<TcGrouped0>(args, "tc_kernel_0");
}
static int32_t tc_run_0(const tc_gemm_args* args, void* workspace, void* stream, char* error,
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

// ---- parameter layouts, for tests: every kernel of the module, loaded and checked
extern "C" __attribute__((visibility("default"))) int32_t tilecraft_module_verify(
    char* report, size_t capacity) {
  const tc_image::Kernel* kernels[] = {
      &tc_image::kernel<TcGrouped0>("tc_kernel_0"),
  };
  std::string text;
  bool ok = true;
  for (const tc_image::Kernel* k : kernels) {
    text += k->name + ": host " + std::to_string(k->host_size) + " bytes aligned to " +
            std::to_string(k->host_align) + ", device " + std::to_string(k->device_size) +
            " bytes aligned to " + std::to_string(k->device_align) + ", kernel parameter " +
            std::to_string(k->param_bytes) + " bytes" +
            (k->error.empty() ? std::string(": ok") : ": " + k->error) + "\n";
    ok = ok && k->error.empty();
  }
  if (report != nullptr && capacity > 0) {
    size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
    std::memcpy(report, text.data(), n);
    report[n] = '\0';
  }
  return ok ? TC_OK : TC_ERROR_CUDA;
}
#endif  // !TILECRAFT_DEVICE_HALF
#endif  // TILECRAFT_HOST_HALF && __CUDA_ARCH__
