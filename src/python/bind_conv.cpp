// Convolution for the seed surface: the conv vocabulary (cutlass.conv.Operator, IteratorAlgorithm,
// StrideSupport, GroupMode, Mode, SplitKMode), Conv2dProblemSize, Conv2dOperation's constructor
// and Conv2dArguments.
#include "common.hpp"
#include "tensor_adapter.hpp"

namespace tilecraft::python {
namespace {

void bind_conv_vocabulary(nb::module_& m) {
  nb::enum_<ConvKind>(m, "ConvKind")
      .value("fprop", ConvKind::Fprop)
      .value("dgrad", ConvKind::Dgrad)
      .value("wgrad", ConvKind::Wgrad);
  nb::enum_<IteratorAlgorithm>(m, "IteratorAlgorithm")
      .value("analytic", IteratorAlgorithm::Analytic)
      .value("optimized", IteratorAlgorithm::Optimized)
      .value("fixed_channels", IteratorAlgorithm::FixedChannels)
      .value("few_channels", IteratorAlgorithm::FewChannels)
      .value("direct", IteratorAlgorithm::Direct);
  nb::enum_<StrideSupport>(m, "StrideSupport")
      .value("Strided", StrideSupport::Strided)
      .value("Unity", StrideSupport::Unity);
  nb::enum_<GroupMode>(m, "GroupMode")
      .value("NoneGroup", GroupMode::None)
      .value("SingleGroup", GroupMode::SingleGroup)
      .value("MultipleGroup", GroupMode::MultipleGroup)
      .value("Depthwise", GroupMode::Depthwise);
  nb::enum_<ConvMode>(m, "ConvMode")
      .value("cross_correlation", ConvMode::CrossCorrelation)
      .value("convolution", ConvMode::Convolution);
  nb::enum_<SplitKMode>(m, "SplitKMode")
      .value("Serial", SplitKMode::Serial)
      .value("Parallel", SplitKMode::Parallel);
}

void bind_problem_size(nb::module_& m) {
  auto size = nb::class_<Conv2dProblemSize>(m, "Conv2dProblemSize");
  def_checked(
      size, "make", "Conv2dProblemSize",
      [](Ref<Tensor4DCoord> input, Ref<Tensor4DCoord> filter, Ref<Tensor4DCoord> padding,
         Ref<MatrixCoord> stride, Ref<MatrixCoord> dilation, ConvMode mode, int split_k_slices,
         int groups) {
        return unwrap(Conv2dProblemSize::make(*input, *filter, *padding, *stride, *dilation, mode,
                                              split_k_slices, groups));
      },
      required<Ref<Tensor4DCoord>>("input_size", "a cutlass.Tensor4DCoord(N, H, W, C)"),
      required<Ref<Tensor4DCoord>>("filter_size", "a cutlass.Tensor4DCoord(K, R, S, C)"),
      required<Ref<Tensor4DCoord>>("padding", "a cutlass.Tensor4DCoord(top, bottom, left, right)"),
      required<Ref<MatrixCoord>>("stride", "a cutlass.MatrixCoord(stride_h, stride_w)"),
      required<Ref<MatrixCoord>>("dilation", "a cutlass.MatrixCoord(dilation_h, dilation_w)"),
      optional<ConvMode>("mode", ConvMode::CrossCorrelation, "conv.Mode.cross_correlation"),
      optional<int>("split_k_slices", 1, "1"), optional<int>("groups", 1, "1"));
  def_checked(
      size, "make_3d", "Conv3dProblemSize",
      [](std::array<int, 5> input, std::array<int, 5> filter, std::array<int, 6> padding,
         std::array<int, 3> stride, std::array<int, 3> dilation, ConvMode mode, int split_k_slices,
         int groups) {
        return unwrap(Conv2dProblemSize::make_3d(input, filter, padding, stride, dilation, mode,
                                                 split_k_slices, groups));
      },
      required<std::array<int, 5>>("input_size", "five ints (N, D, H, W, C)"),
      required<std::array<int, 5>>("filter_size", "five ints (K, T, R, S, C // groups)"),
      required<std::array<int, 6>>("padding", "six ints (front, back, top, bottom, left, right)"),
      required<std::array<int, 3>>("stride", "three ints (depth, rows, columns)"),
      required<std::array<int, 3>>("dilation", "three ints (depth, rows, columns)"),
      optional<ConvMode>("mode", ConvMode::CrossCorrelation, "conv.Mode.cross_correlation"),
      optional<int>("split_k_slices", 1, "1"), optional<int>("groups", 1, "1"));
  size.def_ro("N", &Conv2dProblemSize::n)
      .def_ro("D", &Conv2dProblemSize::d)
      .def_ro("T", &Conv2dProblemSize::t)
      .def_ro("Z", &Conv2dProblemSize::z)
      .def_ro("pad_d", &Conv2dProblemSize::pad_front)
      .def_ro("pad_back", &Conv2dProblemSize::pad_back)
      .def_ro("stride_d", &Conv2dProblemSize::stride_d)
      .def_ro("dilation_d", &Conv2dProblemSize::dilation_d)
      .def_ro("spatial_dims", &Conv2dProblemSize::spatial_dims)
      .def_ro("H", &Conv2dProblemSize::h)
      .def_ro("W", &Conv2dProblemSize::w)
      .def_ro("C", &Conv2dProblemSize::c)
      .def_ro("K", &Conv2dProblemSize::k)
      .def_ro("R", &Conv2dProblemSize::r)
      .def_ro("S", &Conv2dProblemSize::s)
      .def_ro("P", &Conv2dProblemSize::p)
      .def_ro("Q", &Conv2dProblemSize::q)
      .def_ro("pad_h", &Conv2dProblemSize::pad_top)
      .def_ro("pad_w", &Conv2dProblemSize::pad_left)
      .def_ro("pad_bottom", &Conv2dProblemSize::pad_bottom)
      .def_ro("pad_right", &Conv2dProblemSize::pad_right)
      .def_ro("stride_h", &Conv2dProblemSize::stride_h)
      .def_ro("stride_w", &Conv2dProblemSize::stride_w)
      .def_ro("dilation_h", &Conv2dProblemSize::dilation_h)
      .def_ro("dilation_w", &Conv2dProblemSize::dilation_w)
      .def_ro("mode", &Conv2dProblemSize::mode)
      .def_ro("groups", &Conv2dProblemSize::groups)
      .def_rw("split_k_slices", &Conv2dProblemSize::split_k_slices)
      .def("__eq__", [](const Conv2dProblemSize& a, const Conv2dProblemSize& b) { return a == b; })
      .def("__repr__", [](const Conv2dProblemSize& p) {
        return (p.is_3d() ? "Conv3dProblemSize(" : "Conv2dProblemSize(") + p.to_string() + ")";
      });
}

}  // namespace

void bind_conv(nb::module_& m, nb::class_<GemmOperation>& ops) {
  bind_conv_vocabulary(m);
  bind_problem_size(m);
  def_checked(
      ops, "make_conv2d", "Conv2dOperation",
      [](ConvKind kind, IteratorAlgorithm algorithm, int arch, Ref<TileDescription> tile,
         Ref<TensorDescription> A, Ref<TensorDescription> B, Ref<TensorDescription> C,
         StrideSupport stride_support, Ref<EpilogueFunctor> epilogue, Swizzle swizzle,
         GroupMode group_mode) {
        return unwrap(GemmOperation::make(
            unwrap(GemmDescription::make_conv2d(kind, algorithm, arch, *tile, *A, *B, *C,
                                                stride_support, *epilogue, swizzle, group_mode))));
      },
      required<ConvKind>("conv_kind", "cutlass.conv.Operator.fprop, dgrad or wgrad"),
      required<IteratorAlgorithm>("iterator_algorithm",
                                  "cutlass.conv.IteratorAlgorithm.analytic, optimized, "
                                  "fixed_channels, few_channels or direct"),
      required<int>("arch", "an int (80 or 90)"),
      required<Ref<TileDescription>>("tile_description"), required<Ref<TensorDescription>>("A"),
      required<Ref<TensorDescription>>("B"), required<Ref<TensorDescription>>("C"),
      optional<StrideSupport>("stride_support", StrideSupport::Strided,
                              "cutlass.conv.StrideSupport.Strided"),
      required<Ref<EpilogueFunctor>>("epilogue_functor"),
      optional<Swizzle>("swizzling_functor", Swizzle::IdentitySwizzle1, "IdentitySwizzle1"),
      optional<GroupMode>("group_mode", GroupMode::None, "conv.GroupMode.NoneGroup"));

  def_checked(
      ops, "make_conv2d_visitor", "Conv2dOperation",
      [](ConvKind kind, IteratorAlgorithm algorithm, int arch, Ref<TileDescription> tile,
         Ref<TensorDescription> A, Ref<TensorDescription> B, Ref<TensorDescription> C,
         StrideSupport stride_support, Ref<EpilogueGraph> graph, Swizzle swizzle,
         GroupMode group_mode) {
        // The graph computes the epilogue: the description's functor is the plain float32 one.
        const EpilogueFunctor functor = unwrap(EpilogueFunctor::linear_combination(
            C->element, C->alignment, tile->math_instruction.element_accumulator, DataType::f32));
        const GemmDescription plain =
            unwrap(GemmDescription::make_conv2d(kind, algorithm, arch, *tile, *A, *B, *C,
                                                stride_support, functor, swizzle, group_mode));
        return unwrap(GemmOperation::make(unwrap(plain.with_epilogue_graph(*graph))));
      },
      required<ConvKind>("conv_kind", "cutlass.conv.Operator.fprop, dgrad or wgrad"),
      required<IteratorAlgorithm>("iterator_algorithm", "cutlass.conv.IteratorAlgorithm.optimized"),
      required<int>("arch", "an int (90)"), required<Ref<TileDescription>>("tile_description"),
      required<Ref<TensorDescription>>("A"), required<Ref<TensorDescription>>("B"),
      required<Ref<TensorDescription>>("C"),
      optional<StrideSupport>("stride_support", StrideSupport::Strided,
                              "cutlass.conv.StrideSupport.Strided"),
      required<Ref<EpilogueGraph>>("epilogue_functor"),
      optional<Swizzle>("swizzling_functor", Swizzle::IdentitySwizzle1, "IdentitySwizzle1"),
      optional<GroupMode>("group_mode", GroupMode::None, "conv.GroupMode.NoneGroup"));

  auto arguments = nb::class_<Conv2dArguments>(m, "Conv2dArguments");
  def_checked(
      arguments, "make", "Conv2dArguments",
      [](Ref<GemmOperation> op, Ref<Conv2dProblemSize> problem_size, nb::ndarray<> A,
         nb::ndarray<> B, std::optional<nb::ndarray<>> C, nb::ndarray<> D,
         std::optional<Ref<EpilogueParams>> output_op, SplitKMode split_k_mode,
         std::optional<int> split_k_slices, std::optional<nb::ndarray<>> bias,
         nb::object epilogue) {
        Conv2dProblem problem;
        problem.problem_size = *problem_size;
        if (split_k_slices) problem.problem_size.split_k_slices = *split_k_slices;
        problem.A = to_tensor_view("A", A);
        problem.B = to_tensor_view("B", B);
        if (C) problem.C = to_tensor_view("C", *C);
        problem.D = to_tensor_view("D", D);
        if (bias) problem.bias = to_tensor_view("bias", *bias);
        if (output_op || !op->description().has_epilogue_graph()) {
          problem.output_op = output_op_or_default(*op, output_op);
        }
        problem.epilogue = epilogue_operands_from("epilogue", epilogue);
        problem.split_k_mode = split_k_mode;
        return unwrap(interruptible([&] { return Conv2dArguments::make(*op, problem); }));
      },
      required<Ref<GemmOperation>>("operation"),
      required<Ref<Conv2dProblemSize>>("problem_size", "a cutlass.conv.Conv2dProblemSize"),
      required<nb::ndarray<>>("A"), required<nb::ndarray<>>("B"),
      optional<std::optional<nb::ndarray<>>>("C", std::nullopt, "None"),
      required<nb::ndarray<>>("D"),
      optional<std::optional<Ref<EpilogueParams>>>("output_op", std::nullopt, "None"),
      optional<SplitKMode>("split_k_mode", SplitKMode::Serial, "conv.SplitKMode.Serial"),
      optional<std::optional<int>>("split_k_slices", std::nullopt, "None (the problem size's)"),
      optional<std::optional<nb::ndarray<>>>("bias", std::nullopt, "None"),
      optional<nb::object>("epilogue", nb::none(), "None"));
  def_method(arguments, "sync", "sync", [](Conv2dArguments& args) { check(args.sync()); });
  arguments.def_prop_ro("workspace_bytes", &Conv2dArguments::workspace_bytes)
      .def_prop_ro("problem_size",
                   [](const Conv2dArguments& args) { return args.problem().problem_size; });
}

}  // namespace tilecraft::python
