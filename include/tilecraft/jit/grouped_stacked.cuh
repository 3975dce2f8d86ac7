// The stacked form of a grouped GEMM with its offsets in device memory (tc_grouped_args'
// stacked_* fields): a kernel of the module's own expands it, on the launch's stream, into the
// arrays every grouped kernel reads, at the front of the workspace. Nothing is read on the host,
// so a CUDA graph can capture the launch and replay it with new offsets
// (namespace tc_grouped_stacked).
#pragma once

#include <stdint.h>

#include "tilecraft/abi/grouped_args.h"

namespace tc_grouped_stacked {

struct Expand {
  // Operand X of group g starts at X + start_row * X_step.row + g * X_step.group (bytes).
  struct Step {
    int64_t row, group;
  };
  struct Params {
    const int32_t* offsets;
    int64_t offsets_step, rows;
    int32_t rows_are_k, groups, m, n, k;
    const char* A;
    const char* B;
    const char* C;
    char* D;
    const char* bias;
    Step A_step, B_step, C_step, D_step;
    int64_t bias_group_bytes;
    int64_t lda, ldb, ldc, ldd;
    int32_t* sizes;
    const void** A_array;
    const void** B_array;
    const void** C_array;
    void** D_array;
    int64_t* lda_array;
    int64_t* ldb_array;
    int64_t* ldc_array;
    int64_t* ldd_array;
    const void** bias_array;
  };
  static constexpr int kThreads = 128;
};

// Zeros the D of each group with no rows, when the rows are each problem's k (such a problem is
// (0, n, 0), which no kernel writes), after the expansion wrote the sizes. Block (g, y) clears a
// share of group g's m rows of row_bytes bytes, ldd_bytes apart (D is row-major).
struct ZeroEmpty {
  struct Params {
    const int32_t* sizes;
    int32_t m;
    char* D;
    int64_t D_group_bytes, row_bytes, ldd_bytes;
  };
  static constexpr int kThreads = 256;
  static constexpr int kBlocksPerGroup = 16;
};

}  // namespace tc_grouped_stacked

#if defined(TILECRAFT_DEVICE_HALF)

namespace tc_grouped_stacked {

// Group g's end row: offsets[g] raised to the previous group's end and lowered to the rows, so
// that groups never overlap nor leave the tensors (a running maximum over the clamped offsets).
__device__ inline void bounds(const int32_t* offsets, int64_t step, int64_t rows, int32_t g,
                              int64_t* start, int64_t* end) {
  int64_t running = 0;
  for (int32_t i = 0; i <= g; ++i) {
    if (i == g) *start = running;
    int64_t e = offsets[i * step];
    e = e < 0 ? 0 : (e > rows ? rows : e);
    running = e > running ? e : running;
  }
  *end = running;
}

template <class T>
__device__ inline T* at(T* base, const Expand::Step& step, int64_t start, int32_t g) {
  return base + start * step.row + g * step.group;
}

}  // namespace tc_grouped_stacked

extern "C" __global__ void tc_grouped_expand(tc_grouped_stacked::Expand::Params p) {
  using tc_grouped_stacked::at;
  const int32_t g =
      int32_t(blockIdx.x) * tc_grouped_stacked::Expand::kThreads + int32_t(threadIdx.x);
  if (g >= p.groups) return;
  int64_t start = 0, end = 0;
  tc_grouped_stacked::bounds(p.offsets, p.offsets_step, p.rows, g, &start, &end);
  const int32_t rows = int32_t(end > start ? end - start : 0);
  p.sizes[3 * g] = p.rows_are_k ? (rows > 0 ? p.m : 0) : rows;
  p.sizes[3 * g + 1] = p.n;
  p.sizes[3 * g + 2] = p.rows_are_k ? rows : p.k;
  p.A_array[g] = at(p.A, p.A_step, start, g);
  p.B_array[g] = at(p.B, p.B_step, start, g);
  p.D_array[g] = at(p.D, p.D_step, start, g);
  p.C_array[g] = p.C != nullptr ? at(p.C, p.C_step, start, g) : p.D_array[g];
  p.lda_array[g] = p.lda;
  p.ldb_array[g] = p.ldb;
  p.ldc_array[g] = p.C != nullptr ? p.ldc : p.ldd;
  p.ldd_array[g] = p.ldd;
  if (p.bias_array != nullptr) p.bias_array[g] = p.bias + g * p.bias_group_bytes;
}
extern "C" __device__ unsigned long long tc_grouped_expand_layout[2] = {
    sizeof(tc_grouped_stacked::Expand::Params), alignof(tc_grouped_stacked::Expand::Params)};

