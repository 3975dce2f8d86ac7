// SM80 convolutions (CUTLASS 2.x ImplicitGemmConvolution, parallel split-K through ReduceSplitK):
// adapters from tc_conv_args to its Arguments (namespace tc_conv).
#pragma once

#include "tilecraft/jit/sm80_split_k_reduce.cuh"
#include "tilecraft/abi/conv_args.h"
#include "tilecraft/jit/conv_checks.cuh"

#include "cutlass/conv/conv2d_problem_size.h"
#include "cutlass/conv/convolution.h"
#include "cutlass/conv/device/implicit_gemm_convolution.h"
#include "cutlass/conv/kernel/default_conv2d_dgrad.h"
#include "cutlass/conv/kernel/default_conv2d_fprop.h"
#include "cutlass/conv/kernel/default_conv2d_wgrad.h"
#include "cutlass/conv/threadblock/threadblock_swizzle.h"
#include "cutlass/layout/tensor.h"

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

namespace tc_conv {

using tc_gemm::cuda_failure;
using tc_gemm::cuda_result;
using tc_gemm::cutlass_verdict;
using tc_gemm::epilogue_params;
using tc_gemm::fail;
using namespace tc_conv_checks;

inline const tc_conv_args* conv_block(const tc_args_header* h, char* error, size_t capacity) {
  return tc_image::block(h, tc_conv_args_of, TC_FAMILY_CONV, TC_CONV_ARGS_VERSION, error, capacity);
}

template <typename Conv>
constexpr int kind_of() {
  return Conv::kConvolutionalOperator == cutlass::conv::Operator::kFprop   ? 0
         : Conv::kConvolutionalOperator == cutlass::conv::Operator::kDgrad ? 1
                                                                           : 2;
}

// As check_groups numbers them: CUTLASS's order (none, single, multiple groups, depthwise).
template <typename Conv>
constexpr int group_mode_of() {
  return static_cast<int>(Conv::kGroupMode);
}

inline cutlass::conv::Mode mode_of(const tc_conv_problem& c) {
  return c.mode == 1 ? cutlass::conv::Mode::kConvolution : cutlass::conv::Mode::kCrossCorrelation;
}

// CUTLASS's problem size of the kernel's dimension: P, Q (and Z) follow from the padding on both
// sides, so the top, left (and front) padding is all CUTLASS reads.
template <typename Conv>
typename Conv::UnderlyingKernel::ConvProblemSize problem(const tc_conv_problem& c) {
  if constexpr (Conv::UnderlyingKernel::kConvDim == 3) {
    return cutlass::conv::Conv3dProblemSize(c.n, c.d, c.h, c.w, c.c, c.k, c.t, c.r, c.s, c.z, c.p,
                                            c.q, c.pad_front, c.pad_h, c.pad_w, c.stride_d,
                                            c.stride_h, c.stride_w, c.dilation_d, c.dilation_h,
                                            c.dilation_w, mode_of(c), c.split_k_slices, c.groups);
  } else {
    return cutlass::conv::Conv2dProblemSize(c.n, c.h, c.w, c.c, c.k, c.r, c.s, c.p, c.q, c.pad_h,
                                            c.pad_w, c.stride_h, c.stride_w, c.dilation_h,
                                            c.dilation_w, mode_of(c), c.split_k_slices, c.groups);
  }
}

// Channels-last layouts (2-D or 3-D), as opposed to CUTLASS's interleaved int8 ones.
template <typename Layout>
struct IsNhwc
    : std::integral_constant<bool, std::is_same<Layout, cutlass::layout::TensorNHWC>::value ||
                                       std::is_same<Layout, cutlass::layout::TensorNDHWC>::value> {
};

// A packed tensor of the layout over the operand's extent (4-D, or 5-D for NDHWC).
template <typename Element, typename Layout>
cutlass::TensorRef<Element, Layout> packed(const void* pointer,
                                           typename Layout::TensorCoord extent) {
  return cutlass::TensorRef<Element, Layout>(static_cast<Element*>(const_cast<void*>(pointer)),
                                             Layout::packed(extent));
}

// Arguments of Conv (ElementC its output: the user's, or the accumulator for partials) reading
// C from c_pointer (per channel: stride 0) and writing D to d_pointer through output_op.
template <typename Conv>
typename Conv::Arguments arguments(const tc_conv_args& a, const void* c_pointer, void* d_pointer,
                                   bool c_per_channel,
                                   const typename Conv::EpilogueOutputOp::Params& output_op,
                                   cutlass::conv::SplitKMode split_k_mode) {
  using ElementC = typename Conv::ElementC;
  using LayoutC = typename Conv::LayoutC;
  constexpr cutlass::conv::Operator kOp = Conv::kConvolutionalOperator;
  const auto size = problem<Conv>(a.conv);
  const auto extent_c = cutlass::conv::implicit_gemm_tensor_c_extent(kOp, size);
  auto ref_c = packed<ElementC, LayoutC>(c_pointer, extent_c);
  if constexpr (IsNhwc<LayoutC>::value) {
    if (c_per_channel) ref_c.layout() = LayoutC(typename LayoutC::Stride(0));
  }
  return typename Conv::Arguments(size,
                                  packed<typename Conv::ElementA, typename Conv::LayoutA>(
                                      a.A, cutlass::conv::implicit_gemm_tensor_a_extent(kOp, size)),
                                  packed<typename Conv::ElementB, typename Conv::LayoutB>(
                                      a.B, cutlass::conv::implicit_gemm_tensor_b_extent(kOp, size)),
                                  ref_c, packed<ElementC, LayoutC>(d_pointer, extent_c), output_op,
                                  split_k_mode);
}

// What the kernel Conv needs of the problem, in words, before CUTLASS's own can_implement.
// c_alignment: elements per access of the output it writes.
template <typename Conv>
std::string check_problem(const tc_conv_args& a, int c_alignment) {
  const tc_conv_problem& c = a.conv;
  std::string why = check_problem_fits(c, kind_of<Conv>(), Conv::UnderlyingKernel::kConvDim,
                                       group_mode_of<Conv>(), Conv::ThreadblockShape::kN);
  if (!why.empty()) return why;
  constexpr int kAlignA = Conv::UnderlyingKernel::Mma::IteratorA::AccessType::kElements;
  constexpr int kAlignB = Conv::UnderlyingKernel::Mma::IteratorB::AccessType::kElements;
  constexpr bool kNhwc = IsNhwc<typename Conv::LayoutA>::value;
  constexpr cutlass::conv::IteratorAlgorithm kAlgorithm = Conv::kIteratorAlgorithm;
  const int kind = kind_of<Conv>();
  if (!kNhwc) {
    // Interleaved int8: 32 channels per interleaved group.
    why = check_multiple("A (x)", "C", c.c, 32, "interleaving of TensorNC32HW32");
    if (why.empty()) why = check_multiple("B (w)", "K", c.k, 32, "interleaving of TensorC32RSK32");
    if (why.empty() && c.c_per_channel) {
      why = "C: a per-channel C (bias) needs TensorNHWC; interleaved outputs take a full C";
    }
    if (!why.empty()) return why;
  } else if (kind == 0) {
    if (kAlgorithm == cutlass::conv::IteratorAlgorithm::kFixedChannels && c.c != kAlignA) {
      return "iterator_algorithm fixed_channels: C=" + std::to_string(c.c) +
             " must equal the kernel's access size of " + std::to_string(kAlignA) +
             " channels (pad the channels, or use few_channels, analytic or optimized)";
    }
    why = check_channels(c, kAlignA, kAlignB, c_alignment, group_mode_of<Conv>() == 3);
  } else if (kind == 1) {
    why = check_channels(c, kAlignA, kAlignB, c_alignment);
    if (why.empty() && Conv::kStrideSupport == cutlass::conv::StrideSupport::kUnity &&
        (c.stride_h != 1 || c.stride_w != 1 || (c.spatial_dims == 3 && c.stride_d != 1))) {
      why = "stride (" + (c.spatial_dims == 3 ? std::to_string(c.stride_d) + ", " : std::string()) +
            std::to_string(c.stride_h) + ", " + std::to_string(c.stride_w) +
            "): this dgrad kernel is specialized for unit strides (stride_support unity); "
            "describe stride_support strided";
    }
    if (why.empty() && Conv::kStrideSupport == cutlass::conv::StrideSupport::kStrided) {
      if (c.dilation_h > 1 || c.dilation_w > 1 || (c.spatial_dims == 3 && c.dilation_d > 1)) {
        why = "dilation (" +
              (c.spatial_dims == 3 ? std::to_string(c.dilation_d) + ", " : std::string()) +
              std::to_string(c.dilation_h) + ", " + std::to_string(c.dilation_w) +
              "): the strided dgrad kernel takes no dilation (CUTLASS's strided dgrad has none); "
              "a unit-stride dilated dgrad runs on a kernel of stride_support unity";
      } else if (c.split_k_slices > 1 && (c.stride_h > 1 || c.stride_w > 1)) {
        why = "split_k_slices " + std::to_string(c.split_k_slices) +
              ": the strided dgrad kernel does not split K when a stride is above 1";
      }
    }
  } else {
    why = check_channels(c, kAlignA, kAlignB, c_alignment);
    if (why.empty() && c.c_per_channel) {
      why = "C: a per-channel C (bias) is for fprop and dgrad; wgrad's output is a filter";
    }
  }
  if (!why.empty()) return why;
  if (kAlgorithm == cutlass::conv::IteratorAlgorithm::kOptimized &&
      (c.r > 32 || c.s > 32 || (c.spatial_dims == 3 && c.t > 32))) {
    return "filter " + std::string(c.spatial_dims == 3 ? "T=" + std::to_string(c.t) + " " : "") +
           "R=" + std::to_string(c.r) + " S=" + std::to_string(c.s) +
           ": the optimized iterators take filter extents up to 32; describe the analytic "
           "algorithm";
  }
  const int bytes_a = cutlass::sizeof_bits<typename Conv::ElementA>::value / 8 * kAlignA;
  const int bytes_b = cutlass::sizeof_bits<typename Conv::ElementB>::value / 8 * kAlignB;
  why = check_pointer("A", a.A, bytes_a < 1 ? 1 : bytes_a);
  if (why.empty()) why = check_pointer("B", a.B, bytes_b < 1 ? 1 : bytes_b);
  return why;
}

inline std::string check_output_pointers(const tc_conv_args& a, int bytes) {
  std::string why = check_pointer("D", a.D, bytes);
  if (why.empty() && a.C == nullptr && a.header.beta != 0.0)
    why = "C: null pointer while beta is not 0";
  if (why.empty() && a.C != nullptr && !a.conv.c_per_channel) why = check_pointer("C", a.C, bytes);
  return why;
}

template <typename Op>
std::string check_activation(const tc_conv_args& a, int max_k, const tc_conv_problem& c) {
  std::string why = tc_gemm::check_activation_args<Op>(a.header);
  const int64_t gemm_k = c.kind == 0   ? int64_t(c.c) * c.r * c.s
                         : c.kind == 1 ? int64_t(c.k) * c.r * c.s
                                       : int64_t(c.n) * c.p * c.q;
  return why.empty()
             ? tc_gemm::check_max_k(gemm_k, max_k, problem_text(c) + ": the implicit GEMM's K=")
             : why;
}

template <typename Conv>
typename Conv::Arguments serial_arguments(const tc_conv_args& a) {
  return arguments<Conv>(a, a.C, a.D, a.conv.c_per_channel != 0,
                         epilogue_params<typename Conv::EpilogueOutputOp>(a),
                         cutlass::conv::SplitKMode::kSerial);
}

template <typename Conv>
int32_t can_implement(const tc_args_header* header, char* error, size_t capacity, int max_k) {
  const tc_conv_args* args = conv_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  const tc_conv_args& a = *args;
  if (a.mode != TC_CONV_MODE_RUN) {
    return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                "mode " + std::to_string(a.mode) +
                    ": this entry runs a convolution with serial split-K (mode 0); the "
                    "_splitk_parallel entry runs parallel split-K");
  }
  using Output = typename Conv::EpilogueOutputOp;
  std::string why = check_activation<Output>(a, max_k, a.conv);
  if (why.empty()) why = check_problem<Conv>(a, Output::kCount);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  // CUTLASS's depthwise iterators ask C / groups (= 1) to be a multiple of their 128-bit access
  // in can_implement, which its own depthwise tests never call; check_problem holds its checks.
  if constexpr (group_mode_of<Conv>() == 3) return TC_OK;
  return cutlass_verdict(Conv::can_implement(serial_arguments<Conv>(a)),
                         problem_text(a.conv) + ": CUTLASS ImplicitGemmConvolution::can_implement",
                         error, capacity);
}

