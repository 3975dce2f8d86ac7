// Emission: GemmDescription -> CUDA C++ source of a module that exports the C ABI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft::emit {

// What a GEMM entry in a module is for.
enum class GemmEntryKind : uint8_t {
  kUniversal,       // GemmUniversal: modes Gemm (with serial split-K), Batched, Array
  kSplitKParallel,  // partial GEMM into an accumulator workspace, then the reduction kernel
};

struct GemmEntry {
  GemmDescription description;
  GemmEntryKind kind = GemmEntryKind::kUniversal;
};

// The exported entry's name for a description and kind (the procedural name, plus a suffix for
// the split-K-parallel companion).
std::string entry_name(const GemmEntry& entry);

// One translation unit with one ABI entry per GemmEntry, in order. Valid descriptions only;
// throws tilecraft::Error (kNotSupported) for a split-K-parallel entry with an interleaved C.
// Note: like CUTLASS's own interleaved int8 GEMM, the RowMajorInterleaved<32> B operand must be
// column-reordered by the caller (cutlass::reorder_column<32>); the module does not reorder it.
std::string emit_gemm_module(const std::vector<GemmEntry>& entries);

// SM90 kernels are built with CUTLASS's grid dependency control, so they may be launched with
// programmatic dependent launch: they wait for the previous kernel before touching global
// memory. Most also signal the next kernel early, as their last tile starts; kernels on the
// stream-K tile scheduler cannot (CUTLASS 4.2's stream-K code does not compile with that
// signal), so the next kernel starts as they exit. The signal is set per translation unit:
// compile_operations never puts kernels that differ here in one unit.
bool triggers_dependent_launch_early(const GemmDescription& description);

// Kernels of one class may share a translation unit (emit_gemm_module takes them together): one
// arch, convolutions or GEMMs, and on SM90 one dependent-launch signal.
std::string module_class(const GemmDescription& description);

// Compiler flags the emitted source needs for its architecture, beyond include paths
// (e.g. -gencode arch=compute_80,code=sm_80). Arch 80 kernels are built for sm_80 and sm_90 so
// they run on Hopper.
std::vector<std::string> gemm_module_arch_flags(int arch);

}  // namespace tilecraft::emit
