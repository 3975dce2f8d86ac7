// The epilogue graph (tilecraft._core.EpilogueGraph and its vocabulary), which
// tilecraft.epilogue.trace builds from a Python function.
#include "common.hpp"
#include "tilecraft/describe/epilogue_graph_limits.hpp"

namespace tilecraft::python {

void bind_epilogue_graph(nb::module_& m) {
  nb::enum_<UnaryOp>(m, "UnaryOp")
      .value("negate", UnaryOp::negate)
      .value("abs", UnaryOp::abs)
      .value("square", UnaryOp::square)
      .value("reciprocal", UnaryOp::reciprocal);
  nb::enum_<BinaryOp>(m, "BinaryOp")
      .value("add", BinaryOp::add)
      .value("sub", BinaryOp::sub)
      .value("mul", BinaryOp::mul)
      .value("div", BinaryOp::div)
      .value("max", BinaryOp::max)
      .value("min", BinaryOp::min)
      .value("less", BinaryOp::less)
      .value("less_equal", BinaryOp::less_equal)
      .value("greater", BinaryOp::greater)
      .value("greater_equal", BinaryOp::greater_equal)
      .value("equal", BinaryOp::equal)
      .value("not_equal", BinaryOp::not_equal);
  nb::enum_<Broadcast>(m, "Broadcast")
      .value("full", Broadcast::full)
      .value("row", Broadcast::row)
      .value("column", Broadcast::column);
  nb::enum_<ReduceOp>(m, "ReduceOp")
      .value("sum", ReduceOp::sum)
      .value("max", ReduceOp::max)
      .value("abs_max", ReduceOp::abs_max);
  nb::enum_<ReduceAxis>(m, "ReduceAxis")
      .value("row", ReduceAxis::row)
      .value("column", ReduceAxis::column)
      .value("all", ReduceAxis::all);

  using Id = EpilogueGraph::Id;
  nb::class_<EpilogueGraph>(m, "EpilogueGraph")
      .def(nb::init<>())
      // The bounds validate() enforces (kMaxEpilogueGraphNodes, kMaxEpilogueGraphDepth).
      .def_ro_static("max_nodes", &kMaxEpilogueGraphNodes)
      .def_ro_static("max_depth", &kMaxEpilogueGraphDepth)
      .def("accumulator", &EpilogueGraph::accumulator)
      .def("scalar", &EpilogueGraph::scalar, nb::arg("name"))
      .def("constant", &EpilogueGraph::constant, nb::arg("value"))
      .def("tensor", &EpilogueGraph::tensor, nb::arg("name"), nb::arg("dtype"),
           nb::arg("broadcast") = Broadcast::full)
      .def("unary", &EpilogueGraph::unary, nb::arg("op"), nb::arg("x"))
      .def("activation", &EpilogueGraph::activation, nb::arg("activation"), nb::arg("x"),
           nb::arg("args") = std::vector<Id>{})
      .def("binary", &EpilogueGraph::binary, nb::arg("op"), nb::arg("a"), nb::arg("b"))
      .def("select", &EpilogueGraph::select, nb::arg("condition"), nb::arg("if_true"),
           nb::arg("if_false"))
      .def("convert", &EpilogueGraph::convert, nb::arg("x"), nb::arg("dtype"))
      .def("store", &EpilogueGraph::store, nb::arg("x"), nb::arg("name"), nb::arg("dtype"))
      .def("reduce", &EpilogueGraph::reduce, nb::arg("x"), nb::arg("op"), nb::arg("axis"),
           nb::arg("name"), nb::arg("dtype"))
      .def("validate", [](const EpilogueGraph& g) { check(g.validate()); })
      .def(
          "validate_for", [](const EpilogueGraph& g, int arch) { check(g.validate_for(arch)); },
          nb::arg("arch"))
      .def_prop_rw(
          "fast_math", &EpilogueGraph::fast_math,
          [](EpilogueGraph& g, nb::handle value) {
            g.set_fast_math(bool_from("fast_math", value, "True or False"));
          },
          nb::for_setter(nb::arg("value").none()))
      .def_prop_ro("key", &EpilogueGraph::key)
      .def_prop_ro("node_count",
                   [](const EpilogueGraph& g) { return static_cast<int>(g.nodes().size()); })
      .def_prop_ro("scalar_names", &EpilogueGraph::scalar_names)
      .def_prop_ro("input_names", &EpilogueGraph::input_names)
      .def_prop_ro("output_names", &EpilogueGraph::output_names)
      .def_prop_ro("output_specs",
                   [](const EpilogueGraph& g) {
                     // (name, "store" or "reduce", dtype, axis (None for stores)) per output.
                     nb::list out;
                     for (const EpilogueNode& n : g.nodes()) {
                       if (n.kind == EpilogueNodeKind::store) {
                         out.append(nb::make_tuple(n.name, "store", n.dtype, nb::none()));
                       } else if (n.kind == EpilogueNodeKind::reduce) {
                         out.append(nb::make_tuple(n.name, "reduce", n.dtype, n.axis));
                       }
                     }
                     return out;
                   })
      .def_prop_ro("d_output",
                   [](const EpilogueGraph& g) -> std::optional<std::string> {
                     const int store = g.primary_store();
                     if (store < 0) return std::nullopt;
                     return g.nodes()[store].name;
                   })
      .def("__str__", &EpilogueGraph::to_string)
      .def("__repr__",
           [](const EpilogueGraph& g) { return "EpilogueGraph(" + g.to_string() + ")"; })
      .def("__eq__", [](const EpilogueGraph& a, const EpilogueGraph& b) { return a == b; });
}

}  // namespace tilecraft::python
