// GemmDescription: the one value that says which GEMM kernel to build. It yields the kernel's
// procedural name; the emitter turns it into source, and the source's hash is the cache key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tilecraft/core/status.hpp"
#include "tilecraft/describe/conv_description.hpp"
#include "tilecraft/describe/epilogue.hpp"
#include "tilecraft/describe/epilogue_graph.hpp"
#include "tilecraft/describe/swizzle.hpp"
#include "tilecraft/describe/tensor_description.hpp"
#include "tilecraft/describe/tile_description.hpp"

namespace tilecraft {

// Which CUTLASS kernel family runs the description: one problem per launch (GemmUniversal, and
// CUTLASS 3.x GemmUniversal on a plain problem shape) or many independent problems of different
// sizes in one launch (2.x GemmGrouped; 3.x pointer-array GemmUniversal on a group problem shape),
// or a 2-D convolution computed as an implicit GEMM (2.x ImplicitGemmConvolution; 3.x
// ConvUniversal).
enum class GemmKind : uint8_t { Universal, Grouped, Conv2d };
std::string_view to_string(GemmKind kind);
bool is_valid(GemmKind kind);

// How a 2.x grouped kernel assigns tiles of the problems to threadblocks: precomputed on the host
// into the workspace (needs the problem sizes on the host), or computed by each threadblock as it
// goes. SM90 grouped kernels always schedule on the device.
enum class SchedulerMode : uint8_t { Host, Device };
std::string_view to_string(SchedulerMode mode);
bool is_valid(SchedulerMode mode);

struct GemmDescription {
  int arch = 80;  // compute capability the kernel targets (80: SM80-style 2.x kernels)
  TileDescription tile;
  TensorDescription A, B, C;
  EpilogueFunctor epilogue;
  Swizzle swizzle = Swizzle::IdentitySwizzle1;
  GemmKind kind = GemmKind::Universal;
  SchedulerMode scheduler_mode = SchedulerMode::Device;  // Grouped only
  ConvDescription conv{};                                // Conv2d only
  // A custom epilogue (seed 002's epilogue visitor tree), computed instead of `epilogue`'s
  // linear combination: its primary store is D (of C's element type and layout).
  std::optional<EpilogueGraph> epilogue_graph{};

  bool is_grouped() const { return kind == GemmKind::Grouped; }
  bool is_conv() const { return kind == GemmKind::Conv2d; }

  // Validates every part and how they fit together (element types against the instruction,
  // alignments against the access widths, layouts against the element type, ...).
  static Result<GemmDescription> make(int arch, const TileDescription& tile,
                                      const TensorDescription& A, const TensorDescription& B,
                                      const TensorDescription& C, const EpilogueFunctor& epilogue,
                                      Swizzle swizzle);
  // GemmOperationGrouped (seed 002): the same parts, a grouped kernel.
  static Result<GemmDescription> make_grouped(int arch, const TileDescription& tile,
                                              const TensorDescription& A,
                                              const TensorDescription& B,
                                              const TensorDescription& C,
                                              const EpilogueFunctor& epilogue, Swizzle swizzle,
                                              SchedulerMode scheduler_mode);
  // Conv2dOperation (seed 002): A is the implicit GEMM's A operand (fprop: the activation x;
  // dgrad: the output gradient dy; wgrad: dy), B its B operand (fprop, dgrad: the filter w;
  // wgrad: x), C the output (fprop: y; dgrad: dx; wgrad: dw), all channels-last. group_mode:
  // GroupMode::None for ungrouped kernels; the others are arch-80 fprop kernels for groups > 1.
  static Result<GemmDescription> make_conv2d(
      ConvKind conv_kind, IteratorAlgorithm iterator_algorithm, int arch,
      const TileDescription& tile, const TensorDescription& A, const TensorDescription& B,
      const TensorDescription& C, StrideSupport stride_support, const EpilogueFunctor& epilogue,
      Swizzle swizzle, GroupMode group_mode = GroupMode::None);
  // The same kernel with `graph` as its epilogue (validated: a GEMM, not grouped or a
  // convolution, with a plain LinearCombination functor whose output type the graph's D has).
  Result<GemmDescription> with_epilogue_graph(EpilogueGraph graph) const;
  bool has_epilogue_graph() const { return epilogue_graph.has_value(); }
  Status validate() const;

  // CUTLASS-style: tilecraft_sm80_tensorop_f16_s16816gemm_f16_128x128_32x3_tn_align8x8x8 ...
  std::string procedural_name() const;
  friend bool operator==(const GemmDescription&, const GemmDescription&) = default;
};

// Grouped: the problems of a grouped kernel (GemmKind::Grouped runs only this mode).
enum class GemmMode : uint8_t { Gemm, GemmSplitKParallel, Batched, Array, Grouped };
std::string_view to_string(GemmMode mode);
bool is_valid(GemmMode mode);  // one of the enumerators

}  // namespace tilecraft
