// Checks of what SM90 kernels add to a GEMM's arguments: their modes and TMA extents, and the
// epilogue's bias, aux output and per-tensor scales; the modes of SM80 epilogue-graph kernels.
#pragma once

#include <cstdint>

#include "tilecraft/core/status.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"

namespace tilecraft::detail {

// SM90 modes (Gemm, split-K on stream-K, Batched) and the TMA rule that each operand's
// contiguous extent is a multiple of its alignment.
Status check_sm90_problem(const GemmProblem& problem, const GemmDescription& description);

// SM80 kernels with an epilogue graph (CUTLASS's 2.x epilogue visitor) run Gemm and Batched
// problems, K never split.
Status check_sm80_graph_problem(const GemmProblem& problem, const GemmDescription& description);

struct VectorPlacement {
  int64_t batch_stride = 0;  // 0: one vector for every batch
  int64_t span_elements = 0;
};
// The bias vector against the description (presence, dtype, length, batch, alignment).
Result<VectorPlacement> place_bias(const GemmProblem& problem, const GemmDescription& description);

// aux's description: D's layout and alignment width with the aux element type.
TensorDescription aux_description(const GemmDescription& description);

// Bias, aux and scales are given exactly when the description asks for them; scale tensors are
// one float32 on the operands' device.
Status check_epilogue_extras(const GemmProblem& problem, const GemmDescription& description);

}  // namespace tilecraft::detail
