// SM90 convolutions (CUTLASS 3.x ConvUniversalAdapter, or a persistent GemmUniversal over
// tc_sm90_conv::PersistentMainloop): their Adapter over tc_conv_args (namespace tc_sm90).
#pragma once

#include "tilecraft/jit/sm90.cuh"
#include "tilecraft/jit/conv_checks.cuh"
#include "tilecraft/jit/epilogue_operands.cuh"

#include "cutlass/conv/convnd_problem_shape.hpp"
#include "cutlass/conv/collective/collective_builder.hpp"
#include "cutlass/conv/device/conv_universal_adapter.hpp"
#include "cutlass/conv/dispatch_policy.hpp"
#include "cutlass/conv/kernel/conv_universal.hpp"

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

namespace tc_sm90 {

// The convolution's own problem shape: the kernel's (ConvUniversal), or, for a persistent
// kernel, its mainloop's (the kernel schedules the implicit GEMM's (M, N, K, L)).
template <class Kernel, class = void>
struct ConvShapeOf {
  using type = typename Kernel::ProblemShape;
  static constexpr bool kPersistent = false;
};
template <class Kernel>
struct ConvShapeOf<Kernel, cute::void_t<typename Kernel::CollectiveMainloop::ConvProblemShape>> {
  using type = typename Kernel::CollectiveMainloop::ConvProblemShape;
  static constexpr bool kPersistent = true;
};

template <class Kernel>
struct Adapter<Kernel, cute::enable_if_t<IsConv<Kernel>::value>> {
  using Args = tc_conv_args;
  static constexpr const char* kRefusalHint =
      "TMA im2col needs channel counts that are multiples of 16 bytes, 16-byte aligned tensors, "
      "padding and dilated filter extents within its corner and offset limits";

  static const Args* block(const tc_args_header* h, std::string* why) {
    return tc_image::block(h, tc_conv_args_of, TC_FAMILY_CONV, TC_CONV_ARGS_VERSION, why);
  }

  using ProblemShape = typename ConvShapeOf<Kernel>::type;
  static constexpr bool kPersistent = ConvShapeOf<Kernel>::kPersistent;
  static constexpr int kDims = ProblemShape::RankS;  // 2 or 3 spatial dimensions
  static constexpr cutlass::conv::Operator kOp = ProblemShape::ConvOp;
  static constexpr int kKind = kOp == cutlass::conv::Operator::kFprop   ? 0
                               : kOp == cutlass::conv::Operator::kDgrad ? 1
                                                                        : 2;
  // Elements per 16-byte TMA access of each operand.
  static constexpr int kAlignA = 128 / cutlass::sizeof_bits<typename Kernel::ElementA>::value;
  static constexpr int kAlignB = 128 / cutlass::sizeof_bits<typename Kernel::ElementB>::value;
  static constexpr int kAlignD = 128 / cutlass::sizeof_bits<typename Kernel::ElementD>::value;
  static constexpr int kTileN = int(cute::size<1>(typename Kernel::TileShape{}));

  static std::string problem_text(const tc_conv_args& a) {
    return tc_conv_checks::problem_text(a.conv);
  }

  static std::string check(const tc_conv_args& a, const EntryTraits& t) {
    using namespace tc_conv_checks;
    const tc_conv_problem& c = a.conv;
    if (a.mode != TC_CONV_MODE_RUN) {
      return "mode " + std::to_string(a.mode) +
             ": SM90 convolutions run mode 0 (parallel split-K is an arch=80 mode)";
    }
    std::string why = check_problem_fits(c, kKind, kDims, 0, 0);  // ungrouped
    if (!why.empty()) return why;
    if (c.mode != 0) {
      return "mode convolution: SM90 kernels compute cross-correlation only (CUTLASS 3.x's "
             "TMA im2col reads the filter unflipped); flip the filter (R and S) and pass "
             "cross_correlation, or use an arch=80 kernel";
    }
    if (c.split_k_slices != 1 && !t.stream_k) {
      return "split_k_slices " + std::to_string(c.split_k_slices) +
             ": this SM90 convolution does not split K; use 1, a persistent SM90 kernel built "
             "with tile_scheduler StreamK, or an arch=80 kernel with serial or parallel split-K";
    }
    if (c.split_k_slices > 65535) {
      return "split_k_slices " + std::to_string(c.split_k_slices) + " is above 65535";
    }
    if (kKind == 1 && (c.stride_h != 1 || c.stride_w != 1 || (kDims == 3 && c.stride_d != 1))) {
      return "stride (" + (kDims == 3 ? std::to_string(c.stride_d) + ", " : std::string()) +
             std::to_string(c.stride_h) + ", " + std::to_string(c.stride_w) +
             "): SM90 dgrad kernels take unit strides only (an arch=80 strided dgrad takes "
             "others)";
    }
    if (c.c_per_channel) {
      return "C: a C of one value per output channel is an arch=80 form; SM90 kernels add a "
             "bias through the epilogue (describe bias=\"column\" and pass bias=)";
    }
    why = check_channels(c, kAlignA, kAlignB, kAlignD);
    if (!why.empty()) return why + " (16-byte TMA accesses)";
    if (kPersistent && kKind == 2 && c.c % kTileN != 0) {
      return "C " + std::to_string(c.c) + ": this persistent SM90 wgrad tiles the filter " +
             "gradient's (C, S, R) columns by " + std::to_string(kTileN) +
             ", which must divide C (a tile never spans two filter taps); pick a kernel whose "
             "tile N divides C";
    }
    const int pads[] = {c.pad_h,
                        c.pad_bottom,
                        c.pad_w,
                        c.pad_right,
                        kDims == 3 ? c.pad_front : 0,
                        kDims == 3 ? c.pad_back : 0};
    for (int pad : pads) {
      if (pad > 128) {
        return "padding " + std::to_string(pad) +
               ": TMA im2col loads take padding up to 128 on each side";
      }
    }
    if ((c.r - 1) * c.dilation_h > 254 || (c.s - 1) * c.dilation_w > 254 ||
        (kDims == 3 && (c.t - 1) * c.dilation_d > 254)) {
      return "filter " + (kDims == 3 ? "T=" + std::to_string(c.t) + " " : std::string()) +
             "R=" + std::to_string(c.r) + " S=" + std::to_string(c.s) + " dilation (" +
             (kDims == 3 ? std::to_string(c.dilation_d) + ", " : std::string()) +
             std::to_string(c.dilation_h) + ", " + std::to_string(c.dilation_w) +
             "): TMA im2col filter offsets reach (extent - 1) * dilation <= 254";
    }
    if (a.A == nullptr || a.B == nullptr || a.D == nullptr) {
      return std::string(a.A == nullptr ? "A" : a.B == nullptr ? "B" : "D") + ": null pointer";
    }
    if (a.C == nullptr && a.header.beta != 0.0) return "C: null pointer while beta is not 0";
    why = tc_image::check_activation_count(a.header, t.num_activation_args);
    if (!why.empty()) return why;
    if (t.needs_bias && a.bias == nullptr) {
      return "bias: the kernel adds a bias of one value per output channel; got none";
    }
    return tc_evt_args::check(a.header, t.num_epilogue_tensors, t.num_epilogue_scalars);
  }

