// SM80 GEMMs with a custom epilogue (CUTLASS 2.x epilogue visitor trees): lane atomics for
// whole-tensor reductions (tc_evt) and the adapters over DefaultGemmWithVisitor kernels (tc_gemm:
// visitor_can_implement, visitor_workspace_size, visitor_run).
#pragma once

#include "tilecraft/jit/sm80_gemm.cuh"
#include "tilecraft/jit/evt_functions.cuh"
#include "tilecraft/jit/epilogue_operands.cuh"
// VisitorRowReduction's reduction() (CUTLASS 4.2) lacks the return its callers never read.
#pragma nv_diag_suppress 940
#include "cutlass/epilogue/threadblock/fusion/visitors.hpp"
#pragma nv_diag_default 940
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/default_gemm_universal_with_visitor.h"

namespace tc_evt {
// Atomics for whole-tensor reductions: after VisitorScalarReduction's warp shuffles every lane
// holds the warp's result and each one writes it; these let the first lane alone write.
template <class T>
struct LaneAtomicAdd {
  CUTLASS_DEVICE void operator()(T* ptr, T const& value) const {
    if ((threadIdx.x & 31) == 0) cutlass::atomic_add<T>{}(ptr, value);
  }
};
template <class T>
struct LaneAtomicMax {
  CUTLASS_DEVICE void operator()(T* ptr, T const& value) const {
    if ((threadIdx.x & 31) == 0) cutlass::atomic_maximum<T>{}(ptr, value);
  }
};
}  // namespace tc_evt

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

