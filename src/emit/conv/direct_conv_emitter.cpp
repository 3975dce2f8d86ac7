// Entries of tilecraft's direct grouped / depthwise fprop (iterator_algorithm direct): an
// instantiation of tc_direct::DirectConv (tilecraft/jit/direct_conv.cuh) behind the C ABI.
#include <string>

#include "emit/conv/sm80_conv_parts.hpp"
#include "emit/cutlass_names.hpp"
#include "emit/device_image_text.hpp"

namespace tilecraft::emit {

bool is_direct_conv(const GemmDescription& d) {
  return d.is_conv() && d.conv.iterator_algorithm == IteratorAlgorithm::Direct;
}

std::string direct_conv_entry_text(const GemmEntry& entry, int index) {
  const GemmDescription& d = entry.description;
  if (entry.kind != GemmEntryKind::kUniversal) {
    throw Error(Status::unsupported(
        "emit: the direct convolution has no split-K form; split_k_slices must be 1"));
  }
  const std::string i = std::to_string(index);
  const std::string conv = "TcConv" + i;
  const std::string kernel = "tc_kernel_" + i;
  const auto& shape = d.tile.threadblock_shape;
  const std::string type = "tc_direct::DirectConv<" + cutlass_element(d.A.element) + ", " +
                           cutlass_element(d.B.element) + ", " + cutlass_element(d.C.element) +
                           ",\n    " + cutlass_epilogue(d.epilogue) + ",\n    " +
                           std::to_string(d.C.alignment) + ", " + std::to_string(shape[0]) + ", " +
                           std::to_string(shape[1]) + ", " + std::to_string(d.tile.threads()) +
                           ", " + (d.conv.group_mode == GroupMode::Depthwise ? "true" : "false") +
                           ">";
  const std::string host = abi_functions_text(
      i, "tc_direct::can_implement<" + conv + ">(args, error, capacity)", "0",
      "tc_direct::run<" + conv + ">(args, workspace, stream, error, capacity, \"" + kernel + "\")");
  return "using " + conv + " = " + type + ";\n" +
         halves_text(kernel_definition_text(KernelForm::kKernel, conv, kernel), host);
}

std::string direct_conv_entry_kernels(const GemmEntry& /*entry*/, int index) {
  const std::string i = std::to_string(index);
  return "      &tc_image::kernel<TcConv" + i + ">(\"tc_kernel_" + i + "\"),\n";
}

}  // namespace tilecraft::emit
