// Private pieces of the SM80 GEMM emitter: the GemmUniversal type of a description, its metadata
// string, and the text of one ABI entry of each kind.
#pragma once

#include <string>

#include "emit/device_image_text.hpp"
#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {

// What GemmUniversal writes and how: D's element and layout and the epilogue functor. The
// universal entry uses the description's own; the split-K partial GEMM writes accumulators.
struct GemmOutput {
  DataType element;
  Layout layout;
  std::string epilogue;  // the functor's CUTLASS type
};

// "cutlass::gemm::device::GemmUniversal<...>" for the description with the given output.
std::string gemm_universal_type(const GemmDescription& description, const GemmOutput& output);
// "    <element>, <layout>, cutlass::ComplexTransform::kNone, <alignment>,\n": an operand of the
// kernel-level defaults (DefaultGemmGrouped, DefaultGemmWithVisitor).
std::string sm80_operand_line(const TensorDescription& operand);
// The threadblock, warp and instruction shapes, a line each.
std::string sm80_tile_shapes(const GemmDescription& description);
// The lines GemmUniversal's and the conv default kernels' arguments begin with: A, B, the
// output, the accumulator and op class, the three tile shapes, the epilogue and `swizzle`.
std::string sm80_leading_arguments(const GemmDescription& description, const GemmOutput& output,
                                   const std::string& swizzle);

// "key=value;..." describing the entry (arch, op class, instruction, types, layouts, ...).
std::string gemm_metadata(const GemmEntry& entry);

// Longest K FastLinearCombinationClamp takes; 0 when the epilogue has no limit.
int epilogue_max_k(const EpilogueFunctor& epilogue);

// The text of entry `index`: type aliases and the three static ABI functions
// tc_can_implement_<index>, tc_workspace_size_<index>, tc_run_<index> (the registered family's
// entry text where it has one: emit/family_emitter.hpp).
std::string universal_entry_text(const GemmEntry& entry, int index);
std::string split_k_parallel_entry_text(const GemmEntry& entry, int index);

// What the split-K-parallel partial kernel writes: accumulators, in C's layout, with a
// LinearCombination of at most 128-bit stores.
GemmOutput split_k_partial_output(const GemmDescription& description);

// The parts of a split-K-parallel entry that differ between GEMM and convolution partials.
struct SplitKParallelForm {
  std::string partial_type;   // the device-level partial kernel (split_k_partial_output)
  std::string kernel_member;  // its launched kernel type: "GemmKernel", "UnderlyingKernel"
  KernelForm kernel_form;     // how the device half defines that kernel
  std::string adapters;       // the namespace of split_k_can_implement / _workspace_size / _run
};

// Entry `index`: the partial type, the ReduceSplitK type applying the description's epilogue,
// the two kernels of the device half and the three static ABI functions.
std::string split_k_parallel_text(const GemmDescription& description, int index,
                                  const SplitKParallelForm& form);

}  // namespace tilecraft::emit
