// The table every generated module ends with: one tc_kernel_entry per GemmEntry, in order, and
// the exported tilecraft_module_table(). Entry i's functions are tc_can_implement_<i>,
// tc_workspace_size_<i> and tc_run_<i>.
#pragma once

#include <string>
#include <vector>

#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {

std::string module_table_text(const std::vector<GemmEntry>& entries);

}  // namespace tilecraft::emit
