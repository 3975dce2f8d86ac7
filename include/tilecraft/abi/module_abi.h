/* The one C ABI every generated module exports (DESIGN, Decided 2).
 *
 * A module is a shared object with one exported function, tilecraft_module_table(), returning a
 * table of kernel entries. The runtime talks to kernels only through these entries and the plain
 * argument struct below; CUTLASS's Params never cross this line. Every generated source includes
 * this header (through tilecraft/jit/module_prelude.cuh) and every cache key holds its content:
 * bump TILECRAFT_ABI_VERSION with any change to a struct.
 */
#ifndef TILECRAFT_MODULE_ABI_H_
#define TILECRAFT_MODULE_ABI_H_

#include <stddef.h>
#include <stdint.h>

#define TILECRAFT_ABI_VERSION 8

#ifdef __cplusplus
extern "C" {
#endif

enum tc_gemm_mode {
  TC_GEMM_MODE_GEMM = 0,                  /* batch_count > 1 means serial split-K */
  TC_GEMM_MODE_GEMM_SPLIT_K_PARALLEL = 1, /* batch_count = split-K slices; needs a workspace */
  TC_GEMM_MODE_BATCHED = 2,               /* strided batches */
  TC_GEMM_MODE_ARRAY = 3,                 /* arrays of device pointers */
  TC_GEMM_MODE_GROUPED = 4                /* problem_count problems of their own sizes (v4) */
};

enum tc_status {
  TC_OK = 0,
  TC_ERROR_INVALID_ARGUMENT = 1, /* can_implement said no; the text says why */
  TC_ERROR_CUDA = 2,             /* a CUDA call or the launch failed */
  TC_ERROR_INTERNAL = 3
};

/* Since version 5: a 2-D convolution, computed by a kernel of a convolution description as an
 * implicit GEMM. Tensors are packed: activation x is N x H x W x C, filter w is K x R x S x
 * (C / groups), output y is N x P x Q x K, each in the description's layout (channels-last, or
 * the int8 interleaved ones). The GEMM operands are fprop: A = x, B = w, C/D = y; dgrad: A = dy,
 * B = w, C/D = dx; wgrad: A = dy, B = x, C/D = dw. pad_h and pad_w pad the top and left,
 * pad_bottom and pad_right the bottom and right. */
typedef struct tc_conv_problem {
  int32_t kind; /* 0 fprop, 1 dgrad, 2 wgrad: the entry's own */
  int32_t n, h, w, c;
  int32_t k, r, s;
  int32_t p, q;
  int32_t pad_h, pad_w;
  int32_t stride_h, stride_w;
  int32_t dilation_h, dilation_w;
  int32_t mode; /* 0 cross-correlation, 1 convolution (the filter flipped) */
  int32_t split_k_slices;
  int32_t groups;
  /* 1: C holds one value per output channel, broadcast over the others (a bias); packed
   * like D otherwise. */
  int32_t c_per_channel;
  /* Since version 6: the bottom and right padding (SM90 kernels describe the problem by its
   * padding on both sides; P and Q follow from them). */
  int32_t pad_bottom, pad_right;
  /* Since version 7: 3-D convolutions (spatial_dims 3; 2 or 0 for 2-D ones): the depth d of x,
   * t of the filter and z of y, the front and back padding, the depth stride and dilation. */
  int32_t spatial_dims;
  int32_t d, t, z;
  int32_t pad_front, pad_back;
  int32_t stride_d, dilation_d;
} tc_conv_problem;

/* Since version 8: one operand of a custom epilogue (an epilogue graph): an input tensor, an
 * extra stored output or a reduction's output, in device memory. Full (M x N) tensors are laid
 * out like D with leading dimension ld; vectors (M or N values) and reduction outputs are packed.
 * batch_stride: elements from one batch's operand to the next (0: one for every batch). */
typedef struct tc_epilogue_tensor {
  void* data;
  int64_t ld;
  int64_t batch_stride;
} tc_epilogue_tensor;

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
  /* Since version 2: SM90 epilogue fusions. Unused fields are zero. */
  const void* bias;          /* per-row (M) or per-column (N) vector, element_bias */
  int64_t batch_stride_bias; /* 0: one vector for all batches */
  void* aux;                 /* the pre-activation value Z, laid out like D */
  int64_t ldaux, batch_stride_aux;
  /* Per-tensor scales: device float scalars, or null to use the values. */
  const float* scale_a_ptr;
  const float* scale_b_ptr;
  const float* scale_c_ptr;
  const float* scale_d_ptr;
  double scale_a, scale_b, scale_c, scale_d;
  /* Stream-K / split-K partial sums may be reduced in any order (faster, not bitwise
   * reproducible). 0: in a fixed order. */
  int32_t nondeterministic_reduction;
  /* Since version 3: 1 launches an SM90 kernel with programmatic dependent launch, so that its
   * prologue overlaps the tail of the kernel before it on the stream; the kernel still reads
   * and writes global memory only after that kernel has finished. SM80 kernels ignore it. */
  int32_t launch_with_pdl;
  /* Since version 4: grouped GEMM (mode TC_GEMM_MODE_GROUPED; m, n, k, batch_count unused).
   * Problem g is problem_sizes[3g .. 3g+2] = (m, n, k) (device memory), its operands
   * A_array[g] ... D_array[g] with leading dimensions lda_array[g] ... ldd_array[g] (device
   * arrays of problem_count entries). host_problem_sizes holds the same sizes in host memory:
   * kernels that schedule on the host need it; others check alignments with it when given.
   * max_k: the largest k of the problems (0: unknown). bias_array: kernels that add a bias
   * take a device array of problem_count pointers, each to that problem's N values. */
  int32_t problem_count;
  const int32_t* problem_sizes;
  const int32_t* host_problem_sizes;
  const int64_t* lda_array;
  const int64_t* ldb_array;
  const int64_t* ldc_array;
  const int64_t* ldd_array;
  int32_t max_k;
  const void* const* bias_array;
  /* Since version 5: convolutions (entries of a convolution description; m, n, k, batch_count
   * unused). Mode TC_GEMM_MODE_GEMM runs it (serial split-K when conv.split_k_slices > 1), mode
   * TC_GEMM_MODE_GEMM_SPLIT_K_PARALLEL the parallel split-K companion entry. */
  tc_conv_problem conv;
  /* Since version 8: the operands of a custom epilogue (host arrays, read when the kernel is
   * launched): its input tensors and outputs other than D in the graph's node order, and its
   * runtime scalars in node order. Kernels without one take none. */
  int32_t num_epilogue_tensors;
  const tc_epilogue_tensor* epilogue_tensors;
  int32_t num_epilogue_scalars;
  const double* epilogue_scalars;
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
