// GemmDescription: the one value that says which GEMM kernel to build. It yields the kernel's
// procedural name; the emitter turns it into source, and the source's hash is the cache key.
#pragma once

#include <cstdint>
#include <string>

#include "tilecraft/core/status.hpp"
#include "tilecraft/describe/epilogue.hpp"
#include "tilecraft/describe/swizzle.hpp"
#include "tilecraft/describe/tensor_description.hpp"
#include "tilecraft/describe/tile_description.hpp"

namespace tilecraft {

struct GemmDescription {
  int arch = 80;  // compute capability the kernel targets (80: SM80-style 2.x kernels)
  TileDescription tile;
  TensorDescription A, B, C;
  EpilogueFunctor epilogue;
  Swizzle swizzle = Swizzle::IdentitySwizzle1;

  // Validates every part and how they fit together (element types against the instruction,
  // alignments against the access widths, layouts against the element type, ...).
  static Result<GemmDescription> make(int arch, const TileDescription& tile,
                                      const TensorDescription& A, const TensorDescription& B,
                                      const TensorDescription& C, const EpilogueFunctor& epilogue,
                                      Swizzle swizzle);
  Status validate() const;

  // CUTLASS-style: tilecraft_sm80_tensorop_f16_s16816gemm_f16_128x128_32x3_tn_align8x8x8 ...
  std::string procedural_name() const;
  friend bool operator==(const GemmDescription&, const GemmDescription&) = default;
};

enum class GemmMode : uint8_t { Gemm, GemmSplitKParallel, Batched, Array };
std::string_view to_string(GemmMode mode);
bool is_valid(GemmMode mode);  // one of the enumerators

}  // namespace tilecraft
