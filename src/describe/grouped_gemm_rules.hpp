// What a grouped GEMM description (GemmKind::Grouped) must satisfy beyond the GEMM rules of its
// arch: the parts CUTLASS's grouped kernels take.
#pragma once

#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft {

Status validate_grouped_gemm(const GemmDescription& d);

}  // namespace tilecraft
