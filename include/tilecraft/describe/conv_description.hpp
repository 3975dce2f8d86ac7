// What makes an implicit-GEMM convolution kernel a convolution (seed 002, "Conv2d Operation"):
// which convolution it computes, how its iterators walk the activation and filter, and whether
// it is specialized for unit strides. A GemmDescription of kind Conv2d carries one.
#pragma once

#include <cstdint>
#include <string_view>

namespace tilecraft {

// CUTLASS conv::Operator: the output is y (fprop), dx (dgrad) or dw (wgrad).
enum class ConvKind : uint8_t { Fprop, Dgrad, Wgrad };
std::string_view to_string(ConvKind kind);  // "fprop", "dgrad", "wgrad"
bool is_valid(ConvKind kind);

// CUTLASS conv::IteratorAlgorithm.
enum class IteratorAlgorithm : uint8_t {
  Analytic,       // correct for every problem, slower
  Optimized,      // precomputed offsets (R, S <= 32); dgrad Optimized+Unity needs unit strides
  FixedChannels,  // fprop, channel count C equal to the access size (e.g. C=4 images)
  FewChannels,    // fprop, C a multiple of the access size but smaller than a tile's K
  Direct,         // not an implicit GEMM: tilecraft's direct grouped / depthwise fprop on CUDA
                  // cores (jit/direct_conv.cuh)
};
std::string_view to_string(IteratorAlgorithm algorithm);  // "analytic", "optimized", ...
bool is_valid(IteratorAlgorithm algorithm);

// CUTLASS conv::StrideSupport: Unity kernels assume stride 1 (where the kernel uses it: dgrad).
enum class StrideSupport : uint8_t { Strided, Unity };
std::string_view to_string(StrideSupport support);  // "strided", "unity"
bool is_valid(StrideSupport support);

// CUTLASS conv::GroupMode: how a grouped fprop (Conv2dProblemSize groups > 1) maps groups onto
// CTAs. None: ungrouped kernels (groups = 1).
enum class GroupMode : uint8_t {
  None,
  SingleGroup,    // a CTA computes one group or part of one: K / groups a multiple of tile N
  MultipleGroup,  // a CTA computes several whole groups: tile N a multiple of K / groups
  Depthwise,      // C == K == groups, one filter channel per group (CUDA-core kernels)
};
std::string_view to_string(GroupMode mode);  // "none", "single_group", "multiple_group", ...
bool is_valid(GroupMode mode);

struct ConvDescription {
  ConvKind kind = ConvKind::Fprop;
  IteratorAlgorithm iterator_algorithm = IteratorAlgorithm::Optimized;
  StrideSupport stride_support = StrideSupport::Strided;
  GroupMode group_mode = GroupMode::None;
  friend bool operator==(const ConvDescription&, const ConvDescription&) = default;
};

}  // namespace tilecraft
