// Epilogue graphs as CUTLASS 3.x visitors (Sm90EVT trees, or one Sm90TopologicalVisitor where a
// value is read twice) for the SM90 collective epilogue.
#include <algorithm>
#include <string>
#include <vector>

#include "emit/cutlass_names.hpp"
#include "emit/evt/evt_text.hpp"
#include "emit/sm90_gemm_parts.hpp"

namespace tilecraft::emit {
namespace {

constexpr std::string_view kFusion = "cutlass::epilogue::fusion::";
// One value per batch (whole-tensor reductions): the stride over (M, N, L).
constexpr std::string_view kBatchScalarStride = "cute::Stride<cute::_0, cute::_0, int64_t>";
constexpr std::string_view kStrideC = "cutlass::detail::TagToStrideC_t<LayoutC>";

std::string fusion(std::string_view name) { return std::string(kFusion) + std::string(name); }

std::string sm90_compute_type(const std::string& function, const std::string& element_output) {
  return fusion("Sm90Compute<") + function + ", " + element_output + ", ElementCompute, " +
         std::string(kEvtRound) + ">";
}

std::string sm90_reduce_functions(ReduceOp op, bool shuffle) {
  switch (op) {
    case ReduceOp::sum:
      return std::string("cutlass::plus, ") + (shuffle ? "cutlass::plus, " : "") +
             "cutlass::atomic_add";
    case ReduceOp::max:
      return std::string("tc_evt::ReduceMax, ") + (shuffle ? "tc_evt::ReduceMax, " : "") +
             "cutlass::atomic_maximum";
    case ReduceOp::abs_max:
      return std::string("tc_evt::ReduceAbsMax, ") + (shuffle ? "tc_evt::ReduceMax, " : "") +
             "cutlass::atomic_maximum";
  }
  return "?";
}

// The visitor of one lowered node (without its children); `index` names its load or store
// descriptor; graph node `source_c` is the kernel's source C.
std::string node_type(const EpilogueGraph& graph, const EvtNode& t, int index, int source_c) {
  const std::string i = std::to_string(index);
  switch (t.role) {
    case EvtRole::keep:
      return sm90_compute_type("tc_evt::First", "ElementCompute");
    case EvtRole::root:
      return sm90_compute_type("tc_evt::Identity", "ElementD");
    default:
      break;
  }
  if (t.source == source_c) return fusion("Sm90SrcFetch<ElementC>");
  const EpilogueNode& n = graph.nodes()[t.source];
  const std::string element = cutlass_element(n.dtype);
  switch (n.kind) {
    case EpilogueNodeKind::accumulator:
      return fusion("Sm90AccFetch");
    case EpilogueNodeKind::scalar:
    case EpilogueNodeKind::constant:
      return fusion("Sm90ScalarBroadcast<ElementCompute>");
    case EpilogueNodeKind::tensor:
      if (n.broadcast == Broadcast::row) {
        return fusion("Sm90ColBroadcast<0, EvtTileShape, ") + element + ", ElementCompute, " +
               std::string(kEvtRowVector) + ">";
      }
      if (n.broadcast == Broadcast::column) {
        return fusion("Sm90RowBroadcast<0, EvtTileShape, ") + element + ", ElementCompute, " +
               std::string(kEvtColumnVector) + ">";
      }
      return fusion("Sm90AuxLoad<Load") + i + "::Stages, EpilogueTile, " + element + ", Load" + i +
             "::Stride, Load" + i + "::SmemLayoutAtom, Load" + i + "::CopyOpS2R>";
    case EpilogueNodeKind::store:
      return fusion("Sm90AuxStore<Store") + i + "::Stages, EpilogueTile, " + element + ", " +
             std::string(kEvtRound) + ", Store" + i + "::Stride, Store" + i +
             "::SmemLayoutAtom, Store" + i + "::CopyOpR2S>";
    case EpilogueNodeKind::reduce: {
      const std::string tail = ", " + element + ", ElementCompute, " + std::string(kEvtRound);
      if (n.axis == ReduceAxis::all) {
        return fusion("Sm90ScalarReduction<") + sm90_reduce_functions(n.reduce, false) + tail +
               ", " + std::string(kBatchScalarStride) + ">";
      }
      // One value per row reduces along N: CUTLASS's column reduction, and the reverse.
      const bool per_row = n.axis == ReduceAxis::row;
      return fusion(per_row ? "Sm90ColReduction<" : "Sm90RowReduction<") +
             sm90_reduce_functions(n.reduce, true) + ", 0, EvtTileShape" + tail + ", " +
             std::string(per_row ? kEvtRowVector : kEvtColumnVector) + ">";
    }
    case EpilogueNodeKind::convert:
      return sm90_compute_type("tc_evt::Identity", element);
    default:
      return sm90_compute_type(evt_compute_function(n, graph.fast_math()), "ElementCompute");
  }
}

// The arguments of one lowered node (without its children's); the source C's are the kernel's.
std::string node_arguments(const EpilogueGraph& graph, const EvtSlots& slots, const EvtNode& t,
                           int source_c) {
  if (t.role == EvtRole::keep || t.role == EvtRole::root || t.source == source_c) return "{}";
  const EpilogueNode& n = graph.nodes()[t.source];
  const std::string element = cutlass_element(n.dtype);
  const std::string operand = "T[" + std::to_string(slots.operand[t.source]) + "]";
  // A full tensor's or a store's stride: laid out like C.
  const std::string matrix = "tc_sm90::make_stride<" + std::string(kStrideC) + ">(" + operand +
                             ".ld, " + operand + ".batch_stride)";
  switch (n.kind) {
    case EpilogueNodeKind::scalar:
      return "{{ElementCompute(a.header.epilogue_scalars[" +
             std::to_string(slots.scalar[t.source]) + "])}}";
    case EpilogueNodeKind::constant:
      return "{{ElementCompute(" + evt_float_literal(n.value) + ")}}";
    case EpilogueNodeKind::tensor: {
      const std::string data = "static_cast<" + element + " const*>(" + operand + ".data)";
      if (n.broadcast == Broadcast::full)
        return "{" + data + ", " + element + "(0), " + matrix + "}";
      const std::string_view stride =
          n.broadcast == Broadcast::row ? kEvtRowVector : kEvtColumnVector;
      return "{" + data + ", " + element + "(0), tc_evt::vector_stride<" + std::string(stride) +
             ">(" + operand + ".batch_stride)}";
    }
    case EpilogueNodeKind::store:
      return "{static_cast<" + element + "*>(" + operand + ".data), " + matrix + "}";
    case EpilogueNodeKind::reduce: {
      const std::string_view stride = n.axis == ReduceAxis::all   ? kBatchScalarStride
                                      : n.axis == ReduceAxis::row ? kEvtRowVector
                                                                  : kEvtColumnVector;
      const std::string data = n.axis == ReduceAxis::all
                                   ? "static_cast<" + element + "*>(" + operand + ".data)"
                                   : operand + ".data";
      return "{" + data + ", " + evt_reduction_identity(n.reduce) + ", tc_evt::vector_stride<" +
             std::string(stride) + ">(" + operand + ".batch_stride)}";
    }
    default:
      return "{}";
  }
}

}  // namespace

int sm90_evt_source_c(const GemmDescription& d) {
  if (!d.has_epilogue_graph()) return -1;
  const std::vector<EpilogueNode>& nodes = d.epilogue_graph->nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const EpilogueNode& n = nodes[i];
    if (n.kind == EpilogueNodeKind::tensor && n.broadcast == Broadcast::full &&
        n.dtype == d.C.element) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int sm90_evt_source_c_operand(const GemmDescription& d) {
  const int node = sm90_evt_source_c(d);
  if (node < 0) return -1;
  const std::vector<int> operands = d.epilogue_graph->operand_nodes();
  const auto found = std::find(operands.begin(), operands.end(), node);
  return found == operands.end() ? -1 : static_cast<int>(found - operands.begin());
}

constexpr EvtVisitorTemplates kSm90Visitors{"cutlass::epilogue::fusion::Sm90EVT",
                                            "cutlass::epilogue::fusion::Sm90TopologicalVisitor"};

std::string sm90_evt_types_text(const GemmDescription& d, const std::string& schedule) {
  const EpilogueGraph& graph = *d.epilogue_graph;
  const EvtVisitors visitors = lower_epilogue_graph(graph);
  const int source_c = sm90_evt_source_c(d);
  // The visitors take the CTA tile as flat (M, N, K) extents; a wgrad convolution's TileShape
  // nests its N and K modes.
  std::string out =
      "using EvtTileShape = decltype(cute::flatten(TileShape{}));\n"
      "using EpilogueDescriptor = cutlass::epilogue::collective::detail::EpilogueDescriptor<\n"
      "    EvtTileShape, cutlass::epilogue::collective::EpilogueTileAuto, ElementC, ElementD, " +
      schedule + ">;\nusing EpilogueTile = typename EpilogueDescriptor::EpilogueTile;\n";
  for (size_t i = 0; i < visitors.nodes.size(); ++i) {
    const EvtNode& t = visitors.nodes[i];
    if (t.role != EvtRole::value && t.role != EvtRole::sink) continue;
    const EpilogueNode& n = graph.nodes()[t.source];
    const bool load = n.kind == EpilogueNodeKind::tensor && n.broadcast == Broadcast::full &&
                      t.source != source_c;
    if (!load && n.kind != EpilogueNodeKind::store) continue;
    const std::string what = load ? "Load" : "Store";
    out += "using " + what + std::to_string(i) + " = cutlass::epilogue::collective::detail::Aux" +
           what + "Descriptor<EpilogueDescriptor, " + std::string(kStrideC) + ", " +
           cutlass_element(n.dtype) + ">;\n";
  }
  return out +
         evt_types_text(
             visitors,
             [&](const EvtNode& t, int index) { return node_type(graph, t, index, source_c); },
             kSm90Visitors, "FusionOp");
}

std::string sm90_evt_fill_text(const GemmDescription& d) {
  const EpilogueGraph& graph = *d.epilogue_graph;
  const EvtVisitors visitors = lower_epilogue_graph(graph);
  const EvtSlots slots = evt_slots(graph);
  const int source_c = sm90_evt_source_c(d);
  return evt_fill_fusion_text(
      "decltype(typename Gemm::Arguments{}.epilogue.thread)", sm90_args_block(d), visitors,
      [&](const EvtNode& t) { return node_arguments(graph, slots, t, source_c); });
}

}  // namespace tilecraft::emit
