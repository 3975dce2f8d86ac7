// Private pieces of the SM80 convolution emitter.
#pragma once

#include <string>
#include <vector>

#include "emit/sm80_gemm_parts.hpp"

namespace tilecraft::emit {

// "cutlass::conv::device::ImplicitGemmConvolution<...>" for a convolution description writing
// `output` (the description's own C, or accumulators for split-K partials).
std::string implicit_gemm_convolution_type(const GemmDescription& description,
                                           const GemmOutput& output);

// The text of entry `index` (serial, or the parallel split-K companion).
std::string conv_entry_text(const GemmEntry& entry, int index);

// One translation unit of convolution entries (every entry a conv description of arch 80).
std::string emit_sm80_conv_module(const std::vector<GemmEntry>& entries);

}  // namespace tilecraft::emit
