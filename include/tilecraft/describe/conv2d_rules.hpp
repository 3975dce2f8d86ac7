// What a convolution description (GemmKind::Conv2d) must satisfy: the layouts, iterator
// algorithms and stride specializations CUTLASS's implicit-GEMM convolutions exist for, and the
// operand loads of the GEMM the convolution is computed as.
#pragma once

#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft {

// Called by GemmDescription::validate once the parts agree on types.
Status validate_conv2d(const GemmDescription& d);

// The description of the GEMM a convolution kernel computes, with the matrix layouts its
// operands have as GEMM operands (fprop: A row-major, B column-major; dgrad: both row-major;
// wgrad: A column-major, B row-major). The SM80 operand-load rules are checked on it.
GemmDescription implicit_gemm_of(const GemmDescription& conv);

// Whether the kernel has a parallel split-K form (CUTLASS's strided dgrad kernel has none: its
// slices would all write the same output). Ok for every description that is not a convolution.
Status check_parallel_split_k(const GemmDescription& d);

}  // namespace tilecraft