extern "C" __global__ void tc_grouped_zero_empty(tc_grouped_stacked::ZeroEmpty::Params p) {
  const int64_t g = int64_t(blockIdx.x);
  if (p.sizes[3 * g + 2] > 0) return;
  char* d = p.D + g * p.D_group_bytes;
  const bool wide =
      (uint64_t(reinterpret_cast<uintptr_t>(d)) | uint64_t(p.row_bytes) | uint64_t(p.ldd_bytes)) %
          16 ==
      0;
  const int64_t unit = wide ? 16 : 1, per_row = p.row_bytes / unit;
  const int64_t count = per_row * p.m;
  const int64_t stride = int64_t(gridDim.y) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.y) * blockDim.x + threadIdx.x; i < count; i += stride) {
    char* to = d + (i / per_row) * p.ldd_bytes + (i % per_row) * unit;
    if (wide) {
      *reinterpret_cast<uint4*>(to) = make_uint4(0, 0, 0, 0);
    } else {
      *to = 0;
    }
  }
}
extern "C" __device__ unsigned long long tc_grouped_zero_empty_layout[2] = {
    sizeof(tc_grouped_stacked::ZeroEmpty::Params), alignof(tc_grouped_stacked::ZeroEmpty::Params)};

#else  // host half

#include <string>

#include "tilecraft/jit/device_image.cuh"

namespace tc_grouped_stacked {

inline size_t round_up(size_t bytes) { return (bytes + 255) / 256 * 256; }

// The arrays' bytes at the workspace's front (0 for the per-problem form).
inline size_t arrays_bytes(const tc_grouped_args& a) {
  if (a.stacked_offsets == nullptr) return 0;
  const size_t g = size_t(a.problem_count);
  const size_t pointers = (a.stacked_bias != nullptr ? 5 : 4) * g * sizeof(void*);
  return round_up(3 * g * sizeof(int32_t)) + round_up(pointers) + round_up(4 * g * sizeof(int64_t));
}

// "" when the stacked fields can be expanded (or the form is the per-problem one).
inline std::string check(const tc_grouped_args& a) {
  if (a.stacked_offsets == nullptr) return {};
  if (a.problem_count < 1) {
    return "problem_count: expected at least 1 group, got " + std::to_string(a.problem_count);
  }
  if (a.stacked_A == nullptr || a.stacked_B == nullptr || a.stacked_D == nullptr) {
    return "stacked_A, stacked_B and stacked_D must all be device pointers";
  }
  if (a.stacked_rows < 0 || a.stacked_rows > INT32_MAX || a.stacked_m < 0 || a.stacked_n < 0 ||
      a.stacked_k < 0) {
    return "stacked_rows, stacked_m, stacked_n, stacked_k: expected extents within the 32-bit "
           "index, got " +
           std::to_string(a.stacked_rows) + ", " + std::to_string(a.stacked_m) + ", " +
           std::to_string(a.stacked_n) + ", " + std::to_string(a.stacked_k);
  }
  if (a.stacked_rows_are_k != 0 && a.stacked_rows_are_k != 1) {
    return "stacked_rows_are_k: expected 0 or 1, got " + std::to_string(a.stacked_rows_are_k);
  }
  if (a.stacked_rows_are_k && (a.stacked_C != nullptr || a.stacked_bias != nullptr)) {
    return "stacked_C, stacked_bias: expected none when the stacked rows are k (the weight "
           "gradient form)";
  }
  if (a.problem_sizes != nullptr || a.A_array != nullptr || a.bias_array != nullptr) {
    return "problem_sizes and the arrays: expected none beside stacked_offsets (the module "
           "fills them)";
  }
  return {};
}

// Launches `kernel` on p; "" or the failure, named by `what`.
template <class Op>
std::string launch(const char* name, const char* what, typename Op::Params p, dim3 grid,
                   cudaStream_t stream) {
  const tc_image::Kernel& kernel = tc_image::kernel<Op>(name);
  if (kernel.handle == nullptr) return kernel.error;
  void* params[] = {&p};
  cudaError_t e =
      tc_image::launch(kernel, grid, dim3(Op::kThreads), dim3(1, 1, 1), 0, stream, params, false);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return std::string(what) + ": " + tc_image::cuda_text(e);
  }
  return {};
}

