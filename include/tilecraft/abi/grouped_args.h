/* The grouped GEMM family's argument block: problem_count problems of their own sizes.
 * Bump TC_GROUPED_ARGS_VERSION with any change: it re-keys grouped modules only. */
#ifndef TILECRAFT_ABI_GROUPED_ARGS_H_
#define TILECRAFT_ABI_GROUPED_ARGS_H_

#include "tilecraft/abi/module_abi.h"

#define TC_GROUPED_ARGS_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* Problem g is problem_sizes[3g .. 3g+2] = (m, n, k) (device memory), its operands
 * A_array[g] ... D_array[g] with leading dimensions lda_array[g] ... ldd_array[g] (device arrays
 * of problem_count entries). host_problem_sizes holds the same sizes in host memory: kernels that
 * schedule on the host need it; others check alignments with it when given. max_k: the largest k
 * of the problems (0: unknown). bias_array: kernels that add a bias take a device array of
 * problem_count pointers, each to that problem's N values. Per-tensor scales are folded into the
 * header's alpha and beta by the caller. */
typedef struct tc_grouped_args {
  tc_args_header header; /* family TC_FAMILY_GROUPED */
  int32_t problem_count;
  const int32_t* problem_sizes;
  const int32_t* host_problem_sizes;
  const void* const* A_array;
  const void* const* B_array;
  const void* const* C_array;
  void* const* D_array;
  const int64_t* lda_array;
  const int64_t* ldb_array;
  const int64_t* ldc_array;
  const int64_t* ldd_array;
  int32_t max_k;
  const void* const* bias_array;
} tc_grouped_args;

/* The grouped block behind a header, or null when the header is another family's or version's. */
static inline const tc_grouped_args* tc_grouped_args_of(const tc_args_header* h) {
  return h != NULL && h->family == TC_FAMILY_GROUPED && h->family_version == TC_GROUPED_ARGS_VERSION
             ? (const tc_grouped_args*)h
             : NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* TILECRAFT_ABI_GROUPED_ARGS_H_ */
