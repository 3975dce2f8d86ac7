// An epilogue graph lowered to the visitors CUTLASS composes (Sm90EVT / Sm80EVT trees, or one
// Sm90TopologicalVisitor / Sm80TopologicalVisitor), in one of two forms:
//
// - tree: a node per value, its inputs as children. Each store and reduction wraps the value it
//   writes once, passing it through; outputs that D does not depend on hang beside D's tree under
//   a node that keeps D's value. Chosen when no value is read twice (the accumulator, scalars
//   and constants, which cost nothing to fetch again, excepted) and the tree is at most
//   kMaxEvtTreeDepth deep: the form CUTLASS's own fusions take.
// - topological: one operation per graph node, in node order, each reading the operations its
//   inputs are (the edges), the root last. A value read twice is computed (or loaded) once.
//
// Either way the visitors' count and the emitted text are linear in the graph, and lowering
// neither recurses nor copies a subtree.
#pragma once

#include <vector>

#include "tilecraft/describe/epilogue_graph.hpp"

namespace tilecraft::emit {

// The deepest tree emitted as nested Sm90EVT / Sm80EVT types: nvcc stops at about 200 nested
// template instantiations, and each level of the tree nests several. Deeper graphs take the
// topological form, which nests nothing.
inline constexpr int kMaxEvtTreeDepth = 16;

enum class EvtForm {
  tree,         // nested visitors: a node's children are the tree nodes it reads
  topological,  // one topological visitor: a node's children are the nodes it reads (edges)
};

enum class EvtRole {
  value,  // the graph node `source`: a load, or a computation of the children
  sink,   // the store or reduction `source` of child 0's value, passing it on
  keep,   // (tree form) child 0's value; child 1 is computed for its sinks only
  root,   // child 0's value, which is D's (converted to D's type; on SM80, stored to D)
};

struct EvtNode {
  EvtRole role = EvtRole::value;
  int source = -1;  // the graph node (value, sink; root: D's store)
  std::vector<int> children;
};

// Tree form: children come before their parent, root is the last node. Topological form: nodes
// are the visitor's operations in order (children are indices of earlier nodes), root the last.
struct EvtVisitors {
  EvtForm form = EvtForm::tree;
  std::vector<EvtNode> nodes;
  int root = -1;
};

// The graph must be valid (validate_for the kernel's arch).
EvtVisitors lower_epilogue_graph(const EpilogueGraph& graph);

// Index of graph node `node` among graph.scalar_nodes() (epilogue_scalars); -1 if it is not there.
int scalar_index(const EpilogueGraph& graph, int node);

// Every node's index among graph.operand_nodes() (tc_args_header.epilogue_tensors) and among
// graph.scalar_nodes() (-1 where it is not there), in time linear in the graph.
struct EvtSlots {
  std::vector<int> operand;
  std::vector<int> scalar;
};
EvtSlots evt_slots(const EpilogueGraph& graph);

}  // namespace tilecraft::emit
