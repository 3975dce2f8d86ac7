// The fixed C++17 text of convolution modules: typed adapters from tc_gemm_args (its conv
// problem) to CUTLASS's ImplicitGemmConvolution arguments, beside the GEMM adapters whose helpers
// (errors, epilogue parameters, the split-K reduction's shape) they share.
#pragma once

#include <string_view>

namespace tilecraft::emit {

// The #include lines a convolution module adds to the GEMM module's.
std::string_view conv_module_includes();

// The #include lines of grouped and depthwise fprop kernels, added where a module has one.
std::string_view conv_group_includes();

// The #include lines of 3-D (TensorNDHWC) kernels, added where a module has one.
std::string_view conv3d_includes();

// Namespace tc_conv: can_implement, workspace_size and run for serial entries, and the same for
// parallel split-K entries (a partial convolution into the workspace, then ReduceSplitK).
std::string_view conv_adapter_text();

}  // namespace tilecraft::emit