template <typename Conv>
size_t workspace_size(const tc_args_header* header) {
  const tc_conv_args* args = conv_block(header, nullptr, 0);
  return args == nullptr ? 0 : Conv::get_workspace_size(serial_arguments<Conv>(*args));
}

template <typename Conv>
int32_t run(const tc_args_header* header, void* workspace, void* stream, char* error,
            size_t capacity, const char* kernel_name) {
  const tc_conv_args* args = conv_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  const tc_conv_args& a = *args;
  using Output = typename Conv::EpilogueOutputOp;
  std::string why = check_output_pointers(
      a, cutlass::sizeof_bits<typename Output::ElementOutput>::value / 8 * Output::kCount);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  const tc_image::Kernel& kernel = tc_image::kernel<typename Conv::UnderlyingKernel>(kernel_name);
  if (kernel.handle == nullptr) return fail(TC_ERROR_CUDA, error, capacity, kernel.error);
  tc_image::HostAdapter adapter({&kernel});
  typename Conv::Arguments conv_args = serial_arguments<Conv>(a);
  const size_t bytes = Conv::get_workspace_size(conv_args);
  if (bytes > 0 && workspace == nullptr) {
    return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                "serial split-K over " + std::to_string(a.conv.split_k_slices) +
                    " slices needs a workspace of " + std::to_string(bytes) + " bytes");
  }
  cudaStream_t cuda_stream = static_cast<cudaStream_t>(stream);
  Conv conv;
  cutlass::Status status = conv.initialize(conv_args, workspace, cuda_stream, &adapter);
  if (status != cutlass::Status::kSuccess) {
    return cuda_failure("ImplicitGemmConvolution::initialize", status, adapter, error, capacity);
  }
  return cuda_result("ImplicitGemmConvolution::run", conv.run(cuda_stream, &adapter), adapter,
                     error, capacity);
}

