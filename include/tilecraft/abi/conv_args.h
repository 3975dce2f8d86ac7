/* The convolution family's argument block: a 2-D or 3-D convolution, computed by a kernel of a
 * convolution description as an implicit GEMM.
 * Bump TC_CONV_ARGS_VERSION with any change: it re-keys convolution modules only. */
#ifndef TILECRAFT_ABI_CONV_ARGS_H_
#define TILECRAFT_ABI_CONV_ARGS_H_

#include "tilecraft/abi/module_abi.h"

#define TC_CONV_ARGS_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

enum tc_conv_mode {
  TC_CONV_MODE_RUN = 0,             /* serial split-K when conv.split_k_slices > 1 */
  TC_CONV_MODE_SPLIT_K_PARALLEL = 1 /* the parallel split-K companion entry */
};

/* Tensors are packed: activation x is N x H x W x C, filter w is K x R x S x (C / groups), output
 * y is N x P x Q x K, each in the description's layout (channels-last, or the int8 interleaved
 * ones). The GEMM operands are fprop: A = x, B = w, C/D = y; dgrad: A = dy, B = w, C/D = dx;
 * wgrad: A = dy, B = x, C/D = dw. pad_h and pad_w pad the top and left, pad_bottom and pad_right
 * the bottom and right (SM90 kernels describe the problem by its padding on both sides; P and Q
 * follow from them). 3-D convolutions (spatial_dims 3; 2 or 0 for 2-D ones) add the depth d of x,
 * t of the filter and z of y, the front and back padding, the depth stride and dilation. */
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
  int32_t pad_bottom, pad_right;
  int32_t spatial_dims;
  int32_t d, t, z;
  int32_t pad_front, pad_back;
  int32_t stride_d, dilation_d;
} tc_conv_problem;

typedef struct tc_conv_args {
  tc_args_header header; /* family TC_FAMILY_CONV */
  int32_t mode;          /* enum tc_conv_mode */
  const void* A;
  const void* B;
  const void* C;
  void* D;
  const void* bias; /* SM90 kernels that add a bias: one value per output channel */
  tc_conv_problem conv;
} tc_conv_args;

/* The convolution block behind a header, or null when the header is another family's or
 * version's. */
static inline const tc_conv_args* tc_conv_args_of(const tc_args_header* h) {
  return h != NULL && h->family == TC_FAMILY_CONV && h->family_version == TC_CONV_ARGS_VERSION
             ? (const tc_conv_args*)h
             : NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* TILECRAFT_ABI_CONV_ARGS_H_ */
