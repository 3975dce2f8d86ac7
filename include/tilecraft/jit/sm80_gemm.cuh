// SM80 GEMMs (CUTLASS 2.x GemmUniversal): the adapters from tc_gemm_args to its device-level
// Arguments (namespace tc_gemm: can_implement, workspace_size, run). CUTLASS's Arguments are built
// here, inside the module, never mirrored on the host side (DESIGN, Decided 2).
#pragma once

#include "tilecraft/jit/sm80_common.cuh"
#include "tilecraft/abi/gemm_args.h"

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

namespace tc_gemm {

inline const tc_gemm_args* gemm_block(const tc_args_header* h, char* error, size_t capacity) {
  return tc_image::block(h, tc_gemm_args_of, TC_FAMILY_GEMM, TC_GEMM_ARGS_VERSION, error, capacity);
}

using tc_image::problem_text;

// What CUTLASS's layouts make contiguous, and what their interleaving demands.
template <bool kRow, int kInterleaved>
struct LayoutTraits {
  static constexpr bool kRowContiguous = kRow;
  static constexpr int kInterleave = kInterleaved;
  static std::string name() {
    return std::string(kRow ? "row-major" : "column-major") + (kInterleaved ? " interleaved" : "");
  }
};
template <typename Layout>
struct LayoutInfo;
template <>
struct LayoutInfo<cutlass::layout::RowMajor> : LayoutTraits<true, 0> {};
template <>
struct LayoutInfo<cutlass::layout::ColumnMajor> : LayoutTraits<false, 0> {};
template <int I>
struct LayoutInfo<cutlass::layout::RowMajorInterleaved<I>> : LayoutTraits<true, I> {};
template <int I>
struct LayoutInfo<cutlass::layout::ColumnMajorInterleaved<I>> : LayoutTraits<false, I> {};

// One operand's view of the problem: its extents and the one the kernel vectorizes along.
struct Operand {
  const char* name;       // "A"
  const char* rows_name;  // "M"
  int64_t rows;
  const char* cols_name;  // "K"
  int64_t cols;
  const char* interleaved_name;  // the extent CUTLASS checks for interleaved layouts
  int64_t interleaved_extent;
  int64_t ld;
  const void* pointer;  // checked for alignment when not null and not an array of pointers
  int element_bytes;
};

template <typename Layout>
std::string check_operand(const tc_gemm_args& a, const Operand& op, int alignment) {
  using Info = LayoutInfo<Layout>;
  const bool interleaved = Info::kInterleave > 0;
  const int align = interleaved ? Info::kInterleave : alignment;
  const char* extent_name =
      interleaved ? op.interleaved_name : (Info::kRowContiguous ? op.cols_name : op.rows_name);
  const int64_t extent =
      interleaved ? op.interleaved_extent : (Info::kRowContiguous ? op.cols : op.rows);
  const std::string shape = Info::name() + " " + op.rows_name + "x" + op.cols_name;
  if (extent % align != 0) {
    return problem_text(a) + ": " + extent_name + "=" + std::to_string(extent) +
           " is not a multiple of the " + std::to_string(align) + "-element alignment of " +
           op.name + " (" + shape + ")";
  }
  const std::string ld_text = std::string(op.name) + ": leading dimension " + std::to_string(op.ld);
  if (op.ld <= 0) return ld_text + " must be positive";
  if (op.ld % align != 0) {
    return ld_text + " is not a multiple of the " + std::to_string(align) + "-element alignment";
  }
  // Interleaved layouts keep Interleave rows (or columns) of the other extent per stride.
  const char* other_name = Info::kRowContiguous ? op.cols_name : op.rows_name;
  const int64_t min_ld =
      interleaved ? int64_t(align) * (Info::kRowContiguous ? op.cols : op.rows) : extent;
  if (op.ld < min_ld) {
    return ld_text + " is smaller than " +
           (interleaved ? std::to_string(align) + "*" + other_name : std::string(extent_name)) +
           "=" + std::to_string(min_ld) + " of the " + shape + " matrix";
  }
  const uintptr_t bytes = uintptr_t(align) * uintptr_t(op.element_bytes);
  if (op.pointer != nullptr && a.mode != TC_GEMM_MODE_ARRAY &&
      reinterpret_cast<uintptr_t>(op.pointer) % bytes != 0) {
    return std::string(op.name) + ": address is not aligned to the " + std::to_string(align) +
           "-element (" + std::to_string(bytes) + "-byte) access width";
  }
  return {};
}

// An M x N operand: C or D.
template <typename Layout>
std::string check_mn_operand(const tc_gemm_args& a, const char* name, int64_t ld,
                             const void* pointer, int element_bytes, int alignment) {
  return check_operand<Layout>(a, {name, "M", a.m, "N", a.n, "N", a.n, ld, pointer, element_bytes},
                               alignment);
}

// The checks every entry shares, on the GEMM that reads A and B.
template <typename Gemm>
std::string check_problem(const tc_gemm_args& a) {
  if (a.m <= 0 || a.n <= 0 || a.k <= 0) {
    return problem_text(a) + ": M, N and K must be positive";
  }
  if (a.batch_count < 1 || a.batch_count > 65535) {
    return "batch_count " + std::to_string(a.batch_count) + " is outside [1, 65535]";
  }
  const int bytes_a = cutlass::sizeof_bits<typename Gemm::ElementA>::value / 8;
  const int bytes_b = cutlass::sizeof_bits<typename Gemm::ElementB>::value / 8;
  std::string why = check_operand<typename Gemm::LayoutA>(
      a, {"A", "M", a.m, "K", a.k, "K", a.k, a.lda, a.A, bytes_a}, Gemm::kAlignmentA);
  if (why.empty()) {
    why = check_operand<typename Gemm::LayoutB>(
        a, {"B", "K", a.k, "N", a.n, "K", a.k, a.ldb, a.B, bytes_b}, Gemm::kAlignmentB);
  }
  return why;
}

// CUDA's grid limits, computed as the kernel will (column-major C runs the transposed problem).
template <typename Gemm>
std::string check_grid(const tc_gemm_args& a) {
  using Shape = typename Gemm::ThreadblockShape;
  const bool transposed = std::is_same<typename Gemm::LayoutC, cutlass::layout::ColumnMajor>::value;
  cutlass::gemm::GemmCoord problem(transposed ? a.n : a.m, transposed ? a.m : a.n, a.k);
  cutlass::gemm::GemmCoord tiled = Gemm::ThreadblockSwizzle::get_tiled_shape(
      problem, cutlass::gemm::GemmCoord(Shape::kM, Shape::kN, Shape::kK), a.batch_count);
  dim3 grid = Gemm::ThreadblockSwizzle::get_grid_shape(tiled);
  if (grid.y > 65535 || grid.z > 65535) {
    return problem_text(a) + ": needs a grid of " + std::to_string(grid.x) + "x" +
           std::to_string(grid.y) + "x" + std::to_string(grid.z) +
           " threadblocks; CUDA allows at most 65535 in y and z";
  }
  return {};
}

// What an entry that writes D (and may read C) through the epilogue Output needs: the epilogue's
// arguments, the operands and the grid.
template <typename Gemm, typename Output, typename LayoutC>
std::string check_gemm(const tc_gemm_args& a, int max_k, int alignment_c) {
  const int bytes = cutlass::sizeof_bits<typename Output::ElementOutput>::value / 8;
  std::string why = check_activation_args<Output>(a.header);
  if (why.empty()) why = check_max_k(a.k, max_k, problem_text(a) + ": K=");
  if (why.empty()) why = check_problem<Gemm>(a);
  if (why.empty()) why = check_mn_operand<LayoutC>(a, "C", a.ldc, a.C, bytes, alignment_c);
  if (why.empty()) why = check_mn_operand<LayoutC>(a, "D", a.ldd, a.D, bytes, alignment_c);
  return why.empty() ? check_grid<Gemm>(a) : why;
}

inline std::string check_pointers(const tc_gemm_args& a) {
  if (a.mode == TC_GEMM_MODE_ARRAY) {
    if (a.A_array == nullptr || a.B_array == nullptr || a.C_array == nullptr ||
        a.D_array == nullptr) {
      return "Array mode: A_array, B_array, C_array and D_array must all be device arrays";
    }
    return {};
  }
  if (a.A == nullptr) return "A: null pointer";
  if (a.B == nullptr) return "B: null pointer";
  if (a.D == nullptr) return "D: null pointer";
  if (a.C == nullptr && a.header.beta != 0.0) return "C: null pointer while beta is not 0";
  return {};
}

template <typename Gemm>
typename Gemm::Arguments universal_arguments(const tc_gemm_args& a) {
  using Mode = cutlass::gemm::GemmUniversalMode;
  const bool array = a.mode == TC_GEMM_MODE_ARRAY;  // arrays of pointers in place of A, B, C, D
  const Mode mode =
      array ? Mode::kArray : (a.mode == TC_GEMM_MODE_BATCHED ? Mode::kBatched : Mode::kGemm);
  return typename Gemm::Arguments(mode, cutlass::gemm::GemmCoord(a.m, a.n, a.k), a.batch_count,
                                  epilogue_params<typename Gemm::EpilogueOutputOp>(a),
                                  array ? static_cast<const void*>(a.A_array) : a.A,
                                  array ? static_cast<const void*>(a.B_array) : a.B,
                                  array ? static_cast<const void*>(a.C_array) : a.C,
                                  array ? static_cast<void*>(const_cast<void**>(a.D_array)) : a.D,
                                  a.batch_stride_A, a.batch_stride_B, a.batch_stride_C,
                                  a.batch_stride_D, a.lda, a.ldb, a.ldc, a.ldd);
}

template <typename Gemm>
int32_t universal_can_implement(const tc_args_header* header, char* error, size_t capacity,
                                int max_k) {
  const tc_gemm_args* args = gemm_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  const tc_gemm_args& a = *args;
  if (a.mode == TC_GEMM_MODE_GEMM_SPLIT_K_PARALLEL) {
    return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                "mode GemmSplitKParallel: this entry runs modes Gemm (with serial split-K), "
                "Batched and Array; the _splitk_parallel entry runs GemmSplitKParallel");
  }
  if (a.mode != TC_GEMM_MODE_GEMM && a.mode != TC_GEMM_MODE_BATCHED &&
      a.mode != TC_GEMM_MODE_ARRAY) {
    return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                "mode " + std::to_string(a.mode) + " is not a tc_gemm_mode");
  }
  std::string why = check_gemm<Gemm, typename Gemm::EpilogueOutputOp, typename Gemm::LayoutC>(
      a, max_k, Gemm::kAlignmentC);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  return cutlass_verdict(Gemm::can_implement(universal_arguments<Gemm>(a)),
                         problem_text(a) + ": CUTLASS GemmUniversal::can_implement", error,
                         capacity);
}

