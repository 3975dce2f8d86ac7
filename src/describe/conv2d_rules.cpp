#include "tilecraft/describe/conv2d_rules.hpp"

#include <string>

#include "describe/checks.hpp"
#include "describe/sm80_gemm_rules.hpp"
#include "describe/sm90_gemm_rules.hpp"

namespace tilecraft {
namespace {

bool is_interleaved_conv(const GemmDescription& d) {
  return d.A.layout == Layout::TensorNC32HW32 || d.B.layout == Layout::TensorC32RSK32 ||
         d.C.layout == Layout::TensorNC32HW32;
}

Status check_layouts(const GemmDescription& d) {
  const ConvKind kind = d.conv.kind;
  if (is_interleaved_conv(d)) {
    if (d.A.layout != Layout::TensorNC32HW32 || d.B.layout != Layout::TensorC32RSK32 ||
        d.C.layout != Layout::TensorNC32HW32) {
      return Status::unsupported(
          "layouts: the interleaved int8 convolution takes A TensorNC32HW32, B TensorC32RSK32, C "
          "TensorNC32HW32; got A " +
          spelled(d.A.layout) + ", B " + spelled(d.B.layout) + ", C " + spelled(d.C.layout));
    }
    if (kind != ConvKind::Fprop) {
      return Status::unsupported("conv_kind: interleaved int8 layouts are for fprop only, got " +
                                 std::string(to_string(kind)));
    }
    if (d.tile.math_instruction.opcode_class != OpClass::TensorOp ||
        size_in_bits(d.A.element) != 8) {
      return Status::unsupported(
          "layouts: TensorNC32HW32 / TensorC32RSK32 need int8 operands on the TensorOp "
          "instruction");
    }
    const IteratorAlgorithm algorithm = d.conv.iterator_algorithm;
    if (algorithm != IteratorAlgorithm::Analytic && algorithm != IteratorAlgorithm::Optimized) {
      return Status::unsupported(
          "iterator_algorithm: interleaved int8 convolutions have analytic and optimized "
          "iterators, got " +
          std::string(to_string(algorithm)));
    }
    if (d.A.alignment != 16 || d.B.alignment != 16) {
      return Status::invalid("A/B: interleaved int8 operands need alignment 16, got " +
                             std::to_string(d.A.alignment) + " and " +
                             std::to_string(d.B.alignment));
    }
    return Status::ok();
  }
  const Layout layout = d.A.layout;  // TensorNHWC (2-D) or TensorNDHWC (3-D), all alike
  for (const auto& [which, operand] :
       {std::pair{"A", &d.A}, std::pair{"B", &d.B}, std::pair{"C", &d.C}}) {
    if (operand->layout != Layout::TensorNHWC && operand->layout != Layout::TensorNDHWC) {
      return Status::unsupported(std::string(which) +
                                 ": a convolution operand is TensorNHWC, TensorNDHWC (3-D) or, for "
                                 "int8 fprop, TensorNC32HW32 / TensorC32RSK32; got " +
                                 spelled(operand->layout));
    }
    if (operand->layout != layout) {
      return Status::unsupported(
          "layouts: A, B and C are all TensorNHWC (2-D) or all TensorNDHWC (3-D); got A " +
          spelled(d.A.layout) + ", B " + spelled(d.B.layout) + ", C " + spelled(d.C.layout));
    }
  }
  if (size_in_bits(d.A.element) == 8 && kind != ConvKind::Fprop) {
    return Status::unsupported("conv_kind: int8 convolutions are fprop only, got " +
                               std::string(to_string(kind)));
  }
  return Status::ok();
}

Status check_iterator(const GemmDescription& d) {
  const IteratorAlgorithm algorithm = d.conv.iterator_algorithm;
  const bool few =
      algorithm == IteratorAlgorithm::FixedChannels || algorithm == IteratorAlgorithm::FewChannels;
  if (!few) return Status::ok();
  const std::string what = "iterator_algorithm " + std::string(to_string(algorithm));
  if (d.conv.kind != ConvKind::Fprop) {
    return Status::unsupported(what + " is for fprop, got conv_kind " +
                               std::string(to_string(d.conv.kind)));
  }
  if (d.tile.math_instruction.opcode_class != OpClass::TensorOp) {
    return Status::unsupported(
        what +
        " needs the TensorOp instruction; SIMT convolutions have analytic and optimized iterators");
  }
  return Status::ok();
}

// CUTLASS 2.x grouped fprop: DefaultConv2dGroupFprop (tensor-op; analytic iterators for either
// mapping of groups to CTAs, optimized ones for one group per CTA) and DefaultDepthwiseFprop
// (CUDA cores, analytic, two stages, one element per global load).
Status check_group_mode(const GemmDescription& d) {
  TILECRAFT_RETURN_IF_ERROR(
      describe::check_enumerator("", "group_mode", "GroupMode", d.conv.group_mode));
  const GroupMode mode = d.conv.group_mode;
  if (mode == GroupMode::None) return Status::ok();
  const std::string what = "group_mode " + std::string(to_string(mode));
  if (d.arch != 80) {
    return Status::unsupported(what +
                               ": grouped convolutions are CUTLASS 2.x kernels; describe arch=80 "
                               "(they run on Hopper too), got arch=" +
                               std::to_string(d.arch));
  }
  if (d.conv.kind != ConvKind::Fprop) {
    return Status::unsupported(what + " is for fprop (CUTLASS builds grouped fprop only), got " +
                               "conv_kind " + std::string(to_string(d.conv.kind)));
  }
  if (d.A.layout != Layout::TensorNHWC) {
    return Status::unsupported(what + ": grouped convolutions take TensorNHWC operands, got " +
                               spelled(d.A.layout));
  }
  const OpClass op_class = d.tile.math_instruction.opcode_class;
  const IteratorAlgorithm algorithm = d.conv.iterator_algorithm;
  if (mode == GroupMode::Depthwise) {
    if (op_class != OpClass::Simt) {
      return Status::unsupported(what +
                                 " kernels run on CUDA cores: describe a SIMT math instruction "
                                 "(for tensor cores, use single_group or multiple_group)");
    }
    if (algorithm != IteratorAlgorithm::Analytic) {
      return Status::unsupported(what + " takes iterator_algorithm analytic, got " +
                                 std::string(to_string(algorithm)));
    }
    if (d.tile.stages != 2) {
      return Status::unsupported(what +
                                 " kernels are two-stage pipelines; describe stages=2, got " +
                                 std::to_string(d.tile.stages));
    }
    if (d.A.alignment != 1 || d.B.alignment != 1) {
      return Status::invalid(what +
                             ": CUTLASS's depthwise kernel loads x and w one element at a time; "
                             "describe alignment 1 for A and B, got " +
                             std::to_string(d.A.alignment) + " and " +
                             std::to_string(d.B.alignment));
    }
    return Status::ok();
  }
  if (op_class != OpClass::TensorOp) {
    return Status::unsupported(
        what +
        " kernels use tensor cores; describe a TensorOp math instruction (depthwise runs on SIMT)");
  }
  if (algorithm == IteratorAlgorithm::Optimized && mode != GroupMode::SingleGroup) {
    return Status::unsupported(what +
                               ": CUTLASS's optimized grouped iterators compute one group per CTA; "
                               "describe iterator_algorithm analytic, or single_group");
  }
  if (algorithm != IteratorAlgorithm::Analytic && algorithm != IteratorAlgorithm::Optimized) {
    return Status::unsupported(what + " takes iterator_algorithm analytic or optimized, got " +
                               std::string(to_string(algorithm)));
  }
  return Status::ok();
}

// tilecraft's direct grouped fprop (jit/direct_conv.cuh): CUDA cores, float accumulators, each
// thread V = C's alignment consecutive output channels of `threadblock_shape[0] / pixel threads`
// consecutive output pixels of a row; the CTA's filter slice staged in shared memory.
// threadblock_shape is [output pixels, output channels, 1] per CTA over warp_count [warps, 1, 1].
Status check_direct(const GemmDescription& d) {
  const std::string what = "iterator_algorithm direct";
  if (d.arch != 80) {
    return Status::unsupported(what +
                               ": the direct convolution is a CUDA-core kernel described as "
                               "arch=80 (it runs on Hopper too), got arch=" +
                               std::to_string(d.arch));
  }
  if (d.conv.kind != ConvKind::Fprop) {
    return Status::unsupported(what + " computes fprop, got conv_kind " +
                               std::string(to_string(d.conv.kind)));
  }
  if (d.A.layout != Layout::TensorNHWC) {
    return Status::unsupported(what + " takes TensorNHWC (2-D) operands, got " +
                               spelled(d.A.layout));
  }
  if (d.conv.group_mode != GroupMode::Depthwise && d.conv.group_mode != GroupMode::MultipleGroup) {
    return Status::unsupported(
        what +
        " takes group_mode Depthwise (each thread's channels in as many groups) or "
        "MultipleGroup (each thread's channels in one group), got " +
        std::string(to_string(d.conv.group_mode)));
  }
  const MathInstruction& math = d.tile.math_instruction;
  const bool float_operands = math.element_a == DataType::f16 || math.element_a == DataType::bf16 ||
                              math.element_a == DataType::f32;
  if (math.opcode_class != OpClass::Simt || !float_operands ||
      math.element_accumulator != DataType::f32) {
    return Status::unsupported(what +
                               " runs on CUDA cores with a float32 accumulator: describe a SIMT "
                               "[1, 1, 1] instruction of float16, bfloat16 or float32 operands "
                               "accumulating in float32, got " +
                               spelled(math.element_a) + " -> " +
                               spelled(math.element_accumulator) + " on " +
                               std::string(to_string(math.opcode_class)));
  }
  if (d.epilogue.kind == EpilogueKind::FastLinearCombinationClamp) {
    return Status::unsupported(what + ": FastLinearCombinationClamp is an int8 epilogue");
  }
  const int vector = d.C.alignment;
  const int vector_bits = vector * size_in_bits(d.A.element);
  if (d.A.alignment != vector || vector_bits > 128 || (vector & (vector - 1)) != 0) {
    return Status::invalid(
        what +
        ": each thread reads A's and writes C's channels in one access of the same "
        "width (a power of two up to 128 bits): describe A and C of equal alignment; got " +
        std::to_string(d.A.alignment) + " and " + std::to_string(d.C.alignment) + " of " +
        spelled(d.A.element));
  }
  if (d.B.alignment != 1) {
    return Status::invalid(what +
                           " stages the filter into shared memory one element at a time: "
                           "describe B of alignment 1, got " +
                           std::to_string(d.B.alignment));
  }
  const auto& shape = d.tile.threadblock_shape;
  const auto& warps = d.tile.warp_count;
  const std::string tile = "tile_description: threadblock_shape " + describe::triple_text(shape) +
                           " with warp_count " + describe::triple_text(warps);
  if (shape[2] != 1 || warps[1] != 1 || warps[2] != 1 || d.tile.stages != 2) {
    return Status::invalid(tile + " and stages " + std::to_string(d.tile.stages) + ": " + what +
                           " takes [output pixels, output channels, 1] per CTA, warp_count "
                           "[warps, 1, 1] and stages=2 (it has no pipeline)");
  }
  const int64_t channel_threads = shape[1] / vector;
  const int64_t threads = d.tile.threads();
  if (shape[1] % vector != 0 || threads % channel_threads != 0) {
    return Status::invalid(tile + ": the CTA's " + std::to_string(shape[1]) +
                           " output channels must be a multiple of C's alignment " +
                           std::to_string(vector) + ", in vectors that divide its " +
                           std::to_string(threads) + " threads");
  }
  const int64_t pixel_threads = threads / channel_threads;
  constexpr int kMaxPixelsPerThread = 8;
  if (shape[0] % pixel_threads != 0 || shape[0] / pixel_threads > kMaxPixelsPerThread) {
    return Status::invalid(tile + ": the CTA's " + std::to_string(shape[0]) +
                           " output pixels must be 1 to " + std::to_string(kMaxPixelsPerThread) +
                           " per thread over its " + std::to_string(pixel_threads) +
                           " pixel threads");
  }
  return Status::ok();
}

// CUTLASS 2.x Conv3d (DefaultConv3dFprop / Dgrad / Wgrad): analytic and optimized iterators,
// accesses of 128 bits on tensor cores (one element on CUDA cores), dgrad strided analytic or
// unit-stride optimized, wgrad strided. SM90 3-D convolutions (CUTLASS 3.x ConvUniversal and
// tilecraft's persistent form: TMA im2col over 5-D tensors) follow the SM90 rules.
Status check_conv3d(const GemmDescription& d) {
  if (d.A.layout != Layout::TensorNDHWC || d.arch == 90) return Status::ok();
  const std::string what = "layouts TensorNDHWC (a 3-D convolution)";
  if (d.arch != 80) {
    return Status::unsupported(what +
                               ": 3-D convolutions are CUTLASS 2.x (arch=80) or 3.x (arch=90) "
                               "kernels; got arch=" +
                               std::to_string(d.arch));
  }
  if (d.conv.group_mode != GroupMode::None) {
    return Status::unsupported(
        what + ": CUTLASS has no grouped 3-D convolution; describe group_mode NoneGroup");
  }
  const IteratorAlgorithm algorithm = d.conv.iterator_algorithm;
  if (algorithm != IteratorAlgorithm::Analytic && algorithm != IteratorAlgorithm::Optimized) {
    return Status::unsupported(what + " takes iterator_algorithm analytic or optimized, got " +
                               std::string(to_string(algorithm)));
  }
  if (size_in_bits(d.A.element) == 8) {
    return Status::unsupported(what + ": 8-bit 3-D convolutions are not built, got " +
                               spelled(d.A.element));
  }
  const ConvKind kind = d.conv.kind;
  const StrideSupport stride = d.conv.stride_support;
  if (kind == ConvKind::Dgrad &&
      !(algorithm == IteratorAlgorithm::Analytic && stride == StrideSupport::Strided) &&
      !(algorithm == IteratorAlgorithm::Optimized && stride == StrideSupport::Unity)) {
    return Status::unsupported(what +
                               ": CUTLASS's 3-D dgrad is analytic with stride_support strided, or "
                               "optimized with unity; got " +
                               std::string(to_string(algorithm)) + " with " +
                               std::string(to_string(stride)));
  }
  if (kind == ConvKind::Wgrad && stride != StrideSupport::Strided) {
    return Status::unsupported(what + ": CUTLASS's 3-D wgrad takes stride_support strided");
  }
  const bool simt = d.tile.math_instruction.opcode_class == OpClass::Simt;
  for (const auto& [which, operand] : {std::pair{"A", &d.A}, std::pair{"B", &d.B}}) {
    const int access = simt ? 1 : 128 / size_in_bits(operand->element);
    if (operand->alignment != access) {
      return Status::invalid(std::string(which) + ": " + what + " loads " +
                             (simt ? std::string("one element at a time on CUDA cores")
                                   : std::string("128 bits at a time on tensor cores")) +
                             "; describe alignment " + std::to_string(access) + ", got " +
                             std::to_string(operand->alignment));
    }
  }
  return Status::ok();
}

Status check_epilogue(const GemmDescription& d) {
  if (d.epilogue.kind == EpilogueKind::FastLinearCombinationClamp &&
      d.tile.math_instruction.element_a != DataType::s8) {
    return Status::invalid(
        "epilogue_functor: FastLinearCombinationClamp is for int8 convolutions, got operands " +
        spelled(d.tile.math_instruction.element_a));
  }
  return Status::ok();
}

Status check_swizzle(const GemmDescription& d) {
  // CUTLASS's strided dgrad kernel (ImplicitGemmConvolutionStridedDgrad) exists for its own
  // identity swizzles of 1, 4 and 8 only.
  if (d.conv.kind == ConvKind::Dgrad && d.conv.stride_support == StrideSupport::Strided &&
      d.A.layout != Layout::TensorNDHWC && d.swizzle == Swizzle::IdentitySwizzle2) {
    return Status::unsupported(
        "swizzling_functor: a strided dgrad kernel takes IdentitySwizzle1, 4 or 8 (CUTLASS's "
        "StridedDgradIdentityThreadblockSwizzle has no 2), got IdentitySwizzle2");
  }
  switch (d.swizzle) {
    case Swizzle::IdentitySwizzle1:
    case Swizzle::IdentitySwizzle2:
    case Swizzle::IdentitySwizzle4:
    case Swizzle::IdentitySwizzle8:
      return Status::ok();
    default:
      return Status::unsupported(
          "swizzling_functor: convolutions take IdentitySwizzle1, 2, 4 or 8 (a strided dgrad uses "
          "CUTLASS's strided-dgrad form of it), got " +
          std::string(to_string(d.swizzle)));
  }
}

Layout matrix_layout(Layout conv_layout, bool row_major) {
  if (conv_layout == Layout::TensorNC32HW32) return Layout::ColumnMajorInterleaved32;
  if (conv_layout == Layout::TensorC32RSK32) return Layout::RowMajorInterleaved32;
  return row_major ? Layout::RowMajor : Layout::ColumnMajor;
}

// CUTLASS 3.x ConvUniversal (TMA im2col loads, wgmma, warp-specialized schedules, clusters):
// the SM90 GEMM rules hold for the implicit GEMM, and a few of the convolution's own.
Status validate_sm90_conv2d(const GemmDescription& d) {
  const ConvKind kind = d.conv.kind;
  const std::string kind_name(to_string(kind));
  if (d.A.layout != Layout::TensorNHWC && d.A.layout != Layout::TensorNDHWC) {
    return Status::unsupported(
        "layouts: SM90 convolutions take TensorNHWC (2-D) or TensorNDHWC (3-D) operands; the "
        "interleaved int8 layouts are "
        "arch=80 kernels");
  }
  if (d.conv.iterator_algorithm != IteratorAlgorithm::Optimized) {
    return Status::unsupported(
        "iterator_algorithm: SM90 convolutions load the activation through TMA im2col, which takes "
        "any channel count that is a multiple of 16 bytes; describe iterator_algorithm optimized "
        "(analytic, fixed_channels and few_channels are arch=80 kernels), got " +
        std::string(to_string(d.conv.iterator_algorithm)));
  }
  if (kind == ConvKind::Dgrad && d.conv.stride_support != StrideSupport::Unity) {
    return Status::unsupported(
        "stride_support: SM90 dgrad kernels (CUTLASS 3.x) take unit strides only; describe "
        "stride_support Unity, or arch=80 for a strided dgrad");
  }
  const KernelSchedule schedule = d.tile.kernel_schedule;
  const bool persistent = schedule == KernelSchedule::TmaWarpSpecializedCooperative ||
                          schedule == KernelSchedule::TmaWarpSpecializedPingpong;
  if (schedule != KernelSchedule::TmaWarpSpecialized && !persistent) {
    return Status::unsupported(
        "tile_description: SM90 convolutions take kernel_schedule TmaWarpSpecialized (CUTLASS's "
        "ConvUniversal) or TmaWarpSpecializedCooperative / TmaWarpSpecializedPingpong "
        "(tilecraft's persistent form of it); got " +
        std::string(to_string(schedule)));
  }
  if (d.tile.tile_scheduler != TileScheduler::Persistent && !persistent) {
    return Status::unsupported(
        "tile_description: tile_scheduler " + std::string(to_string(d.tile.tile_scheduler)) +
        " needs a persistent SM90 convolution (kernel_schedule TmaWarpSpecializedCooperative); "
        "CUTLASS's ConvUniversal (TmaWarpSpecialized) runs one tile per CTA");
  }
  const DataType a = d.tile.math_instruction.element_a;
  if (kind != ConvKind::Fprop && size_in_bits(a) != 16) {
    return Status::unsupported(
        "conv_kind " + kind_name + ": SM90 " + kind_name +
        " reads an operand N-major, which wgmma allows for 16-bit types only; got " + spelled(a) +
        " (SM90 fprop takes it, and arch=80 kernels take every kind)");
  }
  const EpilogueFusion& fusion = d.epilogue.fusion;
  if (fusion.per_tensor_scales || a == DataType::e4m3 || a == DataType::e5m2) {
    return Status::unsupported(
        "A: fp8 convolutions need per-tensor scales, which Conv2dArguments does not take yet; "
        "got " +
        spelled(a) + " (f16, bf16 and tf32 SM90 convolutions are built)");
  }
  if (fusion.aux_output) {
    return Status::unsupported(
        "epilogue_functor: SM90 convolutions fuse a bias and an activation; an aux output is a "
        "GEMM fusion");
  }
  if (fusion.bias == BiasKind::per_row) {
    return Status::unsupported(
        "epilogue_functor: a convolution's bias has one value per output channel: describe "
        "bias=\"column\", not \"row\"");
  }
  if (fusion.bias != BiasKind::none && kind == ConvKind::Wgrad) {
    return Status::unsupported(
        "epilogue_functor: wgrad writes a filter gradient; a bias belongs to fprop or dgrad");
  }
  if (d.swizzle == Swizzle::BatchedIdentitySwizzle) {
    return Status::unsupported(
        "swizzling_functor: convolutions take IdentitySwizzle1, 2, 4, 8 or HorizontalSwizzle, got "
        "BatchedIdentitySwizzle");
  }
  GemmDescription gemm = implicit_gemm_of(d);
  gemm.swizzle = d.swizzle;
  return validate_sm90_gemm(gemm);
}

}  // namespace

GemmDescription implicit_gemm_of(const GemmDescription& conv) {
  GemmDescription gemm = conv;
  gemm.kind = GemmKind::Universal;
  gemm.conv = {};
  // fprop: A = x (M=NPQ, K=RSC: C contiguous), B = w (K=RSC contiguous);
  // dgrad: A = dy (M=NHW, K=KRS: K contiguous), B = w (N=C contiguous);
  // wgrad: A = dy (M=K contiguous, K=NPQ), B = x (N=RSC: C contiguous).
  const ConvKind kind = conv.conv.kind;
  gemm.A.layout = matrix_layout(conv.A.layout, kind != ConvKind::Wgrad);
  gemm.B.layout = matrix_layout(conv.B.layout, kind == ConvKind::Dgrad || kind == ConvKind::Wgrad);
  gemm.C.layout =
      conv.C.layout == Layout::TensorNC32HW32 ? Layout::ColumnMajorInterleaved32 : Layout::RowMajor;
  return gemm;
}

Status check_parallel_split_k(const GemmDescription& d) {
  if (!d.is_conv()) return Status::ok();
  if (d.conv.group_mode != GroupMode::None) {
    return Status::unsupported(
        "split_k_mode Parallel: grouped convolutions do not split K (CUTLASS's group kernels take "
        "split_k_slices=1)");
  }
  if (d.arch == 90) {
    return Status::unsupported(
        "split_k_mode Parallel: SM90 convolutions have no parallel split-K form; use "
        "split_k_slices=1, SplitKMode.Serial on a persistent kernel built with tile_scheduler "
        "StreamK, or an arch=80 kernel");
  }
  if (d.conv.kind == ConvKind::Dgrad && d.conv.stride_support == StrideSupport::Strided) {
    return Status::unsupported(
        "split_k_mode Parallel: CUTLASS's strided dgrad kernel has no parallel split-K (its slices "
        "would all write the same output); use SplitKMode.Serial, or a dgrad kernel of "
        "stride_support unity for unit strides");
  }
  return Status::ok();
}

Status validate_conv2d(const GemmDescription& d) {
  TILECRAFT_RETURN_IF_ERROR(describe::check_enumerator("", "conv_kind", "ConvKind", d.conv.kind));
  TILECRAFT_RETURN_IF_ERROR(describe::check_enumerator(
      "", "iterator_algorithm", "IteratorAlgorithm", d.conv.iterator_algorithm));
  TILECRAFT_RETURN_IF_ERROR(
      describe::check_enumerator("", "stride_support", "StrideSupport", d.conv.stride_support));
  TILECRAFT_RETURN_IF_ERROR(check_layouts(d));
  if (d.conv.iterator_algorithm == IteratorAlgorithm::Direct) return check_direct(d);
  TILECRAFT_RETURN_IF_ERROR(check_group_mode(d));
  TILECRAFT_RETURN_IF_ERROR(check_conv3d(d));
  if (d.arch == 90) return validate_sm90_conv2d(d);
  TILECRAFT_RETURN_IF_ERROR(check_iterator(d));
  TILECRAFT_RETURN_IF_ERROR(check_epilogue(d));
  TILECRAFT_RETURN_IF_ERROR(check_swizzle(d));
  const GemmDescription gemm = implicit_gemm_of(d);
  if (d.tile.math_instruction.opcode_class == OpClass::TensorOp && d.tile.stages == 2 &&
      d.conv.kind == ConvKind::Dgrad && d.conv.stride_support == StrideSupport::Strided &&
      d.A.layout != Layout::TensorNDHWC) {
    // Measured on an H100 (bench/RESULTS.md, issue 30): 4597 of 4680 elements wrong for a
    // 3-channel 7x7 stride-2 dgrad, where the multistage strided dgrad is right.
    return Status::unsupported(
        "stages: CUTLASS's two-stage strided dgrad (ImplicitGemmConvolutionStridedDgrad over "
        "ImplicitGemmPipelined) gives wrong results, so it is not built; describe stages >= 3 "
        "(accesses of at least 32 bits) or stride_support Unity (unit strides), got stages=2 "
        "with stride_support Strided");
  }
  if (d.tile.math_instruction.opcode_class == OpClass::TensorOp && d.tile.stages > 2) {
    // cp.async copies 4, 8 or 16 bytes; the two-stage mainloop loads through registers.
    for (const auto& [which, operand] : {std::pair{"A", &d.A}, std::pair{"B", &d.B}}) {
      const int64_t bits = int64_t{operand->alignment} * size_in_bits(operand->element);
      if (bits < 32) {
        return Status::invalid(
            std::string(which) + ": alignment " + std::to_string(operand->alignment) + " of " +
            spelled(operand->element) + " is " + std::to_string(bits) +
            " bits; SM80 multistage tensor-op mainloops copy at least 32 bits (alignment >= " +
            std::to_string(32 / size_in_bits(operand->element)) +
            "); the two-stage mainloop (stages = 2, iterator_algorithm analytic) takes narrower "
            "accesses");
      }
    }
  }
  return validate_sm80_operand_loads(gemm);
}

}  // namespace tilecraft
