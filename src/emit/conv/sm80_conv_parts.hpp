// The SM80 convolution emitter, for the conv family's registration (conv_family.cpp).
#pragma once

#include <string>
#include <vector>

#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {

// One translation unit of convolution entries (every entry a conv description of arch 80).
std::string emit_sm80_conv_module(const std::vector<GemmEntry>& entries);

// tilecraft's direct convolution (iterator_algorithm direct): its entries' text and kernels.
bool is_direct_conv(const GemmDescription& d);
std::string direct_conv_entry_text(const GemmEntry& entry, int index);
std::string direct_conv_entry_kernels(const GemmEntry& entry, int index);

}  // namespace tilecraft::emit