  // The convolution as CUTLASS describes it: packed tensors, 2-D or 3-D.
  static ProblemShape problem_shape(const tc_conv_problem& c) {
    const auto mode =
        c.mode == 1 ? cutlass::conv::Mode::kConvolution : cutlass::conv::Mode::kCrossCorrelation;
    if constexpr (kDims == 3) {
      return ProblemShape(mode, {c.n, c.d, c.h, c.w, c.c}, {c.k, c.t, c.r, c.s, c.c},
                          {c.pad_front, c.pad_h, c.pad_w}, {c.pad_back, c.pad_bottom, c.pad_right},
                          {c.stride_d, c.stride_h, c.stride_w},
                          {c.dilation_d, c.dilation_h, c.dilation_w}, 1);
    } else {
      return ProblemShape(mode, {c.n, c.h, c.w, c.c}, {c.k, c.r, c.s, c.c}, {c.pad_h, c.pad_w},
                          {c.pad_bottom, c.pad_right}, {c.stride_h, c.stride_w},
                          {c.dilation_h, c.dilation_w}, 1);
    }
  }

  template <class Gemm, class Fill>
  static typename Gemm::Arguments make(const tc_conv_args& a, const EntryTraits& t, Fill fill,
                                       int device) {
    const ProblemShape shape = problem_shape(a.conv);
    typename Gemm::Arguments arguments{};
    arguments.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    using StrideC = typename Kernel::StrideC;
    StrideC stride{};
    if constexpr (kPersistent) {
      // The implicit GEMM's problem; the mainloop keeps the convolution's. The output is packed
      // and row-major: fprop's y (N * P * Q rows of K channels), dgrad's dx (N * H * W rows of C)
      // or wgrad's dw (K rows of R * S * C).
      arguments.problem_shape = Kernel::CollectiveMainloop::gemm_problem_shape(shape);
      arguments.mainloop.problem = shape;
      arguments.mainloop.conv.ptr_A = static_cast<const typename Kernel::ElementA*>(a.A);
      arguments.mainloop.conv.ptr_B = static_cast<const typename Kernel::ElementB*>(a.B);
      const int64_t rows = cute::get<0>(arguments.problem_shape);
      const int64_t columns = cute::get<1>(arguments.problem_shape);
      stride = make_stride<StrideC>(columns, rows * columns);
    } else {
      arguments.problem_shape = shape;
      arguments.mainloop.ptr_A = static_cast<const typename Kernel::ElementA*>(a.A);
      arguments.mainloop.ptr_B = static_cast<const typename Kernel::ElementB*>(a.B);
      // The output is packed: fprop and dgrad as (W, H, N) modes of the activation, wgrad as K.
      if constexpr (kOp == cutlass::conv::Operator::kWgrad) {
        cute::get<0>(stride) = shape.stride_C[0];
        cute::for_each(cute::make_seq<cute::rank<1>(StrideC{}) - 1>{}, [&](auto i) {
          cute::get<1, i + 1>(stride) = shape.stride_C[ProblemShape::RankT - 2 - i];
        });
      } else {
        cute::for_each(cute::make_seq<cute::rank<0>(StrideC{})>{}, [&](auto i) {
          cute::get<0, i>(stride) = shape.stride_C[ProblemShape::RankT - 2 - i];
        });
      }
    }
    const bool has_c = a.C != nullptr;
    arguments.epilogue.ptr_C = static_cast<const typename Kernel::ElementC*>(has_c ? a.C : a.D);
    arguments.epilogue.dC = stride;
    // Custom epilogues run on the persistent kernels only (their output is a packed matrix).
    if constexpr (kPersistent) read_source_c<Kernel>(arguments.epilogue, a.header, t);
    arguments.epilogue.ptr_D = static_cast<typename Kernel::ElementD*>(a.D);
    arguments.epilogue.dD = stride;
    fill(arguments.epilogue.thread, a);
    set_device_and_order(arguments, t, device);
    if constexpr (kPersistent) set_split_k(arguments, a.header, a.conv.split_k_slices);
    return arguments;
  }
};

}  // namespace tc_sm90

#endif  // !TILECRAFT_DEVICE_HALF
