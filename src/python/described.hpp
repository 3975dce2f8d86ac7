// How argument messages name the bound enums and classes (see arguments.hpp): one wording for
// every binding of both Python surfaces.
#pragma once

#include "arguments.hpp"
#include "tilecraft/core/conv_problem_size.hpp"
#include "tilecraft/core/types.hpp"
#include "tilecraft/describe/epilogue.hpp"
#include "tilecraft/describe/epilogue_graph.hpp"
#include "tilecraft/describe/gemm_operation.hpp"
#include "tilecraft/describe/math_instruction.hpp"
#include "tilecraft/describe/swizzle.hpp"
#include "tilecraft/describe/tensor_description.hpp"
#include "tilecraft/describe/tile_description.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/discover/conv_api.hpp"
#include "tilecraft/discover/grouped_api.hpp"
#include "tilecraft/runtime/compiled_artifact.hpp"
#include "tilecraft/runtime/conv2d_arguments.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/runtime/grouped_gemm_arguments.hpp"

namespace tilecraft::python {

// relu(element_epilogue_compute) and its kin: an activation and the type it computes in.
struct ActivationFunction {
  Activation activation = Activation::relu;
  DataType element = DataType::f32;
};

#define TILECRAFT_DESCRIBED_ENUM(Type, hint_text, expected_text) \
  template <>                                                    \
  struct Described<Type> {                                       \
    static constexpr const char* hint = hint_text;               \
    static constexpr const char* expected = expected_text;       \
  }

#define TILECRAFT_DESCRIBED_CLASS(Type, hint_text, expected_text, attribute) \
  template <>                                                                \
  struct Described<Type> {                                                   \
    static constexpr const char* hint = hint_text;                           \
    static constexpr const char* expected = expected_text;                   \
    static constexpr const char* wrapper_attribute = attribute;              \
  }

TILECRAFT_DESCRIBED_ENUM(DataType, "DataType", "a tilecraft.DataType (e.g. tilecraft.float16)");
TILECRAFT_DESCRIBED_ENUM(Layout, "Layout", "a tilecraft.Layout (e.g. tilecraft.RowMajor)");
TILECRAFT_DESCRIBED_ENUM(OpClass, "OpClass",
                         "a tilecraft.OpClass (OpClass.Simt or OpClass.TensorOp)");
TILECRAFT_DESCRIBED_ENUM(MathOperation, "MathOperation",
                         "a tilecraft.MathOperation (e.g. MathOperation.multiply_add)");
TILECRAFT_DESCRIBED_ENUM(KernelSchedule, "KernelScheduleType",
                         "a tilecraft.KernelScheduleType (e.g. KernelScheduleType.Auto)");
TILECRAFT_DESCRIBED_ENUM(EpilogueSchedule, "EpilogueScheduleType",
                         "a tilecraft.EpilogueScheduleType (e.g. EpilogueScheduleType.Auto)");
TILECRAFT_DESCRIBED_ENUM(TileScheduler, "TileSchedulerType",
                         "a tilecraft.TileSchedulerType (Persistent or StreamK)");
TILECRAFT_DESCRIBED_ENUM(BiasKind, "BiasKind", "a tilecraft.BiasKind");
TILECRAFT_DESCRIBED_ENUM(Swizzle, "Swizzle",
                         "one of tilecraft.IdentitySwizzle1/2/4/8, HorizontalSwizzle, "
                         "BatchedIdentitySwizzle");
TILECRAFT_DESCRIBED_ENUM(EpilogueKind, "EpilogueKind", "a tilecraft.EpilogueKind");
TILECRAFT_DESCRIBED_ENUM(Activation, "Activation", "a tilecraft.Activation (e.g. Activation.relu)");
TILECRAFT_DESCRIBED_ENUM(GemmMode, "gemm.Mode",
                         "a tilecraft.gemm.Mode (Gemm, GemmSplitKParallel, Batched or Array)");
TILECRAFT_DESCRIBED_ENUM(SchedulerMode, "SchedulerMode",
                         "a tilecraft.SchedulerMode (SchedulerMode.Host or SchedulerMode.Device)");
TILECRAFT_DESCRIBED_ENUM(ConvKind, "conv.Operator",
                         "a tilecraft.conv.Operator (fprop, dgrad or wgrad)");
TILECRAFT_DESCRIBED_ENUM(IteratorAlgorithm, "conv.IteratorAlgorithm",
                         "a tilecraft.conv.IteratorAlgorithm (analytic, optimized, fixed_channels "
                         "or few_channels)");
TILECRAFT_DESCRIBED_ENUM(StrideSupport, "conv.StrideSupport",
                         "a tilecraft.conv.StrideSupport (Strided or Unity)");
TILECRAFT_DESCRIBED_ENUM(GroupMode, "conv.GroupMode",
                         "a tilecraft.conv.GroupMode (NoneGroup, SingleGroup, MultipleGroup or "
                         "Depthwise)");
TILECRAFT_DESCRIBED_ENUM(ConvMode, "conv.Mode",
                         "a tilecraft.conv.Mode (cross_correlation or convolution)");
TILECRAFT_DESCRIBED_ENUM(SplitKMode, "conv.SplitKMode",
                         "a tilecraft.conv.SplitKMode (Serial or Parallel)");

TILECRAFT_DESCRIBED_CLASS(EpilogueGraph, "EpilogueGraph",
                          "an epilogue graph (tilecraft.epilogue.trace(fn, ...))", "graph");
TILECRAFT_DESCRIBED_CLASS(MathInstruction, "MathInstruction", "a tilecraft.MathInstruction",
                          nullptr);
TILECRAFT_DESCRIBED_CLASS(TileDescription, "TileDescription", "a tilecraft.TileDescription",
                          nullptr);
TILECRAFT_DESCRIBED_CLASS(TensorDescription, "TensorDescription", "a tilecraft.TensorDescription",
                          nullptr);
TILECRAFT_DESCRIBED_CLASS(EpilogueFunctor, "EpilogueFunctor",
                          "an epilogue functor (LinearCombination(...), "
                          "LinearCombinationGeneric(...), ...)",
                          nullptr);
TILECRAFT_DESCRIBED_CLASS(EpilogueParams, "EpilogueParams",
                          "operation.epilogue_type(alpha, beta, ...)", nullptr);
TILECRAFT_DESCRIBED_CLASS(GemmCoord, "GemmCoord", "a tilecraft.gemm.GemmCoord(M, N, K)", nullptr);
TILECRAFT_DESCRIBED_CLASS(MatrixCoord, "MatrixCoord", "a tilecraft.MatrixCoord(row, column)",
                          nullptr);
TILECRAFT_DESCRIBED_CLASS(Tensor4DCoord, "Tensor4DCoord", "a tilecraft.Tensor4DCoord(n, h, w, c)",
                          nullptr);
TILECRAFT_DESCRIBED_CLASS(Conv2dProblemSize, "conv.Conv2dProblemSize",
                          "a tilecraft.conv.Conv2dProblemSize", nullptr);
TILECRAFT_DESCRIBED_CLASS(Conv2dArguments, "Conv2dArguments", "a tilecraft.Conv2dArguments",
                          "_native");
TILECRAFT_DESCRIBED_CLASS(ActivationFunction, "ActivationFunction",
                          "relu, leaky_relu, tanh, sigmoid, silu, hardswish, gelu, gelu_tanh or "
                          "clamp (e.g. relu(cutlass.float32))",
                          nullptr);
TILECRAFT_DESCRIBED_CLASS(GemmOperation, "GemmOperationUniversal", "a GemmOperationUniversal",
                          "_op");
TILECRAFT_DESCRIBED_CLASS(GemmArguments, "GemmArguments", "a tilecraft.GemmArguments", "_native");
TILECRAFT_DESCRIBED_CLASS(GroupedGemmArguments, "GemmGroupedArguments",
                          "a tilecraft.GemmGroupedArguments", "_native");
TILECRAFT_DESCRIBED_CLASS(api::KernelArguments, "api.arguments.GemmArguments | ...",
                          "a tilecraft.api.arguments.GemmArguments, GroupedGemmArguments, "
                          "Conv2dArguments or Conv3dArguments",
                          "_native");
TILECRAFT_DESCRIBED_CLASS(api::GemmArguments, "api.arguments.GemmArguments",
                          "a tilecraft.api.arguments.GemmArguments", "_native");
TILECRAFT_DESCRIBED_CLASS(api::GroupedGemmArguments, "api.GroupedGemmArguments",
                          "a tilecraft.api.GroupedGemmArguments", "_native");
TILECRAFT_DESCRIBED_CLASS(api::Conv2dArguments, "api.Conv2dArguments",
                          "a tilecraft.api.Conv2dArguments", "_native");
TILECRAFT_DESCRIBED_CLASS(api::Kernel, "api.Kernel", "a Kernel (from tilecraft.api.get_kernels)",
                          "_native");
TILECRAFT_DESCRIBED_CLASS(CompiledArtifact, "api.CompiledArtifact",
                          "a tilecraft.api.CompiledArtifact", "_native");

#undef TILECRAFT_DESCRIBED_ENUM
#undef TILECRAFT_DESCRIBED_CLASS

}  // namespace tilecraft::python
