// An epilogue graph lowered to the tree CUTLASS's visitors take (Sm90EVT, Sm80EVT): a node per
// value, its inputs as children. A value read twice is computed twice (a tree has no shared
// nodes); each store and reduction wraps the value it writes once, passing it through; outputs
// that D does not depend on hang beside D's tree under a node that keeps D's value.
#pragma once

#include <vector>

#include "tilecraft/describe/epilogue_graph.hpp"

namespace tilecraft::emit {

enum class EvtRole {
  value,  // the graph node `source`: a load, or a computation of the children
  sink,   // the store or reduction `source` of child 0's value, passing it on
  keep,   // child 0's value; child 1 is computed for its sinks only
  root,   // child 0's value converted to D's element type
};

struct EvtNode {
  EvtRole role = EvtRole::value;
  int source = -1;  // the graph node (value, sink)
  std::vector<int> children;
};

struct EvtTree {
  std::vector<EvtNode> nodes;
  int root = -1;
};

// The graph must be valid (validate_for the kernel's arch).
EvtTree lower_epilogue_graph(const EpilogueGraph& graph);

// Index of graph node `node` among graph.operand_nodes() (tc_gemm_args.epilogue_tensors), and
// among graph.scalar_nodes() (epilogue_scalars); -1 if it is not there.
int operand_index(const EpilogueGraph& graph, int node);
int scalar_index(const EpilogueGraph& graph, int node);

}  // namespace tilecraft::emit
