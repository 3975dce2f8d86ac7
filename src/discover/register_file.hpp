// The register file of the SM80 and SM90 GPUs the models rank kernels for.
#pragma once

namespace tilecraft::discover {

inline constexpr int kRegistersPerSm = 64 * 1024;
inline constexpr int kMaxRegistersPerThread = 255;
// Addresses, loop state, fragments: what a thread of an SM80 kernel holds beside its accumulators.
inline constexpr int kSm80RegistersBesideAccumulators = 64;

}  // namespace tilecraft::discover
