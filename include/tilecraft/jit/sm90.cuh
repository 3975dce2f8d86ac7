// SM90 kernels (CUTLASS 3.x): can_implement, workspace_size and run of an entry over
// GemmUniversalAdapter or ConvUniversalAdapter (namespace tc_sm90), whatever its family. Entries
// pass their kernel type, a few constants and a function that fills the epilogue's fusion
// arguments; each family's header (sm90_gemm.cuh, sm90_grouped.cuh, sm90_conv.cuh) supplies the
// Adapter that reads its argument block.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <string>

#include <cuda_runtime.h>

#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/numeric_types.h"
#include "cutlass/kernel_hardware_info.h"
#include "cutlass/epilogue/thread/activation.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/operations.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/gemm/group_array_problem_shape.hpp"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

#include "tilecraft/jit/device_image.cuh"

namespace tc_sm90 {

using tc_image::fail;

// What the entry was built with, beyond its types.
struct EntryTraits {
  int max_swizzle_size;  // 1, 2, 4 or 8
  int raster;            // 0: heuristic, 1: along M, 2: along N
  bool stream_k;         // StreamKScheduler: stream-K, or split-K when batch_count > 1
  bool needs_bias;
  bool needs_aux;
  int num_activation_args;
  const char* kernel_name;  // in the module's device image
  // Custom epilogues: how many operand tensors and scalars the graph takes, and whether it
  // reduces (its outputs are reset to the reduction's identity before every launch).
  int num_epilogue_tensors = 0;
  int num_epilogue_scalars = 0;
  bool reduces = false;
  // fp8 with f32 promotion: wgmma k-blocks between promotions; 0 keeps CUTLASS's default.
  int mma_promotion_interval = 0;
  // Custom epilogues: the operand tensor the epilogue reads as its source C, or -1.
  int source_c_tensor = -1;
};
// A cute stride for an operand with leading dimension ld and batch stride: the static unit
// stride stays where the layout put it.
template <class Stride>
Stride make_stride(int64_t ld, int64_t batch) {
  Stride s{};
  using First = cute::remove_cvref_t<decltype(cute::get<0>(s))>;
  if constexpr (cute::is_static<First>::value) {
    cute::get<1>(s) = ld;
  } else {
    cute::get<0>(s) = ld;
  }
  using Third = cute::remove_cvref_t<decltype(cute::get<2>(s))>;
  if constexpr (!cute::is_static<Third>::value) {
    cute::get<2>(s) = batch;
  }
  return s;
}

// Multiprocessor count of a device, asked once (for the first 64 devices).
inline int sm_count(int device) {
  static std::atomic<int> counts[64] = {};
  const bool cached = device >= 0 && device < 64;
  int count = cached ? counts[device].load(std::memory_order_relaxed) : 0;
  if (count == 0) {
    count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(device);
    if (cached) counts[device].store(count, std::memory_order_relaxed);
  }
  return count;
}

// Grouped kernels: a GemmUniversal on CUTLASS's group problem shape (pointer arrays).
template <class Kernel, class = void>
struct IsGrouped : cute::false_type {};
template <class Kernel>
struct IsGrouped<Kernel, cute::void_t<typename Kernel::ProblemShape::UnderlyingProblemShape>>
    : cute::true_type {};

// Convolutions: a ConvUniversal (a GemmUniversal on a convolution problem shape) behind a
// ConvUniversalAdapter.
template <class Kernel, class = void>
struct IsConv : cute::false_type {};
template <class Kernel>
struct IsConv<Kernel, cute::void_t<decltype(Kernel::CollectiveMainloop::DispatchPolicy::ConvOp)>>
    : cute::true_type {};

// What a family's header specializes for its kernels (by IsGrouped and IsConv):
//   using Args;                                     its argument block
//   static const Args* block(const tc_args_header*, std::string* why);
//   static std::string check(const Args&, const EntryTraits&);   "" when the kernel takes them
//   static std::string problem_text(const Args&);
//   static constexpr const char* kRefusalHint;      what CUTLASS's can_implement wants
//   template <class Gemm, class Fill>
//   static typename Gemm::Arguments make(const Args&, const EntryTraits&, Fill, int device);
template <class Kernel, class = void>
struct Adapter;

// The kernel behind a device-level adapter (GemmUniversalAdapter or ConvUniversalAdapter).
template <class Op, class = void>
struct KernelOfT {
  using type = typename Op::GemmKernel;
};
template <class Op>
struct KernelOfT<Op, cute::void_t<typename Op::ConvKernel>> {
  using type = typename Op::ConvKernel;
};
template <class Op>
using KernelOf = typename KernelOfT<Op>::type;

template <class T, class = void>
struct HasPromotionInterval : cute::false_type {};
template <class T>
struct HasPromotionInterval<T, cute::void_t<decltype(cute::declval<T&>().mma_promotion_interval)>>
    : cute::true_type {};

template <class T, class = void>
struct HasSplits : cute::false_type {};
template <class T>
struct HasSplits<T, cute::void_t<decltype(cute::declval<T&>().splits)>> : cute::true_type {};

// The device the kernel runs on (its SM count sizes persistent grids) and the tile order.
template <class Arguments>
void set_device_and_order(Arguments& arguments, const EntryTraits& t, int device) {
  arguments.hw_info.device_id = device;
  arguments.hw_info.sm_count = sm_count(device);
  arguments.scheduler.max_swizzle_size = t.max_swizzle_size;
  using Raster = cute::remove_cvref_t<decltype(arguments.scheduler.raster_order)>;
  arguments.scheduler.raster_order =
      t.raster == 1 ? Raster::AlongM : (t.raster == 2 ? Raster::AlongN : Raster::Heuristic);
}

// A custom epilogue's input that the collective epilogue reads as its source C
// (EntryTraits::source_c_tensor): its pointer and strides in place of C's.
template <class Kernel, class EpilogueArguments>
void read_source_c(EpilogueArguments& epilogue, const tc_args_header& header,
                   const EntryTraits& t) {
  if (t.source_c_tensor < 0) return;
  const tc_epilogue_tensor& source = header.epilogue_tensors[t.source_c_tensor];
  epilogue.ptr_C = static_cast<const typename Kernel::ElementC*>(source.data);
  epilogue.dC = make_stride<typename Kernel::StrideC>(source.ld, source.batch_stride);
}

// Serial split-K on the stream-K tile scheduler: `splits` slices of K (1 leaves the
// decomposition to CUTLASS's stream-K heuristic), reduced in the order the caller asked for.
template <class Arguments>
void set_split_k(Arguments& arguments, const tc_args_header& header, int splits) {
  if constexpr (HasSplits<decltype(arguments.scheduler)>::value) {
    using Reduction = cute::remove_cvref_t<decltype(arguments.scheduler.reduction_mode)>;
    arguments.scheduler.reduction_mode =
        header.nondeterministic_reduction ? Reduction::Nondeterministic : Reduction::Deterministic;
    if (splits > 1) {
      arguments.scheduler.splits = splits;
      arguments.scheduler.decomposition_mode =
          decltype(arguments.scheduler.decomposition_mode)::SplitK;
    }
  }
}

inline int current_device() {
  int device = 0;
  cudaGetDevice(&device);
  return device;
}

// The entry's block of `h`, checked: null with the reason in `why` when the kernel cannot take it.
template <class Gemm>
const typename Adapter<KernelOf<Gemm>>::Args* checked_block(const tc_args_header* h,
                                                            const EntryTraits& t,
                                                            std::string* why) {
  using A = Adapter<KernelOf<Gemm>>;
  const typename A::Args* a = A::block(h, why);
  if (a != nullptr) *why = A::check(*a, t);
  return why->empty() ? a : nullptr;
}

template <class Gemm, class Fill>
int32_t can_implement(const tc_args_header* h, const EntryTraits& t, Fill fill, char* error,
                      size_t capacity) {
  using A = Adapter<KernelOf<Gemm>>;
  std::string why;
  const typename A::Args* a = checked_block<Gemm>(h, t, &why);
  if (a == nullptr) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  return tc_image::cutlass_verdict(
      Gemm::can_implement(A::template make<Gemm>(*a, t, fill, current_device())),
      A::problem_text(*a) + ": CUTLASS can_implement", error, capacity,
      std::string(" (") + A::kRefusalHint + ")");
}

// Adapters of a form the module expands on the device before the kernel (grouped GEMMs'
// stacked form) have arrays_bytes(args), the workspace the expansion takes at its front, and
// expand(args, &workspace, stream, &expanded), which launches it.
template <class A, class = void>
struct Expands : std::false_type {};
template <class A>
struct Expands<A, std::void_t<decltype(&A::arrays_bytes)>> : std::true_type {};

template <class Gemm, class Fill>
size_t workspace_size(const tc_args_header* h, const EntryTraits& t, Fill fill) {
  using A = Adapter<KernelOf<Gemm>>;
  std::string why;
  const auto* a = checked_block<Gemm>(h, t, &why);
  if (a == nullptr) return 0;
  size_t arrays = 0;
  if constexpr (Expands<A>::value) arrays = A::arrays_bytes(*a);
  return arrays + Gemm::get_workspace_size(A::template make<Gemm>(*a, t, fill, current_device()));
}

// The kernel parameters of the last launch on this thread: a repeated launch with the same
// arguments skips CUTLASS's initialize (TMA descriptors). Only kernels without a workspace are
// reused, since initialize also resets a stream-K workspace.
template <class Gemm>
struct Prepared {
  bool valid = false;
  int device = -1;
  void* workspace = nullptr;
  typename Adapter<KernelOf<Gemm>>::Args key;
  tc_epilogue_tensor tensors[16];  // the custom epilogue's operands the key points to
  double scalars[16];
  Gemm gemm;
  static bool fits(const tc_args_header& h) {
    return h.num_epilogue_tensors <= 16 && h.num_epilogue_scalars <= 16;
  }
  bool same_operands(const tc_args_header& h) const {
    return fits(h) &&
           (h.num_epilogue_tensors == 0 ||
            std::memcmp(tensors, h.epilogue_tensors,
                        sizeof(tc_epilogue_tensor) * size_t(h.num_epilogue_tensors)) == 0) &&
           (h.num_epilogue_scalars == 0 ||
            std::memcmp(scalars, h.epilogue_scalars,
                        sizeof(double) * size_t(h.num_epilogue_scalars)) == 0);
  }
  void keep_operands(const tc_args_header& h) {
    if (h.num_epilogue_tensors > 0) {
      std::memcpy(tensors, h.epilogue_tensors,
                  sizeof(tc_epilogue_tensor) * size_t(h.num_epilogue_tensors));
    }
    if (h.num_epilogue_scalars > 0) {
      std::memcpy(scalars, h.epilogue_scalars, sizeof(double) * size_t(h.num_epilogue_scalars));
    }
  }
};

template <class Gemm, class Fill>
int32_t run(const tc_args_header* h, const EntryTraits& t, Fill fill, void* workspace, void* stream,
            char* error, size_t capacity) {
  using Kernel = KernelOf<Gemm>;
  using A = Adapter<Kernel>;
  std::string why;
  const typename A::Args* a = checked_block<Gemm>(h, t, &why);
  if (a == nullptr) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  const tc_image::Kernel& kernel = tc_image::kernel<Kernel>(t.kernel_name);
  if (kernel.handle == nullptr) return fail(TC_ERROR_CUDA, error, capacity, kernel.error);
  std::string failure;
  const int smem_bytes = int(Kernel::SharedStorageSize);
  if (tc_image::prepare(kernel, int(Kernel::MaxThreadsPerBlock), smem_bytes, &failure) < 0) {
    return fail(TC_ERROR_CUDA, error, capacity, failure);
  }
  const int device = current_device();
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  typename A::Args expanded;
  if constexpr (Expands<A>::value) {
    failure = A::expand(*a, &workspace, s, &expanded);
    if (!failure.empty()) return fail(TC_ERROR_CUDA, error, capacity, failure);
    a = &expanded;
  }
  static thread_local Prepared<Gemm> prepared;
  // Reductions reset their outputs in initialize: never reused.
  const bool reuse = prepared.valid && !t.reduces && prepared.device == device &&
                     prepared.workspace == workspace &&
                     std::memcmp(&prepared.key, a, sizeof(*a)) == 0 &&
                     prepared.same_operands(a->header);
  if (!reuse) {
    prepared.valid = false;
    auto arguments = A::template make<Gemm>(*a, t, fill, device);
    tc_image::HostAdapter adapter({&kernel});
    cutlass::Status status = prepared.gemm.initialize(arguments, workspace, s, &adapter);
    if (status != cutlass::Status::kSuccess) {
      return fail(
          status == cutlass::Status::kErrorInternal ? TC_ERROR_CUDA : TC_ERROR_INVALID_ARGUMENT,
          error, capacity, tc_image::failure_text("initialize", status, adapter));
    }
    if (Gemm::get_workspace_size(arguments) == 0 && Prepared<Gemm>::fits(a->header)) {
      prepared.keep_operands(a->header);
      prepared.valid = true;
      prepared.device = device;
      prepared.workspace = workspace;
      std::memcpy(&prepared.key, a, sizeof(*a));
    }
  }
  using Cluster = typename Kernel::DispatchPolicy::ClusterShape;
  const dim3 cluster(cute::size<0>(Cluster{}), cute::size<1>(Cluster{}), cute::size<2>(Cluster{}));
  const auto& params = prepared.gemm.params();
  const dim3 grid = Gemm::get_grid_shape(params);
  if (grid.x == 0 || grid.y == 0 || grid.z == 0) return TC_OK;  // grouped: every problem empty
  void* launch_params[] = {const_cast<void*>(static_cast<const void*>(&params))};
  cudaError_t cuda =
      tc_image::launch(kernel, grid, Kernel::get_block_shape(), cluster, size_t(smem_bytes), s,
                       launch_params, a->header.launch_with_pdl != 0);
  if (cuda != cudaSuccess) prepared.valid = false;
  return tc_image::launched(kernel, cuda, error, capacity);
}

}  // namespace tc_sm90

#endif  // !TILECRAFT_DEVICE_HALF
