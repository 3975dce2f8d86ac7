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
  struct Params {
    const int32_t* offsets;
    int64_t offsets_step, rows;
    int32_t groups, n, k;
    const char* A;
    const char* B;
    const char* C;
    char* D;
    const char* bias;
    int64_t A_row_bytes, B_group_bytes, C_row_bytes, D_row_bytes, bias_group_bytes;
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

}  // namespace tc_grouped_stacked

#if defined(TILECRAFT_DEVICE_HALF)

namespace tc_grouped_stacked {

// Group g's end row: offsets[g] raised to the previous group's end and lowered to the rows, so
// that groups never overlap nor leave the tensors (a running maximum over the clamped offsets).
__device__ inline void bounds(const Expand::Params& p, int32_t g, int64_t* start, int64_t* end) {
  int64_t running = 0;
  for (int32_t i = 0; i <= g; ++i) {
    if (i == g) *start = running;
    int64_t e = p.offsets[i * p.offsets_step];
    e = e < 0 ? 0 : (e > p.rows ? p.rows : e);
    running = e > running ? e : running;
  }
  *end = running;
}

}  // namespace tc_grouped_stacked

extern "C" __global__ void tc_grouped_expand(tc_grouped_stacked::Expand::Params p) {
  const int32_t g =
      int32_t(blockIdx.x) * tc_grouped_stacked::Expand::kThreads + int32_t(threadIdx.x);
  if (g >= p.groups) return;
  int64_t start = 0, end = 0;
  tc_grouped_stacked::bounds(p, g, &start, &end);
  const int64_t rows = end > start ? end - start : 0;
  p.sizes[3 * g] = int32_t(rows);
  p.sizes[3 * g + 1] = p.n;
  p.sizes[3 * g + 2] = p.k;
  p.A_array[g] = p.A + start * p.A_row_bytes;
  p.B_array[g] = p.B + g * p.B_group_bytes;
  p.D_array[g] = p.D + start * p.D_row_bytes;
  p.C_array[g] = p.C != nullptr ? p.C + start * p.C_row_bytes : p.D + start * p.D_row_bytes;
  p.lda_array[g] = p.lda;
  p.ldb_array[g] = p.ldb;
  p.ldc_array[g] = p.C != nullptr ? p.ldc : p.ldd;
  p.ldd_array[g] = p.ldd;
  if (p.bias_array != nullptr) p.bias_array[g] = p.bias + g * p.bias_group_bytes;
}
extern "C" __device__ unsigned long long tc_grouped_expand_layout[2] = {
    sizeof(tc_grouped_stacked::Expand::Params), alignof(tc_grouped_stacked::Expand::Params)};

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
  if (a.stacked_rows < 0 || a.stacked_rows > INT32_MAX || a.stacked_n < 0 || a.stacked_k < 0) {
    return "stacked_rows, stacked_n, stacked_k: expected extents within the 32-bit index, got " +
           std::to_string(a.stacked_rows) + ", " + std::to_string(a.stacked_n) + ", " +
           std::to_string(a.stacked_k);
  }
  if (a.problem_sizes != nullptr || a.A_array != nullptr || a.bias_array != nullptr) {
    return "problem_sizes and the arrays: expected none beside stacked_offsets (the module "
           "fills them)";
  }
  return {};
}

// Lays the arrays at the front of *workspace, launches their expansion on `stream`, and gives in
// *expanded the per-problem form that reads them; *workspace moves past them. "" or the failure.
inline std::string expand(const tc_grouped_args& a, void** workspace, cudaStream_t stream,
                          tc_grouped_args* expanded) {
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
  p.groups = a.problem_count;
  p.n = a.stacked_n;
  p.k = a.stacked_k;
  p.A = static_cast<const char*>(a.stacked_A);
  p.B = static_cast<const char*>(a.stacked_B);
  p.C = static_cast<const char*>(a.stacked_C);
  p.D = static_cast<char*>(a.stacked_D);
  p.bias = static_cast<const char*>(a.stacked_bias);
  p.A_row_bytes = a.stacked_A_row_bytes;
  p.B_group_bytes = a.stacked_B_group_bytes;
  p.C_row_bytes = a.stacked_C_row_bytes;
  p.D_row_bytes = a.stacked_D_row_bytes;
  p.bias_group_bytes = a.stacked_bias_group_bytes;
  p.lda = a.stacked_lda;
  p.ldb = a.stacked_ldb;
  p.ldc = a.stacked_ldc;
  p.ldd = a.stacked_ldd;
  const tc_image::Kernel& kernel = tc_image::kernel<Expand>("tc_grouped_expand");
  if (kernel.handle == nullptr) return kernel.error;
  void* params[] = {&p};
  const dim3 grid(unsigned((g + Expand::kThreads - 1) / Expand::kThreads));
  cudaError_t e = tc_image::launch(kernel, grid, dim3(Expand::kThreads), dim3(1, 1, 1), 0, stream,
                                   params, false);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return "expanding the stacked problems: " + tc_image::cuda_text(e);
  }
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
  expanded->max_k = a.stacked_k;
  expanded->stacked_offsets = nullptr;
  *workspace = at + arrays_bytes(a);
  return {};
}

}  // namespace tc_grouped_stacked

#endif  // TILECRAFT_DEVICE_HALF
