/* The one C ABI every generated module exports (DESIGN, Decided 2).
 *
 * A module is a shared object with one exported function, tilecraft_module_table(), returning a
 * table of kernel entries. The runtime talks to kernels only through these entries and the plain
 * argument struct below; CUTLASS's Params never cross this line. The text of this header is
 * pasted into every generated source, so a change here changes every cache key: bump
 * TILECRAFT_ABI_VERSION with any change to a struct.
 */
#ifndef TILECRAFT_MODULE_ABI_H_
#define TILECRAFT_MODULE_ABI_H_

#include <stddef.h>
#include <stdint.h>

#define TILECRAFT_ABI_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

enum tc_gemm_mode {
  TC_GEMM_MODE_GEMM = 0,                  /* batch_count > 1 means serial split-K */
  TC_GEMM_MODE_GEMM_SPLIT_K_PARALLEL = 1, /* batch_count = split-K slices; needs a workspace */
  TC_GEMM_MODE_BATCHED = 2,               /* strided batches */
  TC_GEMM_MODE_ARRAY = 3                  /* arrays of device pointers */
};

enum tc_status {
  TC_OK = 0,
  TC_ERROR_INVALID_ARGUMENT = 1, /* can_implement said no; the text says why */
  TC_ERROR_CUDA = 2,             /* a CUDA call or the launch failed */
  TC_ERROR_INTERNAL = 3
};

typedef struct tc_gemm_args {
  int32_t mode; /* enum tc_gemm_mode */
  int32_t m, n, k;
  int32_t batch_count;
  const void* A;
  const void* B;
  const void* C;
  void* D;
  /* Array mode: device arrays of batch_count pointers each. */
  const void* const* A_array;
  const void* const* B_array;
  const void* const* C_array;
  void* const* D_array;
  int64_t lda, ldb, ldc, ldd;
  int64_t batch_stride_A, batch_stride_B, batch_stride_C, batch_stride_D;
  double alpha, beta;
  double activation_args[4];
  int32_t num_activation_args;
} tc_gemm_args;

typedef struct tc_kernel_entry {
  const char* name;
  /* "key=value;key=value": the description the kernel was built from. */
  const char* metadata;
  int32_t (*can_implement)(const tc_gemm_args* args, char* error, size_t error_capacity);
  size_t (*workspace_size)(const tc_gemm_args* args);
  /* Launches on stream (a cudaStream_t). Never synchronizes. */
  int32_t (*run)(const tc_gemm_args* args, void* workspace, void* stream, char* error,
                 size_t error_capacity);
} tc_kernel_entry;

typedef struct tc_module_table {
  uint32_t abi_version;
  uint32_t num_entries;
  const tc_kernel_entry* entries;
} tc_module_table;

typedef const tc_module_table* (*tc_module_table_fn)(void);

#define TILECRAFT_MODULE_TABLE_SYMBOL "tilecraft_module_table"

#ifdef __cplusplus
}
#endif

#endif /* TILECRAFT_MODULE_ABI_H_ */

