#include "tilecraft/discover/performance_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "discover/register_file.hpp"

namespace tilecraft::discover {
namespace {

// ---- Priors ----------------------------------------------------------------------------------
// Every constant below is a prior: a round number from public Ampere/Hopper GEMM results and
// CUTLASS's design, not a measurement of this library's kernels. What matters is that they order
// candidates consistently; tune them against measurements when there are some.

// Kernel launch, prologue and the final tile's tail.
constexpr double kLaunchSecondsSm80 = 3e-6;
constexpr double kLaunchSecondsSm90 = 2e-6;
// The DRAM round trip a tile's first k-tile waits for before its pipeline runs full.
constexpr double kPipelineFillSeconds = 0.7e-6;
// Measured on the H100 (bench/RESULTS.md): CUTLASS's stream-K scheduler runs its k-iterations
// at about 0.85-0.97 of the persistent scheduler's speed on the same tile, and its barrier
// workspace is zeroed (a memset) before every launch.
constexpr double kStreamKIterationEfficiency = 0.9;
// What splitting costs beyond the fixups: the barrier workspace zeroed before the launch (which
// also keeps the launch from overlapping the previous kernel) and the waits for peer CTAs.
// Fitted to the H100's split runs at 1000^3, 16x4096x4096 and 512x512x16384.
constexpr double kStreamKSeconds = 12e-6;
constexpr double kCutlassMinItersPerStreamKUnit = 8;
// A stream-K split's fixup: one CTA of each tile waits for its peers and adds their partial tiles
// from the workspace, one after another, at what one SM reads. Fitted to the H100's SM90 split
// runs of issue 29 (bench/RESULTS.md): 64x64x65536 in 64 slices (128x32 tile) and 256x256x32768
// in 16 and 32 slices (128x64 and 128x128 tiles); checked on 512x512x16384 and 32x4096x11008.
constexpr double kFixupBytesPerSecondPerSm = 50e9;
// Fraction of the DRAM bandwidth streaming GEMM reads and writes reach.
constexpr double kAchievableDramFraction = 0.85;
// L2-to-SM bandwidth relative to DRAM bandwidth (roughly 3-5x on Ampere and Hopper).
constexpr double kL2ToDramBandwidthRatio = 4.0;
// Operands that together fit in this fraction of L2 are read from DRAM once.
constexpr double kL2ResidentFraction = 0.5;
// The best mma.sync (SM80) kernels reach about 0.6 of Hopper's wgmma peak: 0.85 * 0.7.
constexpr double kMmaSyncOnHopper = 0.70;
// The reuse M*N/(M+N) of the two-stage mainloop's largest tile, 256x128, and how steeply a
// smaller reuse slows narrow accesses (1 would be purely issue-bound).
constexpr double kNarrowFullReuse = 256.0 * 128.0 / (256.0 + 128.0);
constexpr double kNarrowReuseExponent = 0.75;
// CUTLASS 2.x tensor-op convolutions on Hopper against the model's GEMM of the same tile, beside
// the SM90 convolutions: fitted on the H100's fprop runs of issue 29 (bench/RESULTS.md) where both
// kinds were measured (ResNet-50 conv4, conv3 stride 2, VGG-16 conv3, the VAE's up block: the
// model's SM90-over-SM80 ratio low by 1.09x there); checked on ResNet-50 conv5, the VAE's middle
// block, Inception's 5x5 and the ResNet-50 conv4 dgrad (low by 1.37x).
constexpr double kSm80ConvOnHopper = 0.92;
// fp8 wgmma without fast accumulation promotes partial sums to f32 every few k-blocks.
constexpr double kFp8PromotionFactor = 0.88;
// wgmma tiles narrower than 64 in N reuse each A fragment over too few columns.
constexpr double kNarrowNFactor = 0.5;
// The basic (non-persistent, one consumer warpgroup) SM90 schedule overlaps less.
constexpr double kBasicSm90ScheduleFactor = 0.90;
// Fitted to the H100's 64x32, 64x64, 64x128 and 128x256 tiles (bench_api_ranking and the
// calibration test's runs): a k-tile's TMA loads take about 0.11 us plus their bytes at the
// L2-to-SM bandwidth. Cluster multicast divides the bytes one SM requests: A over the cluster's
// N extent, B over its M extent.
constexpr double kTmaLoadLatencySeconds = 0.11e-6;
// Loads of lines that every CTA requests at the same moment queue at their L2 slice: at
// 16x4096x4096 (one tile row) multicasting A over two CTAs ran 20% faster than multicasting B.
constexpr double kHotOperandFactor = 8.0;

// How sharply two bounds combine (a k-iteration's loads and MMAs; the kernel's compute and DRAM
// traffic): their 8-norm, the larger one plus a little of the other, as they never overlap
// perfectly.
constexpr double kLoadComputeNorm = 8.0;
// Barrier round trip of one pipeline stage (full/empty barriers, wgmma fence), measured on the
// H100 as the difference between K tiles of 32 and 64 bf16 at 128x8192x8192.
constexpr double kSm90IterationOverheadSeconds = 0.03e-6;
// CUTLASS sizes a persistent grid of clusters assuming GPCs of 18 SMs
// (tile_scheduler_params.h, get_max_cta_occupancy) unless told the device's active clusters.
constexpr int kCutlassSmsPerGpc = 18;
constexpr int kMaxCtasPerSm = 32;
// Shared memory the runtime reserves per CTA.
constexpr int kReservedSharedMemoryPerCta = 1024;

// Fraction of peak by log2 of the CTA tile's area (M * N).
struct Anchor {
  double log2_area;
  double efficiency;
};
// wgmma, cooperative schedule: 128x128 ~0.72, 128x256 / 256x128 ~0.80, 64x64 ~0.40.
constexpr Anchor kWgmmaByArea[] = {{10, 0.18}, {11, 0.26}, {12, 0.40}, {13, 0.56},
                                   {14, 0.72}, {15, 0.80}, {16, 0.82}};
// mma.sync and SIMT on their own architecture: 128x256 ~0.85, 128x128 ~0.78.
constexpr Anchor kMmaSyncByArea[] = {{10, 0.25}, {11, 0.35}, {12, 0.50}, {13, 0.65},
                                     {14, 0.78}, {15, 0.85}, {16, 0.85}};

template <size_t N>
double efficiency_by_area(const Anchor (&table)[N], double area) {
  const double x = std::log2(std::max(area, 1.0));
  if (x <= table[0].log2_area) return table[0].efficiency;
  for (size_t i = 1; i < N; ++i) {
    if (x <= table[i].log2_area) {
      const Anchor& lo = table[i - 1];
      const Anchor& hi = table[i];
      const double t = (x - lo.log2_area) / (hi.log2_area - lo.log2_area);
      return lo.efficiency + t * (hi.efficiency - lo.efficiency);
    }
  }
  return table[N - 1].efficiency;
}

double ceil_div(double a, double b) { return std::ceil(a / b); }

// ---- Device ----------------------------------------------------------------------------------

bool is_hopper(const DeviceTraits& device) { return device.compute_capability >= 90; }

int max_shared_memory_per_cta(const DeviceTraits& device) {
  if (is_hopper(device)) return kMaxSharedMemoryBytesSm90;
  if (device.compute_capability == 80 || device.compute_capability == 87) {
    return kMaxSharedMemoryBytesSm80;
  }
  return 99 * 1024;  // SM86, SM89
}

int shared_memory_per_sm(const DeviceTraits& device) {
  return max_shared_memory_per_cta(device) + kReservedSharedMemoryPerCta;
}

int max_threads_per_sm(const DeviceTraits& device) {
  const int cc = device.compute_capability;
  return (cc == 86 || cc == 89) ? 1536 : 2048;
}

double dram_bytes_per_second(const DeviceTraits& device) {
  return device.dram_bandwidth_gbps * 1e9 * kAchievableDramFraction;
}

double l2_bytes_per_second_per_sm(const DeviceTraits& device) {
  return device.dram_bandwidth_gbps * 1e9 * kL2ToDramBandwidthRatio / device.sm_count;
}

// ---- Data types ------------------------------------------------------------------------------

// The instruction's peak relative to the dense 16-bit tensor-core peak.
double rate_vs_16bit_peak(const MathInstruction& math) {
  using enum DataType;
  if (math.opcode_class == OpClass::Simt) return math.element_a == f64 ? 1.0 / 30 : 1.0 / 15;
  switch (math.element_a) {
    case f16:
    case bf16:
      return 1.0;
    case e4m3:
    case e5m2:
    case s8:
    case u8:
      return 2.0;
    case tf32:
      return 0.5;
    case f32:
      switch (math.math_operation) {
        case MathOperation::multiply_add_fast_f16:
        case MathOperation::multiply_add_fast_bf16:
          return 1.0;
        case MathOperation::multiply_add_fast_f32:
          return 0.5 / 3;  // 3xTF32
        default:
          return 0.5;  // rounded to tf32
      }
    default:
      return 1.0 / 15;  // f64 tensor cores
  }
}

// CUTLASS promotes every 4 k-blocks by default; the cost falls with the promotions' share.
double accumulation_factor(const TileDescription& tile) {
  const MathInstruction& math = tile.math_instruction;
  const bool promotes =
      is_fp8(math.element_a) && math.math_operation != MathOperation::multiply_add_fast_accum;
  if (!promotes) return 1.0;
  const double interval = tile.mma_promotion_interval > 0 ? tile.mma_promotion_interval : 4.0;
  return 1.0 - (1.0 - kFp8PromotionFactor) * 4.0 / interval;
}

// Access width below 128 bits makes more, smaller loads and stores (SM80 only: TMA needs 16 B).
double alignment_factor(const TensorDescription& t) {
  const int bits = t.alignment * size_in_bits(t.element);
  if (bits >= 128) return 1.0;
  if (bits >= 64) return 0.85;
  if (bits >= 32) return 0.70;
  return 0.50;
}

// Bytes per element of the output the epilogue moves. beta = 0 (the default) skips reading C. A
// custom epilogue reads each of its full inputs and writes each of its stores (D among them);
// its vectors and reductions are one value per row or column.
double output_bytes_per_element(const GemmDescription& d) {
  if (d.epilogue_graph) {
    double bytes = 0;
    for (const EpilogueNode& n : d.epilogue_graph->nodes()) {
      const bool full_input = n.kind == EpilogueNodeKind::tensor && n.broadcast == Broadcast::full;
      if (full_input || n.kind == EpilogueNodeKind::store) bytes += storage_bytes(n.dtype);
    }
    return bytes;
  }
  double bytes = storage_bytes(d.epilogue.element_output);
  if (d.epilogue.fusion.aux_output) bytes += storage_bytes(d.epilogue.fusion.element_aux);
  return bytes;
}

// ---- Tiling ----------------------------------------------------------------------------------

struct Tiling {
  double tiles_m = 0, tiles_n = 0, k_tiles = 0;
  double tiles = 0;           // over the batch
  double launched_tiles = 0;  // what the scheduler walks: rounded up to clusters and swizzle
  double tile_efficiency = 0;
};

// CUTLASS's SM90 tile schedulers (tile_scheduler_params.h) round the tiles along M and N up to
// whole clusters, then up to swizzle * cluster, with the swizzle shrunk for small grids; the
// padded tiles run the whole mainloop on zeros.
int sm90_effective_swizzle(Swizzle swizzle, double tiles_m, double tiles_n) {
  const int max_swizzle = identity_swizzle_size(swizzle);
  const double smaller = std::min(tiles_m, tiles_n);
  if (max_swizzle >= 8 && smaller >= 6) return 8;
  if (max_swizzle >= 4 && smaller >= 3) return 4;
  if (max_swizzle >= 2 && smaller >= 2) return 2;
  return 1;
}

double round_up(double value, double multiple) { return ceil_div(value, multiple) * multiple; }

Tiling tile_problem(const TileDescription& tile, Swizzle swizzle, const GemmShape& shape) {
  const auto& s = tile.threadblock_shape;
  const double m = static_cast<double>(shape.m), n = static_cast<double>(shape.n),
               k = static_cast<double>(shape.k), batch = static_cast<double>(shape.batch);
  Tiling t;
  t.tiles_m = ceil_div(m, s[0]);
  t.tiles_n = ceil_div(n, s[1]);
  t.k_tiles = ceil_div(k, s[2]);
  t.tiles = t.tiles_m * t.tiles_n * batch;
  t.launched_tiles = t.tiles;
  if (tile.is_sm90()) {
    const double cluster_m = tile.cluster_shape[0], cluster_n = tile.cluster_shape[1];
    const double blocks_m = round_up(t.tiles_m, cluster_m);
    const double blocks_n = round_up(t.tiles_n, cluster_n);
    const int swizzle_size = sm90_effective_swizzle(swizzle, blocks_m, blocks_n);
    t.launched_tiles = round_up(blocks_m, swizzle_size * cluster_m) *
                       round_up(blocks_n, swizzle_size * cluster_n) * batch;
  }
  const double padded = t.tiles_m * s[0] * t.tiles_n * s[1] * t.k_tiles * s[2];
  t.tile_efficiency = m * n * k / padded;
  return t;
}

// ---- Residency -------------------------------------------------------------------------------

// Sizes in 64 bits: the extents are bounded (has_valid_extents), their products are not small.
int64_t sm80_registers_per_thread(const TileDescription& tile) {
  const auto& s = tile.threadblock_shape;
  const int64_t accumulators = int64_t{s[0]} * s[1] / tile.threads() *
                               size_in_bits(tile.math_instruction.element_accumulator) / 32;
  return std::min<int64_t>(accumulators + kSm80RegistersBesideAccumulators, kMaxRegistersPerThread);
}

int sm80_ctas_per_sm(const TileDescription& tile, const DeviceTraits& device) {
  const int64_t smem = tile.mainloop_shared_memory_bytes();
  if (smem > max_shared_memory_per_cta(device)) return 0;
  const int64_t by_smem = shared_memory_per_sm(device) / (smem + kReservedSharedMemoryPerCta);
  const int64_t by_threads = max_threads_per_sm(device) / tile.threads();
  // A CTA over the register file still launches with spills: count it as one.
  const int64_t by_registers =
      std::max<int64_t>(1, kRegistersPerSm / (tile.threads() * sm80_registers_per_thread(tile)));
  return static_cast<int>(
      std::min<int64_t>({by_smem, by_threads, by_registers, int64_t{kMaxCtasPerSm}}));
}

bool is_persistent(const TileDescription& tile) {
  return tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative ||
         tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedPingpong;
}

int sm90_ctas_per_sm(const TileDescription& tile, const DeviceTraits& device) {
  if (!is_hopper(device)) return 0;
  // Persistent kernels and stages == 0 (as many as fit) fill one SM's shared memory.
  if (is_persistent(tile) || tile.stages == 0) return 1;
  // + the epilogue's share
  const int64_t smem = tile.mainloop_shared_memory_bytes() + 8 * 1024;
  return static_cast<int>(std::clamp<int64_t>(shared_memory_per_sm(device) / smem, 1, 2));
}

// get_max_cta_occupancy of CUTLASS's SM90 tile schedulers: the CTAs of a persistent grid.
int cutlass_max_cta_occupancy(int cluster_size, int sm_count) {
  const int gpcs = sm_count < kCutlassSmsPerGpc ? 1 : sm_count / kCutlassSmsPerGpc;
  const int residual = sm_count < kCutlassSmsPerGpc ? 0 : sm_count % kCutlassSmsPerGpc;
  const int ctas = gpcs * (kCutlassSmsPerGpc - kCutlassSmsPerGpc % cluster_size) + residual -
                   residual % cluster_size;
  return std::min(ctas, sm_count);
}

struct Residency {
  int ctas_per_sm = 0;
  double concurrent_ctas = 0;
  bool persistent = false;
};

Residency residency(const TileDescription& tile, const DeviceTraits& device) {
  Residency r;
  if (!tile.is_sm90()) {
    r.ctas_per_sm = sm80_ctas_per_sm(tile, device);
    r.concurrent_ctas = static_cast<double>(r.ctas_per_sm) * device.sm_count;
    return r;
  }
  r.ctas_per_sm = sm90_ctas_per_sm(tile, device);
  r.persistent = is_persistent(tile);
  const int cluster_size = tile.cluster_shape[0] * tile.cluster_shape[1];
  r.concurrent_ctas = static_cast<double>(
      r.ctas_per_sm * (r.persistent ? cutlass_max_cta_occupancy(cluster_size, device.sm_count)
                                    : device.sm_count / cluster_size * cluster_size));
  return r;
}

// ---- Instruction efficiency ------------------------------------------------------------------

double sm90_stage_factor(int stages) {
  if (stages == 0 || stages >= 4) return 1.0;
  return stages == 3 ? 0.95 : 0.85;
}

double sm90_instruction_efficiency(const TileDescription& tile) {
  const auto& s = tile.threadblock_shape;
  double e = efficiency_by_area(kWgmmaByArea, static_cast<double>(s[0]) * s[1]);
  if (s[1] < 64) e *= kNarrowNFactor;
  if (!is_persistent(tile)) e *= kBasicSm90ScheduleFactor;
  e *= sm90_stage_factor(tile.stages) * accumulation_factor(tile);
  return std::min(e, 1.0);
}

// Warp tiles of 64x64 and up reuse operand fragments fully.
double sm80_warp_tile_factor(const TileDescription& tile) {
  const auto w = tile.warp_shape();
  const int64_t area = int64_t{w[0]} * w[1];
  if (area >= 4096) return 1.0;
  if (area >= 2048) return 0.95;
  return area >= 1024 ? 0.85 : 0.70;
}

double sm80_stage_factor(int stages) {
  if (stages >= 5) return 1.0;
  if (stages == 4) return 0.97;
  return stages == 3 ? 0.93 : 0.85;
}

// Accesses narrower than 32 bits (the two-stage mainloop's register loads, one or two 16-bit
// elements each) are issue-bound: a tile's load instructions per k-tile grow with M + N while its
// MMAs grow with M * N, so the tile's reuse M*N/(M+N) sets the pace, up to the largest tile's.
// Fitted to the H100's 2-stage runs of issue 29 (bench/RESULTS.md): 2047x2049x2047 (128x64 at
// 0.68 of 256x128: the exponent at least 0.6) and 3000x5001x3000 (128x128 at 0.90, 64x128 at
// 0.62); checked on 4095x4097x4095, 1023^3 and 777x333x4099.
double narrow_access_reuse_factor(const GemmDescription& d) {
  const auto bits = [](const TensorDescription& t) {
    return t.alignment * size_in_bits(t.element);
  };
  if (d.tile.math_instruction.opcode_class != OpClass::TensorOp ||
      std::min(bits(d.A), bits(d.B)) >= 32) {
    return 1.0;
  }
  const double m = d.tile.threadblock_shape[0], n = d.tile.threadblock_shape[1];
  return std::pow(std::min(1.0, (m * n / (m + n)) / kNarrowFullReuse), kNarrowReuseExponent);
}

double sm80_instruction_efficiency(const GemmDescription& d, const DeviceTraits& device) {
  const TileDescription& tile = d.tile;
  const auto& s = tile.threadblock_shape;
  double e = efficiency_by_area(kMmaSyncByArea, static_cast<double>(s[0]) * s[1]);
  e *= sm80_warp_tile_factor(tile) * sm80_stage_factor(tile.stages);
  e *= std::min(alignment_factor(d.A), alignment_factor(d.B));
  e *= narrow_access_reuse_factor(d);
  if (tile.math_instruction.opcode_class == OpClass::TensorOp && is_hopper(device)) {
    e *= kMmaSyncOnHopper;
  }
  return e;
}

// ---- Memory ----------------------------------------------------------------------------------

// The block of output tiles (in tiles along M and N) that the concurrently running CTAs cover,
// from the order in which the swizzle hands out tiles.
struct WaveFootprint {
  double m = 1, n = 1;
};

WaveFootprint wave_footprint(Swizzle swizzle, const Tiling& t, double concurrent) {
  const double ctas = std::max(1.0, std::min(concurrent, t.tiles_m * t.tiles_n));
  WaveFootprint w;
  if (swizzle == Swizzle::HorizontalSwizzle) {  // along N first
    w.n = std::min(t.tiles_n, ctas);
    w.m = std::min(t.tiles_m, std::max(1.0, ctas / w.n));
    return w;
  }
  // Column groups of the swizzle's width (in tiles), walked along M; a group covering all of M
  // spills the wave into the next columns.
  w.n = std::min(t.tiles_n, static_cast<double>(identity_swizzle_size(swizzle)));
  w.m = std::min(t.tiles_m, std::max(1.0, ctas / w.n));
  if (w.m >= t.tiles_m) w.n = std::min(t.tiles_n, std::max(w.n, ctas / w.m));
  return w;
}

// Bytes read and written in DRAM: A is read again for every band of N-tiles that does not run
// beside the previous one, B for every band of M-tiles, unless both fit in L2 together.
double dram_bytes(const GemmDescription& d, const GemmShape& shape, const Tiling& t,
                  double concurrent, const DeviceTraits& device) {
  const double m = static_cast<double>(shape.m), n = static_cast<double>(shape.n),
               k = static_cast<double>(shape.k);
  const double a = m * k * storage_bytes(d.A.element);
  const double b = n * k * storage_bytes(d.B.element);
  double reads = a + b;
  if (reads > kL2ResidentFraction * device.l2_bytes) {
    const WaveFootprint w = wave_footprint(d.swizzle, t, concurrent);
    reads = a * (t.tiles_n / w.n) + b * (t.tiles_m / w.m);
  }
  double writes = m * n * output_bytes_per_element(d);
  if (!d.tile.is_sm90()) writes /= alignment_factor(d.C);
  return static_cast<double>(shape.batch) * (reads + writes);
}

// ---- Compute ---------------------------------------------------------------------------------

// Seconds one CTA spends on the parts of its work, given its share of an SM.
// The time of two bounds that overlap almost, but not quite, perfectly.
double bound_norm(double a, double b) {
  return std::pow(std::pow(a, kLoadComputeNorm) + std::pow(b, kLoadComputeNorm),
                  1.0 / kLoadComputeNorm);
}

// Bytes of A and B one SM requests per k-tile, after cluster multicast; TMA fetches nothing
// for rows past the problem's edge.
double sm90_operand_bytes_per_k_tile(const GemmDescription& d, const GemmShape& shape) {
  const auto& s = d.tile.threadblock_shape;
  const auto& cluster = d.tile.cluster_shape;
  const double rows_a = std::min<double>(s[0], static_cast<double>(shape.m));
  const double rows_b = std::min<double>(s[1], static_cast<double>(shape.n));
  // A grid one tile tall has every CTA read the same A lines at once (one wide: the same B).
  const double hot_a = shape.m <= s[0] ? kHotOperandFactor : 1.0;
  const double hot_b = shape.n <= s[1] ? kHotOperandFactor : 1.0;
  const double a = hot_a * rows_a * s[2] * storage_bytes(d.A.element) / cluster[1];
  const double b = hot_b * rows_b * s[2] * storage_bytes(d.B.element) / cluster[0];
  return a + b;
}

struct CtaCosts {
  double k_iteration = 0;   // one k-tile of MMAs
  double epilogue = 0;      // one tile's epilogue when nothing overlaps it
  double partial_tile = 0;  // moving one tile of accumulators through L2 (stream-K fixup)
};

CtaCosts cta_costs(const GemmDescription& d, const GemmShape& shape, double instruction_efficiency,
                   const Residency& r, const DeviceTraits& device) {
  const auto& s = d.tile.threadblock_shape;
  const double share = 1.0 / r.ctas_per_sm;
  const double sm_flops = device.peak_tensor_tflops_16bit * 1e12 / device.sm_count *
                          rate_vs_16bit_peak(d.tile.math_instruction) * share;
  const double sm_l2 = l2_bytes_per_second_per_sm(device) * share;
  const double tile_elements = static_cast<double>(s[0]) * s[1];
  CtaCosts c;
  c.k_iteration = 2.0 * tile_elements * s[2] / (sm_flops * instruction_efficiency);
  if (d.tile.is_sm90()) {
    const double loads = kTmaLoadLatencySeconds + sm90_operand_bytes_per_k_tile(d, shape) / sm_l2;
    c.k_iteration = bound_norm(c.k_iteration, loads) + kSm90IterationOverheadSeconds;
  }
  c.epilogue = tile_elements * output_bytes_per_element(d) / sm_l2;
  c.partial_tile =
      tile_elements * size_in_bits(d.tile.math_instruction.element_accumulator) / 8 / sm_l2;
  return c;
}

struct Schedule {
  double compute_seconds = 0;
  double wave_efficiency = 0;
};

// Ping-pong hides each epilogue behind the other warpgroup's mainloop, except the last one.
double exposed_epilogues(const TileDescription& tile, double tiles_per_cta) {
  if (tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedPingpong) return 1;
  return tiles_per_cta;
}

// Whole tiles per CTA, in waves of concurrent CTAs.
Schedule data_parallel_schedule(const TileDescription& tile, const Tiling& t, const Residency& r,
                                const CtaCosts& c) {
  const double waves = ceil_div(t.launched_tiles, r.concurrent_ctas);
  const double fills = r.persistent ? 1 : waves;
  Schedule s;
  s.wave_efficiency = t.tiles / (waves * r.concurrent_ctas);
  s.compute_seconds = waves * t.k_tiles * c.k_iteration +
                      exposed_epilogues(tile, waves) * c.epilogue + fills * kPipelineFillSeconds;
  return s;
}

// CTAs sharing one tile's k-iterations: a share shorter than K splits the tile over several;
// a longer one straddles two tiles.
double stream_k_splits(double k_tiles, double iterations_per_cta) {
  if (k_tiles == 1) return 1;
  return iterations_per_cta < k_tiles ? ceil_div(k_tiles, iterations_per_cta) : 2;
}

// CUTLASS's stream-K heuristic (tile_scheduler_params.h: get_num_sk_tiles, get_num_sk_units):
// without a partial last wave, or with a tail wave at least half full, or with K too short to
// split, every tile runs data-parallel. Otherwise the tiles of the last (up to) two waves are
// shared out in equal slices of k-iterations over one wave of CTAs (at least eight iterations
// each); a tile split over CTAs pays a fixup (partial accumulators through L2 and a barrier).
Schedule stream_k_schedule(const TileDescription& tile, const Tiling& t, const Residency& r,
                           const CtaCosts& c) {
  const double wave = r.concurrent_ctas, tiles = t.launched_tiles;
  const double cluster = static_cast<double>(tile.cluster_shape[0]) * tile.cluster_shape[1];
  const double full_waves = std::floor(tiles / wave), tail = tiles - full_waves * wave;
  double sk_tiles = 0, sk_units = 0;
  if (tail > 0 && t.k_tiles > kCutlassMinItersPerStreamKUnit && 2 * tail < wave) {
    const double dp_waves = full_waves > 1 ? full_waves - 1 : 0;
    sk_tiles = std::floor((tiles - dp_waves * wave) / cluster) * cluster;
    sk_units =
        std::min(wave, std::floor(t.k_tiles * sk_tiles / kCutlassMinItersPerStreamKUnit / cluster) *
                           cluster);
  }
  if (sk_tiles == 0 || sk_units == 0) {
    Schedule s = data_parallel_schedule(tile, t, r, c);
    s.compute_seconds /= kStreamKIterationEfficiency;
    return s;
  }
  const double dp_waves = (tiles - sk_tiles) / wave;
  const double per_unit = ceil_div(t.k_tiles * sk_tiles, sk_units);
  const double splits = stream_k_splits(t.k_tiles, per_unit);
  const double fixup = splits > 1 ? (splits - 1) * c.partial_tile : 0;
  Schedule s;
  s.wave_efficiency = tiles * t.k_tiles / ((dp_waves * t.k_tiles + per_unit) * wave);
  s.compute_seconds =
      (dp_waves * t.k_tiles + per_unit) * c.k_iteration / kStreamKIterationEfficiency +
      exposed_epilogues(tile, dp_waves + ceil_div(per_unit, t.k_tiles)) * c.epilogue + fixup +
      kPipelineFillSeconds + kStreamKSeconds;
  return s;
}

Schedule schedule(const TileDescription& tile, const Tiling& t, const Residency& r,
                  const CtaCosts& c) {
  if (tile.is_sm90() && tile.tile_scheduler == TileScheduler::StreamK) {
    return stream_k_schedule(tile, t, r, c);
  }
  return data_parallel_schedule(tile, t, r, c);
}

double launch_seconds(const TileDescription& tile) {
  return tile.is_sm90() ? kLaunchSecondsSm90 : kLaunchSecondsSm80;
}

// Guards the divisions and products above against descriptions that skipped validation: the
// extents within validation's limits (so positive, and small enough for 64-bit sizes).
bool has_valid_extents(const TileDescription& tile) {
  const auto within = [](const std::array<int, 3>& v, int hi) {
    return v[0] >= 1 && v[0] <= hi && v[1] >= 1 && v[1] <= hi && v[2] >= 1 && v[2] <= hi;
  };
  if (!within(tile.threadblock_shape, kMaxThreadblockExtent)) return false;
  if (tile.stages < 0 || tile.stages > kMaxStagesSm80) return false;
  if (tile.is_sm90()) return within(tile.cluster_shape, kMaxPortableClusterSize);
  return within(tile.warp_count, kMaxWarpCount);
}

PerformanceEstimate not_runnable() {
  PerformanceEstimate e;
  e.seconds = std::numeric_limits<double>::infinity();
  return e;
}

}  // namespace

std::string PerformanceEstimate::explain() const {
  char line[192];
  std::snprintf(line, sizeof line, "score=%.5g time=%.4gus tile=%.3g wave=%.3g ai=%.4g inst=%.3g",
                score, seconds * 1e6, tile_efficiency, wave_efficiency, arithmetic_intensity,
                instruction_efficiency);
  return line;
}

PerformanceEstimate estimate(const GemmDescription& d, const GemmShape& shape,
                             const DeviceTraits& device) {
  const TileDescription& tile = d.tile;
  const bool runnable_shape = device.sm_count > 0 && has_valid_extents(tile);
  const Residency r = runnable_shape ? residency(tile, device) : Residency{};
  if (r.ctas_per_sm == 0 || r.concurrent_ctas == 0) return not_runnable();
  PerformanceEstimate e;
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch <= 0) {  // the launch only
    e.seconds = launch_seconds(tile);
    return e;
  }
  const Tiling t = tile_problem(tile, d.swizzle, shape);
  e.instruction_efficiency =
      tile.is_sm90() ? sm90_instruction_efficiency(tile) : sm80_instruction_efficiency(d, device);
  const CtaCosts costs = cta_costs(d, shape, e.instruction_efficiency, r, device);
  const Schedule s = schedule(tile, t, r, costs);
  const double bytes = dram_bytes(d, shape, t, r.concurrent_ctas, device);
  const double flops = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                       static_cast<double>(shape.k) * static_cast<double>(shape.batch);
  const double memory_seconds = bytes / dram_bytes_per_second(device);
  e.seconds = bound_norm(s.compute_seconds, memory_seconds) + launch_seconds(tile);
  e.score = flops / e.seconds / 1e12;
  e.tile_efficiency = t.tile_efficiency;
  e.wave_efficiency = s.wave_efficiency;
  e.arithmetic_intensity = flops / bytes;
  return e;
}