// Lays the arrays at the front of *workspace, launches their expansion on `stream` (and, when the
// rows are k, the zeroing of empty groups' D, of d_element_bytes elements), and gives in
// *expanded the per-problem form that reads them; *workspace moves past them. "" or the failure.
inline std::string expand(const tc_grouped_args& a, void** workspace, cudaStream_t stream,
                          tc_grouped_args* expanded, size_t d_element_bytes) {
  *expanded = a;
  if (a.stacked_offsets == nullptr) return {};
  if (*workspace == nullptr)
    return "workspace: the stacked form needs one for its arrays; got none";
  const size_t g = size_t(a.problem_count);
  char* at = static_cast<char*>(*workspace);
  Expand::Params p{};
  p.sizes = reinterpret_cast<int32_t*>(at);
  char* pointers = at + round_up(3 * g * sizeof(int32_t));
  p.A_array = reinterpret_cast<const void**>(pointers);
  p.B_array = p.A_array + g;
  p.C_array = p.B_array + g;
  p.D_array = const_cast<void**>(p.C_array + g);
  const size_t pointer_count = (a.stacked_bias != nullptr ? 5 : 4) * g;
  p.bias_array = a.stacked_bias != nullptr ? const_cast<const void**>(p.D_array + g) : nullptr;
  auto* lds = reinterpret_cast<int64_t*>(pointers + round_up(pointer_count * sizeof(void*)));
  p.lda_array = lds;
  p.ldb_array = lds + g;
  p.ldc_array = lds + 2 * g;
  p.ldd_array = lds + 3 * g;
  p.offsets = a.stacked_offsets;
  p.offsets_step = a.stacked_offsets_step;
  p.rows = a.stacked_rows;
  p.rows_are_k = a.stacked_rows_are_k;
  p.groups = a.problem_count;
  p.m = a.stacked_m;
  p.n = a.stacked_n;
  p.k = a.stacked_k;
  p.A = static_cast<const char*>(a.stacked_A);
  p.B = static_cast<const char*>(a.stacked_B);
  p.C = static_cast<const char*>(a.stacked_C);
  p.D = static_cast<char*>(a.stacked_D);
  p.bias = static_cast<const char*>(a.stacked_bias);
  p.A_step = {a.stacked_A_row_bytes, a.stacked_A_group_bytes};
  p.B_step = {a.stacked_B_row_bytes, a.stacked_B_group_bytes};
  p.C_step = {a.stacked_C_row_bytes, a.stacked_C_group_bytes};
  p.D_step = {a.stacked_D_row_bytes, a.stacked_D_group_bytes};
  p.bias_group_bytes = a.stacked_bias_group_bytes;
  p.lda = a.stacked_lda;
  p.ldb = a.stacked_ldb;
  p.ldc = a.stacked_ldc;
  p.ldd = a.stacked_ldd;
  const dim3 grid(unsigned((g + Expand::kThreads - 1) / Expand::kThreads));
  std::string failure =
      launch<Expand>("tc_grouped_expand", "expanding the stacked problems", p, grid, stream);
  if (failure.empty() && a.stacked_rows_are_k && a.stacked_m > 0 && a.stacked_n > 0) {
    ZeroEmpty::Params z{};
    z.sizes = p.sizes;
    z.m = a.stacked_m;
    z.D = p.D;
    z.D_group_bytes = a.stacked_D_group_bytes;
    z.row_bytes = int64_t(d_element_bytes) * a.stacked_n;
    z.ldd_bytes = int64_t(d_element_bytes) * a.stacked_ldd;
    failure = launch<ZeroEmpty>("tc_grouped_zero_empty", "zeroing the groups with no rows", z,
                                dim3(unsigned(g), ZeroEmpty::kBlocksPerGroup), stream);
  }
  if (!failure.empty()) return failure;
  expanded->problem_sizes = p.sizes;
  expanded->host_problem_sizes = nullptr;
  expanded->A_array = p.A_array;
  expanded->B_array = p.B_array;
  expanded->C_array = p.C_array;
  expanded->D_array = p.D_array;
  expanded->lda_array = p.lda_array;
  expanded->ldb_array = p.ldb_array;
  expanded->ldc_array = p.ldc_array;
  expanded->ldd_array = p.ldd_array;
  expanded->bias_array = p.bias_array;
  expanded->max_k = a.stacked_rows_are_k ? int32_t(a.stacked_rows) : a.stacked_k;
  expanded->stacked_offsets = nullptr;
  *workspace = at + arrays_bytes(a);
  return {};
}

}  // namespace tc_grouped_stacked

#endif  // TILECRAFT_DEVICE_HALF
