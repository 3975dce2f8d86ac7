// The SM80 grouped GEMM emitter's pieces: CUTLASS 2.x GemmGrouped kernels behind the C ABI. The
// kernel type comes from DefaultGemmGrouped; the host half builds its Params (and, for the Host
// scheduler, the precomputed schedule) and launches it from the module's device image.
#pragma once

#include <string>
#include <string_view>

#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {

// #include lines a module with SM80 grouped entries adds to the GemmUniversal ones.
std::string_view sm80_grouped_includes();
// Adapters shared by the SM80 grouped entries (namespace tc_grouped); needs tc_gemm's.
std::string_view sm80_grouped_adapter_text();
// Entry `index`: the kernel type TcGrouped<index>, its device definition and the three static ABI
// functions.
std::string sm80_grouped_entry_text(const GemmEntry& entry, int index);

}  // namespace tilecraft::emit