PerformanceEstimate for_convolution(PerformanceEstimate e, const GemmDescription& conv,
                                    const DeviceTraits& device) {
  if (conv.arch != 80 || !is_hopper(device) || e.score <= 0 ||
      conv.tile.math_instruction.opcode_class != OpClass::TensorOp) {
    return e;
  }
  e.seconds /= kSm80ConvOnHopper;
  e.score *= kSm80ConvOnHopper;
  e.instruction_efficiency *= kSm80ConvOnHopper;
  return e;
}

PerformanceEstimate estimate_direct_conv(const GemmDescription& d, const Conv2dProblemSize& p,
                                         const DeviceTraits& device) {
  PerformanceEstimate e;
  e.seconds = std::numeric_limits<double>::infinity();
  const auto& shape = d.tile.threadblock_shape;
  const int64_t vector = d.C.alignment;
  const int64_t threads = d.tile.threads();
  if (device.sm_count <= 0 || vector <= 0 || shape[1] < vector || p.groups <= 0) return e;
  const int64_t max_channel_threads = shape[1] / vector;
  const int64_t per_thread = std::max<int64_t>(1, shape[0] / (threads / max_channel_threads));
  // The kernel's split of a CTA (jit/direct_conv.cuh, split_of): the channel threads that leave
  // the fewest threads idle.
  const int64_t vectors = std::max<int64_t>(1, p.k / vector);
  double channel_use = 0, channel_blocks = 1, pixel_threads = 1;
  for (int64_t t = 1; t <= max_channel_threads && t <= vectors; ++t) {
    const double blocks = ceil_div(double(vectors), double(t));
    const double use =
        double(vectors) / (blocks * double(t)) * double(threads / t * t) / double(threads);
    if (use >= channel_use) channel_use = use, channel_blocks = blocks, pixel_threads = threads / t;
  }
  const double n = double(p.n), k = double(p.k), q = double(p.q), rows = double(p.n) * p.p;
  const double flops = 2.0 * rows * q * k * double(p.r) * p.s * (double(p.c) / p.groups);
  const double q_blocks = ceil_div(p.q, double(per_thread));
  e.tile_efficiency = channel_use * q / (q_blocks * double(per_thread));
  const double ctas = std::ceil(rows * q_blocks / pixel_threads) * channel_blocks;
  const double resident = double(device.sm_count) * double(std::max<int64_t>(1, 2048 / threads));
  e.wave_efficiency = ctas / (std::ceil(ctas / resident) * resident);
  // A depthwise thread loads one vector of x per kVector FMAs, each input column once for its
  // pixels (more pixels per thread, fewer loads per output: the winners measured on an H100 were
  // mostly of 4, bench/RESULTS.md); a grouped one shares the issue slots with the filter's
  // shared-memory loads.
  const double pixels = double(per_thread);
  e.instruction_efficiency =
      d.conv.group_mode == GroupMode::Depthwise ? 0.5 * (2.0 * pixels / (2.0 * pixels + 1.0)) : 0.6;
  const double cuda_core_flops = device.peak_tensor_tflops_16bit * 1e12 / 15;
  const double compute =
      flops / e.tile_efficiency / (cuda_core_flops * e.instruction_efficiency * e.wave_efficiency);
  const double bytes = n * p.h * p.w * p.c * storage_bytes(d.A.element) +
                       rows * q * k * storage_bytes(d.C.element) +
                       k * p.r * p.s * (double(p.c) / p.groups) * storage_bytes(d.B.element);
  e.arithmetic_intensity = flops / bytes;
  const double memory = bytes / (device.dram_bandwidth_gbps * 1e9 * kAchievableDramFraction);
  e.seconds = std::max(compute, memory) + kLaunchSecondsSm80;
  e.score = flops / e.seconds / 1e12;
  return e;
}

