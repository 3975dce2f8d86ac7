"""The public constructors and functions of both Python surfaces, each with valid arguments and
the kind of every parameter, for the argument-type tests (test_argument_types.py) and the
randomized test of the description layer (test_describe_randomized.py). None needs a GPU.

A Surface calls one public function with keyword arguments; ``base()`` gives valid ones (fresh
objects each time); ``params`` maps each parameter to its kind, which says what values of the
wrong type are (VALUES_OF_WRONG_TYPE) and, for the randomized test, what values of the right
type look like (random_value_of)."""

import math
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Dict

import numpy as np

import tilecraft as cutlass
import tilecraft.api as cutlass_api
from tilecraft import (FastLinearCombinationClamp, GemmArguments, GemmOperationUniversal,
                       LinearCombination, LinearCombinationClamp, LinearCombinationGeneric,
                       MathInstruction, MathOperation, TensorDescription, TileDescription)

F16, BF16, F32, F64, S8, S32, TF32 = (cutlass.float16, cutlass.bfloat16, cutlass.float32,
                                      cutlass.float64, cutlass.int8, cutlass.int32,
                                      cutlass.tfloat32)
E4M3, E5M2, U8 = cutlass.e4m3, cutlass.e5m2, cutlass.uint8
TC, SIMT = cutlass.OpClass.TensorOp, cutlass.OpClass.Simt
KS, ES, TS = cutlass.KernelScheduleType, cutlass.EpilogueScheduleType, cutlass.TileSchedulerType

# What the binding's generic overload-resolution text looks like; it must never reach a user.
GENERIC = re.compile(r"incompatible function arguments|\barg\d+\b|Invoked with types")

ENUMS = {
    "dtype": list(cutlass.DataType.__members__.values()),
    "layout": list(cutlass.Layout.__members__.values()),
    "opclass": list(cutlass.OpClass.__members__.values()),
    "mathop": list(MathOperation.__members__.values()),
    "kernel_schedule": list(KS.__members__.values()),
    "epilogue_schedule": list(ES.__members__.values()),
    "tile_scheduler": list(TS.__members__.values()),
    "swizzle": list(cutlass.Swizzle.__members__.values()),
    "gemm_mode": list(cutlass.gemm.Mode.__members__.values()),
    "activation": list(cutlass._core.Activation.__members__.values()),
}


class Opaque:
    """An object of no kind tilecraft knows."""

    def __repr__(self):
        return "Opaque()"


# Values of a wrong type for each kind of parameter (one list per kind; "int" values also stand
# for what an int parameter must refuse by range). Each is refused with TypeError, or with
# ValueError where the type is right and the value outside the C++ type's range.
_NOT_NUMBERS = [None, "8", b"8", Opaque(), [8], {"a": 1}, 1j, cutlass.float16, cutlass.RowMajor]
_NOT_INTS = _NOT_NUMBERS + [8.0, 8.5, math.nan, True, False, np.float64(8), np.bool_(True),
                            np.ones(1, np.int32)]
_OUT_OF_INT32 = [2**31, -2**31 - 1, 2**40, 2**64, -2**63, 10**30]
_NOT_ENUMS = [None, "float16", "RowMajor", 0, 1, True, 1.0, Opaque(), [cutlass.float16], b"x"]
_NOT_BOOLS = [None, 1, 0, "True", "False", 1.0, np.int64(1), Opaque(), [True]]
_NOT_FLOATS = [None, "1.0", b"1", True, np.bool_(False), [1.0], Opaque(), 1j, {"a": 1.0},
               np.ones(2, np.float32)]
_NOT_TRIPLES = [None, "128", 128, 128.0, [128, 128], [128, 128, 8, 1], [128, "128", 8],
                [128, 128.0, 8], [True, 128, 8], {128, 8, 16}, {"a": 1}, Opaque(),
                [128, 2**40, 8], (None, 1, 1)]
