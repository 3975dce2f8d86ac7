// SM80 parallel split-K: a partial GemmUniversal writing K slices of accumulators, then CUTLASS's
// ReduceSplitK (namespace tc_gemm: split_k_can_implement, split_k_workspace_size, split_k_run).
#pragma once

#include "tilecraft/jit/sm80_gemm.cuh"
#include "tilecraft/jit/sm80_split_k_reduce.cuh"

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

namespace tc_gemm {

// The partial GEMM writes batch_count slices of MxN accumulators in C's orientation; the
// reduction reads them as a row-major matrix (a column-major MxN is a row-major NxM).
template <typename Partial>
struct SplitKLayout {
  static constexpr bool kRowMajor =
      std::is_same<typename Partial::LayoutC, cutlass::layout::RowMajor>::value;
  static int64_t rows(const tc_gemm_args& a) { return kRowMajor ? a.m : a.n; }
  static int64_t columns(const tc_gemm_args& a) { return kRowMajor ? a.n : a.m; }
  static int64_t slice(const tc_gemm_args& a) { return int64_t(a.m) * int64_t(a.n); }
};

template <typename Partial>
size_t partials_bytes(const tc_gemm_args& a) {
  using Acc = typename Partial::EpilogueOutputOp::ElementOutput;
  size_t bytes = sizeof(Acc) * size_t(SplitKLayout<Partial>::slice(a)) * size_t(a.batch_count);
  return (bytes + 255) / 256 * 256;
}

template <typename Partial>
typename Partial::Arguments partial_arguments(const tc_gemm_args& a, void* partials) {
  using Op = typename Partial::EpilogueOutputOp;
  using Compute = typename Op::ElementCompute;
  const int64_t ld = SplitKLayout<Partial>::columns(a);
  const int64_t slice = SplitKLayout<Partial>::slice(a);
  return typename Partial::Arguments(cutlass::gemm::GemmUniversalMode::kGemmSplitKParallel,
                                     cutlass::gemm::GemmCoord(a.m, a.n, a.k), a.batch_count,
                                     typename Op::Params(Compute(1), Compute(0)), a.A, a.B,
                                     partials, partials, 0, 0, slice, slice, a.lda, a.ldb, ld, ld);
}

template <typename Partial, typename Reduction>
int32_t split_k_can_implement(const tc_args_header* header, char* error, size_t capacity,
                              int max_k) {
  const tc_gemm_args* args = gemm_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  const tc_gemm_args& a = *args;
  if (a.mode != TC_GEMM_MODE_GEMM_SPLIT_K_PARALLEL) {
    return fail(
        TC_ERROR_INVALID_ARGUMENT, error, capacity,
        "mode " + std::to_string(a.mode) + ": this entry runs only GemmSplitKParallel (mode 1)");
  }
  using Output = typename Reduction::OutputOp;
  using LayoutC =
      typename std::conditional<SplitKLayout<Partial>::kRowMajor, cutlass::layout::RowMajor,
                                cutlass::layout::ColumnMajor>::type;
  std::string why = check_gemm<Partial, Output, LayoutC>(a, max_k, Output::kCount);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  return cutlass_verdict(
      Partial::can_implement(partial_arguments<Partial>(a, nullptr)),
      problem_text(a) + ": CUTLASS GemmUniversal::can_implement (split-K partials)", error,
      capacity);
}

// The partial slices only: in kGemmSplitKParallel mode GemmUniversal's initialize() takes no
// workspace (it only counts the partials it expects D to hold).
template <typename Partial>
size_t split_k_workspace_size(const tc_args_header* header) {
  const tc_gemm_args* args = gemm_block(header, nullptr, 0);
  return args == nullptr ? 0 : partials_bytes<Partial>(*args);
}

template <typename Partial, typename Reduction>
int32_t split_k_run(const tc_args_header* header, void* workspace, void* stream, char* error,
                    size_t capacity, const char* partial_name, const char* reduction_name) {
  const tc_gemm_args* args = gemm_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  const tc_gemm_args& a = *args;
  std::string why = check_pointers(a);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  const tc_image::Kernel& partial = gemm_kernel<Partial>(partial_name);
  if (partial.handle == nullptr) return fail(TC_ERROR_CUDA, error, capacity, partial.error);
  const tc_image::Kernel& reduction =
      tc_image::kernel<typename Reduction::ReductionKernel>(reduction_name);
  if (reduction.handle == nullptr) return fail(TC_ERROR_CUDA, error, capacity, reduction.error);
  tc_image::HostAdapter adapter({&partial, &reduction});
  if (workspace == nullptr || reinterpret_cast<uintptr_t>(workspace) % 16 != 0) {
    return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                "GemmSplitKParallel needs a 16-byte aligned workspace of " +
                    std::to_string(partials_bytes<Partial>(a)) + " bytes");
  }
  cudaStream_t cuda_stream = static_cast<cudaStream_t>(stream);
  typename Partial::Arguments partial_args = partial_arguments<Partial>(a, workspace);
  // CUTLASS rounds each slice's K extent up to whole cache lines, so it may launch fewer
  // partitions than asked for: reduce exactly the slices its grid writes.
  const int partitions =
      int(Base<Partial>::Op::get_grid_shape(Base<Partial>::arguments(partial_args), &adapter).z);
  if (partitions <= 0) {
    return cuda_failure("GemmUniversal::get_grid_shape", cutlass::Status::kErrorInternal, adapter,
                        error, capacity);
  }
  typename Base<Partial>::Op gemm;
  cutlass::Status status =
      gemm.initialize(Base<Partial>::arguments(partial_args), nullptr, cuda_stream, &adapter);
  if (status != cutlass::Status::kSuccess) {
    return cuda_failure("GemmUniversal::initialize (split-K partials)", status, adapter, error,
                        capacity);
  }
  status = gemm.run(cuda_stream, &adapter);
  if (status != cutlass::Status::kSuccess) {
    return cuda_failure("GemmUniversal::run (split-K partials)", status, adapter, error, capacity);
  }
  return reduce_split_k<Reduction>(a, workspace, int(SplitKLayout<Partial>::rows(a)),
                                   int(SplitKLayout<Partial>::columns(a)), partitions,
                                   size_t(SplitKLayout<Partial>::slice(a)), a.ldd, a.ldc,
                                   cuda_stream, adapter, error, capacity);
}

}  // namespace tc_gemm

#endif  // !TILECRAFT_DEVICE_HALF
