// SM80 grouped GEMMs (CUTLASS 2.x GemmGrouped): adapters from tc_grouped_args
// (namespace tc_grouped).
#pragma once

#include "tilecraft/jit/sm80_common.cuh"
#include "tilecraft/jit/grouped_stacked.cuh"  // both halves: its kernel is device code
#include "tilecraft/jit/grouped_checks.cuh"

#include <vector>

#include "cutlass/gemm/kernel/default_gemm_grouped.h"
#include "cutlass/gemm/kernel/gemm_grouped.h"

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

namespace tc_grouped {

using tc_gemm::fail;

inline const tc_grouped_args* grouped_block(const tc_args_header* h, char* error, size_t capacity) {
  return tc_image::block(h, tc_grouped_args_of, TC_FAMILY_GROUPED, TC_GROUPED_ARGS_VERSION, error,
                         capacity);
}

template <typename Kernel>
constexpr bool kHostSchedule = Kernel::ProblemVisitor::kRequiresPrecomputation;

template <typename Kernel>
std::string check(const tc_grouped_args& a, int max_k) {
  std::string why = tc_grouped_checks::check(a);
  if (!why.empty()) return why;
  if (kHostSchedule<Kernel> && a.host_problem_sizes == nullptr) {
    return "problem sizes: this kernel was built for SchedulerMode.Host, which schedules on the "
           "host and needs the problem sizes there; none were given (build the operation with "
           "SchedulerMode.Device for sizes known only on the device)";
  }
  why = tc_image::check_activation_count(
      a.header, tc_gemm::HasLeakyAlpha<typename Kernel::EpilogueOutputOp::Params>::value);
  return why.empty() ? tc_gemm::check_max_k(a.max_k, max_k, "K=") : why;
}

template <typename Kernel>
typename Kernel::Arguments arguments(const tc_grouped_args& a, int threadblock_count) {
  // The ABI's arrays are read in place: (m, n, k) int32 triples are CUTLASS's GemmCoord, and
  // leading dimensions are 64-bit.
  using tc_image::in_place;
  using Coord = cutlass::gemm::GemmCoord;
  using LongA = typename Kernel::LayoutA::Stride::LongIndex;
  using LongB = typename Kernel::LayoutB::Stride::LongIndex;
  using LongC = typename Kernel::LayoutC::Stride::LongIndex;
  return typename Kernel::Arguments(
      in_place<Coord, 3>(a.problem_sizes), a.problem_count, threadblock_count,
      tc_gemm::epilogue_params<typename Kernel::EpilogueOutputOp>(a),
      in_place<typename Kernel::ElementA*>(a.A_array),
      in_place<typename Kernel::ElementB*>(a.B_array),
      in_place<typename Kernel::ElementC*>(a.C_array),
      in_place<typename Kernel::ElementC*>(a.D_array), in_place<LongA>(a.lda_array),
      in_place<LongB>(a.ldb_array), in_place<LongC>(a.ldc_array), in_place<LongC>(a.ldd_array),
      in_place<Coord, 3>(a.host_problem_sizes));
}

// Tiles of all problems, as the kernel's problem visitor counts them (host sizes needed).
template <typename Kernel>
int64_t total_tiles(const tc_grouped_args& a) {
  const auto* sizes = reinterpret_cast<const cutlass::gemm::GemmCoord*>(a.host_problem_sizes);
  int64_t tiles = 0;
  for (int32_t i = 0; i < a.problem_count; ++i) {
    cutlass::gemm::GemmCoord problem = sizes[i];
    Kernel::ProblemVisitor::possibly_transpose_problem(problem);
    tiles += Kernel::ProblemVisitor::tile_count(Kernel::ProblemVisitor::grid_shape(problem));
  }
  return tiles;
}

// As many threadblocks as fit on the device at once, never more than there are tiles (when the
// sizes are known on the host). -1 with `error` set when the kernel cannot be prepared.
template <typename Kernel>
int threadblock_count(const tc_grouped_args& a, const tc_image::Kernel& kernel,
                      std::string* error) {
  const int smem = int(sizeof(typename Kernel::SharedStorage));
  const int occupancy = tc_image::prepare(kernel, Kernel::kThreadCount, smem, error);
  if (occupancy < 0) return -1;
  if (occupancy == 0) {
    *error = kernel.name + " does not fit on this device (" + std::to_string(smem) +
             " bytes of shared memory)";
    return -1;
  }
  int64_t count = int64_t(occupancy) * tc_image::sm_count(kernel);
  if (a.host_problem_sizes != nullptr) {
    const int64_t tiles = total_tiles<Kernel>(a);
    if (tiles < count) count = tiles > 0 ? tiles : 1;
  }
  return int(count);
}

template <typename Kernel>
int32_t can_implement(const tc_args_header* header, char* error, size_t capacity, int max_k) {
  const tc_grouped_args* args = grouped_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  std::string why = check<Kernel>(*args, max_k);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  return tc_gemm::cutlass_verdict(
      Kernel::can_implement(arguments<Kernel>(*args, 1)),
      std::to_string(args->problem_count) + " grouped problems: CUTLASS GemmGrouped::can_implement",
      error, capacity);
}

// The Host scheduler's precomputed schedule; 0 for the Device scheduler (or without a GPU).
template <typename Kernel>
size_t workspace_size(const tc_args_header* header, const char* kernel_name) {
  const tc_grouped_args* args = grouped_block(header, nullptr, 0);
  if (args == nullptr) return 0;
  if (args->stacked_offsets != nullptr) return tc_grouped_stacked::arrays_bytes(*args);
  if (!kHostSchedule<Kernel> || args->host_problem_sizes == nullptr) return 0;
  const tc_image::Kernel& kernel = tc_image::kernel<Kernel>(kernel_name);
  if (kernel.handle == nullptr) return 0;
  std::string error;
  const int blocks = threadblock_count<Kernel>(*args, kernel, &error);
  if (blocks <= 0) return 0;
  return Kernel::ProblemVisitor::get_workspace_size(
      reinterpret_cast<const cutlass::gemm::GemmCoord*>(args->host_problem_sizes),
      args->problem_count, blocks);
}

template <typename Kernel>
int32_t run(const tc_args_header* header, void* workspace, void* stream, char* error,
            size_t capacity, const char* kernel_name, int max_k) {
  const tc_grouped_args* args = grouped_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  std::string why = check<Kernel>(*args, max_k);
  if (!why.empty()) return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  const tc_image::Kernel& kernel = tc_image::kernel<Kernel>(kernel_name);
  if (kernel.handle == nullptr) return fail(TC_ERROR_CUDA, error, capacity, kernel.error);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  tc_grouped_args a;  // the stacked form expanded on the device first
  std::string failure =
      tc_grouped_stacked::expand(*args, &workspace, s, &a, sizeof(typename Kernel::ElementC));
  if (!failure.empty()) return fail(TC_ERROR_CUDA, error, capacity, failure);
  const int blocks = threadblock_count<Kernel>(a, kernel, &failure);
  if (blocks <= 0) return fail(TC_ERROR_CUDA, error, capacity, failure);
  typename Kernel::Arguments arguments_ = arguments<Kernel>(a, blocks);
  typename Kernel::Params params;
  if constexpr (kHostSchedule<Kernel>) {
    const auto* sizes = reinterpret_cast<const cutlass::gemm::GemmCoord*>(a.host_problem_sizes);
    const size_t bytes = Kernel::ProblemVisitor::get_workspace_size(sizes, a.problem_count, blocks);
    if (bytes > 0 && workspace == nullptr) {
      return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                  "the Host scheduler needs a workspace of " + std::to_string(bytes) +
                      " bytes for its precomputed schedule");
    }
    std::vector<uint8_t> schedule(bytes);
    Kernel::ProblemVisitor::host_precompute(sizes, a.problem_count, blocks, schedule.data());
    // From pageable memory: the call returns once the schedule has been staged.
    cudaError_t e =
        bytes == 0 ? cudaSuccess
                   : cudaMemcpyAsync(workspace, schedule.data(), bytes, cudaMemcpyHostToDevice, s);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return fail(TC_ERROR_CUDA, error, capacity,
                  "copying the precomputed schedule: " + tc_image::cuda_text(e));
    }
    params = typename Kernel::Params(arguments_, workspace, int(total_tiles<Kernel>(a)));
  } else {
    params = typename Kernel::Params(arguments_, workspace);
  }
  void* launch_params[] = {&params};
  const int smem = int(sizeof(typename Kernel::SharedStorage));
  cudaError_t e = tc_image::launch(kernel, dim3(blocks, 1, 1), dim3(Kernel::kThreadCount, 1, 1),
                                   dim3(1, 1, 1), size_t(smem), s, launch_params, false);
  return tc_image::launched(kernel, e, error, capacity);
}

}  // namespace tc_grouped

#endif  // !TILECRAFT_DEVICE_HALF
