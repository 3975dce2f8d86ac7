// Epilogue graphs as CUTLASS 2.x visitors (Sm80EVT trees, or one Sm80TopologicalVisitor where a
// value is read twice) for SM80 GEMMs built by DefaultGemmWithVisitor. The 2.x epilogue works in
// the output tile's row-major thread map (OutputTileThreadLayout): CUTLASS's *row* broadcasts and
// reductions hold one value per column of the kernel's output, its *column* ones one per row. A
// row-major D is the kernel's output (our Broadcast::row / ReduceAxis::row, M values, are CUTLASS's
// column ones); a column-major D is the transpose of a row-major N x M output (the kernel computes
// D^T = B^T A^T), where our M values are one per column of the kernel's output. The root (the last
// visitor) is an AuxStore writing D.
#include <string>

#include "emit/cutlass_names.hpp"
#include "emit/evt/evt_text.hpp"

namespace tilecraft::emit {
namespace {

constexpr std::string_view kThreadblock = "cutlass::epilogue::threadblock::";
// Strides over the kernel's (M, N, L): a row-major matrix (leading dimension, batch stride) and
// one value per batch (VisitorScalarReduction takes an int).
constexpr std::string_view kMatrix = "cute::Stride<int64_t, cute::_1, int64_t>";
constexpr std::string_view kScalarStride = "cute::Stride<cute::_0, cute::_0, int>";

std::string visitor(std::string_view name) { return std::string(kThreadblock) + std::string(name); }

std::string sm80_compute_type(const std::string& function, const std::string& element_output) {
  return visitor("VisitorCompute<") + function + ", " + element_output + ", ElementCompute, " +
         std::string(kEvtRound) + ">";
}

std::string store_type(const std::string& element) {
  return visitor("VisitorAuxStore<OutputTileThreadMap, ") + element + ", " +
         std::string(kEvtRound) + ", " + std::string(kMatrix) + ">";
}

// The register (and warp shuffle) reduction, then the atomic one across threads and tiles. Every
// lane of a warp holds the warp's total after VisitorScalarReduction's shuffles and each one
// writes it: the tc_evt::Lane* atomics let the first lane alone write.
std::string sm80_reduce_functions(ReduceOp op, bool scalar) {
  const std::string atomic_add = scalar ? "tc_evt::LaneAtomicAdd" : "cutlass::atomic_add";
  const std::string atomic_max = scalar ? "tc_evt::LaneAtomicMax" : "cutlass::atomic_maximum";
  switch (op) {
    case ReduceOp::sum:
      return "cutlass::plus, " + atomic_add;
    case ReduceOp::max:
      return "tc_evt::ReduceMax, " + atomic_max;
    case ReduceOp::abs_max:
      // max(partial, |x|) also combines the partials, which are >= 0.
      return "tc_evt::ReduceAbsMax, " + atomic_max;
  }
  return "?";
}

// Whether a vector input or a reduction's output holds one value per row of the kernel's output
// (CUTLASS's column broadcast and reduction), rather than one per column.
bool per_kernel_row(const EpilogueNode& n, bool transposed) {
  const bool per_row = n.kind == EpilogueNodeKind::tensor ? n.broadcast == Broadcast::row
                                                          : n.axis == ReduceAxis::row;
  return per_row != transposed;
}

// The visitor of one lowered node (without its children).
std::string node_type(const EpilogueGraph& graph, const EvtNode& t, bool transposed) {
  switch (t.role) {
    case EvtRole::keep:
      return sm80_compute_type("tc_evt::First", "ElementCompute");
    case EvtRole::root:
      return store_type("ElementD");
    default:
      break;
  }
  const EpilogueNode& n = graph.nodes()[t.source];
  const std::string element = cutlass_element(n.dtype);
  switch (n.kind) {
    case EpilogueNodeKind::accumulator:
      return visitor("VisitorAccFetch");
    case EpilogueNodeKind::scalar:
    case EpilogueNodeKind::constant:
      return visitor("VisitorScalarBroadcast<ElementCompute>");
    case EpilogueNodeKind::tensor:
      if (n.broadcast == Broadcast::full) {
        return visitor("VisitorAuxLoad<OutputTileThreadMap, ") + element + ", " +
               std::string(kMatrix) + ">";
      }
      if (per_kernel_row(n, transposed)) {
        return visitor("VisitorColBroadcast<OutputTileThreadMap, ") + element + ", " +
               std::string(kEvtRowVector) + ">";
      }
      return visitor("VisitorRowBroadcast<OutputTileThreadMap, ") + element + ", " +
             std::string(kEvtColumnVector) + ">";
    case EpilogueNodeKind::store:
      return store_type(element);
    case EpilogueNodeKind::reduce: {
      const std::string tail = ", OutputTileThreadMap, " + element + ", ElementCompute, " +
                               std::string(kEvtRound) + ", ";
      if (n.axis == ReduceAxis::all) {
        return visitor("VisitorScalarReduction<") + sm80_reduce_functions(n.reduce, true) + tail +
               std::string(kScalarStride) + ">";
      }
      // One value per row reduces along the row: CUTLASS's column reduction, and the reverse.
      const bool per_row = per_kernel_row(n, transposed);
      return visitor(per_row ? "VisitorColReduction<" : "VisitorRowReduction<") +
             sm80_reduce_functions(n.reduce, false) + tail +
             std::string(per_row ? kEvtRowVector : kEvtColumnVector) + ">";
    }
    case EpilogueNodeKind::convert:
      return sm80_compute_type("tc_evt::Identity", element);
    default:
      return sm80_compute_type(evt_compute_function(n, graph.fast_math()), "ElementCompute");
  }
}

std::string matrix_stride(const std::string& ld, const std::string& batch_stride) {
  return "{int64_t(" + ld + "), cute::_1{}, int64_t(" + batch_stride + ")}";
}

// The arguments of one lowered node (without its children's). Full tensors are laid out like D:
// a column-major D's leading dimension is that of the kernel's row-major transpose.
std::string node_arguments(const EpilogueGraph& graph, const EvtSlots& slots, const EvtNode& t,
                           bool transposed) {
  if (t.role == EvtRole::keep) return "{}";
  if (t.role == EvtRole::root) {
    return "{static_cast<ElementD*>(a.D), " + matrix_stride("a.ldd", "a.batch_stride_D") + "}";
  }
  const EpilogueNode& n = graph.nodes()[t.source];
  const std::string element = cutlass_element(n.dtype);
  const std::string operand = "T[" + std::to_string(slots.operand[t.source]) + "]";
  const std::string pointer = "static_cast<" + element + "*>(" + operand + ".data)";
  switch (n.kind) {
    case EpilogueNodeKind::scalar:
      return "{{ElementCompute(a.header.epilogue_scalars[" +
             std::to_string(slots.scalar[t.source]) + "])}}";
    case EpilogueNodeKind::constant:
      return "{{ElementCompute(" + evt_float_literal(n.value) + ")}}";
    case EpilogueNodeKind::tensor: {
      if (n.broadcast == Broadcast::full) {
        return "{" + pointer + ", " + element + "(0), " +
               matrix_stride(operand + ".ld", operand + ".batch_stride") + "}";
      }
      const std::string_view stride =
          per_kernel_row(n, transposed) ? kEvtRowVector : kEvtColumnVector;
      return "{" + pointer + ", " + element + "(0), tc_evt::vector_stride<" + std::string(stride) +
             ">(" + operand + ".batch_stride)}";
    }
    case EpilogueNodeKind::store:
      return "{" + pointer + ", " + matrix_stride(operand + ".ld", operand + ".batch_stride") + "}";
    case EpilogueNodeKind::reduce: {
      const std::string_view stride = n.axis == ReduceAxis::all       ? kScalarStride
                                      : per_kernel_row(n, transposed) ? kEvtRowVector
                                                                      : kEvtColumnVector;
      return "{" + pointer + ", " + evt_reduction_identity(n.reduce) + ", tc_evt::vector_stride<" +
             std::string(stride) + ">(" + operand + ".batch_stride)}";
    }
    default:
      return "{}";
  }
}

}  // namespace

constexpr EvtVisitorTemplates kSm80Visitors{
    "cutlass::epilogue::threadblock::Sm80EVT",
    "cutlass::epilogue::threadblock::Sm80TopologicalVisitor"};

bool sm80_evt_transposed(const GemmDescription& d) { return d.C.layout == Layout::ColumnMajor; }

std::string sm80_evt_types_text(const GemmDescription& d) {
  const EpilogueGraph& graph = *d.epilogue_graph;
  const EvtVisitors visitors = lower_epilogue_graph(graph);
  const std::string out = "using OutputTileThreadMap = " + visitor("OutputTileThreadLayout<") +
                          cutlass_gemm_shape(d.tile.threadblock_shape) + ", " +
                          cutlass_gemm_shape(d.tile.warp_shape()) + ", ElementD, " +
                          std::to_string(d.C.alignment) + ", " +
                          std::to_string(kSm80EvtEpilogueStages) + ">;\n";
  const bool transposed = sm80_evt_transposed(d);
  return out + evt_types_text(
                   visitors, [&](const EvtNode& t, int) { return node_type(graph, t, transposed); },
                   kSm80Visitors, "FusionCallbacks");
}

std::string sm80_evt_fill_text(const GemmDescription& d) {
  const EpilogueGraph& graph = *d.epilogue_graph;
  const EvtVisitors visitors = lower_epilogue_graph(graph);
  const EvtSlots slots = evt_slots(graph);
  const bool transposed = sm80_evt_transposed(d);
  // Reductions accumulate atomically into their outputs: the adapter sets them to the
  // reduction's identity before each launch (one value, or M or N values per batch).
  std::string resets;
  int reset_count = 0;
  for (int node : graph.operand_nodes()) {
    const EpilogueNode& n = graph.nodes()[node];
    if (n.kind != EpilogueNodeKind::reduce) continue;
    const int extent = n.axis == ReduceAxis::all ? 0 : (n.axis == ReduceAxis::row ? 1 : 2);
    resets += "    {" + std::to_string(slots.operand[node]) + ", " + std::to_string(extent) + ", " +
              evt_reduction_identity(n.reduce) + "},\n";
    ++reset_count;
  }
  std::string out;
  if (reset_count > 0) out += "constexpr tc_gemm::ResetOutput kResets[] = {\n" + resets + "};\n";
  out += "constexpr tc_gemm::VisitorTraits kTraits{" +
         std::to_string(graph.operand_nodes().size()) + ", " +
         std::to_string(graph.scalar_nodes().size()) + ", " +
         (reset_count > 0 ? "kResets" : "nullptr") + ", " + std::to_string(reset_count) + "};\n";
  return out + evt_fill_fusion_text(
                   "typename FusionCallbacks::Arguments", "tc_gemm_args", visitors,
                   [&](const EvtNode& t) { return node_arguments(graph, slots, t, transposed); });
}

}  // namespace tilecraft::emit
