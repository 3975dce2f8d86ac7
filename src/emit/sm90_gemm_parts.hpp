// Private pieces of the SM90 GEMM emitter (CUTLASS 3.x CollectiveBuilder + GemmUniversalAdapter).
#pragma once

#include <string>
#include <vector>

#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {

// The family's argument block an entry reads (abi/*_args.h): "tc_gemm_args", "tc_conv_args" or
// "tc_grouped_args".
std::string sm90_args_block(const GemmDescription& description);
// The fusion operation type of the epilogue, e.g.
// "cutlass::epilogue::fusion::LinCombEltAct<cutlass::epilogue::thread::GELU, ...>".
std::string sm90_fusion_type(const GemmDescription& description);
// Entry `index`: namespace tc_entry_<index> with the kernel's types, and the three static ABI
// functions tc_can_implement_<index>, tc_workspace_size_<index>, tc_run_<index>.
std::string sm90_entry_text(const GemmEntry& entry, int index);
std::string emit_sm90_gemm_module(const std::vector<GemmEntry>& entries);

}  // namespace tilecraft::emit
