// The adapter text is fixed C++17 compiled inside each module, next to the CUTLASS templates it
// adapts (DESIGN, Decided 2: CUTLASS's Arguments are built inside the module, never mirrored on
// the host side). Entries instantiate these templates; nothing here is filled in by strings.
#include "emit/gemm_adapter_text.hpp"

namespace tilecraft::emit {

std::string_view gemm_module_includes(bool with_split_k_parallel) {
  static constexpr std::string_view kUniversal = R"tc(#include <cstdint>
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
)tc";
  static constexpr std::string_view kWithReduction = R"tc(#include <cstdint>
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
#include "cutlass/reduction/device/reduce_split_k.h"
#include "cutlass/reduction/kernel/reduce_split_k.h"
#include "cutlass/reduction/thread/reduction_operators.h"
)tc";
  return with_split_k_parallel ? kWithReduction : kUniversal;
}

std::string_view gemm_universal_adapter_text() {
  static constexpr std::string_view kText = R"tc(
// ---- tilecraft adapters: tc_gemm_args -> CUTLASS device-level arguments -------------------
namespace tc_gemm {

inline int32_t fail(int32_t code, char* error, size_t capacity, const std::string& text) {
  if (error != nullptr && capacity > 0) {
    size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
    std::memcpy(error, text.data(), n);
    error[n] = '\0';
  }
  return code;
}

// A failed CUTLASS call whose cause is the CUDA runtime: both statuses, in words.
inline int32_t cuda_failure(const char* call, cutlass::Status status,
                            const tc_image::HostAdapter& adapter, char* error, size_t capacity) {
  cudaError_t cuda = cudaGetLastError();
  std::string text = std::string(call) + " failed: " + cutlass::cutlassGetStatusString(status);
  if (!adapter.error().empty()) text += ": " + adapter.error();
  if (cuda != cudaSuccess) text += ": " + tc_image::cuda_text(cuda);
  return fail(TC_ERROR_CUDA, error, capacity, text);
}

// CUTLASS's GemmUniversal for a column-major C runs the transposed problem on a row-major
// GemmUniversalBase and passes no host adapter on: entries talk to that base directly.
template <typename Gemm, typename = void>
struct Base {
  using Op = typename Gemm::Base;
  static const typename Gemm::Arguments& arguments(const typename Gemm::Arguments& a) { return a; }
};
template <typename Gemm>
struct Base<Gemm, std::void_t<typename Gemm::UnderlyingOperator>> {
  using Op = typename Gemm::UnderlyingOperator;
  static typename Op::Arguments arguments(const typename Gemm::Arguments& a) {
    return Gemm::to_underlying_arguments(a);
  }
};

// The GEMM kernel of a GemmUniversal, from the module's device image.
template <typename Gemm>
const tc_image::Kernel& gemm_kernel(const char* name) {
  return tc_image::kernel<typename Gemm::GemmKernel>(name);
}

inline std::string problem_text(const tc_gemm_args& a) {
  return "problem size " + std::to_string(a.m) + "x" + std::to_string(a.n) + "x" +
         std::to_string(a.k);
}

// What CUTLASS's layouts make contiguous, and what their interleaving demands.
template <typename Layout>
struct LayoutInfo;
template <>
struct LayoutInfo<cutlass::layout::RowMajor> {
  static constexpr bool kRowContiguous = true;
  static constexpr int kInterleave = 0;
  static const char* name() { return "row-major"; }
};
template <>
struct LayoutInfo<cutlass::layout::ColumnMajor> {
  static constexpr bool kRowContiguous = false;
  static constexpr int kInterleave = 0;
  static const char* name() { return "column-major"; }
};
template <int I>
struct LayoutInfo<cutlass::layout::RowMajorInterleaved<I>> {
  static constexpr bool kRowContiguous = true;
  static constexpr int kInterleave = I;
  static const char* name() { return "row-major interleaved"; }
};
template <int I>
struct LayoutInfo<cutlass::layout::ColumnMajorInterleaved<I>> {
  static constexpr bool kRowContiguous = false;
  static constexpr int kInterleave = I;
  static const char* name() { return "column-major interleaved"; }
};

// One operand's view of the problem: its extents and the one the kernel vectorizes along.
struct Operand {
  const char* name;         // "A"
  const char* rows_name;    // "M"
  int64_t rows;
  const char* cols_name;    // "K"
  int64_t cols;
  const char* interleaved_name;  // the extent CUTLASS checks for interleaved layouts
  int64_t interleaved_extent;
  int64_t ld;
  const void* pointer;      // checked for alignment when not null and not an array of pointers
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
  const std::string shape = std::string(Info::name()) + " " + op.rows_name + "x" + op.cols_name;
  if (extent % align != 0) {
    return problem_text(a) + ": " + extent_name + "=" + std::to_string(extent) +
           " is not a multiple of the " + std::to_string(align) + "-element alignment of " +
           op.name + " (" + shape + ")";
  }
  if (op.ld <= 0) {
    return std::string(op.name) + ": leading dimension " + std::to_string(op.ld) +
           " must be positive";
  }
  if (op.ld % align != 0) {
    return std::string(op.name) + ": leading dimension " + std::to_string(op.ld) +
           " is not a multiple of the " + std::to_string(align) + "-element alignment";
  }
  // Interleaved layouts keep Interleave rows (or columns) of the other extent per stride.
  const char* other_name = Info::kRowContiguous ? op.cols_name : op.rows_name;
  const int64_t min_ld = interleaved ? int64_t(align) * (Info::kRowContiguous ? op.cols : op.rows)
                                     : extent;
  if (op.ld < min_ld) {
    return std::string(op.name) + ": leading dimension " + std::to_string(op.ld) +
           " is smaller than " +
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

template <typename T, typename = void>
struct HasLeakyAlpha : std::false_type {};
template <typename T>
struct HasLeakyAlpha<T, std::void_t<decltype(std::declval<T&>().leaky_alpha)>>
    : std::true_type {};

// alpha, beta and the activation's arguments arrive as double; the epilogue computes in its own type.
template <typename Op>
typename Op::Params epilogue_params(const tc_gemm_args& a) {
  using Compute = typename Op::ElementCompute;
  typename Op::Params params(static_cast<Compute>(a.alpha), static_cast<Compute>(a.beta));
  if constexpr (HasLeakyAlpha<typename Op::Params>::value) {
    params.leaky_alpha =
        static_cast<Compute>(a.num_activation_args > 0 ? a.activation_args[0] : 0.0);
  }
  return params;
}

template <typename Op>
std::string check_epilogue(const tc_gemm_args& a, int max_k) {
  const int expected = HasLeakyAlpha<typename Op::Params>::value ? 1 : 0;
  if (a.num_activation_args != expected) {
    return "epilogue: expected " + std::to_string(expected) + " activation argument" +
           (expected == 1 ? " (leaky_relu's slope)" : "s") + ", got " +
           std::to_string(a.num_activation_args);
  }
  if (max_k > 0 && a.k > max_k) {
    return problem_text(a) + ": K=" + std::to_string(a.k) +
           " exceeds FastLinearCombinationClamp's limit of " + std::to_string(max_k);
  }
  return {};
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

template <typename LayoutC>
std::string check_output(const tc_gemm_args& a, int alignment, int bytes) {
  std::string why =
      check_operand<LayoutC>(a, {"C", "M", a.m, "N", a.n, "N", a.n, a.ldc, a.C, bytes}, alignment);
  if (why.empty()) {
    why = check_operand<LayoutC>(a, {"D", "M", a.m, "N", a.n, "N", a.n, a.ldd, a.D, bytes},
                                 alignment);
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
  if (a.C == nullptr && a.beta != 0.0) return "C: null pointer while beta is not 0";
  return {};
}

template <typename Gemm>
typename Gemm::Arguments universal_arguments(const tc_gemm_args& a) {
  cutlass::gemm::GemmUniversalMode mode = cutlass::gemm::GemmUniversalMode::kGemm;
  const void* ptr_a = a.A;
  const void* ptr_b = a.B;
  const void* ptr_c = a.C;
  void* ptr_d = a.D;
  if (a.mode == TC_GEMM_MODE_BATCHED) {
    mode = cutlass::gemm::GemmUniversalMode::kBatched;
  } else if (a.mode == TC_GEMM_MODE_ARRAY) {
    mode = cutlass::gemm::GemmUniversalMode::kArray;
    ptr_a = a.A_array;
    ptr_b = a.B_array;
    ptr_c = a.C_array;
    ptr_d = const_cast<void**>(a.D_array);
  }
  return typename Gemm::Arguments(
      mode, cutlass::gemm::GemmCoord(a.m, a.n, a.k), a.batch_count,
      epilogue_params<typename Gemm::EpilogueOutputOp>(a), ptr_a, ptr_b, ptr_c, ptr_d,
      a.batch_stride_A, a.batch_stride_B, a.batch_stride_C, a.batch_stride_D, a.lda, a.ldb,
      a.ldc, a.ldd);
}

template <typename Gemm>
int32_t universal_can_implement(const tc_gemm_args* args, char* error, size_t capacity,
                                int max_k) {
  if (args == nullptr) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, "null arguments");
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
  using Output = typename Gemm::EpilogueOutputOp;
  std::string why = check_epilogue<Output>(a, max_k);
  if (why.empty()) why = check_problem<Gemm>(a);
  if (why.empty()) {
    why = check_output<typename Gemm::LayoutC>(
        a, Gemm::kAlignmentC, cutlass::sizeof_bits<typename Output::ElementOutput>::value / 8);
  }
  if (why.empty()) why = check_grid<Gemm>(a);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  cutlass::Status status = Gemm::can_implement(universal_arguments<Gemm>(a));
  if (status != cutlass::Status::kSuccess) {
    return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                problem_text(a) + ": CUTLASS GemmUniversal::can_implement: " +
                    cutlass::cutlassGetStatusString(status));
  }
  return TC_OK;
}

// 0 when the kernel cannot be loaded (no GPU): run() then says why.
template <typename Gemm>
size_t universal_workspace_size(const tc_gemm_args* args, const char* kernel_name) {
  if (args == nullptr) return 0;
  const tc_image::Kernel& kernel = gemm_kernel<Gemm>(kernel_name);
  if (kernel.handle == nullptr) return 0;
  tc_image::HostAdapter adapter({&kernel});
  return Base<Gemm>::Op::get_workspace_size(Base<Gemm>::arguments(universal_arguments<Gemm>(*args)),
                                            &adapter);
}

template <typename Gemm>
int32_t universal_run(const tc_gemm_args* args, void* workspace, void* stream, char* error,
                      size_t capacity, const char* kernel_name) {
  if (args == nullptr) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, "null arguments");
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
  status = gemm.run(cuda_stream, &adapter);
  if (status != cutlass::Status::kSuccess) {
    return cuda_failure("GemmUniversal::run", status, adapter, error, capacity);
  }
  return TC_OK;
}

}  // namespace tc_gemm
)tc";
  return kText;
}

