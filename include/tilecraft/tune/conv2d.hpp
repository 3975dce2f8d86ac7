// One-call convolution: tilecraft::conv2d(args) picks a convolution kernel, compiles it on first
// use and runs it. The pick is the performance model's first ranked kernel that compiles
// (convolutions are not tuned by measurement yet); it is remembered for the process per problem
// (kind, types, alignments, extents, stride, padding, dilation, epilogue), so later calls of the
// same problem pay no ranking.
#pragma once

#include <string>

#include "tilecraft/core/status.hpp"
#include "tilecraft/discover/conv_api.hpp"

namespace tilecraft {

struct ConvPick {
  std::string kernel_name;
  std::string reason;  // why this kernel serves (and which ranked kernels failed to compile)
};

Result<ConvPick> conv2d(const api::Conv2dArguments& args, void* stream = nullptr);

}  // namespace tilecraft
