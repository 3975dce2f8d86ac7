#include "tilecraft/describe/gemm_operation.hpp"

#include "describe/checks.hpp"
#include "describe/grouped_gemm_rules.hpp"
#include "describe/sm80_gemm_rules.hpp"
#include "describe/sm90_gemm_rules.hpp"
#include "tilecraft/describe/conv2d_rules.hpp"

namespace tilecraft {
namespace {

Status check_operand(const char* which, const TensorDescription& operand, DataType expected,
                     const char* expected_from, bool conv) {
  if (Status status = operand.validate(); !status) return status.with_context(which);
  if (operand.element != expected) {
    return Status::invalid(std::string(which) + ": element " + spelled(operand.element) +
                           " does not match " + expected_from + " " + spelled(expected));
  }
  if (!conv && !is_matrix_layout(operand.layout)) {
    return Status::invalid(std::string(which) + ": layout " + spelled(operand.layout) +
                           " is a convolution layout; a GEMM operand is RowMajor, ColumnMajor or "
                           "(int8) Row/ColumnMajorInterleaved32");
  }
  return Status::ok();
}

Status check_interleaved(const GemmDescription& d) {
  const bool any =
      is_interleaved(d.A.layout) || is_interleaved(d.B.layout) || is_interleaved(d.C.layout);
  if (!any) return Status::ok();
  if (d.A.layout != Layout::ColumnMajorInterleaved32 ||
      d.B.layout != Layout::RowMajorInterleaved32 ||
      d.C.layout != Layout::ColumnMajorInterleaved32) {
    return Status::unsupported(
        "layouts: the interleaved int8 GEMM takes A ColumnMajorInterleaved32, B "
        "RowMajorInterleaved32, C ColumnMajorInterleaved32; got A " +
        spelled(d.A.layout) + ", B " + spelled(d.B.layout) + ", C " + spelled(d.C.layout));
  }
  if (d.tile.math_instruction.opcode_class != OpClass::TensorOp) {
    return Status::unsupported("layouts: interleaved layouts need the TensorOp int8 instruction");
  }
  return Status::ok();
}

// Every arch: each part is valid, and the operands, epilogue and instruction agree on types.
Status check_parts_agree(const GemmDescription& d) {
  TILECRAFT_RETURN_IF_ERROR(d.tile.validate());
  const MathInstruction& math = d.tile.math_instruction;
  const bool conv = d.is_conv();
  TILECRAFT_RETURN_IF_ERROR(
      check_operand("A", d.A, math.element_a, "the math instruction's element_a", conv));
  TILECRAFT_RETURN_IF_ERROR(
      check_operand("B", d.B, math.element_b, "the math instruction's element_b", conv));
  TILECRAFT_RETURN_IF_ERROR(d.epilogue.validate());
  TILECRAFT_RETURN_IF_ERROR(
      check_operand("C", d.C, d.epilogue.element_output, "the epilogue's element_output", conv));
  if (d.epilogue.element_accumulator != math.element_accumulator) {
    return Status::invalid(
        "epilogue_functor: element_accumulator " + spelled(d.epilogue.element_accumulator) +
        " does not match the math instruction's accumulator " + spelled(math.element_accumulator));
  }
  if (d.epilogue.elements_per_access != d.C.alignment) {
    return Status::invalid("epilogue_functor: elements_per_access " +
                           std::to_string(d.epilogue.elements_per_access) +
                           " must equal C's alignment " + std::to_string(d.C.alignment));
  }
  return Status::ok();
}

}  // namespace

std::string_view to_string(GemmMode mode) {
  switch (mode) {
    case GemmMode::Gemm:
      return "Gemm";
    case GemmMode::GemmSplitKParallel:
      return "GemmSplitKParallel";
    case GemmMode::Batched:
      return "Batched";
    case GemmMode::Array:
      return "Array";
    case GemmMode::Grouped:
      return "Grouped";
  }
  return "?";
}

bool is_valid(GemmMode mode) { return to_string(mode) != "?"; }

std::string_view to_string(GemmKind kind) {
  switch (kind) {
    case GemmKind::Universal:
      return "Universal";
    case GemmKind::Grouped:
      return "Grouped";
    case GemmKind::Conv2d:
      return "Conv2d";
  }
  return "?";
}

bool is_valid(GemmKind kind) { return to_string(kind) != "?"; }

std::string_view to_string(SchedulerMode mode) {
  switch (mode) {
    case SchedulerMode::Host:
      return "Host";
    case SchedulerMode::Device:
      return "Device";
  }
  return "?";
}

bool is_valid(SchedulerMode mode) { return to_string(mode) != "?"; }

Result<GemmDescription> GemmDescription::make(int arch, const TileDescription& tile,
                                              const TensorDescription& A,
                                              const TensorDescription& B,
                                              const TensorDescription& C,
                                              const EpilogueFunctor& epilogue, Swizzle swizzle) {
  GemmDescription d{arch, tile, A, B, C, epilogue, swizzle};
  if (Status status = d.validate(); !status) return status;
  return d;
}

Result<GemmDescription> GemmDescription::with_epilogue_graph(EpilogueGraph graph) const {
  GemmDescription d = *this;
  d.epilogue_graph = std::move(graph);
  if (Status status = d.validate(); !status) return status;
  return d;
}

Result<GemmDescription> GemmDescription::make_grouped(
    int arch, const TileDescription& tile, const TensorDescription& A, const TensorDescription& B,
    const TensorDescription& C, const EpilogueFunctor& epilogue, Swizzle swizzle,
    SchedulerMode scheduler_mode) {
  GemmDescription d{arch, tile, A, B, C, epilogue, swizzle, GemmKind::Grouped, scheduler_mode};
  if (Status status = d.validate(); !status) return status;
  return d;
}

Result<GemmDescription> GemmDescription::make_conv2d(
    ConvKind conv_kind, IteratorAlgorithm iterator_algorithm, int arch, const TileDescription& tile,
    const TensorDescription& A, const TensorDescription& B, const TensorDescription& C,
    StrideSupport stride_support, const EpilogueFunctor& epilogue, Swizzle swizzle,
    GroupMode group_mode) {
  GemmDescription d{arch, tile, A, B, C, epilogue, swizzle, GemmKind::Conv2d};
  d.conv = {conv_kind, iterator_algorithm, stride_support, group_mode};
  if (Status status = d.validate(); !status) return status;
  return d;
}

namespace {

// What CUTLASS's 2.x epilogue visitor (DefaultGemmWithVisitor) can be built on: it walks the
// tensor-op output tile (OutputTileThreadLayout) row by row, the row's values contiguous.
Status check_sm80_epilogue_graph(const GemmDescription& d) {
  const OpClass op_class = d.tile.math_instruction.opcode_class;
  if (op_class != OpClass::TensorOp) {
    return Status::unsupported(
        "tile_description: epilogue graphs on arch=80 run on TensorOp kernels (CUTLASS's 2.x "
        "epilogue visitor follows the tensor-op output tile); got " +
        std::string(to_string(op_class)));
  }
  if (d.tile.math_instruction.element_accumulator == DataType::f64) {
    return Status::unsupported(
        "tile_description: epilogue graphs compute in Float32, which would round a Float64 "
        "GEMM's accumulator; use a float32-accumulating instruction");
  }
  // A column-major D is computed as the transposed problem (D^T = B^T A^T, row-major).
  const auto plain = [](Layout l) { return l == Layout::RowMajor || l == Layout::ColumnMajor; };
  if (!plain(d.C.layout)) {
    return Status::unsupported(
        "C: epilogue graphs on arch=80 write a row- or column-major D (CUTLASS's 2.x epilogue "
        "visitor stores plain rows); got " +
        std::string(to_string(d.C.layout)));
  }
  if (d.C.layout == Layout::ColumnMajor && (!plain(d.A.layout) || !plain(d.B.layout))) {
    return Status::unsupported(
        "C: a column-major D with an epilogue graph is computed as the transposed problem, "
        "which takes row- or column-major A and B; got A " +
        std::string(to_string(d.A.layout)) + ", B " + std::string(to_string(d.B.layout)));
  }
  return Status::ok();
}

// A convolution's custom epilogue runs on tilecraft's persistent SM90 kernels, which write the
// implicit GEMM's packed row-major output: the graph sees an (M, N) problem, M the output's
// positions (fprop y: N*P*Q, dgrad dx: N*H*W; wgrad dw: K) and N its channels (fprop K, dgrad C;
// wgrad R*S*C).
Status check_conv_epilogue_graph(const GemmDescription& d) {
  const KernelSchedule schedule = d.tile.kernel_schedule;
  const bool persistent = schedule == KernelSchedule::TmaWarpSpecializedCooperative ||
                          schedule == KernelSchedule::TmaWarpSpecializedPingpong;
  if (d.arch != 90 || !persistent) {
    return Status::unsupported(
        "epilogue graph: convolutions take custom epilogues on persistent SM90 kernels (arch=90, "
        "kernel_schedule TmaWarpSpecializedCooperative or TmaWarpSpecializedPingpong); got arch=" +
        std::to_string(d.arch) + " with kernel_schedule " + std::string(to_string(schedule)));
  }
  if (d.conv.group_mode != GroupMode::None ||
      d.conv.iterator_algorithm == IteratorAlgorithm::Direct) {
    return Status::unsupported(
        "epilogue graph: grouped and direct convolutions take epilogue functors; custom "
        "epilogues run on ungrouped persistent SM90 convolutions");
  }
  return Status::ok();
}

// A custom epilogue replaces the linear combination of a plain GEMM kernel.
Status check_epilogue_graph(const GemmDescription& d) {
  const EpilogueGraph& graph = *d.epilogue_graph;
  if (d.kind == GemmKind::Conv2d) {
    TILECRAFT_RETURN_IF_ERROR(check_conv_epilogue_graph(d));
  } else if (d.kind != GemmKind::Universal) {
    return Status::unsupported("epilogue graph: " + std::string(to_string(d.kind)) +
                               " kernels take epilogue functors; custom epilogues run on "
                               "GEMM (Universal) kernels and persistent SM90 convolutions");
  }
  const EpilogueFunctor& e = d.epilogue;
  if (e.kind != EpilogueKind::LinearCombination || e.activation != Activation::identity ||
      e.fusion.any()) {
    return Status::invalid(
        "epilogue_functor: with an epilogue graph, expected a plain "
        "LinearCombination (the graph computes the epilogue), got " +
        std::string(to_string(e.kind)) +
        (e.procedural_name().empty() ? "" : " " + e.procedural_name()));
  }
  if (e.element_epilogue != DataType::f32) {
    return Status::unsupported(
        "epilogue_functor: epilogue graphs compute in Float32; got "
        "element_epilogue " +
        std::string(long_name(e.element_epilogue)));
  }
  TILECRAFT_RETURN_IF_ERROR(graph.validate_for(d.arch));
  const EpilogueNode& stored = graph.nodes()[graph.primary_store()];
  if (stored.dtype != d.C.element) {
    return Status::invalid("epilogue graph: its D output '" + stored.name + "' is " +
                           std::string(long_name(stored.dtype)) + ", but C (the kernel's D) is " +
                           std::string(long_name(d.C.element)));
  }
  if (d.arch == 80) return check_sm80_epilogue_graph(d);
  return Status::ok();
}

}  // namespace

Status GemmDescription::validate() const {
  TILECRAFT_RETURN_IF_ERROR(describe::check_enumerator("", "kind", "GemmKind", kind));
  if (kind == GemmKind::Grouped) TILECRAFT_RETURN_IF_ERROR(validate_grouped_gemm(*this));
  TILECRAFT_RETURN_IF_ERROR(
      describe::check_enumerator("", "swizzling_functor", "Swizzle", swizzle));
  if (arch != 80 && arch != 90) {
    return Status::unsupported(
        "arch: expected 80 (SM80-style CUTLASS 2.x kernels, which also run on SM90) or 90 "
        "(CUTLASS 3.x TMA/wgmma kernels for Hopper), got " +
        std::to_string(arch));
  }
  if (arch == 80 && tile.is_sm90()) {
    return Status::invalid(
        "tile_description: a wgmma instruction shape [64, N, K] builds SM90 kernels; pass "
        "arch=90 (or use an SM80 mma.sync shape such as [16, 8, 16] for arch 80)");
  }
  if (arch == 80 && epilogue.needs_sm90()) {
    return Status::unsupported(
        "epilogue_functor: bias, aux output, per-tensor scales, gelu_tanh, clamp and fp8 "
        "outputs are SM90 epilogue fusions; pass arch=90 with an SM90 tile");
  }
  TILECRAFT_RETURN_IF_ERROR(check_parts_agree(*this));
  if (epilogue_graph) TILECRAFT_RETURN_IF_ERROR(check_epilogue_graph(*this));
  // CUTLASS 2.x has two-stage forms of its 2-D convolutions (ImplicitGemmPipelined) for the
  // analytic iterators, with accesses of any width: a layer of 3 channels, say.
  const bool two_stage_conv = kind == GemmKind::Conv2d && conv.group_mode == GroupMode::None &&
                              A.layout == Layout::TensorNHWC &&
                              conv.iterator_algorithm == IteratorAlgorithm::Analytic;
  if (arch == 80 && tile.stages == 2 && tile.math_instruction.opcode_class == OpClass::TensorOp &&
      ((kind != GemmKind::Universal && !two_stage_conv) || epilogue_graph)) {
    return Status::unsupported(
        "tile_description: the two-stage tensor-op mainloop (stages = 2) is offered for GEMM "
        "kernels with epilogue functors and 2-D convolutions with the analytic iterator; " +
        std::string(epilogue_graph ? "epilogue graphs" : to_string(kind)) +
        (kind == GemmKind::Conv2d
             ? " with iterator_algorithm " + std::string(to_string(conv.iterator_algorithm))
             : std::string()) +
        " take stages >= 3");
  }
  if (kind == GemmKind::Conv2d) return validate_conv2d(*this);
  if (arch == 90) return validate_sm90_gemm(*this);
  const MathInstruction& math = tile.math_instruction;
  if (epilogue.kind == EpilogueKind::FastLinearCombinationClamp && math.element_a != DataType::s8) {
    return Status::invalid(
        "epilogue_functor: FastLinearCombinationClamp is for int8 GEMMs, got "
        "operands " +
        spelled(math.element_a));
  }
  if (math.opcode_class == OpClass::TensorOp && tile.stages > 2) {
    // cp.async copies 4, 8 or 16 bytes: A and B accesses must be at least 32 bits wide. The
    // two-stage mainloop loads through registers, in accesses of any width.
    for (const auto& [which, operand] : {std::pair{"A", &A}, std::pair{"B", &B}}) {
      const int64_t bits = int64_t{operand->alignment} * size_in_bits(operand->element);
      if (bits < 32) {
        return Status::invalid(
            std::string(which) + ": alignment " + std::to_string(operand->alignment) + " of " +
            spelled(operand->element) + " is " + std::to_string(bits) +
            " bits; SM80 multistage tensor-op mainloops copy at least 32 bits (alignment >= " +
            std::to_string(32 / size_in_bits(operand->element)) +
            "); the two-stage mainloop (stages = 2) takes narrower accesses");
      }
    }
  }
  TILECRAFT_RETURN_IF_ERROR(check_interleaved(*this));
  if (math.opcode_class == OpClass::TensorOp && size_in_bits(math.element_a) == 8 &&
      !is_interleaved(A.layout) &&
      (A.layout != Layout::RowMajor || B.layout != Layout::ColumnMajor)) {
    // 8-bit mma.sync operands cannot be transposed by ldmatrix: CUTLASS has TN int8 kernels only.
    return Status::unsupported(
        "layouts: SM80 int8 tensor-op GEMMs take A RowMajor and B "
        "ColumnMajor (TN) or the interleaved layouts; got A " +
        spelled(A.layout) + ", B " + spelled(B.layout));
  }
  if (is_interleaved(A.layout) && (A.alignment != 16 || B.alignment != 16)) {
    return Status::invalid("A/B: interleaved int8 operands need alignment 16, got " +
                           std::to_string(A.alignment) + " and " + std::to_string(B.alignment));
  }
  return validate_sm80_operand_loads(*this);
}

std::string GemmDescription::procedural_name() const {
  const MathInstruction& math = tile.math_instruction;
  std::string math_suffix;
  switch (math.math_operation) {
    case MathOperation::multiply_add_fast_f32:
      math_suffix = "fastf32";
      break;
    case MathOperation::multiply_add_fast_f16:
      math_suffix = "fastf16";
      break;
    case MathOperation::multiply_add_fast_bf16:
      math_suffix = "fastbf16";
      break;
    default:
      break;
  }
  if (math.math_operation == MathOperation::multiply_add_fast_accum) math_suffix = "fastaccum";
  std::string out = "tilecraft_sm" + std::to_string(arch) + "_" +
                    (math.opcode_class == OpClass::Simt ? "simt" : "tensorop") + "_";
  out += (tile.is_sm90() ? std::string() : math.shape_name()) + math_suffix;
  if (kind == GemmKind::Conv2d) {
    out += std::string(to_string(conv.kind)) + "_" +
           std::string(to_string(conv.iterator_algorithm)) +
           (conv.stride_support == StrideSupport::Unity ? "_unity_" : "_");
    if (conv.group_mode != GroupMode::None) out += std::string(to_string(conv.group_mode)) + "_";
  } else {
    out += "gemm_";
  }
  if (kind == GemmKind::Grouped) {
    out += scheduler_mode == SchedulerMode::Host ? "grouped_host_" : "grouped_";
  }
  out += std::string(short_name(A.element)) + std::string(short_name(B.element)) + "_" +
         std::string(short_name(math.element_accumulator)) + "acc_" +
         std::string(short_name(C.element)) + "_";
  out += tile.procedural_name() + "_";
  out += std::string(short_name(A.layout)) + std::string(short_name(B.layout)) +
         std::string(short_name(C.layout)) + "_";
  out += "align" + std::to_string(A.alignment) + "x" + std::to_string(B.alignment) + "x" +
         std::to_string(C.alignment);
  const std::string epilogue_name = epilogue.procedural_name();
  if (!epilogue_name.empty()) out += "_" + epilogue_name;
  if (epilogue_graph) out += "_evt" + epilogue_graph->key();
  if (epilogue.element_epilogue != math.element_accumulator) {
    out += "_e" + std::string(short_name(epilogue.element_epilogue));
  }
  switch (swizzle) {
    case Swizzle::IdentitySwizzle1:
      break;
    case Swizzle::IdentitySwizzle2:
      out += "_swz2";
      break;
    case Swizzle::IdentitySwizzle4:
      out += "_swz4";
      break;
    case Swizzle::IdentitySwizzle8:
      out += "_swz8";
      break;
    case Swizzle::HorizontalSwizzle:
      out += "_swzh";
      break;
    case Swizzle::BatchedIdentitySwizzle:
      out += "_swzb";
      break;
  }
  return out;
}

}  // namespace tilecraft
