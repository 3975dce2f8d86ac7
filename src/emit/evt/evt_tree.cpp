#include "emit/evt/evt_tree.hpp"

#include <algorithm>
#include <optional>

namespace tilecraft::emit {
namespace {

bool is_sink(EpilogueNodeKind kind) {
  return kind == EpilogueNodeKind::store || kind == EpilogueNodeKind::reduce;
}

// Values a tree may fetch once per reader: registers or a kernel argument, no memory traffic.
bool fetched_freely(EpilogueNodeKind kind) {
  return kind == EpilogueNodeKind::accumulator || kind == EpilogueNodeKind::scalar ||
         kind == EpilogueNodeKind::constant;
}

// Builds the tree form, or gives up (nullopt) as soon as it would build a value a second time
// or nest deeper than kMaxEvtTreeDepth. Every node other than the free fetches is built at most
// once before that, so the work is linear in the graph; nothing recurses.
class TreeBuilder {
 public:
  explicit TreeBuilder(const EpilogueGraph& graph)
      : nodes_(graph.nodes()),
        primary_(graph.primary_store()),
        sinks_of_(nodes_.size()),
        attached_(nodes_.size(), false),
        builds_(nodes_.size(), 0) {
    for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
      if (is_sink(nodes_[i].kind) && i != primary_) sinks_of_[nodes_[i].inputs[0]].push_back(i);
    }
  }

  std::optional<EvtVisitors> build() {
    int root = build_value(primary_);
    if (root < 0) return std::nullopt;
    for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
      if (!is_sink(nodes_[i].kind) || attached_[i]) continue;
      const int side = build_value(nodes_[i].inputs[0]);
      if (side < 0) return std::nullopt;
      root = add(EvtRole::keep, -1, {root, side});
    }
    root = add(EvtRole::root, primary_, {root});
    if (too_deep_) return std::nullopt;
    tree_.form = EvtForm::tree;
    tree_.root = root;
    return std::move(tree_);
  }

 private:
  int add(EvtRole role, int source, std::vector<int> children) {
    int depth = 1;
    for (int child : children) depth = std::max(depth, depths_[child] + 1);
    too_deep_ = too_deep_ || depth > kMaxEvtTreeDepth;
    depths_.push_back(depth);
    tree_.nodes.push_back({role, source, std::move(children)});
    return static_cast<int>(tree_.nodes.size()) - 1;
  }

  // Whether graph node `node` may be built (again): false for a second build of a value that
  // is not a free fetch, which the tree would duplicate.
  bool enter(int node) {
    ++builds_[node];
    return builds_[node] == 1 || fetched_freely(nodes_[node].kind);
  }

  // Wraps tree node `out` (the value of graph node `value`) in the sinks reading that value, and
  // those reading them, depth first in node order, the first time the value is built.
  int attach(int value, int out) {
    if (attached_[value]) return out;
    attached_[value] = true;
    struct Pending {
      int node;
      size_t next;
    };
    std::vector<Pending> stack{{value, 0}};
    while (!stack.empty()) {
      Pending& top = stack.back();
      if (top.next == sinks_of_[top.node].size()) {
        stack.pop_back();
        continue;
      }
      const int sink = sinks_of_[top.node][top.next++];
      out = add(EvtRole::sink, sink, {out});
      if (!attached_[sink]) {
        attached_[sink] = true;
        stack.push_back({sink, 0});
      }
    }
    return out;
  }

  // The tree node of graph node `start`'s value (its inputs' trees first, in input order), or
  // -1 when the tree form does not fit. A node reading a store reads the value stored (the
  // store itself is a sink, or the root).
  int build_value(int start) {
    struct Pending {
      int node;
      size_t next;
      std::vector<int> children;
    };
    const auto is_value = [&](int node) { return nodes_[node].kind != EpilogueNodeKind::store; };
    if (!enter(start)) return -1;
    std::vector<Pending> stack;
    stack.push_back({start, 0, {}});
    // Each value being built nests its inputs' trees: more of them at once than the tree may be
    // deep is a tree too deep, known before descending further.
    int values_open = is_value(start);
    while (true) {
      Pending& top = stack.back();
      const std::vector<int>& inputs = nodes_[top.node].inputs;
      if (top.next < inputs.size()) {
        const int input = inputs[top.next++];
        if (!enter(input)) return -1;
        values_open += is_value(input);
        if (values_open > kMaxEvtTreeDepth) return -1;
        stack.push_back({input, 0, {}});
        continue;
      }
      const int node = top.node;
      int out =
          is_value(node) ? add(EvtRole::value, node, std::move(top.children)) : top.children[0];
      out = attach(node, out);
      if (too_deep_) return -1;
      values_open -= is_value(node);
      stack.pop_back();
      if (stack.empty()) return out;
      stack.back().children.push_back(out);
    }
  }

  const std::vector<EpilogueNode>& nodes_;
  const int primary_;
  std::vector<std::vector<int>> sinks_of_;
  std::vector<bool> attached_;
  std::vector<int> builds_;
  std::vector<int> depths_;
  bool too_deep_ = false;
  EvtVisitors tree_;
};

// One operation per graph node in node order (D's store is the root, last); a node reading a
// store reads the stored value's operation: op_of maps a store to its value's operation, so
// chains of stores resolve in one step.
EvtVisitors lower_topologically(const EpilogueGraph& graph) {
  const std::vector<EpilogueNode>& nodes = graph.nodes();
  const int primary = graph.primary_store();
  std::vector<int> op_of(nodes.size(), -1);
  EvtVisitors dag;
  dag.form = EvtForm::topological;
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    const EpilogueNode& n = nodes[i];
    if (n.kind == EpilogueNodeKind::store && i == primary) {
      op_of[i] = op_of[n.inputs[0]];
      continue;
    }
    std::vector<int> children;
    children.reserve(n.inputs.size());
    for (int input : n.inputs) children.push_back(op_of[input]);
    dag.nodes.push_back({is_sink(n.kind) ? EvtRole::sink : EvtRole::value, i, children});
    const int op = static_cast<int>(dag.nodes.size()) - 1;
    op_of[i] = n.kind == EpilogueNodeKind::store ? children[0] : op;
  }
  dag.nodes.push_back({EvtRole::root, primary, {op_of[primary]}});
  dag.root = static_cast<int>(dag.nodes.size()) - 1;
  return dag;
}

}  // namespace

EvtVisitors lower_epilogue_graph(const EpilogueGraph& graph) {
  if (std::optional<EvtVisitors> tree = TreeBuilder(graph).build()) return std::move(*tree);
  return lower_topologically(graph);
}

int scalar_index(const EpilogueGraph& graph, int node) {
  const std::vector<int> scalars = graph.scalar_nodes();
  auto it = std::find(scalars.begin(), scalars.end(), node);
  return it == scalars.end() ? -1 : static_cast<int>(it - scalars.begin());
}

EvtSlots evt_slots(const EpilogueGraph& graph) {
  EvtSlots slots{std::vector<int>(graph.nodes().size(), -1),
                 std::vector<int>(graph.nodes().size(), -1)};
  const std::vector<int> operands = graph.operand_nodes();
  for (size_t i = 0; i < operands.size(); ++i) slots.operand[operands[i]] = static_cast<int>(i);
  const std::vector<int> scalars = graph.scalar_nodes();
  for (size_t i = 0; i < scalars.size(); ++i) slots.scalar[scalars[i]] = static_cast<int>(i);
  return slots;
}

}  // namespace tilecraft::emit