// ---- parallel split-K: Partial writes split_k_slices slices of accumulators (the implicit
// GEMM's M x N, row-major) into the workspace; Reduction sums them and applies the epilogue.
template <typename Partial>
cutlass::gemm::GemmCoord implicit_gemm(const tc_conv_args& a) {
  return cutlass::conv::implicit_gemm_problem_size(Partial::kConvolutionalOperator,
                                                   problem<Partial>(a.conv));
}

template <typename Partial>
int partitions(const tc_conv_args& a) {
  using Shape = typename Partial::ThreadblockShape;
  typename Partial::ThreadblockSwizzle swizzle;
  return swizzle
      .get_tiled_shape(Partial::kConvolutionalOperator, problem<Partial>(a.conv),
                       {Shape::kM, Shape::kN, Shape::kK}, a.conv.split_k_slices)
      .k();
}

template <typename Partial>
size_t partials_bytes(const tc_conv_args& a) {
  const cutlass::gemm::GemmCoord mnk = implicit_gemm<Partial>(a);
  size_t bytes = sizeof(typename Partial::ElementC) * size_t(mnk.m()) * size_t(mnk.n()) *
                 size_t(partitions<Partial>(a));
  return (bytes + 255) / 256 * 256;
}

template <typename Partial>
typename Partial::Arguments partial_arguments(const tc_conv_args& a, void* partials) {
  using Op = typename Partial::EpilogueOutputOp;
  using Compute = typename Op::ElementCompute;
  return arguments<Partial>(a, partials, partials, false,
                            typename Op::Params(Compute(1), Compute(0)),
                            cutlass::conv::SplitKMode::kParallel);
}

