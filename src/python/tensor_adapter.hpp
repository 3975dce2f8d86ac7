// DLPack tensors (torch, cupy, numpy, jax) -> TensorView, through nanobind's ndarray; scales and
// a custom epilogue's operands, which hold tensors.
#pragma once

#include <nanobind/ndarray.h>

#include <string>
#include <vector>

#include "arguments.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/scale_argument.hpp"

namespace tilecraft::python {

// `name` is the argument's name for messages. Raises ValueError for dtypes, devices or ranks
// tilecraft cannot take.
TensorView to_tensor_view(const char* name, const nanobind::ndarray<>& array);
// A list of them, named "<name>[i]".
std::vector<TensorView> to_tensor_views(const char* name,
                                        const std::vector<nanobind::ndarray<>>& arrays);

// A per-tensor scale: None (not given), a number (numpy scalars too), or a one-element device
// tensor (checked later, against the kernel). Raises TypeError naming `name` for anything else.
ScaleArgument to_scale_argument(const std::string& name, nanobind::handle value);

// A custom epilogue's operands: a dict of the graph's names to tensors and numbers (bool refused);
// None gives none. `name` is the argument's name for messages.
EpilogueOperands epilogue_operands_from(const char* name, nanobind::handle value);

template <>
struct Arg<ScaleArgument> {
  static std::string hint() { return "float | ndarray | None"; }
  static std::string expected() { return "a float or a one-element float32 CUDA tensor"; }
  static ScaleArgument from(const std::string& name, nanobind::handle v, const std::string&) {
    return to_scale_argument(name, v);
  }
};

}  // namespace tilecraft::python