_NOT_TENSORS = [None, "A", 5, 1.5, [[1.0, 2.0]], Opaque(), {"data": 1}, b"x"]
_NOT_INSTANCES = [None, "x", 5, 1.5, Opaque(), [1], cutlass.float16]

VALUES_OF_WRONG_TYPE = {
    "int": _NOT_INTS + _OUT_OF_INT32,
    "dtype": _NOT_ENUMS + [cutlass.RowMajor, cutlass.OpClass.Simt],
    "layout": _NOT_ENUMS + [cutlass.float16],
    "opclass": _NOT_ENUMS + [cutlass.float16],
    "mathop": _NOT_ENUMS + [cutlass.float16],
    "kernel_schedule": _NOT_ENUMS + [ES.Auto],
    "epilogue_schedule": _NOT_ENUMS + [KS.Auto],
    "tile_scheduler": _NOT_ENUMS + [KS.Auto],
    "swizzle": _NOT_ENUMS + [cutlass.float16],
    "gemm_mode": _NOT_ENUMS + [cutlass.float16],
    "triple": _NOT_TRIPLES,
    "triple?": [t for t in _NOT_TRIPLES if t is not None],
    "bool": _NOT_BOOLS,
    "float": _NOT_FLOATS + [10**400],
    "floats": [None, 1.0, "ab", [1.0, "x"], [None], Opaque(), [1j]],
    "tensor": _NOT_TENSORS,
    "tensor?": [t for t in _NOT_TENSORS if t is not None],
    "scale": [True, "1.0", Opaque(), [1.0], 1j, b"1"],
    "instance": _NOT_INSTANCES,
    "instance?": [i for i in _NOT_INSTANCES if i is not None],
    "path": [None, 5, 1.5, b"/tmp/x", Opaque(), ["/tmp/x"]],
    "ccs": [None, 90, "90", {"90"}, [90.0], {True}, Opaque(), {2**40}],
    "bias": [5, 1.5, True, Opaque(), [1], b"row"],
    "activation": [None, "relu", 5, Opaque(), cutlass.float16, print],
    "accumulator": [None, "float32", 5, Opaque(), cutlass.RowMajor, True],
    "api_activation": [5, 1.5, True, Opaque(), cutlass.float16, ["relu"]],
    "dtype?": [d for d in _NOT_ENUMS if d is not None] + [cutlass.RowMajor],
    "operations": [None, 5, "op", Opaque(), [None], ["not an operation"], [5]],
    "filter": [5, "x", Opaque(), [1]],
    "cc?": [c for c in _NOT_INTS if c is not None] + _OUT_OF_INT32,
    "output_op": [5, "x", Opaque(), (1.0, 0.0), [Opaque()]],
    "epilogue": ["x", 5, {"alpha": 2.0}, Opaque()],
    "bytes": _NOT_INTS + [-1, 2**64, 2**70],
}


def simt_math():
    return MathInstruction([1, 1, 1], F32, F32, F32, SIMT, MathOperation.multiply_add)


def f16_math():
    return MathInstruction([16, 8, 16], F16, F16, F32, TC, MathOperation.multiply_add)


def wgmma_math():
    return MathInstruction([64, 128, 16], BF16, BF16, F32, TC, MathOperation.multiply_add)


def simt_tile():
    return TileDescription([128, 128, 8], 4, [2, 4, 1], simt_math())


def sm90_tile():
    return TileDescription([128, 128, 64], 0, None, wgmma_math())


def simt_op():
    t = TensorDescription(F32, cutlass.RowMajor, 1)
    return GemmOperationUniversal(80, simt_tile(), t, t, t, LinearCombination(F32, 1, F32, F32))


def host_arrays(m=16, n=16, k=16):
    return dict(A=np.ones((m, k), np.float32), B=np.ones((k, n), np.float32),
                C=np.ones((m, n), np.float32), D=np.zeros((m, n), np.float32))