std::string_view gemm_visitor_includes() {
  // VisitorRowReduction's reduction() (CUTLASS 4.2) lacks the return its callers never read.
  return "#pragma nv_diag_suppress 940\n"
         "#include \"cutlass/epilogue/threadblock/fusion/visitors.hpp\"\n"
         "#pragma nv_diag_default 940\n"
         "#include \"cutlass/gemm/device/gemm_universal_adapter.h\"\n"
         "#include \"cutlass/gemm/kernel/default_gemm_universal_with_visitor.h\"\n";
}

std::string_view gemm_visitor_adapter_text() {
  static constexpr std::string_view kText = R"tc(
// ---- tilecraft adapters: GEMMs with an epilogue graph (CUTLASS 2.x epilogue visitor tree) -----
namespace tc_gemm {

// A reduction's output, reset to the reduction's identity before every launch: operand `operand`
// of tc_gemm_args.epilogue_tensors, one float value (extent 0), or M (1) or N (2) per batch.
struct ResetOutput {
  int operand;
  int extent;
  float identity;
};

// What an entry's epilogue graph takes at launch (tc_gemm_args.epilogue_tensors and _scalars),
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
    return std::string("mode ") +
           (a.mode == TC_GEMM_MODE_ARRAY ? "Array" : "GemmSplitKParallel") +
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

template <typename Layout>
struct TransposedLayout;
template <>
struct TransposedLayout<cutlass::layout::RowMajor> {
  using type = cutlass::layout::ColumnMajor;
};
template <>
struct TransposedLayout<cutlass::layout::ColumnMajor> {
  using type = cutlass::layout::RowMajor;
};

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
  using LayoutA = typename TransposedLayout<typename Gemm::LayoutB>::type;
  static constexpr int kAlignmentA = Gemm::kAlignmentB;
  using ElementB = typename Gemm::ElementA;
  using LayoutB = typename TransposedLayout<typename Gemm::LayoutA>::type;
  static constexpr int kAlignmentB = Gemm::kAlignmentA;
  using LayoutC = cutlass::layout::ColumnMajor;  // check_grid transposes it back
};

template <typename Gemm, bool kTransposed>
std::string check_visitor_args(const tc_gemm_args& a, const VisitorTraits& t) {
  using Problem = VisitorProblem<Gemm, kTransposed>;
  std::string why = check_visitor_mode(a);
  if (why.empty() && a.num_activation_args != 0) {
    why = "epilogue: an epilogue graph takes its scalars as graph operands; expected 0 "
          "activation arguments, got " + std::to_string(a.num_activation_args);
  }
  if (why.empty()) why = check_problem<Problem>(a);
  if (why.empty()) {
    why = check_operand<typename Problem::LayoutC>(
        a, {"D", "M", a.m, "N", a.n, "N", a.n, a.ldd, a.D,
            cutlass::sizeof_bits<typename Problem::ElementC>::value / 8},
        Problem::kAlignmentC);
  }
  if (why.empty()) why = check_grid<Problem>(a);
  if (why.empty()) why = tc_evt_args::check(a, t.num_epilogue_tensors, t.num_epilogue_scalars);
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
int32_t visitor_can_implement(const tc_gemm_args* args, char* error, size_t capacity,
                              const VisitorTraits& t, Fill fill) {
  if (args == nullptr) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, "null arguments");
  std::string why = check_visitor_args<Gemm, kTransposed>(*args, t);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  cutlass::Status status =
      Gemm::can_implement(visitor_arguments<Gemm, kTransposed>(*args, fill));
  if (status != cutlass::Status::kSuccess) {
    return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                problem_text(*args) + ": CUTLASS GemmUniversal::can_implement (epilogue visitor): " +
                    cutlass::cutlassGetStatusString(status));
  }
  return TC_OK;
}