template <typename Partial, typename Reduction>
int32_t split_k_can_implement(const tc_args_header* header, char* error, size_t capacity,
                              int max_k) {
  const tc_conv_args* args = conv_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  const tc_conv_args& a = *args;
  if (a.mode != TC_CONV_MODE_SPLIT_K_PARALLEL) {
    return fail(
        TC_ERROR_INVALID_ARGUMENT, error, capacity,
        "mode " + std::to_string(a.mode) + ": this entry runs only parallel split-K (mode 1)");
  }
  using Output = typename Reduction::OutputOp;
  std::string why = check_activation<Output>(a, max_k, a.conv);
  if (why.empty()) why = check_problem<Partial>(a, Output::kCount);
  if (why.empty() && a.conv.kind == 1 &&
      Partial::kStrideSupport == cutlass::conv::StrideSupport::kStrided) {
    why =
        "split_k_mode Parallel: CUTLASS's strided dgrad kernel has no parallel split-K (its "
        "slices would all write the same output); use SplitKMode.Serial, or a dgrad kernel of "
        "stride_support unity for unit strides";
  }
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  return cutlass_verdict(
      Partial::can_implement(partial_arguments<Partial>(a, nullptr)),
      problem_text(a.conv) + ": CUTLASS ImplicitGemmConvolution::can_implement (split-K partials)",
      error, capacity);
}

