// An analytic performance model for GEMM kernel descriptions: estimates how fast a described
// kernel runs one problem on one GPU, so that thousands of candidates can be ranked without
// compiling any. Its constants are priors, not measurements: the ranking it gives is meant to be
// consistent (bigger tiles when there is work to fill the GPU, smaller or stream-K when there is
// not), not to predict absolute TFLOP/s.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tilecraft/compile/kernel_facts.hpp"
#include "tilecraft/core/conv_problem_size.hpp"
#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft::discover {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0, batch = 1;
};

// What the model needs to know about the GPU. The defaults describe an H100 SXM.
struct DeviceTraits {
  int sm_count = 132;
  int compute_capability = 90;
  double peak_tensor_tflops_16bit = 989.0;  // dense f16/bf16 tensor-core peak
  double dram_bandwidth_gbps = 3350.0;
  double l2_bytes = 50.0 * 1024 * 1024;
};

struct PerformanceEstimate {
  double score = 0;                   // estimated achievable TFLOP/s on this problem; higher wins
  double seconds = 0;                 // estimated kernel time
  double tile_efficiency = 0;         // useful / computed MACs after padding M, N, K to the tile
  double wave_efficiency = 0;         // tiles / (waves * concurrent CTAs), after persistence
                                      // and stream-K
  double arithmetic_intensity = 0;    // flops per byte moved from DRAM
  double instruction_efficiency = 0;  // fraction of the instruction's peak (the 16-bit peak
                                      // times the data type's rate) the tile reaches when busy
  // One line: "score=612.3 time=12.5us tile=0.98 wave=0.97 ai=85.3 inst=0.80".
  std::string explain() const;
};

// The estimate for running `d` on `shape`. A kernel the device cannot run (an SM90 kernel on an
// older GPU, an SM80 tile whose shared memory does not fit) scores 0 with infinite seconds; an
// empty problem scores 0 and takes the launch overhead. Allocation-free and deterministic.
PerformanceEstimate estimate(const GemmDescription& d, const GemmShape& shape,
                             const DeviceTraits& device);

// `e`, an estimate of a convolution's implicit GEMM, for the convolution `conv` itself: CUTLASS
// 2.x implicit GEMMs (their activation iterators) run slower on Hopper than the GEMM of the same
// tile, relative to the SM90 convolutions.
PerformanceEstimate for_convolution(PerformanceEstimate e, const GemmDescription& conv,
                                    const DeviceTraits& device);

// The estimate for tilecraft's direct convolution `d` (iterator_algorithm direct) on problem `p`:
// CUDA-core FMAs against the bytes of x, w and y moved once from DRAM (the taps' re-reads of x
// hit the caches), after padding K to the CTA's channels and Q to a thread's pixels.
PerformanceEstimate estimate_direct_conv(const GemmDescription& d, const Conv2dProblemSize& p,
                                         const DeviceTraits& device);

// The largest number of K slices split_k_choices offers.
inline constexpr int kMaxSplitK = 64;

// Whether `d` splits K in parallel (CUTLASS 2.x GemmSplitKParallel: a slice of accumulators each,
// then a reduction kernel into the output): SM80 kernels whose output is narrower than the
// accumulator, whose partial sums the output would round. Others split serially.
bool split_k_parallel(const GemmDescription& d);

// The estimate for `d` on `shape` with K split into `splits` slices (serial split-K: the slices
// meet in the output, or on SM90 stream-K kernels in a workspace; parallel: see above).
PerformanceEstimate estimate_split_k(const GemmDescription& d, const GemmShape& shape, int splits,
                                     const DeviceTraits& device);

// The decomposition heuristic: the slice counts (powers of two up to kMaxSplitK) worth offering
// for `d` on `shape`, for SM80 GEMM kernels and SM90 stream-K ones, on one problem whose tiles
// leave the GPU partly idle and whose K leaves each slice at least four k-tiles; none otherwise.
std::vector<int> split_k_choices(const GemmDescription& d, const GemmShape& shape,
                                 const DeviceTraits& device);

// The fp8 promotion intervals worth measuring for `d` beside CUTLASS's default (4 k-blocks):
// SM90 single-GEMM kernels of fp8 operands that promote to f32 (not fast accumulation), 8 and 16
// k-blocks where the tile's k-blocks divide them; none otherwise.
std::vector<int> promotion_interval_choices(const GemmDescription& d);

// The tile N extents the space lists (every SM90 tile is one of these wide).
bool is_space_tile_n(int n);

// Kernels fitted to the problem's N from `d`: an SM90 single-GEMM tile of N 192 or 256 over an N
// of at least two such tiles, narrowed (in steps of 16, wgmma and the epilogue's) to split N into
// one more tile than it needs, where the model expects it faster than `d`'s estimate
// `d_estimate` (the tiles' waves fill the GPU better); each with its own estimate, none
// otherwise. CUTLASS 4.2 builds such tiles (176 and 208 compiled here).
struct FittedKernel {
  GemmDescription description;
  PerformanceEstimate estimate;
};
std::vector<FittedKernel> fitted_n_kernels(const GemmDescription& d,
                                           const PerformanceEstimate& d_estimate,
                                           const GemmShape& shape, const DeviceTraits& device);

// Thread blocks of the tile resident on one SM by the model (shared memory, threads, estimated
// registers); 0 when the device cannot run it.
int model_ctas_per_sm(const TileDescription& tile, const DeviceTraits& device);

// The compiler's facts of the kernel when it was built with this cache (max_ctas_per_sm from the
// compiler's registers and the model's shared memory and threads), else predicted from the tile:
// accumulator registers per thread of the schedule's consumer threads (doubled for fp8 with
// default accumulation, which promotes through a second set) against the register budget.
KernelFacts kernel_facts(const GemmDescription& d, const std::string& kernel_name,
                         const DeviceTraits& device);

}  // namespace tilecraft::discover
