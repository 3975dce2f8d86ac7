// The SM90 GEMM emitter: one translation unit of CUTLASS 3.x kernels behind the C ABI.
#include <algorithm>
#include <string>
#include <vector>

#include "emit/cutlass_names.hpp"
#include "emit/device_image_text.hpp"
#include "emit/family_emitter.hpp"
#include "emit/module_table.hpp"
#include "emit/sm90_gemm_parts.hpp"

namespace tilecraft::emit {
namespace {

std::string static_shape(const std::array<int, 3>& shape) {
  return "cute::Shape<cute::_" + std::to_string(shape[0]) + ", cute::_" + std::to_string(shape[1]) +
         ", cute::_" + std::to_string(shape[2]) + ">";
}

std::string kernel_schedule_type(const GemmDescription& d) {
  const KernelSchedule schedule = d.tile.kernel_schedule;
  const bool fast =
      d.tile.math_instruction.math_operation == MathOperation::multiply_add_fast_accum;
  return std::string("cutlass::gemm::") + (d.is_grouped() ? "KernelPtrArray" : "Kernel") +
         (schedule == KernelSchedule::TmaWarpSpecializedCooperative
              ? "TmaWarpSpecializedCooperative"
          : schedule == KernelSchedule::TmaWarpSpecializedPingpong ? "TmaWarpSpecializedPingpong"
                                                                   : "TmaWarpSpecialized") +
         (fast ? "FP8FastAccum" : "");
}

std::string epilogue_schedule_type(const GemmDescription& d) {
  if (d.is_grouped()) {
    return d.tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative
               ? "cutlass::epilogue::PtrArrayTmaWarpSpecializedCooperative"
               : "cutlass::epilogue::PtrArrayTmaWarpSpecializedPingpong";
  }
  return d.tile.epilogue_schedule == EpilogueSchedule::TmaWarpSpecializedCooperative
             ? "cutlass::epilogue::TmaWarpSpecializedCooperative"
             : "cutlass::epilogue::TmaWarpSpecialized";
}

// Whether the fusion has an ElementBias (grouped kernels: only with a bias).
bool bias_capable(const GemmDescription& d) {
  const EpilogueFusion& f = d.epilogue.fusion;
  return f.bias != BiasKind::none || (!d.is_grouped() && (f.aux_output || f.per_tensor_scales));
}

std::string fill_fusion_text(const GemmDescription& d) {
  const EpilogueFunctor& e = d.epilogue;
  std::string out =
      "using FusionArguments = decltype(typename Gemm::Arguments{}.epilogue.thread);\n"
      "inline void fill_fusion(FusionArguments& f, const " +
      sm90_args_block(d) + "& a) {\n";
  if (d.is_grouped() && e.fusion.bias != BiasKind::none) {
    // The arguments of the tree of sm90_fusion_type: each node's children, then the node.
    return out +
           "  f = FusionArguments{\n"
           "      {{{ElementCompute(a.header.alpha)}},\n"
           "       {},\n"
           "       {{{ElementCompute(a.header.beta)}},\n"
           "        {},\n"
           "        {reinterpret_cast<ElementBias const* const*>(a.bias_array), ElementBias(0), "
           "{}},\n"
           "        {}},\n"
           "       {}},\n"
           "      {}};\n"
           "}\n";
  }
  out +=
      "  f.alpha = ElementCompute(a.header.alpha);\n"
      "  f.beta = ElementCompute(a.header.beta);\n";
  if (e.activation == Activation::leaky_relu) {
    out += "  f.activation.leaky_alpha = ElementCompute(a.header.activation_args[0]);\n";
  }
  if (e.activation == Activation::clamp) {
    out += "  f.activation.lower_bound = ElementCompute(a.header.activation_args[0]);\n";
    out += "  f.activation.upper_bound = ElementCompute(a.header.activation_args[1]);\n";
  }
  // Grouped kernels take the plain linear combination; fp8 per-tensor scales arrive folded into
  // alpha and beta.
  if (d.is_grouped()) return out + "}\n";
  if (bias_capable(d)) {
    out += "  f.bias_ptr = static_cast<const ElementBias*>(a.bias);\n";
    // A convolution's bias is one vector (its block has no batch stride).
    if (!d.is_conv()) out += "  cute::get<2>(f.dBias) = a.batch_stride_bias;\n";
  }
  if (e.fusion.aux_output) {
    out += "  f.aux_ptr = static_cast<ElementAux*>(a.aux);\n";
    out += "  f.dAux = tc_sm90::make_stride<decltype(f.dAux)>(a.ldaux, a.batch_stride_aux);\n";
  }
  if (e.fusion.per_tensor_scales) {
    for (const char* which : {"a", "b", "c", "d"}) {
      const std::string w = which;
      out += "  f.scale_" + w + " = ElementCompute(a.scale_" + w + ");\n";
      out += "  f.scale_" + w + "_ptr = a.scale_" + w + "_ptr;\n";
    }
  }
  return out + "}\n";
}

// What the adapter checks of a custom epilogue's operands (EntryTraits' last fields).
// EntryTraits' last fields: the custom epilogue's operands, and the fp8 promotion interval (each
// written only where it is not the default, the ones before it then too).
std::string graph_traits_text(const GemmDescription& d) {
  const int promotion = d.tile.mma_promotion_interval;
  if (!d.has_epilogue_graph()) {
    return promotion > 0 ? ", 0, 0, false, " + std::to_string(promotion) : "";
  }
  const EpilogueGraph& graph = *d.epilogue_graph;
  const bool reduces = std::ranges::any_of(
      graph.nodes(), [](const EpilogueNode& n) { return n.kind == EpilogueNodeKind::reduce; });
  const FamilyEmitter* source = emitter_with(d, &FamilyEmitter::sm90_source_c);
  const int source_c = source != nullptr ? source->sm90_source_c(d) : -1;
  return ", " + std::to_string(graph.operand_nodes().size()) + ", " +
         std::to_string(graph.scalar_nodes().size()) + ", " + (reduces ? "true" : "false") + ", " +
         std::to_string(promotion) + ", " + std::to_string(source_c);
}

}  // namespace

std::string sm90_args_block(const GemmDescription& d) {
  return d.is_conv() ? "tc_conv_args" : d.is_grouped() ? "tc_grouped_args" : "tc_gemm_args";
}

std::string sm90_fusion_type(const GemmDescription& d) {
  const EpilogueFunctor& e = d.epilogue;
  const std::string ns = "cutlass::epilogue::fusion::";
  const std::string act = cutlass_activation_functor(e.activation);
  const std::string tail = "ElementD, ElementCompute";
  if (d.is_grouped() && e.fusion.bias != BiasKind::none) {
    // D = act(alpha * acc + (beta * C + bias[n])), the bias read through one pointer per
    // problem (CUTLASS has no pointer-array bias fusion operation: the tree is spelled out).
    const std::string rn = "cutlass::FloatRoundStyle::round_to_nearest";
    const std::string fma =
        ns + "Sm90Compute<cutlass::homogeneous_multiply_add, ElementCompute, ElementCompute, " +
        rn + ">";
    return ns + "Sm90EVT<" + ns + "Sm90Compute<" + act + ", ElementD, ElementCompute, " + rn +
           ">,\n    " + ns + "Sm90EVT<" + fma + ", " + ns +
           "Sm90ScalarBroadcast<ElementCompute>, " + ns + "Sm90AccFetch,\n    " + ns + "Sm90EVT<" +
           fma + ", " + ns + "Sm90ScalarBroadcast<ElementCompute>, " + ns +
           "Sm90SrcFetch<ElementC>,\n    " + ns +
           "Sm90RowBroadcast<0, TileShape, ElementBias*, ElementCompute, "
           "cute::Stride<cute::_0, cute::_1, cute::_0>>>>>";
  }
  const std::string per = e.fusion.bias == BiasKind::per_column ? "PerColBias" : "PerRowBias";
  // Grouped kernels' scales fold into alpha and beta (fill_fusion).
  if (e.fusion.per_tensor_scales && !d.is_grouped()) {
    return ns + "ScaledLinComb" + per + "EltAct<" + act + ", " + tail +
           ", ElementBias, ElementC, ElementCompute>";
  }
  if (e.fusion.aux_output && !d.is_grouped()) {
    return ns + "LinComb" + per + "EltActAux<LayoutC, " + act + ", " + tail +
           ", ElementAux, ElementBias, ElementC, ElementCompute>";
  }
  if (e.fusion.bias != BiasKind::none) {
    if (e.activation == Activation::identity) {
      return ns + "LinComb" + per + "<" + tail + ", ElementBias, ElementC, ElementCompute>";
    }
    return ns + "LinComb" + per + "EltAct<" + act + ", " + tail +
           ", ElementBias, ElementC, ElementCompute>";
  }
  if (e.activation != Activation::identity) {
    return ns + "LinCombEltAct<" + act + ", " + tail + ", ElementC, ElementCompute>";
  }
  return ns + "LinearCombination<" + tail + ", ElementC, ElementCompute>";
}

std::string sm90_entry_text(const GemmEntry& entry, int index) {
  const std::string i = std::to_string(index);
  const GemmDescription& d = entry.description;
  const MathInstruction& math = d.tile.math_instruction;
  const EpilogueFunctor& e = d.epilogue;
  // Grouped kernels address each problem through arrays of pointers and strides.
  const std::string array = d.is_grouped() ? " *" : "";
  const std::string scheduler = d.tile.tile_scheduler == TileScheduler::StreamK
                                    ? "cutlass::gemm::StreamKScheduler"
                                    : "cutlass::gemm::PersistentScheduler";
  const bool conv = d.is_conv();
  const std::string collective =
      conv ? "cutlass::conv::collective::" : "cutlass::gemm::collective::";
  const std::string stages = d.tile.stages == 0
                                 ? collective +
                                       "StageCountAutoCarveout<static_cast<int>(sizeof(typename "
                                       "CollectiveEpilogue::SharedStorage))>"
                                 : collective + "StageCount<" + std::to_string(d.tile.stages) + ">";
  std::string out = "namespace tc_entry_" + i + " {\n";
  out += "using ElementA = " + cutlass_element(d.A.element) + ";\n";
  out += "using LayoutA = " + cutlass_layout(d.A.layout) + array + ";\n";
  out += "constexpr int AlignmentA = " + std::to_string(d.A.alignment) + ";\n";
  out += "using ElementB = " + cutlass_element(d.B.element) + ";\n";
  out += "using LayoutB = " + cutlass_layout(d.B.layout) + array + ";\n";
  out += "constexpr int AlignmentB = " + std::to_string(d.B.alignment) + ";\n";
  if (d.has_epilogue_graph()) {
    // The graph reads its inputs itself, but for one the epilogue may read as its source C.
    const FamilyEmitter* source = emitter_with(d, &FamilyEmitter::sm90_source_c);
    const bool source_c = source != nullptr && source->sm90_source_c(d) >= 0;
    out += "using ElementC = " + (source_c ? cutlass_element(d.C.element) : "void") + ";\n";
    out += "using ElementD = " + cutlass_element(d.C.element) + ";\n";
  } else {
    out += "using ElementC = " + cutlass_element(d.C.element) + ";\n";
    out += "using ElementD = ElementC;\n";
  }
  const FamilyEmitter* layout = emitter_with(d, &FamilyEmitter::sm90_layout_c);
  out += "using LayoutC = " + (layout ? layout->sm90_layout_c(d) : cutlass_layout(d.C.layout)) +
         array + ";\n";
  out += "constexpr int AlignmentC = " + std::to_string(d.C.alignment) + ";\n";
  out += "using ElementAccumulator = " + cutlass_element(math.element_accumulator) + ";\n";
  out += "using ElementCompute = " + cutlass_element(e.element_epilogue) + ";\n";
  if (bias_capable(d)) {
    const DataType bias = e.fusion.bias != BiasKind::none ? e.fusion.element_bias : DataType::f32;
    out += "using ElementBias = " + cutlass_element(bias) + ";\n";
  }
  if (e.fusion.aux_output) {
    out += "using ElementAux = " + cutlass_element(e.fusion.element_aux) + ";\n";
  }
  const FamilyEmitter* tile = emitter_with(d, &FamilyEmitter::sm90_tile_shape);
  out += "using TileShape = " +
         (tile ? tile->sm90_tile_shape(d) : static_shape(d.tile.threadblock_shape)) + ";\n";
  out += "using ClusterShape = " + static_shape(d.tile.cluster_shape) + ";\n";
  if (const FamilyEmitter* fusion = emitter_with(d, &FamilyEmitter::sm90_fusion)) {
    out += fusion->sm90_fusion(d, epilogue_schedule_type(d));
  } else {
    out += "using FusionOp = " + sm90_fusion_type(d) + ";\n";
  }
  out +=
      "using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<\n"
      "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,\n"
      "    cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementCompute,\n"
      "    ElementC, LayoutC, AlignmentC, ElementD, LayoutC, AlignmentC,\n    " +
      epilogue_schedule_type(d) + ", FusionOp>::CollectiveOp;\n";
  if (const FamilyEmitter* kernel = emitter_with(d, &FamilyEmitter::sm90_kernel)) {
    out += kernel->sm90_kernel(d, stages);
  } else {
    out +=
        "using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<\n"
        "    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, AlignmentA,\n"
        "    ElementB, LayoutB, AlignmentB, ElementAccumulator, TileShape, ClusterShape,\n    " +
        stages + ",\n    " + kernel_schedule_type(d) + ">::CollectiveOp;\n";
    out += d.is_grouped()
               ? "using Kernel = cutlass::gemm::kernel::GemmUniversal<\n"
                 "    cutlass::gemm::GroupProblemShape<cute::Shape<int, int, int>>, "
                 "CollectiveMainloop,\n    CollectiveEpilogue>;\n"
               : "using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, "
                 "int>,\n    CollectiveMainloop, CollectiveEpilogue, " +
                     scheduler + ">;\n";
    out += "using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;\n";
  }
  const std::string kernel = "tc_kernel_" + i;
  const std::string close = "}  // namespace tc_entry_" + i + "\n";
  const std::string ns = "tc_entry_" + i + "::";
  // EntryTraits: swizzle size, raster order, stream-K, bias, aux, activation arguments, kernel.
  std::string host = "constexpr tc_sm90::EntryTraits kTraits{" +
                     std::to_string(identity_swizzle_size(d.swizzle)) + ", " +
                     (d.swizzle == Swizzle::HorizontalSwizzle ? "2" : "0") + ", " +
                     (d.tile.tile_scheduler == TileScheduler::StreamK ? "true" : "false") + ", " +
                     (e.fusion.bias != BiasKind::none ? "true" : "false") + ", " +
                     (e.fusion.aux_output ? "true" : "false") + ", " +
                     std::to_string(activation_argument_count(e.activation)) + ", \"" + kernel +
                     "\"" + graph_traits_text(d) + "};\n";
  const FamilyEmitter* fill = emitter_with(d, &FamilyEmitter::sm90_fill);
  host += fill ? fill->sm90_fill(d) : fill_fusion_text(d);
  const std::string common = ns + "Gemm>(args, " + ns + "kTraits, &" + ns + "fill_fusion";
  host += close +
          abi_functions_text(i, "tc_sm90::can_implement<" + common + ", error, capacity)",
                             "tc_sm90::workspace_size<" + common + ")",
                             "tc_sm90::run<" + common + ", workspace, stream, error, capacity)");
  return out + halves_text(
                   close + kernel_definition_text(KernelForm::kDeviceKernel, ns + "Kernel", kernel),
                   host);
}

bool triggers_dependent_launch_early(const GemmDescription& description) {
  return description.arch == 90 && description.tile.tile_scheduler != TileScheduler::StreamK;
}

std::string module_class(const GemmDescription& description) {
  const FamilyEmitter* family = emitter_with(description, &FamilyEmitter::unit_class);
  const std::string unit = family ? family->unit_class(description) : std::string();
  return "sm" + std::to_string(description.arch) + (description.is_conv() ? " conv" : " gemm") +
         (unit.empty() ? "" : " " + unit) +
         (triggers_dependent_launch_early(description) ? " early" : "");
}

// Grid dependency control (programmatic dependent launch) for the kernels of a module.
constexpr std::string_view kGridDependencyControl = "#define CUTLASS_ENABLE_GDC_FOR_SM90 1\n";
// The griddepcontrol waits alone, for the sm_90a device pass: what CUTLASS_ENABLE_GDC_FOR_SM90
// enables there, without the early launch signal.
constexpr std::string_view kGridDependencyWaitsOnly =
    "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
    "#define CUTLASS_GDC_ENABLED\n"
    "#endif\n";

namespace {

std::string universal_sm90_entry_text(const GemmEntry& entry, int index) {
  if (entry.kind != GemmEntryKind::kUniversal) {
    throw Error(Status::unsupported(
        "mode: GemmSplitKParallel is an SM80 mode; SM90 kernels split K serially on the "
        "StreamK tile scheduler"));
  }
  return sm90_entry_text(entry, index);
}

std::string sm90_entry_kernels(const GemmEntry&, int index) {
  const std::string i = std::to_string(index);
  return "      &tc_image::kernel<tc_entry_" + i + "::Kernel>(\"tc_kernel_" + i + "\"),\n";
}

}  // namespace

std::string emit_sm90_gemm_module(const std::vector<GemmEntry>& entries) {
  bool early_trigger = true;
  // The Adapter header of each entry's family (sm90_gemm.cuh for GEMMs), then the extra ones.
  std::vector<std::string> headers, extra_headers;
  auto add = [](std::vector<std::string>& list, const char* header) {
    if (header != nullptr && std::find(list.begin(), list.end(), header) == list.end()) {
      list.push_back(header);
    }
  };
  for (const GemmEntry& entry : entries) {
    early_trigger = early_trigger && triggers_dependent_launch_early(entry.description);
    const FamilyEmitter* adapter = emitter_with(entry.description, &FamilyEmitter::sm90_header);
    add(headers, adapter ? adapter->sm90_header : "sm90_gemm.cuh");
    for (const FamilyEmitter& kind : family_emitters()) {
      if (kind.takes(entry.description)) add(extra_headers, kind.sm90_extra_header);
    }
  }
  headers.insert(headers.end(), extra_headers.begin(), extra_headers.end());
  const bool conv = entries.front().description.is_conv();
  return module_text(
      entries, conv ? "convolution" : "GEMM",
      conv ? "CUTLASS 3.x ConvUniversalAdapter, SM90" : "CUTLASS 3.x GemmUniversalAdapter, SM90",
      early_trigger ? kGridDependencyControl : kGridDependencyWaitsOnly, headers,
      universal_sm90_entry_text, sm90_entry_kernels);
}

}  // namespace tilecraft::emit