// 0 when the kernel cannot be loaded (no GPU): run() then says why.
template <typename Gemm>
size_t universal_workspace_size(const tc_args_header* header, const char* kernel_name) {
  const tc_gemm_args* args = gemm_block(header, nullptr, 0);
  if (args == nullptr) return 0;
  const tc_image::Kernel& kernel = gemm_kernel<Gemm>(kernel_name);
  if (kernel.handle == nullptr) return 0;
  tc_image::HostAdapter adapter({&kernel});
  return Base<Gemm>::Op::get_workspace_size(Base<Gemm>::arguments(universal_arguments<Gemm>(*args)),
                                            &adapter);
}

template <typename Gemm>
int32_t universal_run(const tc_args_header* header, void* workspace, void* stream, char* error,
                      size_t capacity, const char* kernel_name) {
  const tc_gemm_args* args = gemm_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  const tc_gemm_args& a = *args;
  std::string why = check_pointers(a);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  const tc_image::Kernel& kernel = gemm_kernel<Gemm>(kernel_name);
  if (kernel.handle == nullptr) return fail(TC_ERROR_CUDA, error, capacity, kernel.error);
  tc_image::HostAdapter adapter({&kernel});
  typename Gemm::Arguments arguments = universal_arguments<Gemm>(a);
  if (a.mode == TC_GEMM_MODE_GEMM && a.batch_count > 1 && workspace == nullptr) {
    size_t bytes = Base<Gemm>::Op::get_workspace_size(Base<Gemm>::arguments(arguments), &adapter);
    if (bytes > 0) {
      return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                  "serial split-K over " + std::to_string(a.batch_count) +
                      " slices needs a workspace of " + std::to_string(bytes) + " bytes");
    }
  }
  cudaStream_t cuda_stream = static_cast<cudaStream_t>(stream);
  typename Base<Gemm>::Op gemm;
  cutlass::Status status =
      gemm.initialize(Base<Gemm>::arguments(arguments), workspace, cuda_stream, &adapter);
  if (status != cutlass::Status::kSuccess) {
    return cuda_failure("GemmUniversal::initialize", status, adapter, error, capacity);
  }
  return cuda_result("GemmUniversal::run", gemm.run(cuda_stream, &adapter), adapter, error,
                     capacity);
}

}  // namespace tc_gemm

#endif  // !TILECRAFT_DEVICE_HALF
