// A custom epilogue's operands from Python: a dict of the graph's names to tensors and numbers.
#pragma once

#include <nanobind/nanobind.h>

#include "tilecraft/runtime/gemm_arguments.hpp"

namespace tilecraft::python {

// `name`: the argument's name for messages. Keys must be str; values tensors (DLPack) or real
// numbers (bool refused). None gives no operands.
EpilogueOperands epilogue_operands_from(const char* name, nanobind::handle value);

}  // namespace tilecraft::python