bool split_k_parallel(const GemmDescription& d) {
  return !d.tile.is_sm90() &&
         d.epilogue.element_output != d.tile.math_instruction.element_accumulator;
}

// Split-K: the slices run as `splits` problems, each over its share of K, and meet in the output
// (CUTLASS 2.x serial split-K: each slice but the first reads the partial sum the one before wrote
// there, in turn), in a workspace of the accumulator's type (SM90 stream-K kernels), or in one
// slice of accumulators each that a second kernel sums into the output (2.x parallel split-K).
PerformanceEstimate estimate_split_k(const GemmDescription& d, const GemmShape& shape, int splits,
                                     const DeviceTraits& device) {
  if (splits <= 1) return estimate(d, shape, device);
  const GemmShape slice{shape.m, shape.n, static_cast<int64_t>(ceil_div(shape.k, splits)),
                        shape.batch * splits};
  PerformanceEstimate e = estimate(d, slice, device);
  if (e.score <= 0) return e;
  const double accumulator = storage_bytes(d.tile.math_instruction.element_accumulator);
  const double mn = static_cast<double>(shape.m) * static_cast<double>(shape.n);
  if (split_k_parallel(d)) {  // every slice written and read back, and a second launch
    e.seconds +=
        2.0 * splits * mn * accumulator / dram_bytes_per_second(device) + launch_seconds(d.tile);
  } else {
    const double partial_bytes = d.tile.is_sm90() ? accumulator : output_bytes_per_element(d);
    e.seconds += 2.0 * (splits - 1) * mn * partial_bytes / dram_bytes_per_second(device);
    if (d.tile.is_sm90()) {
      const double tile_bytes = static_cast<double>(d.tile.threadblock_shape[0]) *
                                d.tile.threadblock_shape[1] * accumulator;
      e.seconds += (splits - 1) * tile_bytes / kFixupBytesPerSecondPerSm;
    }
  }
  const double flops = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
                       static_cast<double>(shape.k) * static_cast<double>(shape.batch);
  e.score = flops / e.seconds / 1e12;
  return e;
}

