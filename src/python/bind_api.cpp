// The arguments-first API (seed 003): tilecraft::api, for python/tilecraft/api.
#include "common.hpp"
#include "tensor_adapter.hpp"

namespace tilecraft::python {

namespace {

// epilogue.activation: None (identity), a tilecraft.Activation, or its name ("relu").
struct ActivationName {
  Activation activation = Activation::identity;
};

constexpr Activation kEveryActivation[] = {
    Activation::identity,  Activation::relu, Activation::leaky_relu, Activation::tanh,
    Activation::sigmoid,   Activation::silu, Activation::hardswish,  Activation::gelu,
    Activation::gelu_tanh, Activation::clamp};

}  // namespace

template <>
struct Arg<ActivationName> {
  static std::string hint() { return "str | Activation | None"; }
  static std::string expected() {
    std::string names;
    for (Activation a : kEveryActivation) {
      names += (names.empty() ? "'" : ", '") + std::string(to_string(a)) + "'";
    }
    return "None, a tilecraft.Activation or one of [" + names + "]";
  }
  static ActivationName from(const std::string& name, nb::handle v, const std::string& expected) {
    if (v.is_none()) return {};
    Activation activation{};
    if (nb::try_cast(v, activation, /*convert=*/false)) return {activation};
    if (!nb::isinstance<nb::str>(v)) wrong_type(name, expected, v);
    const std::string text = nb::cast<std::string>(v);
    for (Activation a : kEveryActivation) {
      if (text == to_string(a)) return {a};
    }
    wrong_value(name, expected, v);
  }
};

void bind_api(nb::module_& root) {
  nb::module_ m = root.def_submodule("api", "The arguments-first API of seed 003.");
  // api::GemmArguments, not the operation-first tilecraft::GemmArguments.
  using api::DesignMetadata, api::EpilogueArguments, api::EpilogueMetadata,
      api::GemmOperandsMetadata, api::GemmArguments, api::Kernel, api::KernelMetadata,
      api::OperandMetadata;

  nb::class_<OperandMetadata>(m, "OperandMetadata")
      .def_ro("dtype", &OperandMetadata::dtype)
      .def_ro("layout", &OperandMetadata::layout)
      .def_ro("alignment", &OperandMetadata::alignment);
  nb::class_<GemmOperandsMetadata>(m, "GemmOperandsMetadata")
      .def_ro("A", &GemmOperandsMetadata::A)
      .def_ro("B", &GemmOperandsMetadata::B)
      .def_ro("out", &GemmOperandsMetadata::out)
      .def_ro("accumulator", &GemmOperandsMetadata::accumulator)
      .def_ro("fast_accum", &GemmOperandsMetadata::fast_accum);
  nb::class_<DesignMetadata>(m, "DesignMetadata")
      .def_ro("arch", &DesignMetadata::arch)
      .def_ro("tile_shape", &DesignMetadata::tile_shape)
      .def_ro("cluster_shape", &DesignMetadata::cluster_shape)
      .def_ro("warp_count", &DesignMetadata::warp_count)
      .def_ro("instruction_shape", &DesignMetadata::instruction_shape)
      .def_ro("stages", &DesignMetadata::stages)
      .def_ro("kernel_schedule", &DesignMetadata::kernel_schedule)
      .def_ro("epilogue_schedule", &DesignMetadata::epilogue_schedule)
      .def_ro("tile_scheduler", &DesignMetadata::tile_scheduler)
      .def_ro("split_k_slices", &DesignMetadata::split_k_slices)
      .def_ro("split_k_parallel", &DesignMetadata::split_k_parallel)
      .def_ro("mma_promotion_interval", &DesignMetadata::mma_promotion_interval)
      .def_ro("swizzle", &DesignMetadata::swizzle);
  nb::class_<EpilogueMetadata>(m, "EpilogueMetadata")
      .def_ro("kind", &EpilogueMetadata::kind)
      .def_ro("activation", &EpilogueMetadata::activation)
      .def_ro("compute", &EpilogueMetadata::compute)
      .def_ro("per_tensor_scales", &EpilogueMetadata::per_tensor_scales)
      .def_ro("bias", &EpilogueMetadata::bias)
      .def_ro("bias_dtype", &EpilogueMetadata::bias_dtype)
      .def_ro("epilogue_graph", &EpilogueMetadata::epilogue_graph);
  nb::class_<KernelFacts>(m, "KernelFacts")
      .def_prop_ro("source",
                   [](const KernelFacts& f) { return std::string(source_name(f.source)); })
      .def_ro("registers", &KernelFacts::registers)
      .def_ro("spill_store_bytes", &KernelFacts::spill_store_bytes)
      .def_ro("spill_load_bytes", &KernelFacts::spill_load_bytes)
      .def_ro("stack_bytes", &KernelFacts::stack_bytes)
      .def_ro("static_smem_bytes", &KernelFacts::static_smem_bytes)
      .def_ro("max_ctas_per_sm", &KernelFacts::max_ctas_per_sm)
      .def_prop_ro("spills", &KernelFacts::spills)
      .def("__repr__", &KernelFacts::text);
  nb::class_<KernelMetadata>(m, "KernelMetadata")
      .def_ro("kernel_name", &KernelMetadata::kernel_name)
      .def_ro("kernel_class", &KernelMetadata::kernel_class)
      .def_ro("min_cc", &KernelMetadata::min_cc)
      .def_ro("operands", &KernelMetadata::operands)
      .def_ro("design", &KernelMetadata::design)
      .def_ro("epilogue", &KernelMetadata::epilogue)
      .def_ro("score", &KernelMetadata::score)
      .def_ro("score_explain", &KernelMetadata::score_explain)
      .def_ro("facts", &KernelMetadata::facts);

  nb::class_<api::KernelArguments>(m, "KernelArguments");
  auto arguments = nb::class_<GemmArguments, api::KernelArguments>(m, "GemmArguments");
  // python/tilecraft/api/arguments.py passes the epilogue's fields positionally, under the
  // names its messages give them.
  def_checked(
      arguments, "make", "GemmArguments",
      [](nb::ndarray<> A, nb::ndarray<> B, nb::ndarray<> out, DataType accumulator_type,
         double alpha, double beta, std::optional<nb::ndarray<>> C, ActivationName activation,
         std::vector<double> activation_args, std::optional<nb::ndarray<>> bias, bool bias_per_row,
         ScaleArgument scale_a, ScaleArgument scale_b, bool use_fast_accum, nb::object graph,
         nb::object operands) {
        EpilogueArguments e;
        e.alpha = alpha;
        e.beta = beta;
        if (C) e.C = to_tensor_view("epilogue.C", *C);
        e.activation = activation.activation;
        e.activation_args = std::move(activation_args);
        if (bias) e.bias = to_tensor_view("epilogue.bias", *bias);
        e.bias_per_row = bias_per_row;
        e.scale_a = scale_a;
        e.scale_b = scale_b;
        if (!graph.is_none())
          e.graph = *Arg<Ref<EpilogueGraph>>::from("epilogue.graph", graph,
                                                   Described<EpilogueGraph>::expected);
        e.operands = epilogue_operands_from("epilogue.operands", operands);
        return unwrap(GemmArguments::make(to_tensor_view("A", A), to_tensor_view("B", B),
                                          to_tensor_view("out", out), accumulator_type, e,
                                          use_fast_accum));
      },
      required<nb::ndarray<>>("A"), required<nb::ndarray<>>("B"), required<nb::ndarray<>>("out"),
      required<DataType>("accumulator_type"),
      optional<double>("epilogue.alpha", 1.0, "1.0", "a number"),
      optional<double>("epilogue.beta", 0.0, "0.0", "a number"),
      optional<std::optional<nb::ndarray<>>>("epilogue.C", std::nullopt, "None"),
      optional<ActivationName>("epilogue.activation", {}, "None"),
      optional<std::vector<double>>("epilogue.activation_args", {}, "()", "a list of numbers"),
      optional<std::optional<nb::ndarray<>>>("epilogue.bias", std::nullopt, "None"),
      optional<bool>("epilogue.bias_per_row", false, "False", "a bool (True or False)"),
      optional<ScaleArgument>("epilogue.scale_a", {}, "None"),
      optional<ScaleArgument>("epilogue.scale_b", {}, "None"),
      optional<bool>("use_fast_accum", false, "False", "a bool (True or False)"),
      optional<nb::object>("epilogue.graph", nb::none(), "None"),
      optional<nb::object>("epilogue.operands", nb::none(), "None"));
  arguments.def_prop_ro("m", &GemmArguments::m)
      .def_prop_ro("n", &GemmArguments::n)
      .def_prop_ro("k", &GemmArguments::k)
      .def_prop_ro("batch", &GemmArguments::batch)
      .def_prop_ro("accumulator_type", &GemmArguments::accumulator_type)
      .def_prop_ro("layouts", &layouts_of<GemmArguments>)
      .def_prop_ro("alignments", &alignments_of<GemmArguments>);

  auto artifact = nb::class_<CompiledArtifact>(m, "CompiledArtifact")
                      .def_prop_ro("kernel_name", &CompiledArtifact::kernel_name)
                      .def_prop_ro("arch", &CompiledArtifact::arch);
  def_method(
      artifact, "save", "CompiledArtifact.save",
      [](const CompiledArtifact& a, Path path) { check(a.save(path.text)); },
      required<Path>("path"));
  def_checked(
      artifact, "load", "CompiledArtifact.load",
      [](Path path) { return unwrap(CompiledArtifact::load(path.text)); }, required<Path>("path"));

  auto kernel = nb::class_<Kernel>(m, "Kernel");
  kernel
      .def_prop_ro("metadata", &Kernel::metadata, nb::rv_policy::reference_internal)
      // Everything the Python KernelMetadata holds, in one call (filters visit every kernel).
      .def_prop_ro("metadata_fields", [](const Kernel& k) {
        const KernelMetadata& m = k.metadata();
        const auto operand = [](const OperandMetadata& o) {
          return nb::make_tuple(o.dtype, o.layout, o.alignment);
        };
        const DesignMetadata& d = m.design;
        const EpilogueMetadata& e = m.epilogue;
        return nb::make_tuple(
            m.kernel_name, m.kernel_class, m.min_cc,
            nb::make_tuple(operand(m.operands.A), operand(m.operands.B), operand(m.operands.out),
                           m.operands.accumulator, m.operands.fast_accum),
            nb::make_tuple(d.arch, d.tile_shape, d.cluster_shape, d.warp_count, d.instruction_shape,
                           d.stages, d.kernel_schedule, d.epilogue_schedule, d.tile_scheduler,
                           d.swizzle, d.split_k_slices, d.split_k_parallel,
                           d.mma_promotion_interval),
            nb::make_tuple(e.kind, e.activation, e.compute, e.per_tensor_scales, e.bias,
                           e.bias_dtype, e.epilogue_graph),
            m.score, m.score_explain,
            nb::make_tuple(std::string(source_name(m.facts.source)), m.facts.registers,
                           m.facts.spill_store_bytes, m.facts.spill_load_bytes, m.facts.stack_bytes,
                           m.facts.static_smem_bytes, m.facts.max_ctas_per_sm),
            m.conv ? nb::object(nb::make_tuple(m.conv->kind, m.conv->iterator_algorithm,
                                               m.conv->stride_support, m.conv->group_mode))
                   : nb::none());
      });
  // The methods that take arguments: those of any kernel family (api::KernelArguments).
  using Args = api::KernelArguments;
  const auto args = required<Ref<Args>>("args");
  def_method(
      kernel, "supports", "supports",
      [](const Kernel& k, Ref<Args> a) { return error_of(k.supports(*a)); }, args);
  def_method(
      kernel, "compile", "compile",
      [](const Kernel& k, Ref<Args> a) {
        return unwrap(interruptible([&] { return k.compile(*a); }));
      },
      args);
  def_method(
      kernel, "get_workspace_size", "get_workspace_size",
      [](const Kernel& k, Ref<Args> a) {
        return unwrap(interruptible([&] { return k.get_workspace_size(*a); }));
      },
      args);
  def_method(
      kernel, "run", "run",
      [](const Kernel& k, Ref<Args> a, std::optional<Ref<CompiledArtifact>> artifact,
         uint64_t stream, bool assume_supported_args, uint64_t workspace,
         uint64_t workspace_bytes) {
        const CompiledArtifact* compiled = artifact ? artifact->pointer : nullptr;
        check(interruptible([&] {
          return k.run(*a, compiled, as_pointer(stream), assume_supported_args,
                       as_pointer(workspace), workspace_bytes);
        }));
      },
      args,
      optional<std::optional<Ref<CompiledArtifact>>>("compiled_artifact", std::nullopt, "None"),
      stream_parameter(), optional<bool>("assume_supported_args", false, "False"),
      optional<uint64_t>("workspace", 0, "0", "a device pointer (an int >= 0)"),
      optional<uint64_t>("workspace_bytes", 0, "0"));

  bind_grouped_api(m);
  bind_conv_api(m);

  def_checked(
      m, "get_kernels", "get_kernels",
      [](std::optional<Ref<api::KernelArguments>> a, std::optional<int> cc) {
        return a ? api::get_kernels(**a, {}, cc) : api::get_kernels(nullptr, {}, cc);
      },
      optional<std::optional<Ref<api::KernelArguments>>>("args", std::nullopt, "None"),
      optional<std::optional<int>>("cc", std::nullopt, "None",
                                   "an int (a compute capability such as 90) or None"));
  def_checked(
      m, "compile_kernels", "compile_kernels",
      [](std::vector<Ref<Kernel>> refs) {
        std::vector<Kernel> kernels;
        for (const Ref<Kernel>& r : refs) kernels.push_back(*r);
        check(interruptible([&] { return api::compile_kernels(kernels); }));
      },
      required<std::vector<Ref<Kernel>>>("kernels", "a list of Kernel objects from get_kernels"));
  def_checked(
      m, "is_device_cc_supported", "is_device_cc_supported",
      [](std::set<int> ccs) { return error_of(api::is_device_cc_supported(ccs)); },
      required<std::set<int>>("ccs", "a set of ints (compute capabilities such as {90})"));
  def_checked(m, "dsl_name", "dsl_name", &api::dsl_name, required<DataType>("type"));
}

}  // namespace tilecraft::python
