// SM90 GEMMs (plain, split-K, batched): their Adapter over tc_gemm_args, and CUTLASS's
// GemmUniversalAdapter (not in convolution modules: it brings CUTLASS 2.x's GemmUniversal, whose
// specialization also matches a ConvUniversal on a non-tuple problem shape).
#pragma once

#include "tilecraft/jit/sm90.cuh"
#include "tilecraft/abi/gemm_args.h"

#include "cutlass/gemm/device/gemm_universal_adapter.h"

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

#include "tilecraft/jit/epilogue_operands.cuh"

namespace tc_sm90 {

template <class K>
struct Adapter<K, cute::enable_if_t<!IsGrouped<K>::value && !IsConv<K>::value>> {
  using Args = tc_gemm_args;
  static constexpr const char* kRefusalHint =
      "TMA needs 16-byte aligned addresses and leading dimensions, and contiguous extents that "
      "are multiples of the alignment";

  static const Args* block(const tc_args_header* h, std::string* why) {
    return tc_image::block(h, tc_gemm_args_of, TC_FAMILY_GEMM, TC_GEMM_ARGS_VERSION, why);
  }

  static std::string problem_text(const Args& a) { return tc_image::problem_text(a); }

  static std::string check(const tc_gemm_args& a, const EntryTraits& t) {
    if (a.A == nullptr || a.B == nullptr || a.D == nullptr) {
      return std::string(a.A == nullptr ? "A" : a.B == nullptr ? "B" : "D") + ": null pointer";
    }
    if (a.m <= 0 || a.n <= 0 || a.k <= 0) {
      return tc_image::problem_text(a) + ": M, N and K must be positive";
    }
    if (a.batch_count < 1 || a.batch_count > 65535) {
      return "batch_count " + std::to_string(a.batch_count) + " is outside [1, 65535]";
    }
    if (a.mode != TC_GEMM_MODE_GEMM && a.mode != TC_GEMM_MODE_BATCHED) {
      return "mode: SM90 kernels run Gemm (with split-K slices on a StreamK tile scheduler) and "
             "Batched problems; got mode " +
             std::to_string(a.mode);
    }
    if (a.mode == TC_GEMM_MODE_GEMM && a.batch_count > 1 && !t.stream_k) {
      return "split_k_slices " + std::to_string(a.batch_count) +
             ": serial split-K on SM90 needs a kernel built with tile_scheduler StreamK";
    }
    std::string why = tc_image::check_activation_count(a.header, t.num_activation_args);
    if (!why.empty()) return why;
    if (t.needs_bias && a.bias == nullptr) return "bias: the kernel adds a bias vector; got none";
    if (t.needs_aux && a.aux == nullptr) return "aux: the kernel writes an aux output; got none";
    return tc_evt_args::check(a.header, t.num_epilogue_tensors, t.num_epilogue_scalars);
  }

  template <class Gemm, class Fill>
  static typename Gemm::Arguments make(const tc_gemm_args& a, const EntryTraits& t, Fill fill,
                                       int device) {
    using Kernel = KernelOf<Gemm>;
    const bool batched = a.mode == TC_GEMM_MODE_BATCHED;
    const int l = batched ? a.batch_count : 1;
    typename Gemm::Arguments arguments{};
    arguments.mode = batched ? cutlass::gemm::GemmUniversalMode::kBatched
                             : cutlass::gemm::GemmUniversalMode::kGemm;
    arguments.problem_shape = {a.m, a.n, a.k, l};
    arguments.mainloop.ptr_A = static_cast<const typename Kernel::ElementA*>(a.A);
    arguments.mainloop.dA = make_stride<typename Kernel::StrideA>(a.lda, a.batch_stride_A);
    arguments.mainloop.ptr_B = static_cast<const typename Kernel::ElementB*>(a.B);
    arguments.mainloop.dB = make_stride<typename Kernel::StrideB>(a.ldb, a.batch_stride_B);
    if constexpr (HasPromotionInterval<decltype(arguments.mainloop)>::value) {
      if (t.mma_promotion_interval > 0) {
        arguments.mainloop.mma_promotion_interval = t.mma_promotion_interval;
      }
    }
    // Without C (beta == 0) the epilogue is given D's address; it does not read it.
    const bool has_c = a.C != nullptr;
    arguments.epilogue.ptr_C = static_cast<const typename Kernel::ElementC*>(has_c ? a.C : a.D);
    arguments.epilogue.dC = make_stride<typename Kernel::StrideC>(
        has_c ? a.ldc : a.ldd, has_c ? a.batch_stride_C : a.batch_stride_D);
    read_source_c<Kernel>(arguments.epilogue, a.header, t);
    arguments.epilogue.ptr_D = static_cast<typename Kernel::ElementD*>(a.D);
    arguments.epilogue.dD = make_stride<typename Kernel::StrideD>(a.ldd, a.batch_stride_D);
    fill(arguments.epilogue.thread, a);
    set_device_and_order(arguments, t, device);
    set_split_k(arguments, a.header, batched ? 1 : a.batch_count);
    return arguments;
  }
};

}  // namespace tc_sm90

#endif  // !TILECRAFT_DEVICE_HALF
