// What Kernel::run does between arguments and a launch, for the layers above discovery that
// keep prepared arguments of their own (tune/GemmPlan).
#pragma once

#include "tilecraft/discover/api.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"

namespace tilecraft::api::detail {

// The operation-level problem for arguments-first arguments (fp8 scales default to 1), each
// launch split into `split_k` K slices (the kernel's design.split_k_slices).
Result<GemmProblem> problem_for(const GemmArguments& args, const GemmOperation& operation,
                                int split_k);

// Whether arguments prepared for `a` serve `b` once their tensor pointers are swapped: the same
// shapes, strides, types, devices, scalars and scale tensors.
bool same_but_pointers(const GemmArguments& a, const GemmArguments& b);

}  // namespace tilecraft::api::detail
