// TileDescription: threadblock and warp tiling and pipeline depth (seed 002, "Tile Description").
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "tilecraft/core/status.hpp"
#include "tilecraft/describe/math_instruction.hpp"

namespace tilecraft {

// Shared memory a threadblock may use on SM80 and SM90 (227 KiB opt-in).
inline constexpr int kMaxSharedMemoryBytesSm80 = 163 * 1024;
inline constexpr int kMaxSharedMemoryBytesSm90 = 227 * 1024;
// Clusters larger than this are not portable across Hopper parts.
inline constexpr int kMaxPortableClusterSize = 8;
// The largest threadblock_shape extent validation considers (every real tile is far smaller:
// shared memory bounds them). Larger ones are refused before any size is computed from them.
inline constexpr int kMaxThreadblockExtent = 1 << 16;
// A threadblock holds at most 1024 threads: 32 warps.
inline constexpr int kMaxThreadsPerBlock = 1024;
inline constexpr int kMaxWarpCount = kMaxThreadsPerBlock / 32;
// Pipeline stages: SM80 multistage mainloops take [2, 16]; SM90 0 (as many as fit) or [2, 12].
inline constexpr int kMaxStagesSm80 = 16;
inline constexpr int kMaxStagesSm90 = 12;

// The tile of a kernel. An SM80 (2.x) tile is threadblock_shape split over warp_count warps with
// a multistage mainloop of `stages`. An SM90 (3.x) tile is recognized by its wgmma instruction
// ([64, N, K]); its threadblock_shape is the CTA tile, warp_count is not used (the kernel schedule
// fixes the warpgroups), stages == 0 means as many as fit beside the epilogue, and it adds a
// cluster shape, kernel and epilogue schedules and a tile scheduler.
struct TileDescription {
  std::array<int, 3> threadblock_shape{};
  int stages = 0;
  std::array<int, 3> warp_count{};
  MathInstruction math_instruction;
  std::array<int, 3> cluster_shape{1, 1, 1};
  KernelSchedule kernel_schedule = KernelSchedule::Auto;
  EpilogueSchedule epilogue_schedule = EpilogueSchedule::Auto;
  TileScheduler tile_scheduler = TileScheduler::Persistent;
  // SM90 fp8 with f32 promotion (not fast accumulation): the wgmma k-blocks between promotions of
  // the partial sums to f32; 0: CUTLASS's default (4). Longer intervals promote less often.
  int mma_promotion_interval = 0;

  static Result<TileDescription> make(std::array<int, 3> threadblock_shape, int stages,
                                      std::array<int, 3> warp_count, const MathInstruction& math);
  // An SM90 tile. Auto schedules are resolved here, so the description names what is built.
  static Result<TileDescription> make_sm90(
      std::array<int, 3> threadblock_shape, int stages, std::array<int, 3> cluster_shape,
      const MathInstruction& math, KernelSchedule kernel_schedule = KernelSchedule::Auto,
      EpilogueSchedule epilogue_schedule = EpilogueSchedule::Auto,
      TileScheduler tile_scheduler = TileScheduler::Persistent);
  Status validate() const;
  bool is_sm90() const { return math_instruction.is_wgmma(); }

  std::array<int, 3> warp_shape() const;
  // 32 threads per warp of warp_count. In 64 bits, and INT64_MAX where even that would overflow
  // (values validation refuses), so that no product wraps around into a plausible size.
  int64_t threads() const;
  // Bytes of shared memory the multistage mainloop needs for A and B tiles (64-bit, as above).
  int64_t mainloop_shared_memory_bytes() const;
  // "128x128_32x3" (SM80), "128x256x64_c2x1x1_s0_coop_streamk" (SM90): the tile part of names.
  std::string procedural_name() const;
  friend bool operator==(const TileDescription&, const TileDescription&) = default;
};

}  // namespace tilecraft
