"""tilecraft: describe, compile, cache and run CUTLASS kernels from Python and C++.

The operation-first API of PyCUTLASS (seed documents 002 and 004): the seed's example runs with
``import tilecraft as pycutlass``, ``from tilecraft import *`` and ``import tilecraft as cutlass``.
Importing does no CUDA work and runs no compiler.
"""

from tilecraft import _core
from tilecraft._core import (
    CompileError,
    CudaError,
    DataType,
    EpilogueParams,
    GemmCoord,
    Layout,
    MathInstruction,
    MathOperation,
    MatrixCoord,
    OpClass,
    SchedulerMode,
    Tensor4DCoord,
    TensorDescription,
    TileDescription,
    UnsupportedError,
)
from tilecraft.types import *  # noqa: F401,F403  (float16 / Float16, RowMajor, swizzles, ...)
from tilecraft.types import __all__ as _types_all
from tilecraft.epilogue import (
    FastLinearCombinationClamp,
    LinearCombination,
    clamp,
    gelu_tanh,
    LinearCombinationClamp,
    LinearCombinationGeneric,
    gelu,
    hardswish,
    leaky_relu,
    relu,
    sigmoid,
    silu,
    tanh,
)
from tilecraft.operation import (Conv2dOperation, Conv3dOperation, GemmOperationGrouped,
                                 GemmOperationUniversal)
from tilecraft.arguments import GemmArguments
from tilecraft.grouped import GemmGroupedArguments
from tilecraft.conv_arguments import Conv2dArguments
from tilecraft.conv import StrideSupport
from tilecraft.memory import get_allocated_size, get_memory_pool
from tilecraft import compiler, conv, gemm, tuning
from tilecraft.ops import GemmPlan, clear_plans, plan_gemm
# The one-call ops: functions (torch.compile calls them), routed to torch ops where it traces.
from tilecraft.calls import conv2d, gemm, grouped_gemm  # noqa: F811

# ``tilecraft.gemm.GemmCoord`` and ``.Mode`` (``cutlass.gemm`` in the seeds) on the function too.
gemm.GemmCoord = GemmCoord
gemm.Mode = _core.GemmMode
from tilecraft.conv_ops import conv3d

__version__ = "0.1.0"


def __getattr__(name):
    """``tilecraft.nn`` and ``tilecraft.torch_ops`` import torch: loaded on first use."""
    if name in ("nn", "torch_ops"):
        import importlib

        return importlib.import_module(f"tilecraft.{name}")
    raise AttributeError(f"module 'tilecraft' has no attribute {name!r}")

__all__ = [
    "CompileError",
    "Conv2dArguments",
    "Conv2dOperation",
    "Conv3dOperation",
    "conv2d",
    "conv3d",
    "StrideSupport",
    "conv",
    "CudaError",
    "DataType",
    "EpilogueParams",
    "FastLinearCombinationClamp",
    "GemmArguments",
    "GemmCoord",
    "GemmGroupedArguments",
    "GemmOperationGrouped",
    "GemmPlan",
    "GemmOperationUniversal",
    "Layout",
    "LinearCombination",
    "LinearCombinationClamp",
    "LinearCombinationGeneric",
    "MathInstruction",
    "MathOperation",
    "MatrixCoord",
    "OpClass",
    "SchedulerMode",
    "Tensor4DCoord",
    "TensorDescription",
    "TileDescription",
    "UnsupportedError",
    "compiler",
    "clamp",
    "gelu",
    "gelu_tanh",
    "gemm",
    "grouped_gemm",
    "get_allocated_size",
    "get_memory_pool",
    "hardswish",
    "leaky_relu",
    "plan_gemm",
    "clear_plans",
    "relu",
    "sigmoid",
    "silu",
    "tanh",
    "tuning",
    *_types_all,
]
