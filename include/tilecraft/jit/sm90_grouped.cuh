// SM90 grouped GEMMs (CUTLASS's pointer-array GemmUniversal on a group problem shape): their
// Adapter over tc_grouped_args.
#pragma once

#include "tilecraft/jit/sm90.cuh"
#include "tilecraft/jit/grouped_stacked.cuh"  // both halves: its kernel is device code

#include "cutlass/gemm/device/gemm_universal_adapter.h"

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

#include "tilecraft/jit/grouped_checks.cuh"

namespace tc_sm90 {

template <class K>
struct Adapter<K, cute::enable_if_t<IsGrouped<K>::value && !IsConv<K>::value>> {
  using Args = tc_grouped_args;
  static constexpr const char* kRefusalHint =
      "TMA needs 16-byte aligned addresses and leading dimensions, and contiguous extents that "
      "are multiples of the alignment";

  static const Args* block(const tc_args_header* h, std::string* why) {
    return tc_image::block(h, tc_grouped_args_of, TC_FAMILY_GROUPED, TC_GROUPED_ARGS_VERSION, why);
  }

  static std::string problem_text(const Args& a) {
    return std::to_string(a.problem_count) + " grouped problems";
  }

  static std::string check(const tc_grouped_args& a, const EntryTraits& t) {
    std::string why = tc_grouped_checks::check(a);
    if (why.empty()) why = tc_image::check_activation_count(a.header, t.num_activation_args);
    if (!why.empty()) return why;
    const bool has_bias =
        a.stacked_offsets != nullptr ? a.stacked_bias != nullptr : a.bias_array != nullptr;
    if (t.needs_bias && !has_bias) {
      return "bias: the kernel adds a bias of N values per problem; got no bias_array";
    }
    if (!t.needs_bias && has_bias) {
      return "bias: the kernel adds no bias; got a bias_array";
    }
    return {};
  }

  static size_t arrays_bytes(const Args& a) { return tc_grouped_stacked::arrays_bytes(a); }
  static std::string expand(const Args& a, void** workspace, cudaStream_t stream, Args* expanded) {
    return tc_grouped_stacked::expand(a, workspace, stream, expanded, sizeof(typename K::ElementD));
  }

  template <class Gemm, class Fill>
  static typename Gemm::Arguments make(const tc_grouped_args& a, const EntryTraits& t, Fill fill,
                                       int device) {
    using Kernel = KernelOf<Gemm>;
    using Shape = typename Kernel::ProblemShape::UnderlyingProblemShape;
    // The ABI's arrays are read in place: (m, n, k) int32 triples are CUTLASS's problem shapes,
    // and a leading dimension is all that a packed cute stride stores.
    using tc_image::in_place;
    typename Gemm::Arguments arguments{};
    arguments.mode = cutlass::gemm::GemmUniversalMode::kGrouped;
    arguments.problem_shape.num_groups = a.problem_count;
    arguments.problem_shape.problem_shapes = in_place<Shape, 3>(a.problem_sizes);
    arguments.problem_shape.host_problem_shapes = in_place<Shape, 3>(a.host_problem_sizes);
    arguments.mainloop.ptr_A = in_place<typename Kernel::ElementA const*>(a.A_array);
    arguments.mainloop.dA = in_place<typename Kernel::InternalStrideA>(a.lda_array);
    arguments.mainloop.ptr_B = in_place<typename Kernel::ElementB const*>(a.B_array);
    arguments.mainloop.dB = in_place<typename Kernel::InternalStrideB>(a.ldb_array);
    arguments.epilogue.ptr_C = in_place<typename Kernel::ElementC const*>(a.C_array);
    arguments.epilogue.dC = in_place<typename Kernel::InternalStrideC>(a.ldc_array);
    arguments.epilogue.ptr_D = in_place<typename Kernel::ElementD*>(a.D_array);
    arguments.epilogue.dD = in_place<typename Kernel::InternalStrideD>(a.ldd_array);
    fill(arguments.epilogue.thread, a);
    arguments.hw_info.device_id = device;
    arguments.hw_info.sm_count = sm_count(device);
    arguments.scheduler.max_swizzle_size = t.max_swizzle_size;
    // The group scheduler has no raster heuristic (the largest extent changes per problem).
    using Raster = cute::remove_cvref_t<decltype(arguments.scheduler.raster_order)>;
    arguments.scheduler.raster_order = t.raster == 2 ? Raster::AlongN : Raster::AlongM;
    return arguments;
  }
};

}  // namespace tc_sm90

#endif  // !TILECRAFT_DEVICE_HALF
