// The convolution pieces of SM90 entries: a CUTLASS 3.x ConvUniversal (TMA im2col mainloop from
// the conv CollectiveBuilder) in place of the GEMM mainloop and kernel; everything else of an SM90
// entry (types, epilogue and its fusion, the C ABI functions) is the GEMM entry's.
#pragma once

#include <string>
#include <string_view>

#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft::emit {

// "cute::Shape<cute::_128, cute::_128, cute::Shape<cute::_64>>" (wgrad: N a nested mode too).
std::string sm90_conv_tile_shape(const GemmDescription& description);
// The epilogue's layout tag: the output activation (fprop y, dgrad dx) or the filter (wgrad dw).
std::string sm90_conv_output_layout(const GemmDescription& description);
// CollectiveMainloop, ProblemShape, Kernel and Gemm (a ConvUniversalAdapter) of the entry, given
// the stage count type; uses the entry's ElementA ... TileShape and CollectiveEpilogue.
std::string sm90_conv_kernel_text(const GemmDescription& description, const std::string& stages);

}  // namespace tilecraft::emit
