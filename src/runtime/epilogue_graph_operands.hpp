// Checks a custom epilogue's operands (GemmProblem::epilogue) against the description's graph.
#pragma once

#include <functional>
#include <vector>

#include "operand_check.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"

namespace tilecraft::detail {

struct GraphOperand {
  const TensorView* tensor = nullptr;
  OperandPlacement placement;
  bool output = false;  // written by the kernel (copied back from a staged host tensor)
};

// One entry per graph.operand_nodes() (the ABI's order), and the scalars in scalar_nodes()
// order. Every name the graph uses must be given, nothing else; types, shapes, strides, alignment
// and the batch are checked; messages name the operand as "epilogue.<name>".
struct GraphOperands {
  std::vector<GraphOperand> tensors;
  std::vector<double> scalars;
};
Result<GraphOperands> place_graph_operands(const GemmProblem& problem,
                                           const GemmDescription& description);
// The same for an unbatched M x N problem with a row-major D (a persistent convolution's
// implicit GEMM output).
Result<GraphOperands> place_graph_operands(const EpilogueGraph& graph,
                                           const EpilogueOperands& operands, int64_t m, int64_t n);

// Stages each operand tensor through `stage` (PreparedLaunch::stage: inputs copied in, outputs
// copied back), fills `tensors` and `scalars` (which the arguments keep) and points the header at
// them.
using StageTensor = std::function<Status(const TensorView&, int64_t span, bool copy_in,
                                         bool copy_back, const void** device_ptr)>;
Status stage_graph_operands(const GraphOperands& operands, const StageTensor& stage,
                            std::vector<tc_epilogue_tensor>* tensors, std::vector<double>* scalars,
                            tc_args_header* header);

// A packed vector of `length` elements of `dtype`, 1-D, or 2-D (batch, length) for one vector per
// batch; 16-byte aligned (and each batch's). `expected` describes the length ("N=128").
Result<OperandPlacement> place_vector(const std::string& name, const TensorView& tensor,
                                      DataType dtype, int64_t length, const std::string& expected,
                                      int batch);

}  // namespace tilecraft::detail
