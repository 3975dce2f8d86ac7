// How the visitors of a lowered epilogue graph are put together as text, for both visitor
// families: nested Sm90EVT / Sm80EVT types (tree form) or one topological visitor with its edge
// tuple (topological form), and the braced arguments in the same shape. Nothing recurses: the
// text is written in one pass over the nodes, and its size is linear in them (the tree form's
// indentation is bounded by kMaxEvtTreeDepth).
#include "emit/evt/evt_text.hpp"

namespace tilecraft::emit {
namespace {

std::string evt_name(int index) { return "Evt" + std::to_string(index); }

std::string tree_types_text(const EvtVisitors& visitors, const EvtNodeType& node_type,
                            std::string_view tree_visitor) {
  std::string out;
  for (size_t i = 0; i < visitors.nodes.size(); ++i) {
    const EvtNode& t = visitors.nodes[i];
    std::string type = node_type(t, static_cast<int>(i));
    if (!t.children.empty()) {
      type = std::string(tree_visitor) + "<" + type;
      for (int child : t.children) type += ", " + evt_name(child);
      type += ">";
    }
    out += "using " + evt_name(static_cast<int>(i)) + " = " + type + ";\n";
  }
  return out;
}

std::string topological_types_text(const EvtVisitors& visitors, const EvtNodeType& node_type,
                                   std::string_view topological_visitor, std::string_view result) {
  std::string out;
  std::string edges, operations;
  for (size_t i = 0; i < visitors.nodes.size(); ++i) {
    const EvtNode& t = visitors.nodes[i];
    out += "using " + evt_name(static_cast<int>(i)) + " = " + node_type(t, static_cast<int>(i)) +
           ";\n";
    std::string inputs;
    for (int child : t.children) inputs += (inputs.empty() ? "" : ", ") + std::to_string(child);
    const std::string separator = i + 1 < visitors.nodes.size() ? ",\n" : "";
    edges += "        cute::seq<" + inputs + ">" + separator;
    operations += "    " + evt_name(static_cast<int>(i)) + separator;
  }
  // Operations in topological order, the last one D's; the edges name, for each operation, the
  // operations whose values it reads, in the order it reads them.
  return out + "using " + std::string(result) + " = " + std::string(topological_visitor) +
         "<\n    ElementCompute,\n    cute::tuple<\n" + edges + ">,\n" + operations + ">;\n";
}

std::string tree_arguments_text(const EvtVisitors& visitors, const EvtNodeArguments& arguments,
                                const std::string& indent) {
  const std::vector<EvtNode>& nodes = visitors.nodes;
  if (nodes[visitors.root].children.empty()) return arguments(nodes[visitors.root]);
  // Each node's braces hold its children's arguments, then its own (as Sm90EVT and Sm80EVT
  // nest them): written depth first, a frame per open brace.
  struct Open {
    int node;
    size_t next;
    std::string indent;
  };
  std::string out = "{";
  std::vector<Open> stack{{visitors.root, 0, indent}};
  while (!stack.empty()) {
    Open& top = stack.back();
    const EvtNode& t = nodes[top.node];
    if (top.next < t.children.size()) {
      const int child = t.children[top.next++];
      out += "\n" + top.indent + "  ";
      if (nodes[child].children.empty()) {
        out += arguments(nodes[child]) + ",";
      } else {
        out += "{";
        std::string child_indent = top.indent + "  ";
        stack.push_back({child, 0, std::move(child_indent)});
      }
      continue;
    }
    out += "\n" + top.indent + "  " + arguments(t) + "}";
    stack.pop_back();
    if (!stack.empty()) out += ",";
  }
  return out;
}

std::string topological_arguments_text(const EvtVisitors& visitors,
                                       const EvtNodeArguments& arguments,
                                       const std::string& indent) {
  // One member per operation, in the operations' order.
  std::string out = "{";
  for (size_t i = 0; i < visitors.nodes.size(); ++i) {
    out += "\n" + indent + "  " + arguments(visitors.nodes[i]) +
           (i + 1 < visitors.nodes.size() ? "," : "}");
  }
  return out;
}

}  // namespace

std::string evt_types_text(const EvtVisitors& visitors, const EvtNodeType& node_type,
                           const EvtVisitorTemplates& templates, std::string_view result) {
  if (visitors.form == EvtForm::topological) {
    return topological_types_text(visitors, node_type, templates.topological, result);
  }
  return tree_types_text(visitors, node_type, templates.tree) + "using " + std::string(result) +
         " = " + evt_name(visitors.root) + ";\n";
}

std::string evt_fill_fusion_text(std::string_view arguments_type, std::string_view block,
                                 const EvtVisitors& visitors, const EvtNodeArguments& arguments) {
  return "using FusionArguments = " + std::string(arguments_type) +
         ";\n"
         "inline void fill_fusion(FusionArguments& f, const " +
         std::string(block) +
         "& a) {\n"
         "  [[maybe_unused]] const tc_epilogue_tensor* T = a.header.epilogue_tensors;\n"
         "  f = FusionArguments" +
         (visitors.form == EvtForm::topological
              ? topological_arguments_text(visitors, arguments, "  ")
              : tree_arguments_text(visitors, arguments, "  ")) +
         ";\n}\n";
}

}  // namespace tilecraft::emit
