// What a tensor's strides and address allow a kernel: the layout of its last two dimensions and
// the widest vector access. Shared by the GEMM and grouped GEMM arguments of the api.
#pragma once

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"

namespace tilecraft::api::detail {

// The layout of the last two dimensions of t, or why neither is contiguous ("Operand `A`: ...").
Result<Layout> layout_of(const char* name, const TensorView& t);

// The widest access, in elements (a power of two up to 16 bytes), that the data pointer, the
// leading dimension, the batch stride and the contiguous extent all admit.
int alignment_of(const TensorView& t, Layout layout);

}  // namespace tilecraft::api::detail
