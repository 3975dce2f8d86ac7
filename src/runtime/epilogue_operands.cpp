#include "epilogue_operands.hpp"

#include <cmath>
#include <string>

#include "epilogue_graph_operands.hpp"

namespace tilecraft::detail {
namespace {

// The extent TMA copies contiguously must be a multiple of the operand's alignment.
Status check_contiguous_extent(const char* operand, const TensorDescription& desc,
                               const char* rows_name, int64_t rows, const char* cols_name,
                               int64_t cols) {
  const bool row_major = desc.layout == Layout::RowMajor;
  const char* extent_name = row_major ? cols_name : rows_name;
  const int64_t extent = row_major ? cols : rows;
  if (extent % desc.alignment != 0) {
    return Status::invalid(std::string(operand) + ": " + extent_name + "=" +
                           std::to_string(extent) + " must be a multiple of " +
                           std::to_string(desc.alignment) + " for a " +
                           std::string(to_string(desc.layout)) + " " + spelled(desc.element) + " " +
                           rows_name + "x" + cols_name +
                           " operand of an SM90 kernel (TMA copies 16-byte rows); pad the matrix "
                           "or use an arch=80 operation");
  }
  return Status::ok();
}

Status check_scale(const char* which, const ScaleArgument& scale, bool required) {
  if (!scale.given) {
    if (required) {
      return Status::invalid(std::string(which) +
                             ": the operation's fp8 epilogue applies per-tensor scales; pass " +
                             which + " (a float, or a one-element float32 CUDA tensor)");
    }
    return Status::ok();
  }
  if (!scale.tensor.data) {
    if (!std::isfinite(scale.value)) {
      return Status::invalid(std::string(which) + ": expected a finite scale, got " +
                             std::to_string(scale.value));
    }
    return Status::ok();
  }
  const TensorView& t = scale.tensor;
  if (t.dtype != DataType::f32 || t.numel() != 1 || t.device != DeviceKind::kCuda) {
    return Status::invalid(std::string(which) +
                           ": expected a float or a one-element float32 CUDA tensor, got " +
                           t.describe());
  }
  return Status::ok();
}

}  // namespace

Status check_sm90_problem(const GemmProblem& p, const GemmDescription& d) {
  if (p.mode == GemmMode::Array || p.mode == GemmMode::GemmSplitKParallel) {
    return Status::unsupported(
        "gemm_mode: SM90 kernels run Gemm (split-K through split_k_slices on a StreamK tile "
        "scheduler) and Batched; got " +
        std::string(to_string(p.mode)));
  }
  if (p.split_k_slices > 1 && d.tile.tile_scheduler != TileScheduler::StreamK) {
    return Status::unsupported(
        "split_k_slices: " + std::to_string(p.split_k_slices) +
        " needs an SM90 kernel built with tile_scheduler StreamK; this one uses " +
        std::string(to_string(d.tile.tile_scheduler)));
  }
  const GemmCoord& s = p.problem_size;
  TILECRAFT_RETURN_IF_ERROR(check_contiguous_extent("A", d.A, "M", s.m, "K", s.k));
  TILECRAFT_RETURN_IF_ERROR(check_contiguous_extent("B", d.B, "K", s.k, "N", s.n));
  TILECRAFT_RETURN_IF_ERROR(check_contiguous_extent("D", d.C, "M", s.m, "N", s.n));
  return Status::ok();
}

Status check_sm80_graph_problem(const GemmProblem& p, const GemmDescription& d) {
  if (d.arch != 80 || !d.epilogue_graph) return Status::ok();
  if (p.mode == GemmMode::Array || p.mode == GemmMode::GemmSplitKParallel) {
    return Status::unsupported(
        "gemm_mode: SM80 kernels with an epilogue graph (CUTLASS's 2.x epilogue visitor) run Gemm "
        "and Batched; got " +
        std::string(to_string(p.mode)));
  }
  if (p.split_k_slices > 1) {
    return Status::unsupported(
        "split_k_slices: SM80 kernels with an epilogue graph (CUTLASS's 2.x epilogue visitor) do "
        "not split K; expected 1, got " +
        std::to_string(p.split_k_slices));
  }
  return Status::ok();
}

TensorDescription aux_description(const GemmDescription& d) {
  const DataType element = d.epilogue.fusion.element_aux;
  return TensorDescription{element, d.C.layout, 128 / size_in_bits(element)};
}

Status check_epilogue_extras(const GemmProblem& p, const GemmDescription& d) {
  const EpilogueFusion& f = d.epilogue.fusion;
  if (p.bias.data && f.bias == BiasKind::none) {
    return Status::invalid(
        "bias: this operation's epilogue adds no bias; describe the epilogue with bias='row' or "
        "bias='column' (arch 90)");
  }
  if (!p.bias.data && f.bias != BiasKind::none) {
    return Status::invalid(std::string("bias: the operation's epilogue adds a ") +
                           (f.bias == BiasKind::per_row ? "per-row (M)" : "per-column (N)") +
                           " bias vector; none was given");
  }
  if (p.aux.data && !f.aux_output) {
    return Status::invalid(
        "aux: this operation's epilogue writes no aux output; describe the epilogue with aux=True "
        "(arch 90)");
  }
  if (!p.aux.data && f.aux_output) {
    return Status::invalid(
        "aux: the operation's epilogue writes the pre-activation value to an aux tensor shaped "
        "like D; none was given");
  }
  const ScaleArgument* scales[] = {&p.scale_a, &p.scale_b, &p.scale_c, &p.scale_d};
  const char* names[] = {"scale_a", "scale_b", "scale_c", "scale_d"};
  for (int i = 0; i < 4; ++i) {
    if (scales[i]->given && !f.per_tensor_scales) {
      return Status::invalid(std::string(names[i]) +
                             ": per-tensor scales are for fp8 operations described with "
                             "scales=True; this operation takes none");
    }
    if (f.per_tensor_scales) {
      TILECRAFT_RETURN_IF_ERROR(check_scale(names[i], *scales[i], i < 2));
    }
  }
  if (f.per_tensor_scales && !is_fp8(d.C.element) && p.scale_d.given && !p.scale_d.tensor.data &&
      p.scale_d.value != 1.0) {
    return Status::invalid("scale_d: scales only fp8 outputs (as in CUTLASS); D is " +
                           spelled(d.C.element) + ", so scale_d must be 1.0, got " +
                           std::to_string(p.scale_d.value));
  }
  return Status::ok();
}

Result<VectorPlacement> place_bias(const GemmProblem& p, const GemmDescription& d) {
  const EpilogueFusion& f = d.epilogue.fusion;
  const TensorView& t = p.bias;
  const bool per_row = f.bias == BiasKind::per_row;
  const int64_t length = per_row ? p.problem_size.m : p.problem_size.n;
  const std::string expected = std::string(per_row ? "M=" : "N=") + std::to_string(length);
  if (t.dtype != f.element_bias) {
    return Status::invalid("bias: expected " + spelled(f.element_bias) +
                           " (the epilogue's element_bias), got " + spelled(t.dtype));
  }
  const int batch = p.mode == GemmMode::Batched ? p.batch : 1;
  auto placed = place_vector("bias", t, t.dtype, length, expected, batch);
  if (!placed) return placed.status();
  return VectorPlacement{placed->batch_stride, placed->span_elements};
}

}  // namespace tilecraft::detail