@dataclass
class Surface:
    """One public function: ``call(**kwargs)``; ``base()`` gives valid keyword arguments (fresh
    objects each time); ``params`` maps each parameter to its kind. Messages name a parameter as
    ``shown`` says (default: its own name; tilecraft.api names the epilogue's fields
    "epilogue.alpha", ...). ``extra_names`` are further words a message about a bad combination
    may name the culprit with (fields of the described object)."""

    name: str
    call: Callable
    base: Callable[[], Dict]
    params: Dict[str, str]
    extra_names: tuple = ()
    shown: Dict[str, str] = field(default_factory=dict)
    makes_description: bool = False  # the result has procedural_name() (for a
    # LinearCombination it is "", the others say what they are)
    touches_device: bool = False  # valid arguments act on the GPU: test wrong types only

    def message_name(self, param):
        return self.shown.get(param, param)

    def names(self):
        return tuple(self.message_name(p) for p in self.params) + tuple(self.extra_names)


def _epilogue_type(alpha=1.0, beta=0.0, activation_args=()):
    op = simt_op()
    if isinstance(activation_args, (list, tuple)):
        return op.epilogue_type(alpha, beta, *activation_args)
    return op._op.epilogue_type(alpha, beta, activation_args)


def _set_params(alpha=1.0, beta=0.0, activation_args=()):
    params = simt_op().epilogue_type(1.0, 0.0)
    params.alpha = alpha
    params.beta = beta
    params.activation_args = activation_args
    return params


def _api_gemm_arguments(A, B, out, accumulator_type, **epilogue):
    e = cutlass_api.arguments.EpilogueArguments(**epilogue)
    return cutlass_api.arguments.GemmArguments(A=A, B=B, out=out,
                                               accumulator_type=accumulator_type, epilogue=e)


def _api_gemm_arguments_epilogue(epilogue):
    return cutlass_api.arguments.GemmArguments(
        A=np.ones((4, 2), np.float16), B=np.ones((2, 4), np.float16),
        out=np.ones((4, 4), np.float16), accumulator_type=F32, epilogue=epilogue)


_KERNEL = []  # one Kernel, listed once (listing takes a tenth of a second)


def _kernel():
    if not _KERNEL:
        _KERNEL.append(cutlass_api.get_kernels(cc=90)[0])
    return _KERNEL[0]


def release():
    """Drops what the surfaces keep between calls: the session's live-object check
    (TILECRAFT_TEST_CHECK_LIVE) counts every tilecraft object still referenced at its end."""
    _KERNEL.clear()


def _kernel_method(method):
    return lambda **kw: getattr(_kernel(), method)(**kw)


_FUSIONS = dict(bias="bias", element_bias="dtype?", aux="bool", element_aux="dtype?",
                scales="bool")

