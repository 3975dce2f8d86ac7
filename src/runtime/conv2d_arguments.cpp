#include "tilecraft/runtime/conv2d_arguments.hpp"

#include <array>
#include <string>
#include <vector>

#include "epilogue_graph_operands.hpp"
#include "operand_check.hpp"
#include "tilecraft/core/extents.hpp"
#include "tilecraft/describe/conv2d_rules.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/runtime/index_limits.hpp"

namespace tilecraft {
namespace {

// Extents in the layout's order: (N, H, W, C) and (K, R, S, C), or (N, D, H, W, C) and
// (K, T, R, S, C) for a 3-D convolution.
using Extent = std::vector<int64_t>;

std::string extent_text(const Extent& e) {
  std::string out = "(";
  for (size_t i = 0; i < e.size(); ++i) out += (i ? ", " : "") + std::to_string(e[i]);
  return out + ")";
}

struct Operand {
  std::string name;  // "A (x)"
  Extent extent;
};

// The three operands of the implicit GEMM for a convolution kind.
std::array<Operand, 3> operands_of(ConvKind kind, const Conv2dProblemSize& p) {
  const int64_t per_group = p.c / (p.groups > 0 ? p.groups : 1);
  Extent x{p.n, p.h, p.w, p.c}, w{p.k, p.r, p.s, per_group}, y{p.n, p.p, p.q, p.k};
  if (p.is_3d()) {
    x = {p.n, p.d, p.h, p.w, p.c};
    w = {p.k, p.t, p.r, p.s, per_group};
    y = {p.n, p.z, p.p, p.q, p.k};
  }
  switch (kind) {
    case ConvKind::Fprop:
      return {Operand{"A (x)", x}, Operand{"B (w)", w}, Operand{"D (y)", y}};
    case ConvKind::Dgrad:
      return {Operand{"A (dy)", y}, Operand{"B (w)", w}, Operand{"D (dx)", x}};
    case ConvKind::Wgrad:
      break;
  }
  return {Operand{"A (dy)", y}, Operand{"B (x)", x}, Operand{"D (dw)", w}};
}

int64_t count(const Extent& e) {
  int64_t n = 1;
  for (int64_t v : e) n *= v;
  return n;
}

bool is_channels_last(Layout layout) {
  return layout == Layout::TensorNHWC || layout == Layout::TensorNDHWC;
}

// Whether t holds the extent packed in `layout`'s order (or its torch channels-last view:
// (N, C, H, W) or (N, C, D, H, W)).
Status check_packed(const std::string& who, const TensorView& t, const Extent& e, Layout layout,
                    DataType element) {
  if (!t.data) return Status::invalid(who + ": expected a tensor, got a null data pointer");
  TILECRAFT_RETURN_IF_ERROR(detail::check_dtype(who, t, element));
  if (t.numel() != count(e)) {
    return Status::invalid(who + ": expected " + std::to_string(count(e)) + " elements " +
                           extent_text(e) + " in " + std::string(to_string(layout)) + ", got " +
                           t.describe());
  }
  const int rank = static_cast<int>(e.size());
  if (t.rank == 1 || (t.rank != rank && !is_channels_last(layout))) {
    if (t.is_contiguous()) return Status::ok();
    return Status::invalid(who + ": a flat operand must be contiguous; got " + t.describe());
  }
  if (t.rank != rank) {
    return Status::invalid(who + ": expected a " + std::to_string(rank) + "-D tensor " +
                           extent_text(e) + " or a flat one of " + std::to_string(count(e)) +
                           " elements, got " + t.describe());
  }
  if (!is_channels_last(layout)) {
    if (t.is_contiguous()) return Status::ok();
    return Status::invalid(who + ": an " + std::string(to_string(layout)) +
                           " operand must be packed (contiguous); got " + t.describe());
  }
  Extent packed_strides(rank, 1);
  for (int i = rank - 2; i >= 0; --i) packed_strides[i] = packed_strides[i + 1] * e[i + 1];
  // torch's order: tensor dim i holds layout dim torch_order[i] (N, C, then the spatial dims).
  std::vector<int> torch_order{0, rank - 1};
  for (int i = 1; i < rank - 1; ++i) torch_order.push_back(i);
  bool as_layout = true, as_torch = true;
  for (int i = 0; i < rank; ++i) {  // extents of 1 may have any stride
    if (t.shape[i] != e[i] || (e[i] > 1 && t.strides[i] != packed_strides[i])) as_layout = false;
    const int l = torch_order[i];
    if (t.shape[i] != e[l] || (e[l] > 1 && t.strides[i] != packed_strides[l])) as_torch = false;
  }
  if (as_layout || as_torch) return Status::ok();
  Extent torch_extent;
  for (int l : torch_order) torch_extent.push_back(e[l]);
  const bool three_d = rank == 5;
  return Status::invalid(
      who + ": expected a channels-last tensor: shape " + extent_text(e) + " packed, or " +
      (three_d ? "(N, C, D, H, W) = " : "(N, C, H, W) = ") + extent_text(torch_extent) +
      " in torch." + (three_d ? "channels_last_3d" : "channels_last") + " memory format; got " +
      t.describe() +
      (t.is_contiguous() && t.shape[1] == e[rank - 1]
           ? std::string(" (a channels-first tensor: call .to(memory_format=torch.") +
                 (three_d ? "channels_last_3d" : "channels_last") + "))"
           : ""));
}

// C given as one value per output channel: 1-D of `channels` values, or a tensor of the
// output's rank with stride 0 on every dimension but the channels.
bool is_per_channel(const TensorView& t, int64_t channels, int64_t full_count, int rank) {
  if (t.rank == 1) return t.shape[0] == channels && channels != full_count && t.strides[0] == 1;
  if (t.rank != rank) return false;
  int channel_dims = 0;
  for (int i = 0; i < rank; ++i) {
    if (t.shape[i] == channels && t.strides[i] == 1 && channels > 1) {
      ++channel_dims;
    } else if (t.shape[i] > 1 && t.strides[i] != 0) {
      return false;
    }
  }
  return channel_dims == 1;
}

// The bias of an SM90 epilogue that adds one: one value per output channel.
Status check_bias(const TensorView& bias, const GemmDescription& d, int64_t channels) {
  const bool adds_bias = d.epilogue.fusion.bias != BiasKind::none;
  if (!adds_bias) {
    if (!bias.data) return Status::ok();
    return Status::invalid(
        "bias: the operation's epilogue adds no bias; describe it with bias=\"column\" (arch=90), "
        "or pass the bias as a C of one value per channel with beta=1 (arch=80)");
  }
  const DataType element = d.epilogue.fusion.element_bias;
  if (!bias.data) {
    return Status::invalid("bias: the operation's epilogue adds a bias of " +
                           std::to_string(channels) + " " + spelled(element) +
                           " values (one per output channel); got none");
  }
  if (!detail::dtype_matches(bias.dtype, element)) {
    return Status::invalid("bias: expected " + spelled(element) +
                           " (the epilogue's element_bias), got " + spelled(bias.dtype));
  }
  if (bias.numel() != channels || !bias.is_contiguous()) {
    return Status::invalid("bias: expected a contiguous tensor of " + std::to_string(channels) +
                           " values (one per output channel), got " + bias.describe());
  }
  return Status::ok();
}

// The implicit GEMM's (M, N) output of a convolution whose output has extent `out`: fprop and
// dgrad write positions x channels, wgrad K x (R*S*C).
std::pair<int64_t, int64_t> output_matrix(ConvKind kind, const Extent& out) {
  if (kind == ConvKind::Wgrad) return {out.front(), count(out) / out.front()};
  return {count(out) / out.back(), out.back()};
}

bool is_full(const EpilogueNode& n) {
  return n.kind == EpilogueNodeKind::store ||
         (n.kind == EpilogueNodeKind::tensor && n.broadcast == Broadcast::full);
}

// A custom epilogue's operands, each tensor shaped like D checked as D is (check_packed) and seen
// as the row-major (M, N) matrix it packs; a 2-D tensor is taken as that matrix (its placement
// checks it).
Result<EpilogueOperands> as_matrices(const EpilogueGraph& graph, const EpilogueOperands& given,
                                     const Extent& out, Layout layout, int64_t m, int64_t n) {
  EpilogueOperands result = given;
  for (int node : graph.operand_nodes()) {
    const EpilogueNode& e = graph.nodes()[node];
    auto it = result.tensors.find(e.name);
    if (!is_full(e) || it == result.tensors.end() || !it->second.data || it->second.rank == 2) {
      continue;
    }
    const std::string label = "epilogue." + e.name;
    TILECRAFT_RETURN_IF_ERROR(check_tensor_extents(label, it->second).status());
    TILECRAFT_RETURN_IF_ERROR(check_packed(label, it->second, out, layout, e.dtype));
    TensorView& t = it->second;
    t.rank = 2;
    t.shape = {m, n};
    t.strides = {n, 1};
  }
  return result;
}

// What an operation with an epilogue graph does not take, and what one without takes not.
Status check_graph_inputs(const Conv2dProblem& problem, const GemmDescription& d) {
  if (!d.epilogue_graph) {
    const EpilogueOperands& e = problem.epilogue;
    if (e.tensors.empty() && e.scalars.empty()) return Status::ok();
    const std::string given =
        !e.tensors.empty() ? e.tensors.begin()->first : e.scalars.begin()->first;
    return Status::invalid("epilogue." + given +
                           ": the operation has no epilogue graph; it takes no epilogue operands");
  }
  if (problem.C.data) {
    return Status::invalid(
        "C: the operation's epilogue graph reads its own inputs; pass C as one of its operands (by "
        "the graph's name for it), not as C");
  }
  if (problem.bias.data) {
    return Status::invalid(
        "bias: the operation's epilogue graph reads its own inputs; pass the bias as one of its "
        "operands (a column input: one value per output channel), not as bias");
  }
  if (problem.split_k_mode == SplitKMode::Parallel) {
    return Status::unsupported(
        "split_k_mode Parallel: a custom epilogue runs on persistent SM90 kernels, which split K "
        "serially (SplitKMode.Serial on a kernel built with tile_scheduler StreamK)");
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Conv2dArguments>> Conv2dArguments::make(const GemmOperation& operation,
                                                               const Conv2dProblem& problem) {
  const GemmDescription& d = operation.description();
  if (!d.is_conv()) {
    return Status::invalid("operation: " + operation.procedural_name() +
                           " is not a convolution; describe a Conv2dOperation");
  }
  const Conv2dProblemSize& size = problem.problem_size;
  TILECRAFT_RETURN_IF_ERROR(size.validate());
  const bool three_d_operation = d.A.layout == Layout::TensorNDHWC;
  if (three_d_operation != size.is_3d()) {
    return Status::invalid(std::string("problem_size: ") +
                           (three_d_operation
                                ? "a 3-D operation (TensorNDHWC) needs a conv.Conv3dProblemSize"
                                : "a 3-D problem (conv.Conv3dProblemSize) needs an operation of "
                                  "TensorNDHWC operands") +
                           ", got " + size.to_string());
  }
  const std::pair<const char*, const TensorView*> tensors[] = {{"A", &problem.A},
                                                               {"B", &problem.B},
                                                               {"C", &problem.C},
                                                               {"D", &problem.D},
                                                               {"bias", &problem.bias}};
  for (const auto& [name, t] : tensors) {
    if (t->data) TILECRAFT_RETURN_IF_ERROR(check_tensor_extents(name, *t).status());
  }
  // What this kernel cannot index (its tiles, its grid), refused before it is compiled.
  TILECRAFT_RETURN_IF_ERROR(detail::check_kernel_indexes(
      d, detail::conv_indexing(d.conv.kind, size, "problem_size", "problem_size", "problem_size")));
  if (!is_valid(problem.split_k_mode)) {
    return Status::invalid("split_k_mode: expected cutlass.conv.SplitKMode.Serial or Parallel");
  }
  TILECRAFT_RETURN_IF_ERROR(validate_epilogue_params(d.epilogue, problem.output_op));
  const bool has_C = problem.C.data != nullptr;
  TILECRAFT_RETURN_IF_ERROR(detail::check_beta_without_c(has_C, problem.output_op.beta));
  const auto ops = operands_of(d.conv.kind, size);
  TILECRAFT_RETURN_IF_ERROR(
      check_packed(ops[0].name, problem.A, ops[0].extent, d.A.layout, d.A.element));
  TILECRAFT_RETURN_IF_ERROR(
      check_packed(ops[1].name, problem.B, ops[1].extent, d.B.layout, d.B.element));
  TILECRAFT_RETURN_IF_ERROR(
      check_packed(ops[2].name, problem.D, ops[2].extent, d.C.layout, d.C.element));
  bool c_per_channel = false;
  if (has_C) {
    const Extent& out = ops[2].extent;
    const std::string who = "C" + ops[2].name.substr(1);
    if (is_channels_last(d.C.layout) && d.conv.kind != ConvKind::Wgrad &&
        is_per_channel(problem.C, out.back(), count(out), static_cast<int>(out.size()))) {
      c_per_channel = true;
      TILECRAFT_RETURN_IF_ERROR(detail::check_dtype(who, problem.C, d.C.element));
    } else {
      TILECRAFT_RETURN_IF_ERROR(check_packed(who, problem.C, out, d.C.layout, d.C.element));
    }
  }
  TILECRAFT_RETURN_IF_ERROR(check_graph_inputs(problem, d));
  TILECRAFT_RETURN_IF_ERROR(check_bias(problem.bias, d, ops[2].extent.back()));
  EpilogueOperands matrices;  // graph operands' views; GraphOperands point into these
  detail::GraphOperands graph;
  if (d.epilogue_graph) {
    const auto [m, n] = output_matrix(d.conv.kind, ops[2].extent);
    auto viewed = as_matrices(*d.epilogue_graph, problem.epilogue, ops[2].extent, d.C.layout, m, n);
    if (!viewed) return viewed.status();
    matrices = std::move(*viewed);
    auto placed = detail::place_graph_operands(*d.epilogue_graph, matrices, m, n);
    if (!placed) return placed.status();
    graph = std::move(*placed);
  }
  int device = -1;
  for (const auto& [name, t] : tensors) {
    if (t->data) TILECRAFT_RETURN_IF_ERROR(detail::check_same_device(name, *t, &device));
  }
  for (const auto& [name, t] : matrices.tensors) {
    if (t.data)
      TILECRAFT_RETURN_IF_ERROR(detail::check_same_device("epilogue." + name, t, &device));
  }
  DeviceScope on_device(device);
  TILECRAFT_RETURN_IF_ERROR(on_device.status());
  TILECRAFT_RETURN_IF_ERROR(detail::check_device_runs(d.arch, operation.procedural_name()));

  // Before the parallel companion is compiled for nothing (the module refuses it too).
  if (problem.split_k_mode == SplitKMode::Parallel) {
    TILECRAFT_RETURN_IF_ERROR(check_parallel_split_k(d));
  }
  auto entry = operation.entry(
      problem.split_k_mode == SplitKMode::Parallel ? GemmMode::GemmSplitKParallel : GemmMode::Gemm);
  if (!entry) return entry.status();

  std::unique_ptr<Conv2dArguments> out(new Conv2dArguments());
  out->device_ = device;
  out->problem_ = problem;
  out->entry_ = *entry;
  tc_conv_args& a = out->args_;
  const void* dev_D = nullptr;
  TILECRAFT_RETURN_IF_ERROR(out->stage(problem.A, count(ops[0].extent), true, false, &a.A));
  TILECRAFT_RETURN_IF_ERROR(out->stage(problem.B, count(ops[1].extent), true, false, &a.B));
  TILECRAFT_RETURN_IF_ERROR(out->stage(problem.D, count(ops[2].extent), !has_C, true, &dev_D));
  a.D = const_cast<void*>(dev_D);
  if (problem.bias.data) {
    TILECRAFT_RETURN_IF_ERROR(out->stage(problem.bias, ops[2].extent.back(), true, false, &a.bias));
  }
  if (has_C) {
    const int64_t c_count = c_per_channel ? ops[2].extent.back() : count(ops[2].extent);
    TILECRAFT_RETURN_IF_ERROR(out->stage(problem.C, c_count, true, false, &a.C));
  } else {
    a.C = a.D;
  }
  TILECRAFT_RETURN_IF_ERROR(detail::stage_graph_operands(
      graph,
      [&](const TensorView& t, int64_t span, bool copy_in, bool copy_back, const void** data) {
        return out->stage(t, span, copy_in, copy_back, data);
      },
      &out->epilogue_tensors_, &out->epilogue_scalars_, &a.header));
  a.mode = problem.split_k_mode == SplitKMode::Parallel ? TC_CONV_MODE_SPLIT_K_PARALLEL
                                                        : TC_CONV_MODE_RUN;
  detail::set_output_op(a.header, problem.output_op);
  tc_conv_problem& c = a.conv;
  c.kind = static_cast<int32_t>(d.conv.kind);
  c.n = size.n;
  c.h = size.h;
  c.w = size.w;
  c.c = size.c;
  c.k = size.k;
  c.r = size.r;
  c.s = size.s;
  c.p = size.p;
  c.q = size.q;
  c.pad_h = size.pad_top;
  c.pad_w = size.pad_left;
  c.pad_bottom = size.pad_bottom;
  c.pad_right = size.pad_right;
  c.stride_h = size.stride_h;
  c.stride_w = size.stride_w;
  c.dilation_h = size.dilation_h;
  c.dilation_w = size.dilation_w;
  c.mode = size.mode == ConvMode::Convolution ? 1 : 0;
  c.split_k_slices = size.split_k_slices;
  c.groups = size.groups;
  c.c_per_channel = c_per_channel ? 1 : 0;
  c.spatial_dims = size.spatial_dims;
  c.d = size.d;
  c.t = size.t;
  c.z = size.z;
  c.pad_front = size.pad_front;
  c.pad_back = size.pad_back;
  c.stride_d = size.stride_d;
  c.dilation_d = size.dilation_d;
  TILECRAFT_RETURN_IF_ERROR(
      out->finish(operation.procedural_name(), problem.workspace, problem.workspace_bytes));
  return out;
}

}  // namespace tilecraft
