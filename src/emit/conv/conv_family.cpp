// Convolutions as a registered family of the shared emitters (emit/family_emitter.hpp): SM80
// modules of their own (implicit GEMMs), SM90 entries with a CUTLASS 3.x ConvUniversal (TMA
// im2col mainloop from the conv CollectiveBuilder) in place of the GEMM mainloop and kernel, or,
// on the cooperative and ping-pong schedules, CUTLASS's persistent GEMM kernel over that
// mainloop (jit/sm90_conv_persistent.cuh); everything else of an SM90 entry (types, epilogue and
// its fusion, the C ABI functions) is the GEMM entry's.
#include <string>

#include "emit/conv/sm80_conv_parts.hpp"
#include "emit/family_emitter.hpp"

namespace tilecraft::emit {
namespace {

std::string conv_operator(ConvKind kind) {
  return kind == ConvKind::Fprop   ? "cutlass::conv::Operator::kFprop"
         : kind == ConvKind::Dgrad ? "cutlass::conv::Operator::kDgrad"
                                   : "cutlass::conv::Operator::kWgrad";
}

std::string underscore(int extent) { return "cute::_" + std::to_string(extent); }

// "cute::Shape<cute::_128, cute::_128, cute::Shape<cute::_64>>" (wgrad: N a nested mode too).
std::string sm90_conv_tile_shape(const GemmDescription& d) {
  const auto& s = d.tile.threadblock_shape;
  const std::string n =
      d.conv.kind == ConvKind::Wgrad ? "cute::Shape<" + underscore(s[1]) + ">" : underscore(s[1]);
  return "cute::Shape<" + underscore(s[0]) + ", " + n + ", cute::Shape<" + underscore(s[2]) + ">>";
}

// Whether the entry is a persistent kernel (the cooperative and ping-pong schedules).
bool persistent(const GemmDescription& d) {
  return d.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative ||
         d.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedPingpong;
}

bool three_d(const GemmDescription& d) { return d.A.layout == Layout::TensorNDHWC; }

// The epilogue's layout tag: the output activation (fprop y, dgrad dx) or the filter (wgrad dw),
// 2-D or 3-D; a persistent kernel writes the implicit GEMM's packed row-major output.
std::string sm90_conv_output_layout(const GemmDescription& d) {
  if (persistent(d)) return "cutlass::layout::RowMajor";
  if (d.conv.kind == ConvKind::Wgrad) {
    return three_d(d) ? "cutlass::layout::TensorKCSRT" : "cutlass::layout::TensorKCSR";
  }
  return three_d(d) ? "cutlass::layout::TensorNDHWC" : "cutlass::layout::TensorNHWC";
}

// The persistent kernel: CUTLASS's GEMM kernel of the schedule over the conv mainloop, whose
// tiled MMA, layouts, copies and stages come from the conv builder (its stages leave room for the
// epilogue's shared memory, which a persistent kernel does not share with the mainloop, and the
// kernel's own barriers), on the persistent or the stream-K tile scheduler.
std::string sm90_persistent_conv_text(const GemmDescription& d, const std::string& op,
                                      const std::string& stages) {
  const bool cooperative = d.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative;
  const std::string carveout =
      d.tile.stages == 0 ? "cutlass::conv::collective::StageCountAutoCarveout<static_cast<int>(\n"
                           "        sizeof(typename CollectiveEpilogue::SharedStorage)) + 1024>"
                         : stages;
  std::string out =
      "using ConvBuilder = cutlass::conv::collective::CollectiveBuilder<\n"
      "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, " +
      op + ",\n" +
      "    ElementA, LayoutA, AlignmentA, ElementB, LayoutB, AlignmentB, ElementAccumulator,\n" +
      "    TileShape, ClusterShape, " + carveout + ",\n    cutlass::conv::" +
      (cooperative ? "KernelImplicitTmaWarpSpecializedSm90Cooperative"
                   : "KernelImplicitTmaWarpSpecializedSm90") +
      ">;\n";
  out +=
      "using CollectiveMainloop = tc_sm90_conv::PersistentMainloopOf<ConvBuilder, " + op +
      ",\n    ClusterShape, cutlass::gemm::" +
      (cooperative ? "KernelTmaWarpSpecializedCooperative" : "KernelTmaWarpSpecializedPingpong") +
      ", TileShape, ElementA, ElementB>;\n";
  const std::string scheduler = d.tile.tile_scheduler == TileScheduler::StreamK
                                    ? "cutlass::gemm::StreamKScheduler"
                                    : "cutlass::gemm::PersistentScheduler";
  out +=
      "using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>,\n"
      "    CollectiveMainloop, CollectiveEpilogue, " +
      scheduler + ">;\n";
  out += "using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;\n";
  return out;
}

// CollectiveMainloop, ProblemShape, Kernel and Gemm (a ConvUniversalAdapter) of the entry, given
// the stage count type; uses the entry's ElementA ... TileShape and CollectiveEpilogue.
std::string sm90_conv_kernel_text(const GemmDescription& d, const std::string& stages) {
  const std::string op = conv_operator(d.conv.kind);
  if (persistent(d)) return sm90_persistent_conv_text(d, op, stages);
  std::string out =
      "using CollectiveMainloop = typename cutlass::conv::collective::CollectiveBuilder<\n"
      "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, " +
      op + ",\n" +
      "    ElementA, LayoutA, AlignmentA, ElementB, LayoutB, AlignmentB, ElementAccumulator,\n" +
      "    TileShape, ClusterShape, " + stages + ",\n" +
      "    cutlass::conv::KernelImplicitTmaWarpSpecializedSm90>::CollectiveOp;\n";
  out += "using ProblemShape = cutlass::conv::ConvProblemShape<" + op + ", " +
         (three_d(d) ? "3" : "2") + ">;\n";
  out +=
      "using Kernel = cutlass::conv::kernel::ConvUniversal<ProblemShape, CollectiveMainloop,\n"
      "    CollectiveEpilogue>;\n";
  out += "using Gemm = cutlass::conv::device::ConvUniversalAdapter<Kernel>;\n";
  return out;
}

// Direct convolutions include none of CUTLASS's implicit-GEMM headers, and persistent SM90 ones
// include CUTLASS's GEMM kernels, beside which CUTLASS's ConvUniversal kernels do not build (two
// specializations of GemmUniversal would match them): units of their own.
std::string conv_unit_class(const GemmDescription& d) {
  if (is_direct_conv(d)) return "direct";
  return d.arch == 90 && persistent(d) ? "persistent" : "";
}

const FamilyEmitterRegistration kConvEmitter{{
    .name = "conv",
    .takes = [](const GemmDescription& d) { return d.is_conv(); },
    .unit_class = conv_unit_class,
    .sm80_module = emit_sm80_conv_module,
    .sm90_header = "sm90_conv.cuh",
    .sm90_layout_c = sm90_conv_output_layout,
    .sm90_tile_shape = sm90_conv_tile_shape,
    .sm90_kernel = sm90_conv_kernel_text,
}};

// Persistent SM90 convolutions bring their mainloop's header (it includes CUTLASS's GEMM kernels,
// which a unit of ConvUniversal kernels must not: conv_unit_class keeps them apart).
const FamilyEmitterRegistration kPersistentConvEmitter{{
    .name = "conv_persistent",
    .takes = [](const GemmDescription& d) { return d.is_conv() && persistent(d); },
    .sm90_extra_header = "sm90_conv_persistent.cuh",
}};

}  // namespace
}  // namespace tilecraft::emit