std::vector<int> split_k_choices(const GemmDescription& d, const GemmShape& shape,
                                 const DeviceTraits& device) {
  std::vector<int> splits;
  // The slices meet exactly: SM90 stream-K kernels reduce them in a workspace of the
  // accumulator's type, SM80 ones in the output where it holds that type and otherwise in
  // parallel (f16 or bf16 partial sums of an f32 accumulation were 1-5% off on the H100).
  const bool exact = !d.tile.is_sm90() || d.tile.tile_scheduler == TileScheduler::StreamK;
  if (!exact || d.kind != GemmKind::Universal || d.epilogue_graph || shape.batch != 1 ||
      !is_matrix_layout(d.C.layout) || is_interleaved(d.C.layout)) {
    return splits;
  }
  const Residency r = residency(d.tile, device);
  const Tiling t = tile_problem(d.tile, d.swizzle, shape);
  for (int s = 2; s <= kMaxSplitK; s *= 2) {
    // Every slice keeps a few k-tiles of its own, and the grid stays within two waves.
    if (t.k_tiles < 4.0 * s || t.tiles * s > 2.0 * r.concurrent_ctas) break;
    splits.push_back(s);
  }
  return splits;
}

bool is_space_tile_n(int n) {
  for (int listed : {16, 32, 64, 128, 192, 256}) {
    if (n == listed) return true;
  }
  return false;
}