// ---- tilecraft generated module: 1 GEMM entry (CUTLASS 2.x GemmUniversal, SM80)
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
inline int32_t cuda_failure(const char* call, cutlass::Status status, char* error,
                            size_t capacity) {
  cudaError_t cuda = cudaGetLastError();
  std::string text = std::string(call) + " failed: " + cutlass::cutlassGetStatusString(status);
  if (cuda != cudaSuccess) {
    text += ": " + std::string(cudaGetErrorName(cuda)) + ": " + cudaGetErrorString(cuda);
  }
  return fail(TC_ERROR_CUDA, error, capacity, text);
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

template <typename Gemm>
size_t universal_workspace_size(const tc_gemm_args* args) {
  if (args == nullptr) return 0;
  return Gemm::get_workspace_size(universal_arguments<Gemm>(*args));
}

template <typename Gemm>
int32_t universal_run(const tc_gemm_args* args, void* workspace, void* stream, char* error,
                      size_t capacity) {
  if (args == nullptr) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, "null arguments");
  const tc_gemm_args& a = *args;
  std::string why = check_pointers(a);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  typename Gemm::Arguments arguments = universal_arguments<Gemm>(a);
  if (a.mode == TC_GEMM_MODE_GEMM && a.batch_count > 1 && workspace == nullptr) {
    size_t bytes = Gemm::get_workspace_size(arguments);
    if (bytes > 0) {
      return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                  "serial split-K over " + std::to_string(a.batch_count) +
                      " slices needs a workspace of " + std::to_string(bytes) + " bytes");
    }
  }
  cudaStream_t cuda_stream = static_cast<cudaStream_t>(stream);
  Gemm gemm;
  cutlass::Status status = gemm.initialize(arguments, workspace, cuda_stream);
  if (status != cutlass::Status::kSuccess) {
    return cuda_failure("GemmUniversal::initialize", status, error, capacity);
  }
  status = gemm.run(cuda_stream);
  if (status != cutlass::Status::kSuccess) {
    return cuda_failure("GemmUniversal::run", status, error, capacity);
  }
  return TC_OK;
}

}  // namespace tc_gemm

// ---- entry 0: tilecraft_sm80_tensorop_16832gemm_s8s8_s32acc_s8_128x128_64x3_w2x2x1_n32t32n32_align16x16x8_clamp_ef32
using TcGemm0 = cutlass::gemm::device::GemmUniversal<
    int8_t, cutlass::layout::ColumnMajorInterleaved<32>,
    int8_t, cutlass::layout::RowMajorInterleaved<32>,
    int8_t, cutlass::layout::ColumnMajorInterleaved<32>,
    int32_t, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 64>,
    cutlass::gemm::GemmShape<64, 64, 64>,
    cutlass::gemm::GemmShape<16, 8, 32>,
    cutlass::epilogue::thread::LinearCombinationClamp<int8_t, 8, int32_t, float>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>,
    3, 16, 16, cutlass::arch::OpMultiplyAddSaturate>;
static int32_t tc_can_implement_0(const tc_gemm_args* args, char* error, size_t capacity) {
  return tc_gemm::universal_can_implement<TcGemm0>(args, error, capacity, 0);
}
static size_t tc_workspace_size_0(const tc_gemm_args* args) {
  return tc_gemm::universal_workspace_size<TcGemm0>(args);
}
static int32_t tc_run_0(const tc_gemm_args* args, void* workspace, void* stream, char* error,
    size_t capacity) {
  return tc_gemm::universal_run<TcGemm0>(args, workspace, stream, error, capacity);
}

// ---- the module table
static const tc_kernel_entry tc_entries[] = {
    {"tilecraft_sm80_tensorop_16832gemm_s8s8_s32acc_s8_128x128_64x3_w2x2x1_n32t32n32_align16x16x8_clamp_ef32",
     "kind=universal;arch=80;op_class=TensorOp;inst_shape=16x8x32;math_operation=multiply_add_saturate;element_a=s8;element_b=s8;element_c=s8;element_accumulator=s32;layout_a=ColumnMajorInterleaved32;layout_b=RowMajorInterleaved32;layout_c=ColumnMajorInterleaved32;alignment_a=16;alignment_b=16;alignment_c=8;tile=128x128x64;stages=3;warps=2x2x1;epilogue=LinearCombinationClamp;element_epilogue=f32;epilogue_vector=8;activation=identity;swizzle=IdentitySwizzle1",
     &tc_can_implement_0, &tc_workspace_size_0, &tc_run_0},
};

extern "C" __attribute__((visibility("default"))) const tc_module_table*
tilecraft_module_table(void) {
  static const tc_module_table table = {TILECRAFT_ABI_VERSION, 1u, tc_entries};
  return &table;
}
