// The host code of a library written by `tilecraft export` (src/export): which exported kernel
// runs a call, the checks of the caller's arguments, and the launch through the module ABI. The
// generated api.cpp of an export includes it after the library's own header, lists its kernels
// (Entry) and problems (Problem) and forwards the public calls to run() and friends below.
//
// Plain C++17 and the CUDA runtime: no CUTLASS, no tilecraft library. Every failure is a Result
// whose message names the argument, what was expected and what was given; nothing launches on
// bad input.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "tilecraft/abi/gemm_args.h"

namespace tc_export {

// The exported header's enum values (generated with the same numbers).
inline const char* type_name(int type) {
  static const char* const names[] = {"f64", "f32", "f16",  "bf16", "s8",
                                      "u8",  "s32", "e4m3", "e5m2"};
  return type >= 0 && type < 9 ? names[type] : "an unknown type";
}
inline int type_bytes(int type) {
  static const int bytes[] = {8, 4, 2, 2, 1, 1, 4, 1, 1};
  return type >= 0 && type < 9 ? bytes[type] : 0;
}
inline const char* layout_name(int layout) {
  return layout == 0 ? "row-major" : layout == 1 ? "column-major" : "an unknown layout";
}
inline const char* activation_name(int activation) {
  static const char* const names[] = {"identity", "relu",      "leaky_relu", "tanh",      "sigmoid",
                                      "silu",     "hardswish", "gelu",       "gelu_tanh", "clamp"};
  return activation >= 0 && activation < 10 ? names[activation] : "an unknown activation";
}

// One exported kernel: entry `index` of the module table `table` returns.
struct Entry {
  const tc_module_table* (*table)(void);
  uint32_t index;
  const char* kernel;
  int a, b, d;                       // tensor types (the header's DataType values)
  int layout_a, layout_b, layout_d;  // 0 row-major, 1 column-major
  int activation;                    // the header's Activation value
  int bias;                          // 1: adds a bias of N values (d's type) to every row
  int split_k_slices;
  int split_k_parallel;
};

// One problem the export was asked for, and the entry chosen for it.
struct Problem {
  int64_t m, n, k, batch;
  int a, b, d, layout_a, layout_b, layout_d, activation, bias;
  int entry;
  const char* label;  // "bf16 4096x4096x4096 TN -> <kernel> (how it was chosen)"
};

struct Library {
  const char* name;
  const Entry* entries;
  int num_entries;
  const Problem* problems;
  int num_problems;
};

struct Result {
  bool ok = true;
  std::string message;
};

inline Result failed(std::string message) { return {false, std::move(message)}; }

inline std::string str(int64_t v) { return std::to_string(v); }

template <class Gemm>
std::string shape_text(const Gemm& g) {
  std::string text = std::string(type_name(static_cast<int>(g.a_type))) + "x" +
                     type_name(static_cast<int>(g.b_type)) + "->" +
                     type_name(static_cast<int>(g.d_type)) + " ";
  if (g.batch != 1) text += str(g.batch) + "x";
  text += str(g.m) + "x" + str(g.n) + "x" + str(g.k) + " (A " +
          layout_name(static_cast<int>(g.a_layout)) + ", B " +
          layout_name(static_cast<int>(g.b_layout)) + ", D " +
          layout_name(static_cast<int>(g.d_layout)) + ", activation " +
          activation_name(static_cast<int>(g.activation)) +
          (g.bias != nullptr ? ", with bias)" : ", no bias)");
  return text;
}

// The smallest leading dimension of a rows x cols matrix in `layout`.
inline int64_t least_ld(int layout, int64_t rows, int64_t cols) {
  return layout == 0 ? cols : rows;
}

// Checks one operand: a pointer where one is needed, its leading dimension, its batch stride.
inline std::string check_operand(const char* name, const void* data, int layout, int64_t rows,
                                 int64_t cols, int64_t ld, int64_t batch_stride, int64_t batch,
                                 const char* ld_name, const char* stride_name, bool written) {
  if (data == nullptr) {
    return std::string(name) + ": expected a device pointer, got null";
  }
  if (layout != 0 && layout != 1) {
    return std::string(name) + " layout: expected RowMajor (0) or ColumnMajor (1), got " +
           str(layout);
  }
  const int64_t least = least_ld(layout, rows, cols) < 1 ? 1 : least_ld(layout, rows, cols);
  if (ld < least) {
    return std::string(ld_name) + ": expected at least " + str(least) + " (" +
           (layout == 0 ? "the columns" : "the rows") + " of the " + layout_name(layout) + " " +
           str(rows) + " x " + str(cols) + " " + name + "), got " + str(ld);
  }
  if (batch_stride < 0) {
    return std::string(stride_name) + ": expected a stride >= 0 (elements), got " +
           str(batch_stride);
  }
  const int64_t footprint = (layout == 0 ? rows : cols) * ld;
  if (written && batch > 1 && batch_stride < footprint) {
    return std::string(stride_name) + ": expected at least " + str(footprint) + " (one " +
           str(rows) + " x " + str(cols) + " " + name + " with leading dimension " + str(ld) +
           ", so that batches do not overlap), got " + str(batch_stride);
  }
  return "";
}

// Everything that can be told without a kernel: extents, enums, pointers, leading dimensions.
template <class Gemm>
std::string check_call(const Gemm& g) {
  const struct {
    const char* name;
    int64_t value;
  } extents[] = {{"m", g.m}, {"n", g.n}, {"k", g.k}, {"batch", g.batch}};
  for (const auto& e : extents) {
    const int64_t value = e.value;  // (e.value < 1 reads as a template to g++ in a template)
    if (value < 1 || value > INT32_MAX) {
      return std::string(e.name) + ": expected an extent from 1 to 2147483647, got " + str(value);
    }
  }
  const struct {
    const char* name;
    int value;
  } types[] = {{"a_type", static_cast<int>(g.a_type)},
               {"b_type", static_cast<int>(g.b_type)},
               {"d_type", static_cast<int>(g.d_type)}};
  for (const auto& t : types) {
    if (type_bytes(t.value) == 0) {
      return std::string(t.name) + ": expected a DataType, got " + str(t.value);
    }
  }
  const int activation = static_cast<int>(g.activation);
  if (activation < 0 || activation > 9) {
    return "activation: expected an Activation, got " + str(activation);
  }
  std::string why = check_operand("A", g.A, static_cast<int>(g.a_layout), g.m, g.k, g.lda,
                                  g.batch_stride_A, g.batch, "lda", "batch_stride_A", false);
  if (why.empty()) {
    why = check_operand("B", g.B, static_cast<int>(g.b_layout), g.k, g.n, g.ldb, g.batch_stride_B,
                        g.batch, "ldb", "batch_stride_B", false);
  }
  if (why.empty()) {
    why = check_operand("D", g.D, static_cast<int>(g.d_layout), g.m, g.n, g.ldd, g.batch_stride_D,
                        g.batch, "ldd", "batch_stride_D", true);
  }
  if (!why.empty()) return why;
  if (g.C == nullptr && g.beta != 0.0) {
    return "C: expected a device pointer since beta is " + std::to_string(g.beta) +
           " (or beta 0), got null";
  }
  if (g.C != nullptr) {
    why = check_operand("C", g.C, static_cast<int>(g.d_layout), g.m, g.n, g.ldc, g.batch_stride_C,
                        g.batch, "ldc", "batch_stride_C", false);
    if (!why.empty()) return why;
  }
  if (g.batch_stride_bias < 0) {
    return "batch_stride_bias: expected a stride >= 0 (elements), got " + str(g.batch_stride_bias);
  }
  if (g.workspace == nullptr && g.workspace_bytes != 0) {
    return "workspace: expected a device pointer since workspace_bytes is " +
           std::to_string(g.workspace_bytes) + ", got null";
  }
  return "";
}

template <class Gemm>
bool same_kind(const Gemm& g, int a, int b, int d, int la, int lb, int ld, int activation,
               int bias) {
  return static_cast<int>(g.a_type) == a && static_cast<int>(g.b_type) == b &&
         static_cast<int>(g.d_type) == d && static_cast<int>(g.a_layout) == la &&
         static_cast<int>(g.b_layout) == lb && static_cast<int>(g.d_layout) == ld &&
         static_cast<int>(g.activation) == activation && (g.bias != nullptr) == (bias != 0);
}

// The ABI block for `entry` (as tilecraft's runtime fills it for a strided GEMM).
template <class Gemm>
tc_gemm_args abi_args(const Gemm& g, const Entry& entry) {
  tc_gemm_args a;
  std::memset(&a, 0, sizeof a);
  a.header.family = TC_FAMILY_GEMM;
  a.header.family_version = TC_GEMM_ARGS_VERSION;
  a.header.alpha = g.alpha;
  a.header.beta = g.beta;
  a.header.launch_with_pdl = 1;
  if (g.batch > 1) {
    a.mode = TC_GEMM_MODE_BATCHED;
    a.batch_count = static_cast<int32_t>(g.batch);
  } else {
    a.mode = entry.split_k_slices > 1 && entry.split_k_parallel ? TC_GEMM_MODE_GEMM_SPLIT_K_PARALLEL
                                                                : TC_GEMM_MODE_GEMM;
    a.batch_count = entry.split_k_slices;
  }
  a.m = static_cast<int32_t>(g.m);
  a.n = static_cast<int32_t>(g.n);
  a.k = static_cast<int32_t>(g.k);
  a.A = g.A;
  a.B = g.B;
  a.D = g.D;
  a.C = g.C != nullptr ? g.C : g.D;
  a.lda = g.lda;
  a.ldb = g.ldb;
  a.ldd = g.ldd;
  a.ldc = g.C != nullptr ? g.ldc : g.ldd;
  a.batch_stride_A = g.batch_stride_A;
  a.batch_stride_B = g.batch_stride_B;
  a.batch_stride_D = g.batch_stride_D;
  a.batch_stride_C = g.C != nullptr ? g.batch_stride_C : g.batch_stride_D;
  a.bias = g.bias;
  a.batch_stride_bias = g.batch_stride_bias;
  a.scale_a = a.scale_b = a.scale_c = a.scale_d = 1.0;
  return a;
}

inline const tc_kernel_entry* kernel_entry(const Entry& entry, std::string* why) {
  const tc_module_table* table = entry.table();
  if (table == nullptr || table->abi_version != TILECRAFT_ABI_VERSION ||
      entry.index >= table->num_entries) {
    *why = std::string("internal: the module table of ") + entry.kernel + " is not as exported";
    return nullptr;
  }
  return &table->entries[entry.index];
}

// Which entry runs `g`: the one exported for exactly this problem, else the first of the same
// types, layouts and epilogue whose can_implement takes it. -1 with the reason when none does.
template <class Gemm>
int choose(const Library& lib, const Gemm& g, tc_gemm_args* args, bool* tuned_for_it,
           std::string* why) {
  *why = check_call(g);
  if (!why->empty()) return -1;
  char error[1024];
  std::string refusals;
  auto accepts = [&](int e) {
    *args = abi_args(g, lib.entries[e]);
    std::string internal;
    const tc_kernel_entry* k = kernel_entry(lib.entries[e], &internal);
    if (k == nullptr) {
      refusals += "; " + internal;
      return false;
    }
    error[0] = '\0';
    if (k->can_implement(&args->header, error, sizeof error) == TC_OK) return true;
    refusals += std::string("; ") + lib.entries[e].kernel + " cannot: " + error;
    return false;
  };
  for (int i = 0; i < lib.num_problems; ++i) {
    const Problem& p = lib.problems[i];
    if (p.m == g.m && p.n == g.n && p.k == g.k && p.batch == g.batch &&
        same_kind(g, p.a, p.b, p.d, p.layout_a, p.layout_b, p.layout_d, p.activation, p.bias) &&
        accepts(p.entry)) {
      *tuned_for_it = true;
      return p.entry;
    }
  }
  for (int e = 0; e < lib.num_entries; ++e) {
    const Entry& x = lib.entries[e];
    if (same_kind(g, x.a, x.b, x.d, x.layout_a, x.layout_b, x.layout_d, x.activation, x.bias) &&
        accepts(e)) {
      *tuned_for_it = false;
      return e;
    }
  }
  std::string expected;
  for (int i = 0; i < lib.num_problems; ++i) {
    expected += std::string(i ? "; " : "") + lib.problems[i].label;
  }
  *why = std::string("problem: expected one that an exported kernel of ") + lib.name +
         " runs (exported: " + expected + "), got " + shape_text(g) +
         (refusals.empty() ? std::string(": no exported kernel has these types, layouts and "
                                         "epilogue")
                           : ":" + refusals.substr(1));
  return -1;
}

template <class Gemm>
Result supports(const Library& lib, const Gemm& g) {
  tc_gemm_args args;
  bool tuned = false;
  std::string why;
  const int e = choose(lib, g, &args, &tuned, &why);
  if (e < 0) return failed(why);
  return {true, std::string(lib.entries[e].kernel) +
                    (tuned ? " (exported for this problem)"
                           : " (exported for another problem of these types and layouts; not "
                             "tuned for this one)")};
}

template <class Gemm>
Result workspace_size(const Library& lib, const Gemm& g, size_t* bytes) {
  if (bytes == nullptr) return failed("bytes: expected a pointer to a size_t, got null");
  tc_gemm_args args;
  bool tuned = false;
  std::string why;
  const int e = choose(lib, g, &args, &tuned, &why);
  if (e < 0) return failed(why);
  const tc_kernel_entry* k = kernel_entry(lib.entries[e], &why);
  if (k == nullptr) return failed(why);
  *bytes = k->workspace_size(&args.header);
  return {};
}

inline std::string cuda_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// Runs `g` on `stream` (a cudaStream_t). A workspace the kernel needs comes from the caller
// (g.workspace) or is allocated and freed on the stream (cudaMallocAsync, cudaFreeAsync).
template <class Gemm>
Result run(const Library& lib, const Gemm& g, void* stream) {
  tc_gemm_args args;
  bool tuned = false;
  std::string why;
  const int e = choose(lib, g, &args, &tuned, &why);
  if (e < 0) return failed(why);
  const tc_kernel_entry* k = kernel_entry(lib.entries[e], &why);
  if (k == nullptr) return failed(why);
  const size_t needed = k->workspace_size(&args.header);
  void* workspace = g.workspace;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  bool owned = false;
  if (needed > 0 && g.workspace != nullptr && g.workspace_bytes < needed) {
    return failed("workspace_bytes: expected at least " + std::to_string(needed) + " for " +
                  lib.entries[e].kernel + ", got " + std::to_string(g.workspace_bytes));
  }
  if (needed > 0 && g.workspace == nullptr) {
    const cudaError_t a = cudaMallocAsync(&workspace, needed, s);
    if (a != cudaSuccess) {
      cudaGetLastError();
      return failed("workspace: allocating " + std::to_string(needed) +
                    " bytes on the stream for " + lib.entries[e].kernel +
                    " failed: " + cuda_text(a));
    }
    owned = true;
  }
  char error[1024];
  error[0] = '\0';
  const int32_t status = k->run(&args.header, workspace, stream, error, sizeof error);
  if (owned) cudaFreeAsync(workspace, s);
  if (status != TC_OK) {
    return failed(std::string(lib.entries[e].kernel) + ": " +
                  (status == TC_ERROR_CUDA ? "the launch failed: " : "") + error);
  }
  return {true, tuned ? ""
                      : std::string("ran ") + lib.entries[e].kernel +
                            ", which was not tuned for this problem"};
}

}  // namespace tc_export
