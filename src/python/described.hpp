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

// A bound class whose Python wrapper holds the C++ object in `attribute` (or nullptr: none).
#define TILECRAFT_DESCRIBED_CLASS(Type, hint_text, expected_text, attribute) \
  template <>                                                                \
  struct Described<Type> {                                                   \
    static constexpr const char* hint = hint_text;                           \
    static constexpr const char* expected = expected_text;                   \
    static constexpr const char* wrapper_attribute = attribute;              \
  }
// A bound enum, or a class no wrapper holds.
#define TILECRAFT_DESCRIBED(Type, hint_text, expected_text) \
  TILECRAFT_DESCRIBED_CLASS(Type, hint_text, expected_text, nullptr)

TILECRAFT_DESCRIBED(DataType, "DataType", "a tilecraft.DataType (e.g. tilecraft.float16)");
TILECRAFT_DESCRIBED(Layout, "Layout", "a tilecraft.Layout (e.g. tilecraft.RowMajor)");
TILECRAFT_DESCRIBED(OpClass, "OpClass", "a tilecraft.OpClass (OpClass.Simt or OpClass.TensorOp)");
TILECRAFT_DESCRIBED(MathOperation, "MathOperation",
                    "a tilecraft.MathOperation (e.g. MathOperation.multiply_add)");
TILECRAFT_DESCRIBED(KernelSchedule, "KernelScheduleType",
                    "a tilecraft.KernelScheduleType (e.g. KernelScheduleType.Auto)");
TILECRAFT_DESCRIBED(EpilogueSchedule, "EpilogueScheduleType",
                    "a tilecraft.EpilogueScheduleType (e.g. EpilogueScheduleType.Auto)");
TILECRAFT_DESCRIBED(TileScheduler, "TileSchedulerType",
                    "a tilecraft.TileSchedulerType (Persistent or StreamK)");
TILECRAFT_DESCRIBED(BiasKind, "BiasKind", "a tilecraft.BiasKind");
TILECRAFT_DESCRIBED(Swizzle, "Swizzle",
                    "one of tilecraft.IdentitySwizzle1/2/4/8, HorizontalSwizzle, "
                    "BatchedIdentitySwizzle");
TILECRAFT_DESCRIBED(EpilogueKind, "EpilogueKind", "a tilecraft.EpilogueKind");
TILECRAFT_DESCRIBED(Activation, "Activation", "a tilecraft.Activation (e.g. Activation.relu)");
TILECRAFT_DESCRIBED(GemmMode, "gemm.Mode",
                    "a tilecraft.gemm.Mode (Gemm, GemmSplitKParallel, Batched or Array)");
TILECRAFT_DESCRIBED(SchedulerMode, "SchedulerMode",
                    "a tilecraft.SchedulerMode (SchedulerMode.Host or SchedulerMode.Device)");
TILECRAFT_DESCRIBED(ConvKind, "conv.Operator", "a tilecraft.conv.Operator (fprop, dgrad or wgrad)");
TILECRAFT_DESCRIBED(IteratorAlgorithm, "conv.IteratorAlgorithm",
                    "a tilecraft.conv.IteratorAlgorithm (analytic, optimized, fixed_channels, "
                    "few_channels or direct)");
TILECRAFT_DESCRIBED(StrideSupport, "conv.StrideSupport",
                    "a tilecraft.conv.StrideSupport (Strided or Unity)");
TILECRAFT_DESCRIBED(GroupMode, "conv.GroupMode",
                    "a tilecraft.conv.GroupMode (NoneGroup, SingleGroup, MultipleGroup or "
                    "Depthwise)");
TILECRAFT_DESCRIBED(ConvMode, "conv.Mode",
                    "a tilecraft.conv.Mode (cross_correlation or convolution)");
TILECRAFT_DESCRIBED(SplitKMode, "conv.SplitKMode",
                    "a tilecraft.conv.SplitKMode (Serial or Parallel)");

TILECRAFT_DESCRIBED_CLASS(EpilogueGraph, "EpilogueGraph",
                          "an epilogue graph (tilecraft.epilogue.trace(fn, ...))", "graph");
TILECRAFT_DESCRIBED(MathInstruction, "MathInstruction", "a tilecraft.MathInstruction");
TILECRAFT_DESCRIBED(TileDescription, "TileDescription", "a tilecraft.TileDescription");
TILECRAFT_DESCRIBED(TensorDescription, "TensorDescription", "a tilecraft.TensorDescription");
TILECRAFT_DESCRIBED(EpilogueFunctor, "EpilogueFunctor",
                    "an epilogue functor (LinearCombination(...), "
                    "LinearCombinationGeneric(...), ...)");
TILECRAFT_DESCRIBED(EpilogueParams, "EpilogueParams", "operation.epilogue_type(alpha, beta, ...)");
TILECRAFT_DESCRIBED(GemmCoord, "GemmCoord", "a tilecraft.gemm.GemmCoord(M, N, K)");
TILECRAFT_DESCRIBED(MatrixCoord, "MatrixCoord", "a tilecraft.MatrixCoord(row, column)");
TILECRAFT_DESCRIBED(Tensor4DCoord, "Tensor4DCoord", "a tilecraft.Tensor4DCoord(n, h, w, c)");
TILECRAFT_DESCRIBED(Conv2dProblemSize, "conv.Conv2dProblemSize",
                    "a tilecraft.conv.Conv2dProblemSize");
TILECRAFT_DESCRIBED_CLASS(Conv2dArguments, "Conv2dArguments", "a tilecraft.Conv2dArguments",
                          "_native");
TILECRAFT_DESCRIBED(ActivationFunction, "ActivationFunction",
                    "relu, leaky_relu, tanh, sigmoid, silu, hardswish, gelu, gelu_tanh or "
                    "clamp (e.g. relu(cutlass.float32))");
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

#undef TILECRAFT_DESCRIBED
#undef TILECRAFT_DESCRIBED_CLASS

}  // namespace tilecraft::python