SURFACES = [
    Surface("MathInstruction", MathInstruction,
            lambda: dict(instruction_shape=[16, 8, 16], element_a=F16, element_b=F16,
                         element_accumulator=F32, opcode_class=TC,
                         math_operation=MathOperation.multiply_add),
            dict(instruction_shape="triple", element_a="dtype", element_b="dtype",
                 element_accumulator="dtype", opcode_class="opclass", math_operation="mathop"),
            makes_description=False),
    Surface("TileDescription (SM80)", TileDescription,
            lambda: dict(threadblock_shape=[128, 128, 32], stages=3, warp_count=[2, 2, 1],
                         math_instruction=f16_math()),
            dict(threadblock_shape="triple", stages="int", warp_count="triple?",
                 math_instruction="instance", cluster_shape="triple?",
                 kernel_schedule="kernel_schedule", epilogue_schedule="epilogue_schedule",
                 tile_scheduler="tile_scheduler"),
            extra_names=("instruction shape", "warp tile", "MathInstruction"),
            makes_description=True),
    Surface("TileDescription (SM90)", TileDescription,
            lambda: dict(threadblock_shape=[128, 128, 64], stages=0, warp_count=None,
                         math_instruction=wgmma_math(), cluster_shape=[1, 1, 1],
                         kernel_schedule=KS.Auto, epilogue_schedule=ES.Auto,
                         tile_scheduler=TS.Persistent),
            dict(threadblock_shape="triple", stages="int", warp_count="triple?",
                 math_instruction="instance", cluster_shape="triple?",
                 kernel_schedule="kernel_schedule", epilogue_schedule="epilogue_schedule",
                 tile_scheduler="tile_scheduler"),
            extra_names=("instruction shape", "MathInstruction", "instruction's"),
            makes_description=True),
    Surface("TensorDescription", TensorDescription,
            lambda: dict(element=F16, layout=cutlass.RowMajor, alignment=8),
            dict(element="dtype", layout="layout", alignment="int")),
    Surface("LinearCombination", LinearCombination,
            lambda: dict(element_C=F16, alignment_c=8, element_acc=F32,
                         element_epilogue_compute=F32),
            dict(element_C="dtype", alignment_c="int", element_acc="dtype",
                 element_epilogue_compute="dtype", **_FUSIONS),
            extra_names=("elements_per_access", "element_output", "element_epilogue",
                         "element_accumulator"),
            makes_description=True),
    Surface("LinearCombinationClamp", LinearCombinationClamp,
            lambda: dict(element_C=S8, alignment_c=16, element_acc=S32,
                         element_epilogue_compute=F32),
            dict(element_C="dtype", alignment_c="int", element_acc="dtype",
                 element_epilogue_compute="dtype"),
            extra_names=("elements_per_access", "element_output", "element_epilogue",
                         "element_accumulator"),
            makes_description=True),
    Surface("FastLinearCombinationClamp", FastLinearCombinationClamp,
            lambda: dict(element_C=S8, alignment_c=16),
            dict(element_C="dtype", alignment_c="int"),
            extra_names=("elements_per_access", "element_output"), makes_description=True),
    Surface("LinearCombinationGeneric", LinearCombinationGeneric,
            lambda: dict(activation=cutlass.relu(F32), element_C=F16, alignment_c=8,
                         element_acc=F32, element_epilogue_compute=F32),
            dict(activation="activation", element_C="dtype", alignment_c="int",
                 element_acc="dtype", element_epilogue_compute="dtype", **_FUSIONS),
            extra_names=("elements_per_access", "element_output", "element_epilogue",
                         "element_accumulator"),
            makes_description=True),
    Surface("relu", cutlass.relu, lambda: dict(element_epilogue_compute=F32),
            dict(element_epilogue_compute="dtype")),
    Surface("GemmOperationUniversal", GemmOperationUniversal,
            lambda: dict(arch=80, tile_description=simt_tile(),
                         A=TensorDescription(F32, cutlass.RowMajor, 1),
                         B=TensorDescription(F32, cutlass.RowMajor, 1),
                         C=TensorDescription(F32, cutlass.RowMajor, 1),
                         epilogue_functor=LinearCombination(F32, 1, F32, F32),
                         swizzling_functor=cutlass.IdentitySwizzle1, visitor=False),
            dict(arch="int", tile_description="instance", A="instance", B="instance",
                 C="instance", epilogue_functor="instance", swizzling_functor="swizzle",
                 visitor="bool"),
            extra_names=("layouts", "A/B"), makes_description=True),
    Surface("epilogue_type", _epilogue_type,
            lambda: dict(alpha=1.0, beta=0.0, activation_args=()),
            dict(alpha="float", beta="float", activation_args="floats"),
            extra_names=("output_op",)),
    Surface("EpilogueParams fields", _set_params,
            lambda: dict(alpha=1.0, beta=0.0, activation_args=[]),
            dict(alpha="float", beta="float", activation_args="floats")),
    Surface("GemmArguments", GemmArguments,
            lambda: dict(operation=simt_op(), problem_size=cutlass.gemm.GemmCoord(16, 16, 16),
                         output_op=None, gemm_mode=cutlass.gemm.Mode.Gemm, split_k_slices=1,
                         batch=1, deterministic=True, launch_with_pdl=True, **host_arrays()),
            dict(operation="instance", problem_size="instance", A="tensor", B="tensor",
                 C="tensor?", D="tensor", output_op="output_op", gemm_mode="gemm_mode",
                 split_k_slices="int", batch="int", bias="tensor?", aux="tensor?",
                 scale_a="scale", scale_b="scale", scale_c="scale", scale_d="scale",
                 deterministic="bool", launch_with_pdl="bool")),
    Surface("GemmCoord", cutlass.gemm.GemmCoord, lambda: dict(m=1, n=2, k=3),
            dict(m="int", n="int", k="int")),
    Surface("MatrixCoord", cutlass.MatrixCoord, lambda: dict(row=1, column=2),
            dict(row="int", column="int")),
    Surface("Tensor4DCoord", cutlass.Tensor4DCoord, lambda: dict(n=1, h=2, w=3, c=4),
            dict(n="int", h="int", w="int", c="int")),
    Surface("get_memory_pool", cutlass.get_memory_pool,
            lambda: dict(init_pool_size=0, max_pool_size=0),
            dict(init_pool_size="bytes", max_pool_size="bytes"), touches_device=True),
    Surface("compiler.add_module", cutlass.compiler.add_module,
            lambda: dict(operations=[]), dict(operations="operations"), touches_device=True),
    # Arguments-first (tilecraft.api). Host arrays reach the device check only after every
    # argument's type has been checked.
    Surface("api.arguments.GemmArguments", _api_gemm_arguments,
            lambda: dict(A=np.ones((4, 2), np.float16), B=np.ones((2, 4), np.float16),
                         out=np.ones((4, 4), np.float16), accumulator_type=F32),
            dict(A="tensor", B="tensor", out="tensor", accumulator_type="accumulator",
                 alpha="float", beta="float", C="tensor?", activation="api_activation",
                 activation_args="floats", bias="tensor?", bias_per_row="bool",
                 scale_a="scale", scale_b="scale"),
            shown={f: "epilogue." + f for f in ("alpha", "beta", "C", "activation",
                                                "activation_args", "bias", "bias_per_row",
                                                "scale_a", "scale_b")}),
    Surface("api.arguments.GemmArguments(epilogue=)", _api_gemm_arguments_epilogue,
            lambda: dict(epilogue=cutlass_api.arguments.EpilogueArguments()),
            dict(epilogue="epilogue"),
            # host arrays: a valid epilogue reaches the tensors' device check
            extra_names=("A", "B", "out", "epilogue.alpha", "epilogue.beta",
                         "epilogue.activation")),
    Surface("api.get_kernels", cutlass_api.get_kernels,
            lambda: dict(args=None, metadata_filter=None, cc=70),  # no kernels: quick
            dict(args="instance?", metadata_filter="filter", cc="cc?")),
    Surface("api.utils.is_device_cc_supported", cutlass_api.utils.is_device_cc_supported,
            lambda: dict(ccs={90}), dict(ccs="ccs")),
    Surface("api.CompiledArtifact.load", cutlass_api.CompiledArtifact.load,
            lambda: dict(path=os.path.join(os.path.dirname(__file__), "no-such-artifact.tca")),
            dict(path="path"), extra_names=("artifact",)),  # "artifact: <path>: ..."
    Surface("api.Kernel.supports", _kernel_method("supports"), lambda: dict(args=None),
            dict(args="instance")),
    Surface("api.Kernel.get_workspace_size", _kernel_method("get_workspace_size"),
            lambda: dict(args=None), dict(args="instance")),
]
