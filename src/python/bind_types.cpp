#include "common.hpp"

namespace tilecraft::python {
namespace {

// A coordinate class: built from its int fields (`names`, in declaration order), an accessor
// method per field, ==, and "Name(1, 2, 3)" for repr.
template <typename Coord, size_t N>
nb::class_<Coord> bind_coord(nb::module_& m, const char* name, const char* const (&names)[N],
                             int Coord::*const (&members)[N]) {
  auto coord = nb::class_<Coord>(m, name).def(nb::init<>());
  const auto def_constructor = [&](auto... field) {
    def_init(
        coord, name, [](auto... values) { return Coord{values...}; }, required<int>(field)...);
  };
  std::apply(def_constructor, std::to_array(names));
  for (size_t i = 0; i < N; ++i) {
    def_method(coord, names[i], names[i],
               [member = members[i]](const Coord& c) { return c.*member; });
  }
  coord
      .def(
          "__eq__", [](const Coord& a, const Coord& b) { return a == b; }, nb::is_operator())
      .def("__repr__", [type = std::string(name), fields = std::to_array(members)](const Coord& c) {
        std::string text;
        for (int Coord::*member : fields)
          text += (text.empty() ? "" : ", ") + std::to_string(c.*member);
        return type + "(" + text + ")";
      });
  return coord;
}

}  // namespace

void bind_types(nb::module_& m) {
  nb::enum_<DataType>(m, "DataType")
      .value("f64", DataType::f64)
      .value("f32", DataType::f32)
      .value("tf32", DataType::tf32)
      .value("f16", DataType::f16)
      .value("bf16", DataType::bf16)
      .value("s8", DataType::s8)
      .value("u8", DataType::u8)
      .value("s32", DataType::s32)
      .value("e4m3", DataType::e4m3)
      .value("e5m2", DataType::e5m2);
  def_checked(
      m, "long_name", "long_name", [](DataType t) { return std::string(long_name(t)); },
      required<DataType>("type"));
  def_checked(m, "size_in_bits", "size_in_bits", &size_in_bits, required<DataType>("type"));

  nb::enum_<Layout>(m, "Layout")
      .value("RowMajor", Layout::RowMajor)
      .value("ColumnMajor", Layout::ColumnMajor)
      .value("RowMajorInterleaved32", Layout::RowMajorInterleaved32)
      .value("ColumnMajorInterleaved32", Layout::ColumnMajorInterleaved32)
      .value("TensorNHWC", Layout::TensorNHWC)
      .value("TensorNDHWC", Layout::TensorNDHWC)
      .value("TensorNC32HW32", Layout::TensorNC32HW32)
      .value("TensorC32RSK32", Layout::TensorC32RSK32);

  nb::enum_<OpClass>(m, "OpClass")
      .value("Simt", OpClass::Simt)
      .value("TensorOp", OpClass::TensorOp);

  nb::enum_<MathOperation>(m, "MathOperation")
      .value("multiply_add", MathOperation::multiply_add)
      .value("multiply_add_saturate", MathOperation::multiply_add_saturate)
      .value("multiply_add_fast_f32", MathOperation::multiply_add_fast_f32)
      .value("multiply_add_fast_f16", MathOperation::multiply_add_fast_f16)
      .value("multiply_add_fast_bf16", MathOperation::multiply_add_fast_bf16)
      .value("multiply_add_fast_accum", MathOperation::multiply_add_fast_accum);

  nb::enum_<KernelSchedule>(m, "KernelScheduleType")
      .value("Auto", KernelSchedule::Auto)
      .value("TmaWarpSpecialized", KernelSchedule::TmaWarpSpecialized)
      .value("TmaWarpSpecializedPingpong", KernelSchedule::TmaWarpSpecializedPingpong)
      .value("TmaWarpSpecializedCooperative", KernelSchedule::TmaWarpSpecializedCooperative);

  nb::enum_<EpilogueSchedule>(m, "EpilogueScheduleType")
      .value("Auto", EpilogueSchedule::Auto)
      .value("TmaWarpSpecialized", EpilogueSchedule::TmaWarpSpecialized)
      .value("TmaWarpSpecializedCooperative", EpilogueSchedule::TmaWarpSpecializedCooperative);

  nb::enum_<TileScheduler>(m, "TileSchedulerType")
      .value("Persistent", TileScheduler::Persistent)
      .value("StreamK", TileScheduler::StreamK);

  nb::enum_<BiasKind>(m, "BiasKind")
      .value("none", BiasKind::none)
      .value("per_row", BiasKind::per_row)
      .value("per_column", BiasKind::per_column);

  nb::enum_<Swizzle>(m, "Swizzle")
      .value("IdentitySwizzle1", Swizzle::IdentitySwizzle1)
      .value("IdentitySwizzle2", Swizzle::IdentitySwizzle2)
      .value("IdentitySwizzle4", Swizzle::IdentitySwizzle4)
      .value("IdentitySwizzle8", Swizzle::IdentitySwizzle8)
      .value("HorizontalSwizzle", Swizzle::HorizontalSwizzle)
      .value("BatchedIdentitySwizzle", Swizzle::BatchedIdentitySwizzle);

  nb::enum_<EpilogueKind>(m, "EpilogueKind")
      .value("LinearCombination", EpilogueKind::LinearCombination)
      .value("LinearCombinationClamp", EpilogueKind::LinearCombinationClamp)
      .value("FastLinearCombinationClamp", EpilogueKind::FastLinearCombinationClamp)
      .value("LinearCombinationGeneric", EpilogueKind::LinearCombinationGeneric);

  nb::enum_<Activation>(m, "Activation")
      .value("identity", Activation::identity)
      .value("relu", Activation::relu)
      .value("leaky_relu", Activation::leaky_relu)
      .value("tanh", Activation::tanh)
      .value("sigmoid", Activation::sigmoid)
      .value("silu", Activation::silu)
      .value("hardswish", Activation::hardswish)
      .value("gelu", Activation::gelu)
      .value("gelu_tanh", Activation::gelu_tanh)
      .value("clamp", Activation::clamp);

  nb::enum_<GemmMode>(m, "GemmMode")
      .value("Gemm", GemmMode::Gemm)
      .value("GemmSplitKParallel", GemmMode::GemmSplitKParallel)
      .value("Batched", GemmMode::Batched)
      .value("Array", GemmMode::Array)
      .value("Grouped", GemmMode::Grouped);

  // GemmOperationGrouped's precompute_mode (seed 002: SchedulerMode.Host / Device).
  nb::enum_<SchedulerMode>(m, "SchedulerMode")
      .value("Host", SchedulerMode::Host)
      .value("Device", SchedulerMode::Device);

  // Coordinates (seed 002). Their accessors are methods, as in the seed: problem_size.m().
  auto gemm_coord =
      bind_coord(m, "GemmCoord", {"m", "n", "k"}, {&GemmCoord::m, &GemmCoord::n, &GemmCoord::k});
  def_method(gemm_coord, "mn", "mn", [](const GemmCoord& c) { return MatrixCoord{c.m, c.n}; });
  def_method(gemm_coord, "mk", "mk", [](const GemmCoord& c) { return MatrixCoord{c.m, c.k}; });
  def_method(gemm_coord, "kn", "kn", [](const GemmCoord& c) { return MatrixCoord{c.k, c.n}; });
  bind_coord(m, "MatrixCoord", {"row", "column"}, {&MatrixCoord::row, &MatrixCoord::column});
  bind_coord(m, "Tensor4DCoord", {"n", "h", "w", "c"},
             {&Tensor4DCoord::n, &Tensor4DCoord::h, &Tensor4DCoord::w, &Tensor4DCoord::c});
}

}  // namespace tilecraft::python