template <typename Partial>
size_t split_k_workspace_size(const tc_args_header* header) {
  const tc_conv_args* args = conv_block(header, nullptr, 0);
  return args == nullptr ? 0 : partials_bytes<Partial>(*args);
}

template <typename Partial, typename Reduction>
int32_t split_k_run(const tc_args_header* header, void* workspace, void* stream, char* error,
                    size_t capacity, const char* partial_name, const char* reduction_name) {
  const tc_conv_args* args = conv_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  const tc_conv_args& a = *args;
  using Output = typename Reduction::OutputOp;
  using ElementOutput = typename Output::ElementOutput;
  std::string why =
      check_output_pointers(a, cutlass::sizeof_bits<ElementOutput>::value / 8 * Output::kCount);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  const tc_image::Kernel& partial =
      tc_image::kernel<typename Partial::UnderlyingKernel>(partial_name);
  if (partial.handle == nullptr) return fail(TC_ERROR_CUDA, error, capacity, partial.error);
  const tc_image::Kernel& reduction =
      tc_image::kernel<typename Reduction::ReductionKernel>(reduction_name);
  if (reduction.handle == nullptr) return fail(TC_ERROR_CUDA, error, capacity, reduction.error);
  tc_image::HostAdapter adapter({&partial, &reduction});
  if (workspace == nullptr || reinterpret_cast<uintptr_t>(workspace) % 16 != 0) {
    return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                "parallel split-K needs a 16-byte aligned workspace of " +
                    std::to_string(partials_bytes<Partial>(a)) + " bytes");
  }
  cudaStream_t cuda_stream = static_cast<cudaStream_t>(stream);
  Partial conv;
  cutlass::Status status =
      conv.initialize(partial_arguments<Partial>(a, workspace), workspace, cuda_stream, &adapter);
  if (status == cutlass::Status::kSuccess) status = conv.run(cuda_stream, &adapter, 0);
  if (status != cutlass::Status::kSuccess) {
    return cuda_failure("ImplicitGemmConvolution::run (split-K partials)", status, adapter, error,
                        capacity);
  }
  const cutlass::gemm::GemmCoord mnk = implicit_gemm<Partial>(a);
  return tc_gemm::reduce_split_k<Reduction>(
      a, workspace, mnk.m(), mnk.n(), partitions<Partial>(a), size_t(mnk.m()) * size_t(mnk.n()),
      mnk.n(), a.conv.c_per_channel ? 0 : mnk.n(), cuda_stream, adapter, error, capacity);
}

}  // namespace tc_conv

#endif  // !TILECRAFT_DEVICE_HALF
