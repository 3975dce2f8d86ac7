/* The C ABI every generated module exports (DESIGN, Decided 2): the part all families share.
 *
 * A module is a shared object with one exported function, tilecraft_module_table(), returning a
 * table of kernel entries. The runtime talks to kernels only through these entries and plain
 * argument structs; CUTLASS's Params never cross this line. An entry takes its family's argument
 * block (gemm_args.h, grouped_args.h, conv_args.h), which starts with the tc_args_header below;
 * the entry checks the header's family and family_version before it reads the rest.
 *
 * Every cache key holds the content of the ABI headers its source includes: a change here
 * (bump TILECRAFT_ABI_VERSION) re-keys every module, a change to a family's block (bump that
 * family's version) only that family's.
 */
#ifndef TILECRAFT_MODULE_ABI_H_
#define TILECRAFT_MODULE_ABI_H_

#include <stddef.h>
#include <stdint.h>

#define TILECRAFT_ABI_VERSION 9

#ifdef __cplusplus
extern "C" {
#endif

enum tc_status {
  TC_OK = 0,
  TC_ERROR_INVALID_ARGUMENT = 1, /* can_implement said no; the text says why */
  TC_ERROR_CUDA = 2,             /* a CUDA call or the launch failed */
  TC_ERROR_INTERNAL = 3
};

/* Which argument block follows the header. */
enum tc_family { TC_FAMILY_GEMM = 1, TC_FAMILY_GROUPED = 2, TC_FAMILY_CONV = 3 };

/* One operand of a custom epilogue (an epilogue graph): an input tensor, an extra stored output
 * or a reduction's output, in device memory. Full (M x N) tensors are laid out like D with leading
 * dimension ld; vectors (M or N values) and reduction outputs are packed. batch_stride: elements
 * from one batch's operand to the next (0: one for every batch). */
typedef struct tc_epilogue_tensor {
  void* data;
  int64_t ld;
  int64_t batch_stride;
} tc_epilogue_tensor;

/* What every family's arguments start with: which block follows, and the epilogue and launch
 * options any family can take. Unused fields are zero. */
typedef struct tc_args_header {
  int32_t family;         /* enum tc_family */
  int32_t family_version; /* the block's version: TC_GEMM_ARGS_VERSION, ... */
  double alpha, beta;
  double activation_args[4];
  int32_t num_activation_args;
  /* Stream-K / split-K partial sums may be reduced in any order (faster, not bitwise
   * reproducible). 0: in a fixed order. */
  int32_t nondeterministic_reduction;
  /* 1 launches an SM90 kernel with programmatic dependent launch, so that its prologue overlaps
   * the tail of the kernel before it on the stream; the kernel still reads and writes global
   * memory only after that kernel has finished. SM80 kernels ignore it. */
  int32_t launch_with_pdl;
  /* The operands of a custom epilogue (host arrays, read when the kernel is launched): its input
   * tensors and outputs other than D in the graph's node order, and its runtime scalars in node
   * order. Kernels without one take none. */
  int32_t num_epilogue_tensors;
  const tc_epilogue_tensor* epilogue_tensors;
  int32_t num_epilogue_scalars;
  const double* epilogue_scalars;
} tc_args_header;

typedef struct tc_kernel_entry {
  const char* name;
  /* "key=value;key=value": the description the kernel was built from. */
  const char* metadata;
  int32_t (*can_implement)(const tc_args_header* args, char* error, size_t error_capacity);
  size_t (*workspace_size)(const tc_args_header* args);
  /* Launches on stream (a cudaStream_t). Never synchronizes. */
  int32_t (*run)(const tc_args_header* args, void* workspace, void* stream, char* error,
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
