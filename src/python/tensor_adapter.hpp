// DLPack tensors (torch, cupy, numpy, jax) -> TensorView, through nanobind's ndarray.
#pragma once

#include <nanobind/ndarray.h>

#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/runtime/scale_argument.hpp"

namespace tilecraft::python {

// `name` is the argument's name for messages. Raises ValueError for dtypes, devices or ranks
// tilecraft cannot take.
TensorView to_tensor_view(const char* name, const nanobind::ndarray<>& array);

// A per-tensor scale: None (not given), a number, or a one-element device tensor (checked later,
// against the kernel). Raises ValueError naming `name` for anything else.
ScaleArgument to_scale_argument(const char* name, const nanobind::object& value);

}  // namespace tilecraft::python
