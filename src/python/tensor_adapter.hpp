// DLPack tensors (torch, cupy, numpy, jax) -> TensorView, through nanobind's ndarray.
#pragma once

#include <nanobind/ndarray.h>

#include "tilecraft/core/tensor_view.hpp"

namespace tilecraft::python {

// `name` is the argument's name for messages. Raises ValueError for dtypes, devices or ranks
// tilecraft cannot take.
TensorView to_tensor_view(const char* name, const nanobind::ndarray<>& array);

}  // namespace tilecraft::python
