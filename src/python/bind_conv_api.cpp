// The arguments-first API for convolutions (tilecraft.api.Conv2dArguments), the convolution
// methods of api.Kernel and the one-call tilecraft.conv2d, for python/tilecraft.
#include "common.hpp"
#include "tensor_adapter.hpp"
#include "tilecraft/tune/conv2d.hpp"

namespace tilecraft::python {

void bind_conv_api(nb::module_& m) {
  using api::Conv2dArguments;
  auto arguments = nb::class_<Conv2dArguments, api::KernelArguments>(m, "Conv2dArguments");
  def_checked(
      arguments, "make", "Conv2dArguments",
      [](ConvKind kind, nb::ndarray<> A, nb::ndarray<> B, nb::ndarray<> out,
         DataType accumulator_type, std::array<int, 2> stride, std::array<int, 4> padding,
         std::array<int, 2> dilation, int groups, ConvMode mode, std::optional<nb::ndarray<>> C,
         double alpha, double beta, Activation activation, std::vector<double> activation_args,
         std::optional<nb::ndarray<>> bias, int stride_d, std::array<int, 2> padding_d,
         int dilation_d) {
        api::Conv2dGeometry geometry;
        geometry.stride = stride;
        geometry.padding = padding;
        geometry.dilation = dilation;
        geometry.stride_d = stride_d;
        geometry.padding_d = padding_d;
        geometry.dilation_d = dilation_d;
        geometry.groups = groups;
        geometry.mode = mode;
        api::EpilogueArguments e;
        e.alpha = alpha;
        e.beta = beta;
        if (C) e.C = to_tensor_view("C", *C);
        e.activation = activation;
        e.activation_args = std::move(activation_args);
        if (bias) e.bias = to_tensor_view("bias", *bias);
        return unwrap(Conv2dArguments::make(kind, to_tensor_view("A", A), to_tensor_view("B", B),
                                            to_tensor_view("out", out), accumulator_type, geometry,
                                            e));
      },
      required<ConvKind>("kind", "a tilecraft.conv.Operator (fprop, dgrad or wgrad)"),
      required<nb::ndarray<>>("A"), required<nb::ndarray<>>("B"), required<nb::ndarray<>>("out"),
      required<DataType>("accumulator_type"),
      optional<std::array<int, 2>>("stride", {1, 1}, "(1, 1)", "two ints"),
      optional<std::array<int, 4>>("padding", {0, 0, 0, 0}, "(0, 0, 0, 0)",
                                   "four ints (top, bottom, left, right)"),
      optional<std::array<int, 2>>("dilation", {1, 1}, "(1, 1)", "two ints"),
      optional<int>("groups", 1, "1"),
      optional<ConvMode>("mode", ConvMode::CrossCorrelation, "conv.Mode.cross_correlation"),
      optional<std::optional<nb::ndarray<>>>("C", std::nullopt, "None"),
      optional<double>("alpha", 1.0, "1.0", "a number"),
      optional<double>("beta", 0.0, "0.0", "a number"),
      optional<Activation>("activation", Activation::identity, "Activation.identity"),
      optional<std::vector<double>>("activation_args", {}, "()", "a list of numbers"),
      optional<std::optional<nb::ndarray<>>>("bias", std::nullopt, "None"),
      optional<int>("stride_d", 1, "1"),
      optional<std::array<int, 2>>("padding_d", {0, 0}, "(0, 0)", "two ints (front, back)"),
      optional<int>("dilation_d", 1, "1"));
  arguments.def_prop_ro("kind", &Conv2dArguments::kind)
      .def_prop_ro("problem_size", &Conv2dArguments::problem_size)
      .def_prop_ro("flops", &Conv2dArguments::flops)
      .def_prop_ro("accumulator_type", &Conv2dArguments::accumulator_type)
      .def_prop_ro("gemm_mnk", &Conv2dArguments::gemm_mnk)
      .def_prop_ro("alignments", &alignments_of<Conv2dArguments>);

  def_one_call(m, "conv2d", &tilecraft::conv2d);
}

}  // namespace tilecraft::python
