// The frame every generated module shares: a title line, the module's opening and jit headers,
// each entry after a comment naming it, then (host half) the table of one tc_kernel_entry per
// GemmEntry, in order (entry i's functions are tc_can_implement_<i>, tc_workspace_size_<i> and
// tc_run_<i>), the exported tilecraft_module_table() and tilecraft_module_verify().
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {

// Text of entry `index` of a module: its own text, or its kernels for the verify export
// ("      &tc_image::kernel<Op>(\"name\"),\n" each).
using EntryText = std::string (*)(const GemmEntry& entry, int index);

// `noun` and `form` complete the title ("GEMM", "CUTLASS 2.x GemmUniversal, SM80"); `prelude`
// goes before the module opens.
std::string module_text(const std::vector<GemmEntry>& entries, std::string_view noun,
                        std::string_view form, std::string_view prelude,
                        const std::vector<std::string>& headers, EntryText entry_text,
                        EntryText entry_kernels);

}  // namespace tilecraft::emit
