// The register file of the SM80 and SM90 GPUs the models rank kernels for.
#pragma once

namespace tilecraft::discover {

inline constexpr int kRegistersPerSm = 64 * 1024;
inline constexpr int kMaxRegistersPerThread = 255;

}  // namespace tilecraft::discover
