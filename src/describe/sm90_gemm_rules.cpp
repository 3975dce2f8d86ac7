#include "describe/sm90_gemm_rules.hpp"

#include "describe/checks.hpp"
#include "describe/sm90_tile_rules.hpp"

namespace tilecraft {
namespace {

using describe::one_of;

Status check_tma_alignment(const char* which, const TensorDescription& operand) {
  const int64_t bits = int64_t{operand.alignment} * size_in_bits(operand.element);
  if (bits != 128) {
    return Status::invalid(
        std::string(which) + ": alignment " + std::to_string(operand.alignment) + " of " +
        spelled(operand.element) + " is " + std::to_string(bits) +
        " bits; SM90 TMA kernels move 16-byte (128-bit) vectors: expected alignment " +
        std::to_string(128 / size_in_bits(operand.element)));
  }
  return Status::ok();
}

Status check_output_type(const GemmDescription& d) {
  const DataType a = d.tile.math_instruction.element_a;
  const DataType out = d.C.element;
  using enum DataType;
  // An epilogue graph converts its D itself (fp8 D from 16-bit operands, with its own scale).
  const bool graph = d.epilogue_graph.has_value() && !is_integer(a);
  const bool ok = is_fp8(a) || graph ? one_of(out, {f16, bf16, f32, e4m3, e5m2})
                  : a == s8          ? one_of(out, {s8, s32, f32})
                                     : one_of(out, {f16, bf16, f32});
  if (!ok) {
    return Status::unsupported("C: SM90 GEMMs on " + spelled(a) + " operands write " +
                               (is_fp8(a) ? "float16, bfloat16, float32 or fp8"
                                : a == s8 ? "int8, int32 or float32"
                                          : "float16, bfloat16 or float32") +
                               "; got " + spelled(out));
  }
  return Status::ok();
}

Status check_epilogue(const GemmDescription& d) {
  const EpilogueFunctor& e = d.epilogue;
  if (e.kind != EpilogueKind::LinearCombination &&
      e.kind != EpilogueKind::LinearCombinationGeneric) {
    return Status::unsupported(
        "epilogue_functor: SM90 kernels take LinearCombination or LinearCombinationGeneric "
        "(clamping is LinearCombinationGeneric(clamp) with runtime bounds); got " +
        std::string(to_string(e.kind)));
  }
  const DataType a = d.tile.math_instruction.element_a;
  // An epilogue graph multiplies by the scales it reads itself.
  if (is_fp8(a) && !e.fusion.per_tensor_scales && !d.epilogue_graph) {
    return Status::invalid("epilogue_functor: fp8 (" + spelled(a) +
                           ") operands carry per-tensor scales; describe the epilogue with "
                           "scales=True (pass 1.0 for a unit scale)");
  }
  if (e.fusion.per_tensor_scales && !is_fp8(a)) {
    return Status::unsupported("epilogue_functor: per-tensor scales are for fp8 operands; got " +
                               spelled(a));
  }
  if (is_integer(e.element_output) || e.element_epilogue == DataType::s32) {
    if (e.kind != EpilogueKind::LinearCombination || e.fusion.any()) {
      return Status::unsupported(
          "epilogue_functor: integer epilogues are plain LinearCombination (no activation, bias or "
          "aux output) on SM90");
    }
  }
  if (e.element_epilogue != DataType::f32 && e.element_epilogue != DataType::s32) {
    return Status::unsupported(
        "epilogue_functor: SM90 epilogues compute in float32 (or int32 for integer outputs); "
        "element_epilogue is " +
        spelled(e.element_epilogue));
  }
  return Status::ok();
}

}  // namespace

// The longest promotion interval offered: 64 k-blocks (2048 fp8 products at K 32 a block).
constexpr int kMaxPromotionInterval = 64;

// mma_promotion_interval: fp8 kernels that promote (not fast accumulation), single GEMMs (the
// grouped and convolution adapters leave CUTLASS's default), a multiple of the wgmma k-blocks of
// one k-tile (CUTLASS's can_implement), at most kMaxPromotionInterval.
Status check_promotion_interval(const GemmDescription& d) {
  const int interval = d.tile.mma_promotion_interval;
  if (interval == 0) return Status::ok();
  const MathInstruction& math = d.tile.math_instruction;
  const std::string what = "mma_promotion_interval " + std::to_string(interval);
  if (!is_fp8(math.element_a) || math.math_operation == MathOperation::multiply_add_fast_accum) {
    return Status::invalid(what +
                           ": only fp8 kernels with f32 promotion (not fast accumulation) "
                           "promote their partial sums; this kernel multiplies " +
                           spelled(math.element_a) +
                           (is_fp8(math.element_a) ? " with fast accumulation" : ""));
  }
  if (d.kind != GemmKind::Universal) {
    return Status::unsupported(what + ": grouped and convolution kernels keep CUTLASS's default");
  }
  const int blocks = d.tile.threadblock_shape[2] / math.instruction_shape[2];
  if (interval < 0 || interval > kMaxPromotionInterval || blocks <= 0 || interval % blocks != 0) {
    return Status::invalid(what + ": expected a multiple of the " + std::to_string(blocks) +
                           " wgmma k-blocks of a k-tile (tile K " +
                           std::to_string(d.tile.threadblock_shape[2]) + " / instruction K " +
                           std::to_string(math.instruction_shape[2]) + "), at most " +
                           std::to_string(kMaxPromotionInterval));
  }
  return Status::ok();
}

Status validate_sm90_gemm(const GemmDescription& d) {
  const MathInstruction& math = d.tile.math_instruction;
  if (!d.tile.is_sm90()) {
    return Status::invalid(
        "tile_description: arch 90 builds CUTLASS 3.x kernels from a wgmma math instruction "
        "(instruction_shape [64, N, K]) and an SM90 tile; got an SM80 instruction shape " +
        describe::triple_text(math.instruction_shape) +
        " (use arch=80 for SM80-style kernels, which also run on Hopper)");
  }
  for (const auto& [which, operand] :
       {std::pair{"A", &d.A}, std::pair{"B", &d.B}, std::pair{"C", &d.C}}) {
    if (operand->layout != Layout::RowMajor && operand->layout != Layout::ColumnMajor) {
      return Status::unsupported(std::string(which) +
                                 ": SM90 GEMMs take RowMajor or ColumnMajor operands, got " +
                                 spelled(operand->layout));
    }
    TILECRAFT_RETURN_IF_ERROR(check_tma_alignment(which, *operand));
  }
  if (size_in_bits(math.element_a) != 16 &&
      (d.A.layout != Layout::RowMajor || d.B.layout != Layout::ColumnMajor)) {
    return Status::unsupported(
        "layouts: wgmma reads " + std::to_string(size_in_bits(math.element_a)) +
        "-bit operands from shared memory K-major only, so SM90 " + spelled(math.element_a) +
        " GEMMs take A RowMajor and B ColumnMajor (TN); got A " + spelled(d.A.layout) + ", B " +
        spelled(d.B.layout) + " (16-bit types take all four)");
  }
  TILECRAFT_RETURN_IF_ERROR(check_output_type(d));
  TILECRAFT_RETURN_IF_ERROR(check_epilogue(d));
  TILECRAFT_RETURN_IF_ERROR(check_promotion_interval(d));
  if (d.swizzle == Swizzle::BatchedIdentitySwizzle &&
      d.tile.tile_scheduler == TileScheduler::StreamK) {
    return Status::unsupported(
        "swizzling_functor: BatchedIdentitySwizzle does not combine with the StreamK tile "
        "scheduler, which orders batches itself; use IdentitySwizzle1 (or 2/4/8)");
  }
  // The tile is valid (check_parts_agree): its extents are small, the sizes fit in 64 bits.
  const int bytes_c = size_in_bits(d.C.element) / 8;
  const auto& shape = d.tile.threadblock_shape;
  const int64_t stage_bytes =
      int64_t{shape[2]} * (int64_t{shape[0]} * size_in_bits(math.element_a) / 8 +
                           int64_t{shape[1]} * size_in_bits(math.element_b) / 8);
  const int64_t epilogue = sm90_epilogue_reserve_bytes(d.tile, bytes_c, bytes_c);
  // stages == 0 takes as many as fit beside the epilogue; the mainloop needs at least two.
  const int64_t stages = d.tile.stages == 0 ? 2 : d.tile.stages;
  if (stages * stage_bytes + epilogue > kMaxSharedMemoryBytesSm90) {
    return Status::invalid(
        "tile_description: " + std::to_string(stages) + " stages of threadblock_shape [" +
        std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ", " +
        std::to_string(shape[2]) + "] take " + std::to_string(stages * stage_bytes / 1024) +
        " KiB of shared memory and the " + spelled(d.C.element) + " epilogue about " +
        std::to_string(epilogue / 1024) + " KiB; SM90 allows " +
        std::to_string(kMaxSharedMemoryBytesSm90 / 1024) + " KiB" +
        (d.tile.stages == 0
             ? std::string(
                   " (stages=0 needs room for at least two stages): use a smaller tile K or tile")
             : std::string(": use fewer stages or stages=0 (as many as fit)")));
  }
  return Status::ok();
}

}  // namespace tilecraft
