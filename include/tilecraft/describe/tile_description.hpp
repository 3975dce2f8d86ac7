// TileDescription: threadblock and warp tiling and pipeline depth (seed 002, "Tile Description").
#pragma once

#include <array>
#include <string>

#include "tilecraft/core/status.hpp"
#include "tilecraft/describe/math_instruction.hpp"

namespace tilecraft {

// Shared memory a threadblock may use on SM80 and SM90 (227 KiB opt-in).
inline constexpr int kMaxSharedMemoryBytesSm80 = 163 * 1024;
inline constexpr int kMaxSharedMemoryBytesSm90 = 227 * 1024;

struct TileDescription {
  std::array<int, 3> threadblock_shape{};
  int stages = 0;
  std::array<int, 3> warp_count{};
  MathInstruction math_instruction;

  static Result<TileDescription> make(std::array<int, 3> threadblock_shape, int stages,
                                      std::array<int, 3> warp_count, const MathInstruction& math);
  Status validate() const;

  std::array<int, 3> warp_shape() const;
  int threads() const { return 32 * warp_count[0] * warp_count[1] * warp_count[2]; }
  // Bytes of shared memory the multistage mainloop needs for A and B tiles.
  int mainloop_shared_memory_bytes() const;
  // "128x128_32x3": the tile part of CUTLASS's procedural names.
  std::string procedural_name() const;
  friend bool operator==(const TileDescription&, const TileDescription&) = default;
};

}  // namespace tilecraft
