#include "epilogue_graph_operands.hpp"

#include <cmath>
#include <string>

#include "tilecraft/core/extents.hpp"

namespace tilecraft::detail {
namespace {

std::string kind_text(const EpilogueNode& n) {
  switch (n.kind) {
    case EpilogueNodeKind::tensor:
      return n.broadcast == Broadcast::full  ? "an input tensor shaped like D"
             : n.broadcast == Broadcast::row ? "an input of M values"
                                             : "an input of N values";
    case EpilogueNodeKind::store:
      return "an output shaped like D";
    default:
      return n.axis == ReduceAxis::all   ? "a reduction's output (one value)"
             : n.axis == ReduceAxis::row ? "a reduction's output of M values"
                                         : "a reduction's output of N values";
  }
}

std::string names_text(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

// (.., M, 1) for M values and (.., 1, N) for N values, as the traced function broadcasts them:
// the broadcast dimension dropped.
TensorView squeezed(const TensorView& t, bool per_row) {
  TensorView out = t;
  if (t.rank < 2) return out;
  const int drop = per_row ? t.rank - 1 : t.rank - 2;
  if (t.shape[drop] != 1) return out;
  for (int i = drop; i + 1 < t.rank; ++i) {
    out.shape[i] = t.shape[i + 1];
    out.strides[i] = t.strides[i + 1];
  }
  out.rank = t.rank - 1;
  return out;
}

struct Extent {
  int64_t m = 0, n = 0;
  int batch = 1;
  Layout layout_d = Layout::RowMajor;
};

Result<OperandPlacement> place_one(const std::string& label, const EpilogueNode& n,
                                   const TensorView& t, const Extent& e) {
  const int64_t m = e.m, n_extent = e.n;
  const int batch = e.batch;
  if (t.dtype != n.dtype) {
    return Status::invalid(label + ": expected " + spelled(n.dtype) + " (the epilogue graph's " +
                           "type), got " + spelled(t.dtype));
  }
  const bool full = (n.kind == EpilogueNodeKind::tensor && n.broadcast == Broadcast::full) ||
                    n.kind == EpilogueNodeKind::store;
  if (full) {
    // Laid out like D, accessed 16 bytes at a time.
    TensorDescription desc{n.dtype, e.layout_d, 128 / size_in_bits(n.dtype)};
    const bool input = n.kind == EpilogueNodeKind::tensor;
    if (input && batch > 1 && t.rank == 2) {
      // One (M, N) input read by every batch.
      auto placed = place_operand(label.c_str(), t, desc, m, n_extent, 1, true);
      if (placed) placed->batch_stride = 0;
      return placed;
    }
    return place_operand(label.c_str(), t, desc, m, n_extent, batch, input);
  }
  const bool per_row = n.kind == EpilogueNodeKind::tensor ? n.broadcast == Broadcast::row
                                                          : n.axis == ReduceAxis::row;
  if (n.kind == EpilogueNodeKind::reduce && n.axis == ReduceAxis::all) {
    const bool one = t.numel() == 1 && t.rank <= 1;
    const bool per_batch = t.rank == 1 && t.shape[0] == batch && (batch == 1 || t.strides[0] == 1);
    if (!one && !per_batch) {
      return Status::invalid(label + ": expected one value" +
                             (batch > 1 ? " per batch (" + std::to_string(batch) + ",)" : "") +
                             ", got " + t.describe());
    }
    if (batch > 1 && !per_batch) {
      return Status::invalid(label + ": expected one value per batch (" + std::to_string(batch) +
                             ",), got " + t.describe());
    }
    OperandPlacement out;
    out.batch_stride = batch > 1 ? 1 : 0;
    out.span_elements = batch;
    return out;
  }
  const int64_t length = per_row ? m : n_extent;
  const std::string expected = std::string(per_row ? "M=" : "N=") + std::to_string(length);
  // Outputs need one vector per batch; inputs may share one.
  const TensorView vector = length == 1 ? t : squeezed(t, per_row);
  if (n.kind == EpilogueNodeKind::reduce && batch > 1 && vector.rank != 2) {
    return Status::invalid(label + ": expected (batch=" + std::to_string(batch) + ", " + expected +
                           "), one vector per batch, got " + t.describe());
  }
  return place_vector(label, vector, n.dtype, length, expected, batch);
}

}  // namespace

Result<OperandPlacement> place_vector(const std::string& label, const TensorView& t, DataType dtype,
                                      int64_t length, const std::string& expected, int batch) {
  OperandPlacement out;
  if (t.rank == 1) {
    if (t.shape[0] != length || (length > 1 && t.strides[0] != 1)) {
      return Status::invalid(label + ": expected a contiguous vector of " + expected +
                             " elements, got " + t.describe());
    }
    out.span_elements = length;
  } else if (t.rank == 2) {
    if (t.shape[0] != batch || t.shape[1] != length || (length > 1 && t.strides[1] != 1)) {
      return Status::invalid(label + ": expected a vector of " + expected +
                             " or (batch=" + std::to_string(batch) + ", " + expected +
                             ") with contiguous rows, got " + t.describe());
    }
    out.batch_stride = batch > 1 ? t.strides[0] : 0;
    out.span_elements = (batch - 1) * out.batch_stride + length;
  } else {
    return Status::invalid(label + ": expected a 1-D vector of " + expected + " elements, got " +
                           t.describe());
  }
  const auto address = reinterpret_cast<uintptr_t>(t.data);
  if (address % 16 != 0 || (out.batch_stride * storage_bytes(dtype)) % 16 != 0) {
    return Status::invalid(
        label + ": the vector (and each batch's) must start 16-byte aligned; got " + t.describe());
  }
  return out;
}

namespace {

Result<GraphOperands> place_operands(const EpilogueGraph& graph, const EpilogueOperands& given,
                                     const Extent& extent) {
  GraphOperands out;
  std::vector<std::string> tensor_names, scalar_names;
  for (int node : graph.operand_nodes()) tensor_names.push_back(graph.nodes()[node].name);
  for (int node : graph.scalar_nodes()) scalar_names.push_back(graph.nodes()[node].name);
  for (const auto& [name, view] : given.tensors) {
    bool known = false;
    for (const std::string& n : tensor_names) known = known || n == name;
    if (!known) {
      const int primary = graph.primary_store();
      const std::string d_name = primary < 0 ? "" : graph.nodes()[primary].name;
      return Status::invalid(
          "epilogue." + name + ": the epilogue graph has no tensor of that name (it takes " +
          names_text(tensor_names) +
          (d_name.empty() ? ")" : "; its D output '" + d_name + "' is the GEMM's D)"));
    }
  }
  for (const auto& [name, value] : given.scalars) {
    bool known = false;
    for (const std::string& n : scalar_names) known = known || n == name;
    if (!known) {
      return Status::invalid("epilogue." + name +
                             ": the epilogue graph has no scalar of that name (it takes " +
                             names_text(scalar_names) + ")");
    }
  }
  for (int node : graph.operand_nodes()) {
    const EpilogueNode& n = graph.nodes()[node];
    const std::string label = "epilogue." + n.name;
    auto it = given.tensors.find(n.name);
    if (it == given.tensors.end() || !it->second.data) {
      return Status::invalid(label + ": the epilogue graph needs " + kind_text(n) + " of " +
                             spelled(n.dtype) + "; none was given");
    }
    TILECRAFT_RETURN_IF_ERROR(check_tensor_extents(label, it->second).status());
    auto placed = place_one(label, n, it->second, extent);
    if (!placed) return placed.status();
    out.tensors.push_back({&it->second, *placed, n.kind != EpilogueNodeKind::tensor});
  }
  for (int node : graph.scalar_nodes()) {
    const std::string& scalar = graph.nodes()[node].name;
    auto it = given.scalars.find(scalar);
    if (it == given.scalars.end()) {
      return Status::invalid("epilogue." + scalar +
                             ": the epilogue graph reads this scalar; none was given");
    }
    if (!std::isfinite(it->second)) {
      return Status::invalid("epilogue." + scalar + ": expected a finite number, got " +
                             std::to_string(it->second));
    }
    out.scalars.push_back(it->second);
  }
  return out;
}

}  // namespace

Result<GraphOperands> place_graph_operands(const GemmProblem& p, const GemmDescription& d) {
  if (!d.epilogue_graph) {
    if (!p.epilogue.tensors.empty() || !p.epilogue.scalars.empty()) {
      const std::string given = !p.epilogue.tensors.empty() ? p.epilogue.tensors.begin()->first
                                                            : p.epilogue.scalars.begin()->first;
      return Status::invalid(
          "epilogue." + given +
          ": the operation has no epilogue graph; it takes no epilogue operands");
    }
    return GraphOperands{};
  }
  const Extent extent{p.problem_size.m, p.problem_size.n, p.mode == GemmMode::Batched ? p.batch : 1,
                      d.C.layout};
  return place_operands(*d.epilogue_graph, p.epilogue, extent);
}

Status stage_graph_operands(const GraphOperands& operands, const StageTensor& stage,
                            std::vector<tc_epilogue_tensor>* tensors, std::vector<double>* scalars,
                            tc_args_header* header) {
  for (const GraphOperand& operand : operands.tensors) {
    const void* data = nullptr;
    TILECRAFT_RETURN_IF_ERROR(stage(*operand.tensor, operand.placement.span_elements,
                                    !operand.output, operand.output, &data));
    tensors->push_back(
        {const_cast<void*>(data), operand.placement.ld, operand.placement.batch_stride});
  }
  *scalars = operands.scalars;
  header->num_epilogue_tensors = static_cast<int32_t>(tensors->size());
  header->epilogue_tensors = tensors->empty() ? nullptr : tensors->data();
  header->num_epilogue_scalars = static_cast<int32_t>(scalars->size());
  header->epilogue_scalars = scalars->empty() ? nullptr : scalars->data();
  return Status::ok();
}

Result<GraphOperands> place_graph_operands(const EpilogueGraph& graph,
                                           const EpilogueOperands& operands, int64_t m, int64_t n) {
  return place_operands(graph, operands, {m, n, 1, Layout::RowMajor});
}

}  // namespace tilecraft::detail

namespace tilecraft {

Status check_epilogue_operands(const EpilogueGraph& graph, const EpilogueOperands& operands,
                               int64_t m, int64_t n, int batch, Layout layout_d) {
  auto placed = detail::place_operands(graph, operands, {m, n, batch, layout_d});
  return placed ? Status::ok() : placed.status();
}

}  // namespace tilecraft