// 0 when the arguments are refused or the kernel cannot be loaded: run() then says why.
template <typename Gemm, bool kTransposed, typename Fill>
size_t visitor_workspace_size(const tc_gemm_args* args, const char* kernel_name,
                              const VisitorTraits& t, Fill fill) {
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
    const tc_epilogue_tensor& out = a.epilogue_tensors[r.operand];
    const int64_t count = r.extent == 1 ? a.m : (r.extent == 2 ? a.n : 1);
    const int64_t batches =
        a.mode == TC_GEMM_MODE_BATCHED && out.batch_stride != 0 ? a.batch_count : 1;
    float* data = static_cast<float*>(out.data);
    // Batches packed one after the other are one fill; others one fill each.
    const bool packed = batches == 1 || out.batch_stride == count;
    for (int64_t b = 0; b < (packed ? 1 : batches); ++b) {
      cutlass::Status status = adapter.memsetDevice(data + b * out.batch_stride, r.identity,
                                                    size_t(packed ? count * batches : count),
                                                    stream);
      if (status != cutlass::Status::kSuccess) return status;
    }
  }
  return cutlass::Status::kSuccess;
}

template <typename Gemm, bool kTransposed, typename Fill>
int32_t visitor_run(const tc_gemm_args* args, void* workspace, void* stream, char* error,
                    size_t capacity, const char* kernel_name, const VisitorTraits& t, Fill fill) {
  if (args == nullptr) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, "null arguments");
  const tc_gemm_args& a = *args;
  std::string why = check_pointers(a);
  if (why.empty()) why = check_visitor_mode(a);
  if (why.empty()) why = tc_evt_args::check(a, t.num_epilogue_tensors, t.num_epilogue_scalars);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  const tc_image::Kernel& kernel = gemm_kernel<Gemm>(kernel_name);
  if (kernel.handle == nullptr) return fail(TC_ERROR_CUDA, error, capacity, kernel.error);
  tc_image::HostAdapter adapter({&kernel});
  cudaStream_t cuda_stream = static_cast<cudaStream_t>(stream);
  typename Base<Gemm>::Op gemm;
  cutlass::Status status = gemm.initialize(
      Base<Gemm>::arguments(visitor_arguments<Gemm, kTransposed>(a, fill)), workspace, cuda_stream, &adapter);
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
  if (status != cutlass::Status::kSuccess) {
    return cuda_failure("GemmUniversal::run (epilogue visitor)", status, adapter, error, capacity);
  }
  return TC_OK;
}

}  // namespace tc_gemm
)tc";
  return kText;
}

