#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "common.hpp"
#include "tilecraft/describe/epilogue.hpp"
#include "tilecraft/describe/gemm_operation.hpp"
#include "tilecraft/describe/math_instruction.hpp"
#include "tilecraft/describe/tensor_description.hpp"
#include "tilecraft/describe/tile_description.hpp"

namespace tilecraft::python {

namespace {

std::array<int, 3> triple(const std::vector<int>& values, const char* name) {
  if (values.size() != 3) {
    throw Error(Status::invalid(std::string(name) + ": expected 3 integers, got " +
                                std::to_string(values.size())));
  }
  return {values[0], values[1], values[2]};
}

}  // namespace

void bind_describe(nb::module_& m) {
  nb::class_<MathInstruction>(m, "MathInstruction")
      .def(
          "__init__",
          [](MathInstruction* self, const std::vector<int>& shape, DataType a, DataType b,
             DataType acc, OpClass op_class, MathOperation math) {
            new (self) MathInstruction(unwrap(MathInstruction::make(
                triple(shape, "instruction_shape"), a, b, acc, op_class, math)));
          },
          nb::arg("instruction_shape"), nb::arg("element_a"), nb::arg("element_b"),
          nb::arg("element_accumulator"), nb::arg("opcode_class"),
          nb::arg("math_operation") = MathOperation::multiply_add)
      .def_ro("instruction_shape", &MathInstruction::instruction_shape)
      .def_ro("element_a", &MathInstruction::element_a)
      .def_ro("element_b", &MathInstruction::element_b)
      .def_ro("element_accumulator", &MathInstruction::element_accumulator)
      .def_ro("opcode_class", &MathInstruction::opcode_class)
      .def_ro("math_operation", &MathInstruction::math_operation);

  nb::class_<TileDescription>(m, "TileDescription")
      .def(
          "__init__",
          [](TileDescription* self, const std::vector<int>& threadblock_shape, int stages,
             const std::optional<std::vector<int>>& warp_count, const MathInstruction& math,
             const std::optional<std::vector<int>>& cluster_shape, KernelSchedule kernel_schedule,
             EpilogueSchedule epilogue_schedule, TileScheduler tile_scheduler) {
            if (math.is_wgmma()) {
              // SM90: the schedule fixes the warpgroups; warp_count is accepted and not used.
              new (self) TileDescription(unwrap(TileDescription::make_sm90(
                  triple(threadblock_shape, "threadblock_shape"), stages,
                  cluster_shape ? triple(*cluster_shape, "cluster_shape")
                                : std::array<int, 3>{1, 1, 1},
                  math, kernel_schedule, epilogue_schedule, tile_scheduler)));
              return;
            }
            if (!warp_count) {
              throw Error(Status::invalid(
                  "warp_count: SM80 tiles (mma.sync instruction shapes) need warp_count"));
            }
            TileDescription tile =
                unwrap(TileDescription::make(triple(threadblock_shape, "threadblock_shape"), stages,
                                             triple(*warp_count, "warp_count"), math));
            if (cluster_shape) tile.cluster_shape = triple(*cluster_shape, "cluster_shape");
            tile.kernel_schedule = kernel_schedule;
            tile.epilogue_schedule = epilogue_schedule;
            tile.tile_scheduler = tile_scheduler;
            check(tile.validate());
            new (self) TileDescription(tile);
          },
          nb::arg("threadblock_shape"), nb::arg("stages"), nb::arg("warp_count").none(),
          nb::arg("math_instruction"), nb::arg("cluster_shape").none() = nb::none(),
          nb::arg("kernel_schedule") = KernelSchedule::Auto,
          nb::arg("epilogue_schedule") = EpilogueSchedule::Auto,
          nb::arg("tile_scheduler") = TileScheduler::Persistent)
      .def_ro("threadblock_shape", &TileDescription::threadblock_shape)
      .def_ro("stages", &TileDescription::stages)
      .def_ro("warp_count", &TileDescription::warp_count)
      .def_ro("math_instruction", &TileDescription::math_instruction)
      .def_ro("cluster_shape", &TileDescription::cluster_shape)
      .def_ro("kernel_schedule", &TileDescription::kernel_schedule)
      .def_ro("epilogue_schedule", &TileDescription::epilogue_schedule)
      .def_ro("tile_scheduler", &TileDescription::tile_scheduler)
      .def("procedural_name", &TileDescription::procedural_name);

  nb::class_<TensorDescription>(m, "TensorDescription")
      .def(
          "__init__",
          [](TensorDescription* self, DataType element, Layout layout, int alignment) {
            new (self)
                TensorDescription(unwrap(TensorDescription::make(element, layout, alignment)));
          },
          nb::arg("element"), nb::arg("layout"), nb::arg("alignment") = 1)
      .def_ro("element", &TensorDescription::element)
      .def_ro("layout", &TensorDescription::layout)
      .def_ro("alignment", &TensorDescription::alignment);

  nb::class_<EpilogueFunctor>(m, "EpilogueFunctor")
      .def_ro("kind", &EpilogueFunctor::kind)
      .def_ro("element_output", &EpilogueFunctor::element_output)
      .def_ro("elements_per_access", &EpilogueFunctor::elements_per_access)
      .def_ro("element_accumulator", &EpilogueFunctor::element_accumulator)
      .def_ro("element_epilogue", &EpilogueFunctor::element_epilogue)
      .def_ro("activation", &EpilogueFunctor::activation)
      .def_prop_ro("bias", [](const EpilogueFunctor& e) { return e.fusion.bias; })
      .def_prop_ro("element_bias", [](const EpilogueFunctor& e) { return e.fusion.element_bias; })
      .def_prop_ro("aux", [](const EpilogueFunctor& e) { return e.fusion.aux_output; })
      .def_prop_ro("element_aux", [](const EpilogueFunctor& e) { return e.fusion.element_aux; })
      .def_prop_ro("scales", [](const EpilogueFunctor& e) { return e.fusion.per_tensor_scales; })
      .def("procedural_name", &EpilogueFunctor::procedural_name);
  m.def(
      "with_fusion",
      [](const EpilogueFunctor& functor, BiasKind bias, DataType element_bias, bool aux,
         DataType element_aux, bool scales) {
        return unwrap(functor.with_fusion({bias, element_bias, aux, element_aux, scales}));
      },
      nb::arg("functor"), nb::arg("bias"), nb::arg("element_bias"), nb::arg("aux"),
      nb::arg("element_aux"), nb::arg("scales"));
  m.def("make_linear_combination", [](DataType out, int count, DataType acc, DataType compute) {
    return unwrap(EpilogueFunctor::linear_combination(out, count, acc, compute));
  });
  m.def("make_linear_combination_clamp",
        [](DataType out, int count, DataType acc, DataType compute) {
          return unwrap(EpilogueFunctor::linear_combination_clamp(out, count, acc, compute));
        });
  m.def("make_fast_linear_combination_clamp", [](DataType out, int count) {
    return unwrap(EpilogueFunctor::fast_linear_combination_clamp(out, count));
  });
  m.def("make_linear_combination_generic",
        [](Activation activation, DataType out, int count, DataType acc, DataType compute) {
          return unwrap(
              EpilogueFunctor::linear_combination_generic(activation, out, count, acc, compute));
        });
  m.def("activation_argument_count", &activation_argument_count);

  nb::class_<EpilogueParams>(m, "EpilogueParams")
      .def_rw("alpha", &EpilogueParams::alpha)
      .def_rw("beta", &EpilogueParams::beta)
      .def_rw("activation_args", &EpilogueParams::activation_args)
      .def("__repr__", [](const EpilogueParams& p) {
        std::string text =
            "EpilogueParams(alpha=" + std::to_string(p.alpha) + ", beta=" + std::to_string(p.beta);
        for (double v : p.activation_args) text += ", " + std::to_string(v);
        return text + ")";
      });

  nb::class_<GemmDescription>(m, "GemmDescription")
      .def_ro("arch", &GemmDescription::arch)
      .def_ro("tile_description", &GemmDescription::tile)
      .def_ro("A", &GemmDescription::A)
      .def_ro("B", &GemmDescription::B)
      .def_ro("C", &GemmDescription::C)
      .def_ro("epilogue_functor", &GemmDescription::epilogue)
      .def_ro("swizzling_functor", &GemmDescription::swizzle)
      .def("procedural_name", &GemmDescription::procedural_name);
}

}  // namespace tilecraft::python
