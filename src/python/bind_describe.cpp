#include "common.hpp"

namespace tilecraft::python {

namespace {

// bias=: None, 'row' (M values), 'column' (N values) or a BiasKind.
struct BiasArgument {
  BiasKind kind = BiasKind::none;
};

// LinearCombinationGeneric's activation: relu(element) and its kin, or a bare Activation.
struct ActivationArgument {
  Activation activation = Activation::identity;
  std::optional<DataType> element;  // the type relu(element) computes in, when given that way
};

}  // namespace

template <>
struct Arg<BiasArgument> {
  static std::string hint() { return "str | None"; }
  static std::string expected() {
    return "None, 'row' (one value per row of D, M values) or 'column' (N values)";
  }
  static BiasArgument from(const std::string& name, nb::handle v, const std::string& expected) {
    if (v.is_none()) return {BiasKind::none};
    BiasKind kind{};
    if (nb::try_cast(v, kind, /*convert=*/false)) return {kind};
    if (!nb::isinstance<nb::str>(v)) wrong_type(name, expected, v);
    const std::string text = nb::cast<std::string>(v);
    if (text == "row") return {BiasKind::per_row};
    if (text == "column") return {BiasKind::per_column};
    wrong_value(name, expected, v);
  }
};

template <>
struct Arg<ActivationArgument> {
  static std::string hint() { return "ActivationFunction | Activation"; }
  static std::string expected() { return Described<ActivationFunction>::expected; }
  static ActivationArgument from(const std::string& name, nb::handle v,
                                 const std::string& expected) {
    if (const ActivationFunction* f = instance_of<ActivationFunction>(v)) {
      return {f->activation, f->element};
    }
    Activation activation{};
    if (!v.is_none() && nb::try_cast(v, activation, /*convert=*/false)) return {activation, {}};
    wrong_type(name, expected, v);
  }
};

namespace {

// The SM90 fusions the seed-style epilogue functors take as keywords; element_bias and
// element_aux default to element_C.
EpilogueFunctor with_fusions(const EpilogueFunctor& functor, DataType element_C, BiasArgument bias,
                             std::optional<DataType> element_bias, bool aux,
                             std::optional<DataType> element_aux, bool scales) {
  if (bias.kind == BiasKind::none && !aux && !scales) {
    if (element_bias || element_aux) {
      throw Error(Status::invalid("element_bias/element_aux: given without bias=/aux=True"));
    }
    return functor;
  }
  return unwrap(functor.with_fusion(
      {bias.kind, element_bias.value_or(element_C), aux, element_aux.value_or(element_C), scales}));
}

// A writable field, converted like an argument (a setter's bad value names its field).
template <typename Class, typename T>
void def_converted_field(nb::class_<Class>& cls, const char* name, T Class::*member) {
  cls.def_prop_rw(
      name, [member](const Class& object) { return object.*member; },
      [name, member](Class& object, nb::handle value) {
        object.*member = Arg<T>::from(name, value, Arg<T>::expected());
      },
      nb::for_setter(nb::arg("value").none()));
}

std::string activation_text(const ActivationFunction& f) {
  return std::string(to_string(f.activation)) + "(" + std::string(long_name(f.element)) + ")";
}

}  // namespace

void bind_describe(nb::module_& m) {
  auto math = nb::class_<MathInstruction>(m, "MathInstruction");
  def_init(
      math, "MathInstruction",
      [](std::array<int, 3> shape, DataType a, DataType b, DataType acc, OpClass op_class,
         MathOperation operation) {
        return unwrap(MathInstruction::make(shape, a, b, acc, op_class, operation));
      },
      required<std::array<int, 3>>("instruction_shape"), required<DataType>("element_a"),
      required<DataType>("element_b"), required<DataType>("element_accumulator"),
      required<OpClass>("opcode_class"),
      optional<MathOperation>("math_operation", MathOperation::multiply_add,
                              "MathOperation.multiply_add"));
  math.def_ro("instruction_shape", &MathInstruction::instruction_shape)
      .def_ro("element_a", &MathInstruction::element_a)
      .def_ro("element_b", &MathInstruction::element_b)
      .def_ro("element_accumulator", &MathInstruction::element_accumulator)
      .def_ro("opcode_class", &MathInstruction::opcode_class)
      .def_ro("math_operation", &MathInstruction::math_operation);

  auto tile = nb::class_<TileDescription>(m, "TileDescription");
  def_init(
      tile, "TileDescription",
      [](std::array<int, 3> threadblock_shape, int stages,
         std::optional<std::array<int, 3>> warp_count, Ref<MathInstruction> math,
         std::optional<std::array<int, 3>> cluster_shape, KernelSchedule kernel_schedule,
         EpilogueSchedule epilogue_schedule, TileScheduler tile_scheduler) {
        if (math->is_wgmma()) {
          // SM90: the schedule fixes the warpgroups; warp_count is accepted and not used.
          return unwrap(TileDescription::make_sm90(
              threadblock_shape, stages, cluster_shape.value_or(std::array<int, 3>{1, 1, 1}), *math,
              kernel_schedule, epilogue_schedule, tile_scheduler));
        }
        if (!warp_count) {
          throw Error(Status::invalid(
              "warp_count: SM80 tiles (mma.sync instruction shapes) need warp_count"));
        }
        TileDescription t =
            unwrap(TileDescription::make(threadblock_shape, stages, *warp_count, *math));
        if (cluster_shape) t.cluster_shape = *cluster_shape;
        t.kernel_schedule = kernel_schedule;
        t.epilogue_schedule = epilogue_schedule;
        t.tile_scheduler = tile_scheduler;
        check(t.validate());
        return t;
      },
      required<std::array<int, 3>>("threadblock_shape"), required<int>("stages"),
      required<std::optional<std::array<int, 3>>>("warp_count"),
      required<Ref<MathInstruction>>("math_instruction"),
      optional<std::optional<std::array<int, 3>>>("cluster_shape", std::nullopt, "None"),
      optional<KernelSchedule>("kernel_schedule", KernelSchedule::Auto, "KernelScheduleType.Auto"),
      optional<EpilogueSchedule>("epilogue_schedule", EpilogueSchedule::Auto,
                                 "EpilogueScheduleType.Auto"),
      optional<TileScheduler>("tile_scheduler", TileScheduler::Persistent,
                              "TileSchedulerType.Persistent"));
  tile.def_ro("threadblock_shape", &TileDescription::threadblock_shape)
      .def_ro("stages", &TileDescription::stages)
      .def_ro("warp_count", &TileDescription::warp_count)
      .def_ro("math_instruction", &TileDescription::math_instruction)
      .def_ro("cluster_shape", &TileDescription::cluster_shape)
      .def_ro("kernel_schedule", &TileDescription::kernel_schedule)
      .def_ro("epilogue_schedule", &TileDescription::epilogue_schedule)
      .def_ro("tile_scheduler", &TileDescription::tile_scheduler);
  def_method(tile, "procedural_name", "procedural_name", &TileDescription::procedural_name);

  auto tensor = nb::class_<TensorDescription>(m, "TensorDescription");
  def_init(
      tensor, "TensorDescription",
      [](DataType element, Layout layout, int alignment) {
        return unwrap(TensorDescription::make(element, layout, alignment));
      },
      required<DataType>("element"), required<Layout>("layout"),
      optional<int>("alignment", 1, "1"));
  tensor.def_ro("element", &TensorDescription::element)
      .def_ro("layout", &TensorDescription::layout)
      .def_ro("alignment", &TensorDescription::alignment);

  auto functor = nb::class_<EpilogueFunctor>(m, "EpilogueFunctor");
  functor.def_ro("kind", &EpilogueFunctor::kind)
      .def_ro("element_output", &EpilogueFunctor::element_output)
      .def_ro("elements_per_access", &EpilogueFunctor::elements_per_access)
      .def_ro("element_accumulator", &EpilogueFunctor::element_accumulator)
      .def_ro("element_epilogue", &EpilogueFunctor::element_epilogue)
      .def_ro("activation", &EpilogueFunctor::activation)
      .def_prop_ro("bias", [](const EpilogueFunctor& e) { return e.fusion.bias; })
      .def_prop_ro("element_bias", [](const EpilogueFunctor& e) { return e.fusion.element_bias; })
      .def_prop_ro("aux", [](const EpilogueFunctor& e) { return e.fusion.aux_output; })
      .def_prop_ro("element_aux", [](const EpilogueFunctor& e) { return e.fusion.element_aux; })
      .def_prop_ro("scales", [](const EpilogueFunctor& e) { return e.fusion.per_tensor_scales; });
  def_method(functor, "procedural_name", "procedural_name", &EpilogueFunctor::procedural_name);

  // relu(element_epilogue_compute) and its kin (python/tilecraft/epilogue.py names them).
  auto activation = nb::class_<ActivationFunction>(m, "ActivationFunction");
  def_init(
      activation, "ActivationFunction",
      [](Activation a, DataType element) {
        return ActivationFunction{a, element};
      },
      required<Activation>("activation"),
      optional<DataType>("element_epilogue_compute", DataType::f32, "float32"));
  activation.def_ro("activation", &ActivationFunction::activation)
      .def_ro("element", &ActivationFunction::element)
      .def("__repr__", &activation_text);

  // The seed's epilogue functors (python/tilecraft/epilogue.py forwards its arguments as given).
  const auto element_C = required<DataType>("element_C");
  const auto alignment_c = required<int>("alignment_c");
  const auto element_acc = required<DataType>("element_acc");
  const auto element_epilogue_compute = required<DataType>("element_epilogue_compute");
  const auto bias = optional<BiasArgument>("bias", {}, "None");
  const auto element_bias = optional<std::optional<DataType>>("element_bias", std::nullopt, "None");
  const auto aux = optional<bool>("aux", false, "False");
  const auto element_aux = optional<std::optional<DataType>>("element_aux", std::nullopt, "None");
  const auto scales = optional<bool>("scales", false, "False");
  def_checked(
      m, "make_linear_combination", "LinearCombination",
      [](DataType out, int count, DataType acc, DataType compute, BiasArgument b,
         std::optional<DataType> eb, bool x, std::optional<DataType> ex, bool s) {
        return with_fusions(unwrap(EpilogueFunctor::linear_combination(out, count, acc, compute)),
                            out, b, eb, x, ex, s);
      },
      element_C, alignment_c, element_acc, element_epilogue_compute, bias, element_bias, aux,
      element_aux, scales);
  def_checked(
      m, "make_linear_combination_clamp", "LinearCombinationClamp",
      [](DataType out, int count, DataType acc, DataType compute) {
        return unwrap(EpilogueFunctor::linear_combination_clamp(out, count, acc, compute));
      },
      element_C, alignment_c, element_acc, element_epilogue_compute);
  def_checked(
      m, "make_fast_linear_combination_clamp", "FastLinearCombinationClamp",
      [](DataType out, int count) {
        return unwrap(EpilogueFunctor::fast_linear_combination_clamp(out, count));
      },
      element_C, alignment_c);
  def_checked(
      m, "make_linear_combination_generic", "LinearCombinationGeneric",
      [](ActivationArgument act, DataType out, int count, DataType acc, DataType compute,
         BiasArgument b, std::optional<DataType> eb, bool x, std::optional<DataType> ex, bool s) {
        if (act.element && *act.element != compute) {
          throw Error(Status::invalid("activation: computes in " +
                                      std::string(long_name(*act.element)) +
                                      " but element_epilogue_compute is " +
                                      std::string(long_name(compute)) + "; they must agree"));
        }
        return with_fusions(unwrap(EpilogueFunctor::linear_combination_generic(
                                act.activation, out, count, acc, compute)),
                            out, b, eb, x, ex, s);
      },
      required<ActivationArgument>("activation"), element_C, alignment_c, element_acc,
      element_epilogue_compute, bias, element_bias, aux, element_aux, scales);
  def_checked(
      m, "with_fusion", "with_fusion",
      [](Ref<EpilogueFunctor> functor, BiasKind b, DataType eb, bool x, DataType ex, bool s) {
        return unwrap(functor->with_fusion({b, eb, x, ex, s}));
      },
      required<Ref<EpilogueFunctor>>("functor"), required<BiasKind>("bias"),
      required<DataType>("element_bias"), required<bool>("aux"), required<DataType>("element_aux"),
      required<bool>("scales"));
  def_checked(m, "activation_argument_count", "activation_argument_count",
              &activation_argument_count, required<Activation>("activation"));

  auto params = nb::class_<EpilogueParams>(m, "EpilogueParams");
  def_converted_field(params, "alpha", &EpilogueParams::alpha);
  def_converted_field(params, "beta", &EpilogueParams::beta);
  def_converted_field(params, "activation_args", &EpilogueParams::activation_args);
  params.def("__repr__", [](const EpilogueParams& p) {
    std::string text =
        "EpilogueParams(alpha=" + std::to_string(p.alpha) + ", beta=" + std::to_string(p.beta);
    for (double v : p.activation_args) text += ", " + std::to_string(v);
    return text + ")";
  });

  auto description = nb::class_<GemmDescription>(m, "GemmDescription");
  description.def_ro("arch", &GemmDescription::arch)
      .def_ro("tile_description", &GemmDescription::tile)
      .def_ro("A", &GemmDescription::A)
      .def_ro("B", &GemmDescription::B)
      .def_ro("C", &GemmDescription::C)
      .def_ro("epilogue_functor", &GemmDescription::epilogue)
      .def_ro("swizzling_functor", &GemmDescription::swizzle)
      .def_ro("scheduler_mode", &GemmDescription::scheduler_mode)
      .def_prop_ro(
          "epilogue_graph",
          [](const GemmDescription& d) -> std::optional<EpilogueGraph> { return d.epilogue_graph; })
      .def_prop_ro("is_grouped", &GemmDescription::is_grouped)
      .def_prop_ro("is_conv", &GemmDescription::is_conv)
      .def_prop_ro("conv_kind", [](const GemmDescription& d) { return d.conv.kind; })
      .def_prop_ro("iterator_algorithm",
                   [](const GemmDescription& d) { return d.conv.iterator_algorithm; })
      .def_prop_ro("stride_support", [](const GemmDescription& d) { return d.conv.stride_support; })
      .def_prop_ro("group_mode", [](const GemmDescription& d) { return d.conv.group_mode; });
  def_method(description, "procedural_name", "procedural_name", &GemmDescription::procedural_name);
}

}  // namespace tilecraft::python