std::string_view gemm_split_k_parallel_adapter_text() {
  static constexpr std::string_view kText = R"tc(
// ---- tilecraft adapters: parallel split-K = partial GemmUniversal + ReduceSplitK ----------
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
  return typename Partial::Arguments(
      cutlass::gemm::GemmUniversalMode::kGemmSplitKParallel,
      cutlass::gemm::GemmCoord(a.m, a.n, a.k), a.batch_count,
      typename Op::Params(Compute(1), Compute(0)), a.A, a.B, partials, partials, 0, 0, slice,
      slice, a.lda, a.ldb, ld, ld);
}

template <typename Partial, typename Reduction>
int32_t split_k_can_implement(const tc_gemm_args* args, char* error, size_t capacity,
                              int max_k) {
  if (args == nullptr) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, "null arguments");
  const tc_gemm_args& a = *args;
  if (a.mode != TC_GEMM_MODE_GEMM_SPLIT_K_PARALLEL) {
    return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                "mode " + std::to_string(a.mode) +
                    ": this entry runs only GemmSplitKParallel (mode 1)");
  }
  using Output = typename Reduction::OutputOp;
  constexpr int kCount = Output::kCount;
  using LayoutC = typename std::conditional<SplitKLayout<Partial>::kRowMajor,
                                            cutlass::layout::RowMajor,
                                            cutlass::layout::ColumnMajor>::type;
  std::string why = check_epilogue<Output>(a, max_k);
  if (why.empty()) why = check_problem<Partial>(a);
  if (why.empty()) {
    why = check_output<LayoutC>(a, kCount,
                                cutlass::sizeof_bits<typename Output::ElementOutput>::value / 8);
  }
  if (why.empty()) why = check_grid<Partial>(a);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  cutlass::Status status = Partial::can_implement(partial_arguments<Partial>(a, nullptr));
  if (status != cutlass::Status::kSuccess) {
    return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                problem_text(a) + ": CUTLASS GemmUniversal::can_implement (split-K partials): " +
                    cutlass::cutlassGetStatusString(status));
  }
  return TC_OK;
}

