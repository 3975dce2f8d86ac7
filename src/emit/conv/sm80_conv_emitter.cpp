// The SM80 convolution emitter: CUTLASS 2.x ImplicitGemmConvolution kernels behind the C ABI,
// each with serial split-K, or as a parallel split-K companion (partials + ReduceSplitK).
#include <algorithm>
#include <string>
#include <vector>

#include "emit/conv/sm80_conv_parts.hpp"
#include "emit/cutlass_names.hpp"
#include "emit/device_image_text.hpp"
#include "emit/module_table.hpp"
#include "emit/sm80_gemm_parts.hpp"

namespace tilecraft::emit {
namespace {

// Grouped fprop has its own default kernels: DefaultConv2dGroupFprop (its GroupMode a template
// argument after the math operator) and DefaultDepthwiseFprop.
// 3-D convolutions have DefaultConv3d*, which take no alignments (128-bit accesses).
std::string conv_default_kernel(ConvKind kind, GroupMode group_mode, bool three_d) {
  if (group_mode == GroupMode::Depthwise) return "cutlass::conv::kernel::DefaultDepthwiseFprop";
  if (group_mode != GroupMode::None) return "cutlass::conv::kernel::DefaultConv2dGroupFprop";
  if (!is_valid(kind)) throw Error(Status(StatusCode::kInternal, "emit: conv kind"));
  return (three_d ? "cutlass::conv::kernel::DefaultConv3d"
                  : "cutlass::conv::kernel::DefaultConv2d") +
         camel_case(to_string(kind));
}

std::string conv_iterator(IteratorAlgorithm algorithm) {
  if (!is_valid(algorithm)) throw Error(Status(StatusCode::kInternal, "emit: iterator algorithm"));
  return "cutlass::conv::IteratorAlgorithm::k" + camel_case(to_string(algorithm));
}

// A 2-D strided dgrad kernel (ImplicitGemmConvolutionStridedDgrad) walks its tiles with
// CUTLASS's strided-dgrad form of the identity swizzle (3-D dgrad has no such kernel).
std::string conv_swizzle(const GemmDescription& d) {
  if (d.conv.kind != ConvKind::Dgrad || d.conv.stride_support != StrideSupport::Strided ||
      d.A.layout == Layout::TensorNDHWC) {
    return cutlass_swizzle(d.swizzle);
  }
  return "cutlass::conv::threadblock::StridedDgradIdentityThreadblockSwizzle<" +
         std::to_string(identity_swizzle_size(d.swizzle)) + ">";
}

// "cutlass::conv::device::ImplicitGemmConvolution<...>" for a convolution description writing
// `output` (the description's own C, or accumulators for split-K partials).
std::string implicit_gemm_convolution_type(const GemmDescription& d, const GemmOutput& output) {
  const GroupMode group_mode = d.conv.group_mode;
  const bool three_d = d.A.layout == Layout::TensorNDHWC;
  std::string out = "cutlass::conv::device::ImplicitGemmConvolution<typename " +
                    conv_default_kernel(d.conv.kind, group_mode, three_d) + "<\n" +
                    sm80_leading_arguments(d, output, conv_swizzle(d));
  out += "    " + std::to_string(d.tile.stages) + ", " +
         cutlass_math_operator(d.tile.math_instruction.math_operation) + ",\n";
  if (group_mode == GroupMode::SingleGroup || group_mode == GroupMode::MultipleGroup) {
    out += "    cutlass::conv::GroupMode::k" + camel_case(to_string(group_mode)) + ",\n";
  }
  out += "    " + conv_iterator(d.conv.iterator_algorithm) + ",\n";
  out += std::string("    cutlass::conv::StrideSupport::") +
         (d.conv.stride_support == StrideSupport::Unity ? "kUnity" : "kStrided");
  if (three_d) return out + ">::Kernel>";
  out += ",\n    " + std::to_string(d.A.alignment) + ", " + std::to_string(d.B.alignment) +
         ">::Kernel>";
  return out;
}

// The text of entry `index` (serial, or the parallel split-K companion).
std::string conv_entry_text(const GemmEntry& entry, int index) {
  if (is_direct_conv(entry.description)) return direct_conv_entry_text(entry, index);
  const std::string i = std::to_string(index);
  const GemmDescription& d = entry.description;
  const std::string max_k = std::to_string(epilogue_max_k(d.epilogue));
  if (entry.kind == GemmEntryKind::kUniversal) {
    const std::string conv = "TcConv" + i;
    const std::string kernel = "tc_kernel_" + i;
    const std::string host = abi_functions_text(
        i, "tc_conv::can_implement<" + conv + ">(args, error, capacity, " + max_k + ")",
        "tc_conv::workspace_size<" + conv + ">(args)",
        "tc_conv::run<" + conv + ">(args, workspace, stream, error, capacity, \"" + kernel + "\")");
    return "using " + conv + " = " +
           implicit_gemm_convolution_type(d,
                                          {d.C.element, d.C.layout, cutlass_epilogue(d.epilogue)}) +
           ";\n" +
           halves_text(
               kernel_definition_text(KernelForm::kKernel, conv + "::UnderlyingKernel", kernel),
               host);
  }
  if (d.C.layout != Layout::TensorNHWC && d.C.layout != Layout::TensorNDHWC) {
    throw Error(Status::unsupported(
        "emit: parallel split-K convolutions need a TensorNHWC output (ReduceSplitK reads the "
        "implicit GEMM's row-major output); got " +
        std::string(to_string(d.C.layout))));
  }
  return split_k_parallel_text(d, index,
                               {implicit_gemm_convolution_type(d, split_k_partial_output(d)),
                                "UnderlyingKernel", KernelForm::kKernel, "tc_conv"});
}

std::string conv_entry_kernels(const GemmEntry& entry, int index) {
  if (is_direct_conv(entry.description)) return direct_conv_entry_kernels(entry, index);
  const std::string i = std::to_string(index);
  if (entry.kind == GemmEntryKind::kUniversal) {
    return "      &tc_image::kernel<TcConv" + i + "::UnderlyingKernel>(\"tc_kernel_" + i + "\"),\n";
  }
  return "      &tc_image::kernel<TcPartial" + i + "::UnderlyingKernel>(\"tc_kernel_" + i +
         "_partial\"),\n" + "      &tc_image::kernel<TcReduction" + i +
         "::ReductionKernel>(\"tc_kernel_" + i + "_reduction\"),\n";
}

}  // namespace

std::string emit_sm80_conv_module(const std::vector<GemmEntry>& entries) {
  const auto direct = [](const GemmEntry& entry) { return is_direct_conv(entry.description); };
  std::vector<std::string> headers;
  if (std::ranges::any_of(entries, direct)) headers.push_back("direct_conv.cuh");
  if (std::ranges::all_of(entries, direct)) {
    return module_text(entries, "convolution", "tilecraft direct convolution, CUDA cores", "",
                       headers, conv_entry_text, conv_entry_kernels);
  }
  headers.push_back("sm80_conv.cuh");
  if (std::ranges::any_of(entries, [](const GemmEntry& entry) {
        return !is_direct_conv(entry.description) &&
               entry.description.conv.group_mode != GroupMode::None;
      })) {
    headers.push_back("sm80_conv_grouped.cuh");
  }
  if (std::ranges::any_of(entries, [](const GemmEntry& entry) {
        return entry.description.A.layout == Layout::TensorNDHWC;
      })) {
    headers.push_back("sm80_conv3d.cuh");
  }
  return module_text(entries, "convolution", "CUTLASS 2.x ImplicitGemmConvolution, SM80", "",
                     headers, conv_entry_text, conv_entry_kernels);
}

}  // namespace tilecraft::emit
