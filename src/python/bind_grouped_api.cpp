// The arguments-first API for grouped GEMMs (tilecraft.api.GroupedGemmArguments) and the grouped
// methods of api.Kernel, for python/tilecraft/api.
#include "common.hpp"
#include "tensor_adapter.hpp"
#include "tilecraft/tune/grouped_gemm.hpp"

namespace tilecraft::python {
namespace {

api::GroupedEpilogueArguments epilogue_of(double alpha, double beta, Activation activation,
                                          std::vector<double> activation_args, double scale_a,
                                          double scale_b) {
  api::GroupedEpilogueArguments e;
  e.alpha = alpha;
  e.beta = beta;
  e.activation = activation;
  e.activation_args = std::move(activation_args);
  e.scale_a = scale_a;
  e.scale_b = scale_b;
  return e;
}

}  // namespace

void bind_grouped_api(nb::module_& m) {
  using api::GroupedGemmArguments;
  auto arguments =
      nb::class_<GroupedGemmArguments, api::KernelArguments>(m, "GroupedGemmArguments");
  def_checked(
      arguments, "make", "GroupedGemmArguments",
      [](std::vector<nb::ndarray<>> A, std::vector<nb::ndarray<>> B, std::vector<nb::ndarray<>> out,
         DataType accumulator_type, std::optional<std::vector<nb::ndarray<>>> C, double alpha,
         double beta, Activation activation, std::vector<double> activation_args, double scale_a,
         double scale_b, std::optional<std::vector<nb::ndarray<>>> bias) {
        api::GroupedEpilogueArguments e =
            epilogue_of(alpha, beta, activation, std::move(activation_args), scale_a, scale_b);
        if (bias) e.bias = to_tensor_views("bias", *bias);
        return unwrap(GroupedGemmArguments::make(
            to_tensor_views("A", A), to_tensor_views("B", B), to_tensor_views("out", out),
            accumulator_type, C ? to_tensor_views("C", *C) : std::vector<TensorView>{}, e));
      },
      required<std::vector<nb::ndarray<>>>("A"), required<std::vector<nb::ndarray<>>>("B"),
      required<std::vector<nb::ndarray<>>>("out"), required<DataType>("accumulator_type"),
      optional<std::optional<std::vector<nb::ndarray<>>>>("C", std::nullopt, "None"),
      optional<double>("alpha", 1.0, "1.0", "a number"),
      optional<double>("beta", 0.0, "0.0", "a number"),
      optional<Activation>("activation", Activation::identity, "Activation.identity"),
      optional<std::vector<double>>("activation_args", {}, "()", "a list of numbers"),
      optional<double>("scale_a", 1.0, "1.0", "a number"),
      optional<double>("scale_b", 1.0, "1.0", "a number"),
      optional<std::optional<std::vector<nb::ndarray<>>>>("bias", std::nullopt, "None"));
  def_checked(
      arguments, "make_stacked", "GroupedGemmArguments",
      [](nb::ndarray<> A, nb::ndarray<> B, nb::ndarray<> out, nb::ndarray<> offsets,
         DataType accumulator_type, std::optional<nb::ndarray<>> C, double alpha, double beta,
         Activation activation, std::vector<double> activation_args, double scale_a, double scale_b,
         std::optional<nb::ndarray<>> bias, bool offsets_on_device) {
        return unwrap(interruptible([&] {
          return GroupedGemmArguments::make_stacked(
              to_tensor_view("A", A), to_tensor_view("B", B), to_tensor_view("out", out),
              to_tensor_view("offsets", offsets), accumulator_type,
              C ? to_tensor_view("C", *C) : TensorView{},
              epilogue_of(alpha, beta, activation, std::move(activation_args), scale_a, scale_b),
              bias ? to_tensor_view("bias", *bias) : TensorView{}, offsets_on_device);
        }));
      },
      required<nb::ndarray<>>("A"), required<nb::ndarray<>>("B"), required<nb::ndarray<>>("out"),
      required<nb::ndarray<>>("offsets"), required<DataType>("accumulator_type"),
      optional<std::optional<nb::ndarray<>>>("C", std::nullopt, "None"),
      optional<double>("alpha", 1.0, "1.0", "a number"),
      optional<double>("beta", 0.0, "0.0", "a number"),
      optional<Activation>("activation", Activation::identity, "Activation.identity"),
      optional<std::vector<double>>("activation_args", {}, "()", "a list of numbers"),
      optional<double>("scale_a", 1.0, "1.0", "a number"),
      optional<double>("scale_b", 1.0, "1.0", "a number"),
      optional<std::optional<nb::ndarray<>>>("bias", std::nullopt, "None"),
      optional<bool>("offsets_on_device", false, "False", "True or False"));
  arguments.def_prop_ro("problem_count", &GroupedGemmArguments::problem_count)
      .def_prop_ro("offsets_on_device", &GroupedGemmArguments::offsets_on_device)
      .def_prop_ro("flops", &GroupedGemmArguments::flops)
      .def_prop_ro("accumulator_type", &GroupedGemmArguments::accumulator_type)
      .def_prop_ro("problem_sizes",
                   [](const GroupedGemmArguments& a) { return a.problem().problem_sizes; })
      .def_prop_ro("layouts", &layouts_of<GroupedGemmArguments>)
      .def_prop_ro("alignments", &alignments_of<GroupedGemmArguments>);

  def_one_call(m, "grouped_gemm", &tilecraft::grouped_gemm);
}

}  // namespace tilecraft::python
