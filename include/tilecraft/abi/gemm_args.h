/* The GEMM family's argument block (plain, split-K, batched and array GEMMs).
 * Bump TC_GEMM_ARGS_VERSION with any change: it re-keys GEMM modules only. */
#ifndef TILECRAFT_ABI_GEMM_ARGS_H_
#define TILECRAFT_ABI_GEMM_ARGS_H_

#include "tilecraft/abi/module_abi.h"

#define TC_GEMM_ARGS_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

enum tc_gemm_mode {
  TC_GEMM_MODE_GEMM = 0,                  /* batch_count > 1 means serial split-K */
  TC_GEMM_MODE_GEMM_SPLIT_K_PARALLEL = 1, /* batch_count = split-K slices; needs a workspace */
  TC_GEMM_MODE_BATCHED = 2,               /* strided batches */
  TC_GEMM_MODE_ARRAY = 3                  /* arrays of device pointers */
};

typedef struct tc_gemm_args {
  tc_args_header header; /* family TC_FAMILY_GEMM */
  int32_t mode;          /* enum tc_gemm_mode */
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
  /* SM90 epilogue fusions. Unused fields are zero. */
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
} tc_gemm_args;

/* The GEMM block behind a header, or null when the header is another family's or version's. */
static inline const tc_gemm_args* tc_gemm_args_of(const tc_args_header* h) {
  return h != NULL && h->family == TC_FAMILY_GEMM && h->family_version == TC_GEMM_ARGS_VERSION
             ? (const tc_gemm_args*)h
             : NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* TILECRAFT_ABI_GEMM_ARGS_H_ */
