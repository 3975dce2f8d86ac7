// The fixed C++17 text every generated GEMM module carries after its includes: typed adapters
// from tc_gemm_args to CUTLASS's device-level Arguments, shared by all entries of the module.
#pragma once

#include <string_view>

namespace tilecraft::emit {

// The #include lines for GemmUniversal modules; the reduction headers only when asked for.
std::string_view gemm_module_includes(bool with_split_k_parallel);

// Adapters for GemmUniversal entries (namespace tc_gemm): can_implement, workspace_size, run.
std::string_view gemm_universal_adapter_text();

// The #include lines of CUTLASS's 2.x epilogue visitors (modules with an epilogue graph).
std::string_view gemm_visitor_includes();

// Adapters for entries with an epilogue graph (namespace tc_gemm: visitor_can_implement,
// visitor_workspace_size, visitor_run over DefaultGemmWithVisitor kernels); needs the above.
std::string_view gemm_visitor_adapter_text();

// Adapters for split-K-parallel entries (partial GemmUniversal + ReduceSplitK); needs the above.
std::string_view gemm_split_k_parallel_adapter_text();

}  // namespace tilecraft::emit
