// The SM80 grouped GEMM emitter's pieces: CUTLASS 2.x GemmGrouped kernels behind the C ABI. The
// kernel type comes from DefaultGemmGrouped; the host half builds its Params (and, for the Host
// scheduler, the precomputed schedule) and launches it from the module's device image.
#pragma once

#include <string>
#include <string_view>

#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {

// Entry `index`: the kernel type TcGrouped<index>, its device definition and the three static ABI
// functions.
std::string sm80_grouped_entry_text(const GemmEntry& entry, int index);

}  // namespace tilecraft::emit
