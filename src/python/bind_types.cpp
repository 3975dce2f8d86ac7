#include "common.hpp"

namespace tilecraft::python {

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
  auto gemm_coord = nb::class_<GemmCoord>(m, "GemmCoord").def(nb::init<>());
  def_init(
      gemm_coord, "GemmCoord",
      [](int m_, int n, int k) {
        return GemmCoord{m_, n, k};
      },
      required<int>("m"), required<int>("n"), required<int>("k"));
  def_method(gemm_coord, "m", "m", [](const GemmCoord& c) { return c.m; });
  def_method(gemm_coord, "n", "n", [](const GemmCoord& c) { return c.n; });
  def_method(gemm_coord, "k", "k", [](const GemmCoord& c) { return c.k; });
  def_method(gemm_coord, "mn", "mn", [](const GemmCoord& c) { return MatrixCoord{c.m, c.n}; });
  def_method(gemm_coord, "mk", "mk", [](const GemmCoord& c) { return MatrixCoord{c.m, c.k}; });
  def_method(gemm_coord, "kn", "kn", [](const GemmCoord& c) { return MatrixCoord{c.k, c.n}; });
  gemm_coord
      .def(
          "__eq__", [](const GemmCoord& a, const GemmCoord& b) { return a == b; },
          nb::is_operator())
      .def("__repr__", [](const GemmCoord& c) {
        return "GemmCoord(" + std::to_string(c.m) + ", " + std::to_string(c.n) + ", " +
               std::to_string(c.k) + ")";
      });

  auto matrix_coord = nb::class_<MatrixCoord>(m, "MatrixCoord").def(nb::init<>());
  def_init(
      matrix_coord, "MatrixCoord",
      [](int row, int column) {
        return MatrixCoord{row, column};
      },
      required<int>("row"), required<int>("column"));
  def_method(matrix_coord, "row", "row", [](const MatrixCoord& c) { return c.row; });
  def_method(matrix_coord, "column", "column", [](const MatrixCoord& c) { return c.column; });
  matrix_coord
      .def(
          "__eq__", [](const MatrixCoord& a, const MatrixCoord& b) { return a == b; },
          nb::is_operator())
      .def("__repr__", [](const MatrixCoord& c) {
        return "MatrixCoord(" + std::to_string(c.row) + ", " + std::to_string(c.column) + ")";
      });

  auto tensor_coord = nb::class_<Tensor4DCoord>(m, "Tensor4DCoord").def(nb::init<>());
  def_init(
      tensor_coord, "Tensor4DCoord",
      [](int n, int h, int w, int c) {
        return Tensor4DCoord{n, h, w, c};
      },
      required<int>("n"), required<int>("h"), required<int>("w"), required<int>("c"));
  def_method(tensor_coord, "n", "n", [](const Tensor4DCoord& c) { return c.n; });
  def_method(tensor_coord, "h", "h", [](const Tensor4DCoord& c) { return c.h; });
  def_method(tensor_coord, "w", "w", [](const Tensor4DCoord& c) { return c.w; });
  def_method(tensor_coord, "c", "c", [](const Tensor4DCoord& c) { return c.c; });
  tensor_coord
      .def(
          "__eq__", [](const Tensor4DCoord& a, const Tensor4DCoord& b) { return a == b; },
          nb::is_operator())
      .def("__repr__", [](const Tensor4DCoord& c) {
        return "Tensor4DCoord(" + std::to_string(c.n) + ", " + std::to_string(c.h) + ", " +
               std::to_string(c.w) + ", " + std::to_string(c.c) + ")";
      });
}

}  // namespace tilecraft::python
