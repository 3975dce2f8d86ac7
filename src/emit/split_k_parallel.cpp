// The split-K-parallel companion entry: a partial GemmUniversal (kGemmSplitKParallel) writes one
// slice of accumulators per K partition into the workspace, then ReduceSplitK sums the slices
// and applies the user's epilogue (alpha, beta, activation, C) while writing D.
#include <algorithm>
#include <string>

#include "emit/cutlass_names.hpp"
#include "emit/device_image_text.hpp"
#include "emit/sm80_gemm_parts.hpp"

namespace tilecraft::emit {

GemmOutput split_k_partial_output(const GemmDescription& d) {
  const DataType acc = d.tile.math_instruction.element_accumulator;
  const std::string acc_type = cutlass_element(acc);
  // The partials are written with at most 128-bit stores; any width dividing C's alignment is
  // implied by the reduction's own check of C's alignment.
  const int partial_count = std::max(1, std::min(d.C.alignment, 128 / size_in_bits(acc)));
  return {acc, d.C.layout,
          "cutlass::epilogue::thread::LinearCombination<" + acc_type + ", " +
              std::to_string(partial_count) + ", " + acc_type + ", " + acc_type + ">"};
}

std::string split_k_parallel_text(const GemmDescription& d, int index,
                                  const SplitKParallelForm& form) {
  const std::string acc_type = cutlass_element(d.tile.math_instruction.element_accumulator);
  const int count = d.epilogue.elements_per_access;
  const std::string i = std::to_string(index);
  const std::string partial = "TcPartial" + i;
  const std::string reduction = "TcReduction" + i;
  std::string out = "using " + partial + " = " + form.partial_type + ";\n";
  out += "using " + reduction + " = cutlass::reduction::device::ReduceSplitK<\n";
  out += "    cutlass::reduction::kernel::ReduceSplitK<cutlass::MatrixShape<4, " +
         std::to_string(32 * count) + ">,\n";
  out += "        " + cutlass_epilogue(d.epilogue) + ",\n";
  out += "        cutlass::reduction::thread::ReduceAdd<" + acc_type + ", " + acc_type + ", " +
         std::to_string(count) + ">>>;\n";
  const std::string both = partial + ", " + reduction;
  const std::string partial_kernel = "tc_kernel_" + i + "_partial";
  const std::string reduction_kernel = "tc_kernel_" + i + "_reduction";
  const std::string& ns = form.adapters;
  const std::string device =
      kernel_definition_text(form.kernel_form, partial + "::" + form.kernel_member,
                             partial_kernel) +
      kernel_definition_text(KernelForm::kKernel, reduction + "::ReductionKernel",
                             reduction_kernel);
  const std::string host = abi_functions_text(
      i,
      ns + "::split_k_can_implement<" + both + ">(args, error, capacity, " +
          std::to_string(epilogue_max_k(d.epilogue)) + ")",
      ns + "::split_k_workspace_size<" + partial + ">(args)",
      ns + "::split_k_run<" + both + ">(args, workspace, stream, error, capacity, \"" +
          partial_kernel + "\", \"" + reduction_kernel + "\")");
  return out + halves_text(device, host);
}

std::string split_k_parallel_entry_text(const GemmEntry& entry, int index) {
  const GemmDescription& d = entry.description;
  if (d.C.layout != Layout::RowMajor && d.C.layout != Layout::ColumnMajor) {
    throw Error(Status::unsupported(
        "emit: GemmSplitKParallel needs a row- or column-major C (ReduceSplitK is row-major); "
        "got " +
        std::string(to_string(d.C.layout))));
  }
  return split_k_parallel_text(d, index,
                               {gemm_universal_type(d, split_k_partial_output(d)), "GemmKernel",
                                KernelForm::kKernel2, "tc_gemm"});
}

}  // namespace tilecraft::emit