namespace tc_gemm {

// A reduction's output, reset to the reduction's identity before every launch: operand `operand`
// of tc_args_header.epilogue_tensors, one float value (extent 0), or M (1) or N (2) per batch.
struct ResetOutput {
  int operand;
  int extent;
  float identity;
};

// What an entry's epilogue graph takes at launch (tc_args_header.epilogue_tensors and _scalars),
// and the outputs of its reductions.
struct VisitorTraits {
  int num_epilogue_tensors;
  int num_epilogue_scalars;
  const ResetOutput* resets;
  int num_resets;
};

// CUTLASS's 2.x visitor kernel (GemmWithEpilogueVisitor) runs whole problems: one per batch, K
// never split.
inline std::string check_visitor_mode(const tc_gemm_args& a) {
  if (a.mode == TC_GEMM_MODE_GEMM_SPLIT_K_PARALLEL || a.mode == TC_GEMM_MODE_ARRAY) {
    return std::string("mode ") + (a.mode == TC_GEMM_MODE_ARRAY ? "Array" : "GemmSplitKParallel") +
           ": SM80 kernels with an epilogue graph (CUTLASS's 2.x epilogue visitor) run modes "
           "Gemm and Batched";
  }
  if (a.mode != TC_GEMM_MODE_GEMM && a.mode != TC_GEMM_MODE_BATCHED) {
    return "mode " + std::to_string(a.mode) + " is not a tc_gemm_mode";
  }
  if (a.mode == TC_GEMM_MODE_GEMM && a.batch_count > 1) {
    return "split_k_slices " + std::to_string(a.batch_count) +
           ": SM80 kernels with an epilogue graph (CUTLASS's 2.x epilogue visitor) do not split "
           "K; expected 1";
  }
  return {};
}

// The caller's problem as the checks above see a Gemm: the kernel's own (row-major D), or, for a
// column-major D (kTransposed), the transpose of the kernel's, whose A and B are the kernel's B
// and A transposed.
template <typename Gemm, bool kTransposed>
struct VisitorProblem {
  using ElementA = typename Gemm::ElementA;
  using LayoutA = typename Gemm::LayoutA;
  static constexpr int kAlignmentA = Gemm::kAlignmentA;
  using ElementB = typename Gemm::ElementB;
  using LayoutB = typename Gemm::LayoutB;
  static constexpr int kAlignmentB = Gemm::kAlignmentB;
  using ElementC = typename Gemm::ElementC;
  using LayoutC = cutlass::layout::RowMajor;
  static constexpr int kAlignmentC = Gemm::kAlignmentC;
  using ThreadblockShape = typename Gemm::ThreadblockShape;
  using ThreadblockSwizzle = typename Gemm::ThreadblockSwizzle;
};
template <typename Gemm>
struct VisitorProblem<Gemm, true> : VisitorProblem<Gemm, false> {
  using ElementA = typename Gemm::ElementB;
  using LayoutA = typename cutlass::layout::LayoutTranspose<typename Gemm::LayoutB>::type;
  static constexpr int kAlignmentA = Gemm::kAlignmentB;
  using ElementB = typename Gemm::ElementA;
  using LayoutB = typename cutlass::layout::LayoutTranspose<typename Gemm::LayoutA>::type;
  static constexpr int kAlignmentB = Gemm::kAlignmentA;
  using LayoutC = cutlass::layout::ColumnMajor;  // check_grid transposes it back
};

template <typename Gemm, bool kTransposed>
std::string check_visitor_args(const tc_gemm_args& a, const VisitorTraits& t) {
  using Problem = VisitorProblem<Gemm, kTransposed>;
  std::string why = check_visitor_mode(a);
  if (why.empty() && a.header.num_activation_args != 0) {
    why =
        "epilogue: an epilogue graph takes its scalars as graph operands; expected 0 "
        "activation arguments, got " +
        std::to_string(a.header.num_activation_args);
  }
  if (why.empty()) why = check_problem<Problem>(a);
  if (why.empty()) {
    why = check_mn_operand<typename Problem::LayoutC>(
        a, "D", a.ldd, a.D, cutlass::sizeof_bits<typename Problem::ElementC>::value / 8,
        Problem::kAlignmentC);
  }
  if (why.empty()) why = check_grid<Problem>(a);
  if (why.empty())
    why = tc_evt_args::check(a.header, t.num_epilogue_tensors, t.num_epilogue_scalars);
  return why;
}

// The visitor tree writes D itself (its root stores a.D); the kernel reads no C. A column-major
// D is the kernel's row-major D^T = B^T A^T: N x M, A and B exchanged (an operand read
// transposed keeps its leading dimension).
template <typename Gemm, bool kTransposed, typename Fill>
typename Gemm::Arguments visitor_arguments(const tc_gemm_args& a, Fill fill) {
  typename Gemm::EpilogueOutputOp::Params callbacks{};
  fill(callbacks, a);
  const cutlass::gemm::GemmUniversalMode mode = a.mode == TC_GEMM_MODE_BATCHED
                                                    ? cutlass::gemm::GemmUniversalMode::kBatched
                                                    : cutlass::gemm::GemmUniversalMode::kGemm;
  if (kTransposed) {
    return typename Gemm::Arguments(mode, cutlass::gemm::GemmCoord(a.n, a.m, a.k), a.batch_count,
                                    callbacks, a.B, a.A, nullptr, a.D, a.batch_stride_B,
                                    a.batch_stride_A, int64_t(0), a.batch_stride_D, a.ldb, a.lda,
                                    int64_t(0), a.ldd);
  }
  return typename Gemm::Arguments(mode, cutlass::gemm::GemmCoord(a.m, a.n, a.k), a.batch_count,
                                  callbacks, a.A, a.B, nullptr, a.D, a.batch_stride_A,
                                  a.batch_stride_B, int64_t(0), a.batch_stride_D, a.lda, a.ldb,
                                  int64_t(0), a.ldd);
}

template <typename Gemm, bool kTransposed, typename Fill>
int32_t visitor_can_implement(const tc_args_header* header, char* error, size_t capacity,
                              const VisitorTraits& t, Fill fill) {
  const tc_gemm_args* args = gemm_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  std::string why = check_visitor_args<Gemm, kTransposed>(*args, t);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  return cutlass_verdict(
      Gemm::can_implement(visitor_arguments<Gemm, kTransposed>(*args, fill)),
      problem_text(*args) + ": CUTLASS GemmUniversal::can_implement (epilogue visitor)", error,
      capacity);
}

// 0 when the arguments are refused or the kernel cannot be loaded: run() then says why.
template <typename Gemm, bool kTransposed, typename Fill>
size_t visitor_workspace_size(const tc_args_header* header, const char* kernel_name,
                              const VisitorTraits& t, Fill fill) {
  const tc_gemm_args* args = gemm_block(header, nullptr, 0);
  if (args == nullptr || !check_visitor_args<Gemm, kTransposed>(*args, t).empty()) return 0;
  const tc_image::Kernel& kernel = gemm_kernel<Gemm>(kernel_name);
  if (kernel.handle == nullptr) return 0;
  tc_image::HostAdapter adapter({&kernel});
  return Base<Gemm>::Op::get_workspace_size(
      Base<Gemm>::arguments(visitor_arguments<Gemm, kTransposed>(*args, fill)), &adapter);
}

// Reductions accumulate into their outputs with atomics (CUTLASS's 2.x reduction visitors
// neither initialize nor ask for a workspace): each launch first fills them with the
// reduction's identity on the stream, through the adapter's memset (16/32-bit patterns included).
inline cutlass::Status reset_outputs(const tc_gemm_args& a, const VisitorTraits& t,
                                     const tc_image::HostAdapter& adapter, cudaStream_t stream) {
  for (int i = 0; i < t.num_resets; ++i) {
    const ResetOutput& r = t.resets[i];
    const tc_epilogue_tensor& out = a.header.epilogue_tensors[r.operand];
    const int64_t count = r.extent == 1 ? a.m : (r.extent == 2 ? a.n : 1);
    const int64_t batches =
        a.mode == TC_GEMM_MODE_BATCHED && out.batch_stride != 0 ? a.batch_count : 1;
    float* data = static_cast<float*>(out.data);
    // Batches packed one after the other are one fill; others one fill each.
    const bool packed = batches == 1 || out.batch_stride == count;
    for (int64_t b = 0; b < (packed ? 1 : batches); ++b) {
      cutlass::Status status =
          adapter.memsetDevice(data + b * out.batch_stride, r.identity,
                               size_t(packed ? count * batches : count), stream);
      if (status != cutlass::Status::kSuccess) return status;
    }
  }
  return cutlass::Status::kSuccess;
}

template <typename Gemm, bool kTransposed, typename Fill>
int32_t visitor_run(const tc_args_header* header, void* workspace, void* stream, char* error,
                    size_t capacity, const char* kernel_name, const VisitorTraits& t, Fill fill) {
  const tc_gemm_args* args = gemm_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  const tc_gemm_args& a = *args;
  std::string why = check_pointers(a);
  if (why.empty()) why = check_visitor_mode(a);
  if (why.empty())
    why = tc_evt_args::check(a.header, t.num_epilogue_tensors, t.num_epilogue_scalars);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  const tc_image::Kernel& kernel = gemm_kernel<Gemm>(kernel_name);
  if (kernel.handle == nullptr) return fail(TC_ERROR_CUDA, error, capacity, kernel.error);
  tc_image::HostAdapter adapter({&kernel});
  cudaStream_t cuda_stream = static_cast<cudaStream_t>(stream);
  typename Base<Gemm>::Op gemm;
  cutlass::Status status =
      gemm.initialize(Base<Gemm>::arguments(visitor_arguments<Gemm, kTransposed>(a, fill)),
                      workspace, cuda_stream, &adapter);
  if (status != cutlass::Status::kSuccess) {
    return cuda_failure("GemmUniversal::initialize (epilogue visitor)", status, adapter, error,
                        capacity);
  }
  status = reset_outputs(a, t, adapter, cuda_stream);
  if (status != cutlass::Status::kSuccess) {
    return cuda_failure("resetting the epilogue graph's reduction outputs", status, adapter, error,
                        capacity);
  }
  status = gemm.run(cuda_stream, &adapter);
  return cuda_result("GemmUniversal::run (epilogue visitor)", status, adapter, error, capacity);
}

}  // namespace tc_gemm

#endif  // !TILECRAFT_DEVICE_HALF
