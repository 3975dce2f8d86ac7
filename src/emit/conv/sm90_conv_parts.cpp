#include "emit/conv/sm90_conv_parts.hpp"

namespace tilecraft::emit {
namespace {

std::string conv_operator(ConvKind kind) {
  switch (kind) {
    case ConvKind::Fprop:
      return "cutlass::conv::Operator::kFprop";
    case ConvKind::Dgrad:
      return "cutlass::conv::Operator::kDgrad";
    case ConvKind::Wgrad:
      break;
  }
  return "cutlass::conv::Operator::kWgrad";
}

std::string underscore(int extent) { return "cute::_" + std::to_string(extent); }

}  // namespace

std::string sm90_conv_tile_shape(const GemmDescription& d) {
  const auto& s = d.tile.threadblock_shape;
  const std::string n =
      d.conv.kind == ConvKind::Wgrad ? "cute::Shape<" + underscore(s[1]) + ">" : underscore(s[1]);
  return "cute::Shape<" + underscore(s[0]) + ", " + n + ", cute::Shape<" + underscore(s[2]) + ">>";
}

std::string sm90_conv_output_layout(const GemmDescription& d) {
  return d.conv.kind == ConvKind::Wgrad ? "cutlass::layout::TensorKCSR"
                                        : "cutlass::layout::TensorNHWC";
}

std::string sm90_conv_kernel_text(const GemmDescription& d, const std::string& stages) {
  const std::string op = conv_operator(d.conv.kind);
  std::string out =
      "using CollectiveMainloop = typename cutlass::conv::collective::CollectiveBuilder<\n"
      "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, " +
      op +
      ",\n"
      "    ElementA, LayoutA, AlignmentA, ElementB, LayoutB, AlignmentB, ElementAccumulator,\n"
      "    TileShape, ClusterShape, " +
      stages +
      ",\n"
      "    cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;\n";
  out += "using ProblemShape = cutlass::conv::ConvProblemShape<" + op + ", 2>;\n";
  out +=
      "using Kernel = cutlass::conv::kernel::ConvUniversal<ProblemShape, CollectiveMainloop,\n"
      "    CollectiveEpilogue>;\n";
  out += "using Gemm = cutlass::conv::device::ConvUniversalAdapter<Kernel>;\n";
  return out;
}

}  // namespace tilecraft::emit
