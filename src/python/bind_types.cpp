#include <nanobind/stl/string.h>

#include "common.hpp"
#include "tilecraft/core/types.hpp"
#include "tilecraft/describe/epilogue.hpp"
#include "tilecraft/describe/gemm_operation.hpp"
#include "tilecraft/describe/swizzle.hpp"

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
  m.def("long_name", [](DataType t) { return std::string(long_name(t)); });
  m.def("size_in_bits", &size_in_bits);

  nb::enum_<Layout>(m, "Layout")
      .value("RowMajor", Layout::RowMajor)
      .value("ColumnMajor", Layout::ColumnMajor)
      .value("RowMajorInterleaved32", Layout::RowMajorInterleaved32)
      .value("ColumnMajorInterleaved32", Layout::ColumnMajorInterleaved32)
      .value("TensorNHWC", Layout::TensorNHWC)
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
      .value("Array", GemmMode::Array);

  nb::class_<GemmCoord>(m, "GemmCoord")
      .def(nb::init<>())
      .def(
          "__init__",
          [](GemmCoord* c, int m_, int n, int k) {
            new (c) GemmCoord{m_, n, k};
          },
          nb::arg("m"), nb::arg("n"), nb::arg("k"))
      .def("m", [](const GemmCoord& c) { return c.m; })
      .def("n", [](const GemmCoord& c) { return c.n; })
      .def("k", [](const GemmCoord& c) { return c.k; })
      .def("mn",
           [](const GemmCoord& c) {
             return MatrixCoord{c.m, c.n};
           })
      .def("mk",
           [](const GemmCoord& c) {
             return MatrixCoord{c.m, c.k};
           })
      .def("kn",
           [](const GemmCoord& c) {
             return MatrixCoord{c.k, c.n};
           })
      .def("__eq__", [](const GemmCoord& a, const GemmCoord& b) { return a == b; })
      .def("__repr__", [](const GemmCoord& c) {
        return "GemmCoord(" + std::to_string(c.m) + ", " + std::to_string(c.n) + ", " +
               std::to_string(c.k) + ")";
      });

  nb::class_<MatrixCoord>(m, "MatrixCoord")
      .def(nb::init<>())
      .def(
          "__init__",
          [](MatrixCoord* c, int r, int col) {
            new (c) MatrixCoord{r, col};
          },
          nb::arg("row"), nb::arg("column"))
      .def("row", [](const MatrixCoord& c) { return c.row; })
      .def("column", [](const MatrixCoord& c) { return c.column; })
      .def("__eq__", [](const MatrixCoord& a, const MatrixCoord& b) { return a == b; })
      .def("__repr__", [](const MatrixCoord& c) {
        return "MatrixCoord(" + std::to_string(c.row) + ", " + std::to_string(c.column) + ")";
      });

  nb::class_<Tensor4DCoord>(m, "Tensor4DCoord")
      .def(nb::init<>())
      .def(
          "__init__",
          [](Tensor4DCoord* c, int n, int h, int w, int ch) {
            new (c) Tensor4DCoord{n, h, w, ch};
          },
          nb::arg("n"), nb::arg("h"), nb::arg("w"), nb::arg("c"))
      .def("n", [](const Tensor4DCoord& c) { return c.n; })
      .def("h", [](const Tensor4DCoord& c) { return c.h; })
      .def("w", [](const Tensor4DCoord& c) { return c.w; })
      .def("c", [](const Tensor4DCoord& c) { return c.c; })
      .def("__eq__", [](const Tensor4DCoord& a, const Tensor4DCoord& b) { return a == b; })
      .def("__repr__", [](const Tensor4DCoord& c) {
        return "Tensor4DCoord(" + std::to_string(c.n) + ", " + std::to_string(c.h) + ", " +
               std::to_string(c.w) + ", " + std::to_string(c.c) + ")";
      });
}

}  // namespace tilecraft::python
