#include "emit/evt/evt_tree.hpp"

#include <algorithm>
#include <functional>

namespace tilecraft::emit {
namespace {

bool is_sink(EpilogueNodeKind kind) {
  return kind == EpilogueNodeKind::store || kind == EpilogueNodeKind::reduce;
}

int index_in(const std::vector<int>& nodes, int node) {
  auto it = std::find(nodes.begin(), nodes.end(), node);
  return it == nodes.end() ? -1 : static_cast<int>(it - nodes.begin());
}

}  // namespace

EvtTree lower_epilogue_graph(const EpilogueGraph& graph) {
  const std::vector<EpilogueNode>& nodes = graph.nodes();
  const int primary = graph.primary_store();
  std::vector<std::vector<int>> sinks_of(nodes.size());
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    if (is_sink(nodes[i].kind) && i != primary) sinks_of[nodes[i].inputs[0]].push_back(i);
  }
  EvtTree tree;
  std::vector<bool> attached(nodes.size(), false);
  auto add = [&](EvtRole role, int source, std::vector<int> children) {
    tree.nodes.push_back({role, source, std::move(children)});
    return static_cast<int>(tree.nodes.size()) - 1;
  };
  // Wraps tree node `out` (the value of graph node `value`) in the sinks reading that value, and
  // those reading them, the first time the value is built.
  std::function<int(int, int)> attach = [&](int value, int out) {
    if (attached[value]) return out;
    attached[value] = true;
    for (int sink : sinks_of[value]) out = attach(sink, add(EvtRole::sink, sink, {out}));
    return out;
  };
  std::function<int(int)> build = [&](int value) {
    int out = -1;
    if (nodes[value].kind == EpilogueNodeKind::store) {
      // A node reading a store reads the value stored (the store itself is a sink, or the root).
      out = build(nodes[value].inputs[0]);
    } else {
      std::vector<int> children;
      for (int input : nodes[value].inputs) children.push_back(build(input));
      out = add(EvtRole::value, value, std::move(children));
    }
    return attach(value, out);
  };
  int root = build(primary);
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    if (!is_sink(nodes[i].kind) || attached[i]) continue;
    root = add(EvtRole::keep, -1, {root, build(nodes[i].inputs[0])});
  }
  tree.root = add(EvtRole::root, primary, {root});
  return tree;
}

int operand_index(const EpilogueGraph& graph, int node) {
  return index_in(graph.operand_nodes(), node);
}

int scalar_index(const EpilogueGraph& graph, int node) {
  return index_in(graph.scalar_nodes(), node);
}

}  // namespace tilecraft::emit
