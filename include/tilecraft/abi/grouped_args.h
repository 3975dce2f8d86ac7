/* The grouped GEMM family's argument block: problem_count problems of their own sizes.
 * Bump TC_GROUPED_ARGS_VERSION with any change: it re-keys grouped modules only. */
#ifndef TILECRAFT_ABI_GROUPED_ARGS_H_
#define TILECRAFT_ABI_GROUPED_ARGS_H_

#include "tilecraft/abi/module_abi.h"

#define TC_GROUPED_ARGS_VERSION 3

#ifdef __cplusplus
extern "C" {
#endif

/* Problem g is problem_sizes[3g .. 3g+2] = (m, n, k) (device memory), its operands
 * A_array[g] ... D_array[g] with leading dimensions lda_array[g] ... ldd_array[g] (device arrays
 * of problem_count entries). host_problem_sizes holds the same sizes in host memory: kernels that
 * schedule on the host need it; others check alignments with it when given. max_k: the largest k
 * of the problems (0: unknown). bias_array: kernels that add a bias take a device array of
 * problem_count pointers, each to that problem's N values. Per-tensor scales are folded into the
 * header's alpha and beta by the caller.
 *
 * The stacked form (mixture of experts) with its offsets in device memory: when stacked_offsets
 * is not null, problem_sizes, host_problem_sizes and the arrays are null, and the module fills
 * the arrays itself at the front of its workspace (workspace_size counts them), on the launch's
 * stream, with no host read. Group g is stacked rows [offsets[g-1], offsets[g]) (from 0 for
 * g = 0); each end is first raised to the previous group's end and lowered to stacked_rows, so
 * groups never overlap nor leave the tensors (a decreasing offset makes its group empty). The
 * stacked rows are each problem's m (stacked_rows_are_k 0: problem g is (rows, stacked_n,
 * stacked_k)) or its k (1: (stacked_m, stacked_n, rows), the weight gradient of the first form;
 * a group with no rows is (0, stacked_n, 0), and the module writes zeros to its D: m rows of n
 * elements, ldd apart). Operand X of problem g starts at stacked_X + start_row *
 * stacked_X_row_bytes + g * stacked_X_group_bytes; ld*: each problem's leading dimension.
 * stacked_C null: no C (beta is 0); the second form takes neither C nor bias. The bias of
 * problem g: stacked_bias + g * stacked_bias_group_bytes. */
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
  const int32_t* stacked_offsets;
  int64_t stacked_offsets_step; /* elements from one offset to the next */
  int64_t stacked_rows;
  int32_t stacked_rows_are_k;
  int32_t stacked_m, stacked_n, stacked_k;
  const void* stacked_A;
  int64_t stacked_A_row_bytes, stacked_A_group_bytes, stacked_lda;
  const void* stacked_B;
  int64_t stacked_B_row_bytes, stacked_B_group_bytes, stacked_ldb;
  const void* stacked_C;
  int64_t stacked_C_row_bytes, stacked_C_group_bytes, stacked_ldc;
  void* stacked_D;
  int64_t stacked_D_row_bytes, stacked_D_group_bytes, stacked_ldd;
  const void* stacked_bias;
  int64_t stacked_bias_group_bytes;
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
