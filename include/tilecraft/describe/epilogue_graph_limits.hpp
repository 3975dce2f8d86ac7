// Bounds on an epilogue graph's size, which EpilogueGraph::validate() enforces: a graph past
// them is refused by name (the bound, the graph's value and the node) before anything is lowered
// or emitted. Real epilogues have tens of nodes. The node bound keeps the emitted kernel within
// what nvcc instantiates: a graph whose values are shared becomes one CUTLASS topological visitor
// holding an operation per node, a nesting as deep as the node count, and nvcc stops at about
// 200 nested template instantiations. Python: EpilogueGraph.max_nodes, EpilogueGraph.max_depth.
#pragma once

namespace tilecraft {

// The most nodes a graph may have.
inline constexpr int kMaxEpilogueGraphNodes = 128;
// The deepest a node may be: a node without inputs is 1 deep, any other one deeper than its
// deepest input (the nodes on its longest chain of inputs).
inline constexpr int kMaxEpilogueGraphDepth = 64;

}  // namespace tilecraft
