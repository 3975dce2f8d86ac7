// What an SM80 (CUTLASS 2.x multistage) GEMM description must satisfy beyond its tile: the
// shared-memory layouts and thread maps CUTLASS's DefaultMmaCore builds for its operands.
#pragma once

#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft {

Status validate_sm80_operand_loads(const GemmDescription& d);

}  // namespace tilecraft
