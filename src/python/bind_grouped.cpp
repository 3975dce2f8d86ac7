// Grouped GEMM for the seed surface: GemmOperationGrouped's constructor and
// GemmGroupedArguments (lists of tensors, or the stacked mixture-of-experts form).
#include "common.hpp"
#include "tensor_adapter.hpp"

namespace tilecraft::python {

void bind_grouped(nb::module_& m, nb::class_<GemmOperation>& ops) {
  def_checked(
      ops, "make_grouped", "GemmOperationGrouped",
      [](int arch, Ref<TileDescription> tile, Ref<TensorDescription> A, Ref<TensorDescription> B,
         Ref<TensorDescription> C, Ref<EpilogueFunctor> epilogue, Swizzle swizzle,
         SchedulerMode mode) {
        return unwrap(
            GemmOperation::make_grouped(arch, *tile, *A, *B, *C, *epilogue, swizzle, mode));
      },
      required<int>("arch", "an int (80 or 90)"),
      required<Ref<TileDescription>>("tile_description"), required<Ref<TensorDescription>>("A"),
      required<Ref<TensorDescription>>("B"), required<Ref<TensorDescription>>("C"),
      required<Ref<EpilogueFunctor>>("epilogue_functor"),
      optional<Swizzle>("swizzling_functor", Swizzle::IdentitySwizzle1, "IdentitySwizzle1"),
      optional<SchedulerMode>("precompute_mode", SchedulerMode::Device, "SchedulerMode.Device"));
  auto arguments = nb::class_<GroupedGemmArguments>(m, "GroupedGemmArguments");
  def_checked(
      arguments, "make", "GemmGroupedArguments",
      [](Ref<GemmOperation> op, std::vector<Ref<GemmCoord>> problem_sizes,
         std::vector<nb::ndarray<>> A, std::vector<nb::ndarray<>> B,
         std::optional<std::vector<nb::ndarray<>>> C, std::vector<nb::ndarray<>> D,
         std::optional<Ref<EpilogueParams>> output_op, double scale_a, double scale_b,
         double scale_c, double scale_d, std::optional<std::vector<nb::ndarray<>>> bias) {
        GroupedGemmProblem problem;
        if (bias) problem.bias = to_tensor_views("bias", *bias);
        for (const Ref<GemmCoord>& size : problem_sizes) problem.problem_sizes.push_back(*size);
        problem.A = to_tensor_views("A", A);
        problem.B = to_tensor_views("B", B);
        if (C) problem.C = to_tensor_views("C", *C);
        problem.D = to_tensor_views("D", D);
        problem.output_op = output_op_or_default(*op, output_op);
        problem.scale_a = scale_a;
        problem.scale_b = scale_b;
        problem.scale_c = scale_c;
        problem.scale_d = scale_d;
        return unwrap(interruptible([&] { return GroupedGemmArguments::make(*op, problem); }));
      },
      required<Ref<GemmOperation>>("operation"),
      required<std::vector<Ref<GemmCoord>>>("problem_sizes",
                                            "a list of cutlass.gemm.GemmCoord(M, N, K)"),
      required<std::vector<nb::ndarray<>>>("A"), required<std::vector<nb::ndarray<>>>("B"),
      optional<std::optional<std::vector<nb::ndarray<>>>>("C", std::nullopt, "None"),
      required<std::vector<nb::ndarray<>>>("D"),
      optional<std::optional<Ref<EpilogueParams>>>("output_op", std::nullopt, "None"),
      optional<double>("scale_a", 1.0, "1.0"), optional<double>("scale_b", 1.0, "1.0"),
      optional<double>("scale_c", 1.0, "1.0"), optional<double>("scale_d", 1.0, "1.0"),
      optional<std::optional<std::vector<nb::ndarray<>>>>("bias", std::nullopt, "None"));
  def_checked(
      arguments, "make_stacked", "GemmGroupedArguments",
      [](Ref<GemmOperation> op, nb::ndarray<> A, nb::ndarray<> B, std::optional<nb::ndarray<>> C,
         nb::ndarray<> D, nb::ndarray<> offsets, std::optional<Ref<EpilogueParams>> output_op,
         double scale_a, double scale_b, double scale_c, double scale_d,
         std::optional<nb::ndarray<>> bias) {
        StackedGroupedGemmProblem problem;
        if (bias) problem.bias = to_tensor_view("bias", *bias);
        problem.A = to_tensor_view("A", A);
        problem.B = to_tensor_view("B", B);
        if (C) problem.C = to_tensor_view("C", *C);
        problem.D = to_tensor_view("D", D);
        problem.offsets = to_tensor_view("offsets", offsets);
        problem.output_op = output_op_or_default(*op, output_op);
        problem.scale_a = scale_a;
        problem.scale_b = scale_b;
        problem.scale_c = scale_c;
        problem.scale_d = scale_d;
        return unwrap(interruptible([&] { return GroupedGemmArguments::make(*op, problem); }));
      },
      required<Ref<GemmOperation>>("operation"), required<nb::ndarray<>>("A"),
      required<nb::ndarray<>>("B"),
      optional<std::optional<nb::ndarray<>>>("C", std::nullopt, "None"),
      required<nb::ndarray<>>("D"), required<nb::ndarray<>>("offsets"),
      optional<std::optional<Ref<EpilogueParams>>>("output_op", std::nullopt, "None"),
      optional<double>("scale_a", 1.0, "1.0"), optional<double>("scale_b", 1.0, "1.0"),
      optional<double>("scale_c", 1.0, "1.0"), optional<double>("scale_d", 1.0, "1.0"),
      optional<std::optional<nb::ndarray<>>>("bias", std::nullopt, "None"));
  def_method(arguments, "sync", "sync", [](GroupedGemmArguments& args) { check(args.sync()); });
  arguments.def_prop_ro("workspace_bytes", &GroupedGemmArguments::workspace_bytes)
      .def_prop_ro("problem_count", &GroupedGemmArguments::problem_count)
      .def_prop_ro("flops", &GroupedGemmArguments::flops)
      .def_prop_ro("problem_sizes", [](const GroupedGemmArguments& args) {
        const auto& s = args.host_problem_sizes();
        std::vector<GemmCoord> out;
        for (size_t i = 0; i + 2 < s.size(); i += 3) out.push_back({s[i], s[i + 1], s[i + 2]});
        return out;
      });
}

}  // namespace tilecraft::python
