// What an SM90 (CUTLASS 3.x, TMA + wgmma) GEMM description must satisfy beyond its tile.
#pragma once

#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft {

Status validate_sm90_gemm(const GemmDescription& d);

}  // namespace tilecraft
