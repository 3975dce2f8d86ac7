// tilecraft::api::GemmArguments: what the caller's tensors say about the GEMM they want.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "discover/operand_rules.hpp"
#include "discover/tensor_facts.hpp"
#include "tilecraft/core/extents.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/runtime/index_limits.hpp"

namespace tilecraft::api {
namespace {

using detail::alignment_of;
using detail::layout_of;

std::string dims(const TensorView& t) {
  std::string out = "(";
  for (int i = 0; i < t.rank; ++i) out += (i ? ", " : "") + std::to_string(t.shape[i]);
  return out + ")";
}

Status check_rank(const char* name, const TensorView& t, const char* shape_text) {
  if (t.rank == 2 || t.rank == 3) return Status::ok();
  return Status::invalid(std::string(name) + ": expected rank 2 " + shape_text +
                         " or 3 with a leading batch dimension L, got rank " +
                         std::to_string(t.rank) + ": " + t.describe());
}

std::string device_text(const TensorView& t) {
  return t.device == DeviceKind::kCuda ? "cuda:" + std::to_string(t.device_id) : "cpu";
}

// `t` on out's CUDA device.
Status check_device_of_out(const std::string& name, const TensorView& t, const TensorView& out) {
  if (t.device == DeviceKind::kCuda && t.device_id == out.device_id) return Status::ok();
  return Status::invalid(name + ": expected a tensor on " + device_text(out) +
                         " like out, got one on " + device_text(t));
}

// C: out's shape, dtype and device; a contiguous inner dimension.
Status check_c(const TensorView& C, const TensorView& out) {
  if (C.rank != out.rank ||
      !std::equal(C.shape.begin(), C.shape.begin() + C.rank, out.shape.begin())) {
    return Status::invalid("epilogue.C: expected the shape of out " + dims(out) + ", got " +
                           dims(C));
  }
  if (C.dtype != out.dtype) {
    return Status::invalid("epilogue.C: expected element type " + dsl_name(out.dtype) +
                           " like out, got " + dsl_name(C.dtype));
  }
  return check_device_of_out("epilogue.C", C, out);
}

// bias: a vector of N (M with bias_per_row) values, or (L, N) with one per batch.
Status check_bias(const EpilogueArguments& e, const TensorView& out, int64_t m, int64_t n,
                  int64_t batch) {
  const TensorView& b = e.bias;
  const int64_t length = e.bias_per_row ? m : n;
  const std::string what = e.bias_per_row ? "M = " + std::to_string(m) : "N = " + std::to_string(n);
  const bool one = b.rank == 1 && b.shape[0] == length;
  const bool per_batch = b.rank == 2 && b.shape[0] == batch && b.shape[1] == length;
  if (!one && !per_batch) {
    return Status::invalid("epilogue.bias: expected a vector of " + what + " values (or (L, " +
                           std::to_string(length) + ") with L = " + std::to_string(batch) + ")" +
                           (e.bias_per_row ? "" : "; bias_per_row for M values") + ", got " +
                           dims(b));
  }
  if (!is_bias_type(b.dtype)) {
    return Status::invalid("epilogue.bias: expected Float32, Float16 or BFloat16, got " +
                           dsl_name(b.dtype));
  }
  return check_device_of_out("epilogue.bias", b, out);
}

// A custom epilogue replaces the linear combination: its own operands, checked by name.
Status check_graph_epilogue(const EpilogueArguments& e, const TensorView& out, Layout layout_out,
                            int64_t m, int64_t n, int64_t batch) {
  const EpilogueGraph& graph = *e.graph;
  const EpilogueArguments plain{};
  const char* set = e.alpha != plain.alpha               ? "alpha"
                    : e.beta != plain.beta               ? "beta"
                    : e.C.data != nullptr                ? "C"
                    : e.activation != plain.activation   ? "activation"
                    : !e.activation_args.empty()         ? "activation_args"
                    : e.bias.data != nullptr             ? "bias"
                    : e.scale_a.given || e.scale_b.given ? "scale_a / scale_b"
                                                         : nullptr;
  if (set != nullptr) {
    return Status::invalid(std::string("epilogue.") + set +
                           ": with an epilogue graph, the graph computes the epilogue; pass its "
                           "inputs and scalars as epilogue.operands by the graph's names");
  }
  TILECRAFT_RETURN_IF_ERROR(graph.validate());
  const int primary = graph.primary_store();
  if (primary < 0) {
    return Status::invalid("epilogue.graph: it stores no value; out is the graph's D output");
  }
  const EpilogueNode& d = graph.nodes()[primary];
  if (d.dtype != out.dtype) {
    return Status::invalid("out: the epilogue graph's D output '" + d.name + "' is " +
                           dsl_name(d.dtype) + ", got out of " + dsl_name(out.dtype));
  }
  if (e.operands.tensors.count(d.name) != 0) {
    return Status::invalid("epilogue.operands." + d.name +
                           ": the graph's D output is out; do not pass it among the operands");
  }
  for (const auto& [name, tensor] : e.operands.tensors) {
    TILECRAFT_RETURN_IF_ERROR(check_device_of_out("epilogue." + name, tensor, out));
  }
  return check_epilogue_operands(graph, e.operands, m, n, static_cast<int>(batch), layout_out);
}

// Every tensor of the epilogue, checked in 64 bits before its extents are read.
Status check_epilogue_extents(const EpilogueArguments& e) {
  const std::pair<const char*, const TensorView*> tensors[] = {
      {"epilogue.C", &e.C},
      {"epilogue.bias", &e.bias},
      {"epilogue.scale_a", &e.scale_a.tensor},
      {"epilogue.scale_b", &e.scale_b.tensor}};
  for (const auto& [name, t] : tensors) {
    if (t->data) TILECRAFT_RETURN_IF_ERROR(check_tensor_extents(name, *t).status());
  }
  for (const auto& [name, t] : e.operands.tensors) {
    TILECRAFT_RETURN_IF_ERROR(check_tensor_extents("epilogue." + name, t).status());
  }
  return Status::ok();
}

Status check_epilogue(const EpilogueArguments& e, const TensorView& out, int64_t m, int64_t n,
                      int64_t batch) {
  if (!e.graph && (!e.operands.tensors.empty() || !e.operands.scalars.empty())) {
    return Status::invalid("epilogue.operands: given without an epilogue graph (epilogue.graph)");
  }
  TILECRAFT_RETURN_IF_ERROR(check_epilogue_extents(e));
  TILECRAFT_RETURN_IF_ERROR(check_finite({{"alpha", e.alpha}, {"beta", e.beta}}));
  TILECRAFT_RETURN_IF_ERROR(check_beta_has_c(e.beta, e.C.data != nullptr, "epilogue.C"));
  if (e.C.data) TILECRAFT_RETURN_IF_ERROR(check_c(e.C, out));
  TILECRAFT_RETURN_IF_ERROR(check_activation_args(e.activation, e.activation_args));
  if (e.bias.data) TILECRAFT_RETURN_IF_ERROR(check_bias(e, out, m, n, batch));
  return Status::ok();
}

}  // namespace

Result<GemmArguments> GemmArguments::make(const TensorView& A, const TensorView& B,
                                          const TensorView& out, DataType accumulator_type,
                                          const EpilogueArguments& epilogue, bool use_fast_accum) {
  TILECRAFT_RETURN_IF_ERROR(check_rank("A", A, "(M, K)"));
  TILECRAFT_RETURN_IF_ERROR(check_rank("B", B, "(K, N)"));
  TILECRAFT_RETURN_IF_ERROR(check_rank("out", out, "(M, N)"));
  if (B.rank != A.rank || out.rank != A.rank) {
    const bool b_differs = B.rank != A.rank;
    return Status::invalid(std::string(b_differs ? "B" : "out") + ": expected rank " +
                           std::to_string(A.rank) + " like A " + dims(A) + ", got rank " +
                           std::to_string(b_differs ? B.rank : out.rank) + " " +
                           dims(b_differs ? B : out));
  }
  const TensorView* tensors[] = {&A, &B, &out};
  const char* names[] = {"A", "B", "out"};
  for (int i = 0; i < 3; ++i) {
    TILECRAFT_RETURN_IF_ERROR(check_tensor_extents(names[i], *tensors[i]).status());
  }
  for (int i = 0; i < 3; ++i) {
    if (tensors[i]->device != DeviceKind::kCuda) {
      return Status::invalid(std::string(names[i]) + ": expected a CUDA tensor, got one on " +
                             device_text(*tensors[i]));
    }
    if (i > 0 && tensors[i]->device_id != A.device_id) {
      return Status::invalid(std::string(names[i]) + ": expected a tensor on " + device_text(A) +
                             " like A, got one on " + device_text(*tensors[i]));
    }
  }
  TILECRAFT_RETURN_IF_ERROR(check_accumulator_type(accumulator_type));
  const bool fp8 = A.dtype == DataType::e4m3 || A.dtype == DataType::e5m2;
  if (use_fast_accum && !fp8) {
    return Status::invalid(
        "use_fast_accum: fast accumulation applies to fp8 (Float8E4M3FN, Float8E5M2) operands, "
        "got A of " +
        dsl_name(A.dtype));
  }
  GemmArguments args;
  args.use_fast_accum_ = use_fast_accum;
  args.a_ = A;
  args.b_ = B;
  args.out_ = out;
  args.accumulator_ = accumulator_type;
  const int r = A.rank - 2;
  args.batch_ = A.rank == 3 ? A.shape[0] : 1;
  args.m_ = A.shape[r];
  args.k_ = A.shape[r + 1];
  args.n_ = B.shape[r + 1];
  if (A.rank == 3 && (B.shape[0] != args.batch_ || out.shape[0] != args.batch_)) {
    const bool b_differs = B.shape[0] != args.batch_;
    return Status::invalid(std::string(b_differs ? "B" : "out") +
                           ": expected batch dimension L = " + std::to_string(args.batch_) +
                           " like A " + dims(A) + ", got " +
                           std::to_string(b_differs ? B.shape[0] : out.shape[0]) + " in " +
                           dims(b_differs ? B : out));
  }
  if (B.shape[r] != args.k_) {
    return Status::invalid("B: expected K = " + std::to_string(args.k_) + " rows to match A " +
                           dims(A) + ", got " + dims(B));
  }
  if (out.shape[r] != args.m_ || out.shape[r + 1] != args.n_) {
    return Status::invalid("out: expected (M, N) = (" + std::to_string(args.m_) + ", " +
                           std::to_string(args.n_) + ") from A " + dims(A) + " and B " + dims(B) +
                           ", got " + dims(out));
  }
  if (args.m_ < 1 || args.n_ < 1 || args.k_ < 1 || args.batch_ < 1) {
    return Status::invalid("A, B, out: expected every extent >= 1, got A " + dims(A) + ", B " +
                           dims(B) + ", out " + dims(out));
  }
  // What no kernel can index: M, N, K above 32 bits, more batches than one launch takes.
  TILECRAFT_RETURN_IF_ERROR(check_index32("A", r, args.m_, "M"));
  TILECRAFT_RETURN_IF_ERROR(check_index32("A", r + 1, args.k_, "K"));
  TILECRAFT_RETURN_IF_ERROR(check_index32("B", r + 1, args.n_, "N"));
  if (args.batch_ > tilecraft::detail::kMaxBatch) {
    return Status::invalid("A: extent " + std::to_string(args.batch_) +
                           " of dimension 0 (batch L) exceeds the " +
                           std::to_string(tilecraft::detail::kMaxBatch) +
                           " batches one launch takes (the grid's z extent)");
  }
  for (int i = 0; i < 3; ++i) {
    auto layout = layout_of(names[i], *tensors[i]);
    if (!layout) return layout.status();
    args.layout_[i] = *layout;
    args.alignment_[i] = alignment_of(*tensors[i], *layout);
  }
  TILECRAFT_RETURN_IF_ERROR(check_epilogue(epilogue, out, args.m_, args.n_, args.batch_));
  if (epilogue.graph) {
    TILECRAFT_RETURN_IF_ERROR(
        check_graph_epilogue(epilogue, out, args.layout_[2], args.m_, args.n_, args.batch_));
  }
  args.epilogue_ = epilogue;
  args.layout_c_ = args.layout_[2];
  args.alignment_c_ = args.alignment_[2];
  if (epilogue.C.data) {
    auto layout = layout_of("C", epilogue.C);
    if (!layout) return layout.status();
    args.layout_c_ = *layout;
    args.alignment_c_ = alignment_of(epilogue.C, *layout);
  }
  return args;
}

std::string dsl_name(DataType type) {
  switch (type) {
    case DataType::f64:
      return "Float64";
    case DataType::f32:
      return "Float32";
    case DataType::tf32:
      return "TFloat32";
    case DataType::f16:
      return "Float16";
    case DataType::bf16:
      return "BFloat16";
    case DataType::s8:
      return "Int8";
    case DataType::u8:
      return "Uint8";
    case DataType::s32:
      return "Int32";
    case DataType::e4m3:
      return "Float8E4M3FN";
    case DataType::e5m2:
      return "Float8E5M2";
  }
  return std::string(long_name(type));
}

}  // namespace tilecraft::api
