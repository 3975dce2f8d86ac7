// Checks a custom epilogue's operands (GemmProblem::epilogue) against the description's graph.
#pragma once

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

// A packed vector of `length` elements of `dtype`, 1-D, or 2-D (batch, length) for one vector per
// batch; 16-byte aligned (and each batch's). `expected` describes the length ("N=128").
Result<OperandPlacement> place_vector(const std::string& name, const TensorView& tensor,
                                      DataType dtype, int64_t length, const std::string& expected,
                                      int batch);

}  // namespace tilecraft::detail