// The partial slices, then whatever the partial GEMM itself asks for. In kGemmSplitKParallel
// mode GemmUniversal's own initialize() takes no workspace (it only counts the partials it
// expects D to hold), so the second term is zero by construction.
template <typename Partial>
size_t split_k_workspace_size(const tc_gemm_args* args) {
  if (args == nullptr) return 0;
  return partials_bytes<Partial>(*args);
}

// Sums `partitions` slices of rows x columns accumulators (row-major, `slice` elements apart) from
// the workspace into D (leading dimension ldd) through the epilogue, reading C with ldc (0: one
// value per column). The second launch of a split-K-parallel entry, GEMM's and convolution's.
template <typename Reduction>
int32_t reduce_split_k(const tc_gemm_args& a, void* workspace, int rows, int columns,
                       int partitions, size_t slice, int64_t ldd, int64_t ldc,
                       cudaStream_t stream, tc_image::HostAdapter& adapter, char* error,
                       size_t capacity) {
  using Output = typename Reduction::OutputOp;
  using ElementOutput = typename Output::ElementOutput;
  using Layout = cutlass::layout::RowMajor;
  typename Reduction::Arguments reduction_args(
      cutlass::MatrixCoord(rows, columns), partitions, slice,
      {static_cast<typename Reduction::ElementWorkspace*>(workspace), Layout(columns)},
      {static_cast<ElementOutput*>(a.D), Layout(ldd)},
      {const_cast<ElementOutput*>(static_cast<const ElementOutput*>(a.C)), Layout(ldc)},
      epilogue_params<Output>(a));
  Reduction reduction;
  cutlass::Status status = reduction.initialize(reduction_args, nullptr, stream);
  if (status == cutlass::Status::kSuccess) status = reduction.run(stream, &adapter, 1);
  if (status != cutlass::Status::kSuccess) {
    return cuda_failure("ReduceSplitK::run", status, adapter, error, capacity);
  }
  return TC_OK;
}

template <typename Partial, typename Reduction>
int32_t split_k_run(const tc_gemm_args* args, void* workspace, void* stream, char* error,
                    size_t capacity, const char* partial_name, const char* reduction_name) {
  if (args == nullptr) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, "null arguments");
  const tc_gemm_args& a = *args;
  std::string why = check_pointers(a);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  const tc_image::Kernel& partial_kernel = gemm_kernel<Partial>(partial_name);
  if (partial_kernel.handle == nullptr) {
    return fail(TC_ERROR_CUDA, error, capacity, partial_kernel.error);
  }
  const tc_image::Kernel& reduction_kernel =
      tc_image::kernel<typename Reduction::ReductionKernel>(reduction_name);
  if (reduction_kernel.handle == nullptr) {
    return fail(TC_ERROR_CUDA, error, capacity, reduction_kernel.error);
  }
  tc_image::HostAdapter adapter({&partial_kernel, &reduction_kernel});
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
    return cuda_failure("GemmUniversal::run (split-K partials)", status, adapter, error,
                        capacity);
  }
  return reduce_split_k<Reduction>(a, workspace, int(SplitKLayout<Partial>::rows(a)),
                                   int(SplitKLayout<Partial>::columns(a)), partitions,
                                   size_t(SplitKLayout<Partial>::slice(a)), a.ldd, a.ldc,
                                   cuda_stream, adapter, error, capacity);
}

}  // namespace tc_gemm
)tc";
  return kText;
}

}  // namespace tilecraft::emit