std::vector<FittedKernel> fitted_n_kernels(const GemmDescription& d,
                                           const PerformanceEstimate& d_estimate,
                                           const GemmShape& shape, const DeviceTraits& device) {
  std::vector<FittedKernel> fitted;
  const int tile_n = d.tile.threadblock_shape[1];
  if (!d.tile.is_sm90() || d.kind != GemmKind::Universal || d.epilogue_graph ||
      (tile_n != 192 && tile_n != 256) || shape.n < 2 * int64_t{tile_n} || shape.n % tile_n == 0) {
    return fitted;
  }
  const int64_t count = (shape.n + tile_n - 1) / tile_n + 1;
  const int narrow = static_cast<int>(((shape.n + count - 1) / count + 15) / 16 * 16);
  if (narrow >= tile_n || narrow < 64 || is_space_tile_n(narrow)) return fitted;
  GemmDescription narrowed = d;
  narrowed.tile.threadblock_shape[1] = narrow;
  narrowed.tile.math_instruction.instruction_shape[1] = narrow;
  if (!narrowed.validate()) return fitted;
  PerformanceEstimate narrowed_estimate = estimate(narrowed, shape, device);
  if (narrowed_estimate.score > d_estimate.score) {
    fitted.push_back({std::move(narrowed), std::move(narrowed_estimate)});
  }
  return fitted;
}

std::vector<int> promotion_interval_choices(const GemmDescription& d) {
  const MathInstruction& math = d.tile.math_instruction;
  if (!d.tile.is_sm90() || d.kind != GemmKind::Universal || d.epilogue_graph ||
      !is_fp8(math.element_a) || math.math_operation == MathOperation::multiply_add_fast_accum ||
      d.tile.mma_promotion_interval != 0) {
    return {};
  }
  const int blocks = d.tile.threadblock_shape[2] / math.instruction_shape[2];
  std::vector<int> intervals;
  for (int interval : {8, 16}) {
    if (blocks > 0 && interval % blocks == 0) intervals.push_back(interval);
  }
  return intervals;
}

int model_ctas_per_sm(const TileDescription& tile, const DeviceTraits& device) {
  return residency(tile, device).ctas_per_sm;
}

}  // namespace tilecraft::discover
