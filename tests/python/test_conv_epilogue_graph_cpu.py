"""Custom epilogues (epilogue graphs) on convolutions, on the CPU: which convolutions take one
(the persistent SM90 kernels) and what the others say; Conv2dArguments' checks of the graph's
operands, which see the implicit GEMM's (M, N) output (M output positions, N output channels),
all before any CUDA work. Numpy host arrays throughout: without a GPU, good arguments end at
"no usable CUDA device". The GPU suite (tests/python/gpu_conv/test_conv_epilogue_graph.py) runs
them against float64.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import tilecraft as cutlass
from tilecraft import (Conv2dArguments, Conv2dOperation, LinearCombination, MathInstruction,
                       MathOperation, TensorDescription, TileDescription)
from tilecraft.epilogue import trace

pytestmark = pytest.mark.usefixtures("no_compiler")

F16, F32 = cutlass.float16, cutlass.float32
KS, TS = cutlass.KernelScheduleType, cutlass.TileSchedulerType
Op, Stride = cutlass.conv.Operator, cutlass.conv.StrideSupport
NHWC = cutlass.TensorNHWC
Unsupported = cutlass.UnsupportedError
# fprop: x (2, 9, 9, 64), w (64, 3, 3, 64), y (2, 9, 9, 64): M = 162 positions, N = 64 channels.
N_, H, W, C, K = 2, 9, 9, 64, 64
M = N_ * H * W


def gelu(x):  # a name the tracer reads; never called here
    return x


def conv_epi(accum, alpha, bias, residual):
    z = alpha * accum + bias
    D = gelu(z) + residual
    return D, D.sum(dim=0), z


class Example:
    """What the tracer reads of an example tensor: its shape and dtype (torch's dtype name)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype


def ex(shape, dtype="float16"):
    return Example(shape, dtype)


def conv_graph():
    return trace(conv_epi, accum=ex((M, K), "float32"), alpha=1.0, bias=ex((K,), "float32"),
                 residual=ex((M, K)), D=ex((M, K)), out1=ex((K,), "float32"), z=ex((M, K)))


def tile(schedule=KS.TmaWarpSpecializedCooperative, scheduler=TS.Persistent, shape=(128, 64, 64)):
    math = MathInstruction([64, shape[1], 16], F16, F16, F32, cutlass.OpClass.TensorOp,
                           MathOperation.multiply_add)
    return TileDescription(list(shape), 0, None, math, kernel_schedule=schedule,
                           tile_scheduler=scheduler)


def graph_conv(kind=Op.fprop, arch=90, tile_description=None, graph=None, out=F16):
    nhwc, y = TensorDescription(F16, NHWC, 8), TensorDescription(out, NHWC, 128 // (
        16 if out == F16 else 32))
    return Conv2dOperation(kind, cutlass.conv.IteratorAlgorithm.optimized, arch,
                           tile_description or tile(), nhwc, nhwc, y,
                           Stride.Unity if kind == Op.dgrad else Stride.Strided,
                           graph if graph is not None else conv_graph(), cutlass.IdentitySwizzle1)


def problem(split_k_slices=1):
    return cutlass.conv.Conv2dProblemSize(
        cutlass.Tensor4DCoord(N_, H, W, C), cutlass.Tensor4DCoord(K, 3, 3, C),
        cutlass.Tensor4DCoord(1, 1, 1, 1), cutlass.MatrixCoord(1, 1), cutlass.MatrixCoord(1, 1),
        cutlass.conv.Mode.cross_correlation, split_k_slices, 1)


def operands(**overrides):
    values = dict(alpha=1.0, bias=np.ones(K, np.float32),
                  residual=np.ones((N_, H, W, K), np.float16),
                  out1=np.zeros(K, np.float32), z=np.zeros((N_, H, W, K), np.float16))
    values.update(overrides)
    return {k: v for k, v in values.items() if v is not None}


def arguments(op, values, **kwargs):
    x = np.ones((N_, H, W, C), np.float16)
    w = np.ones((K, 3, 3, C), np.float16)
    y = np.zeros((N_, H, W, K), np.float16)
    return Conv2dArguments(op, problem(kwargs.pop("split_k_slices", 1)), x, w,
                           kwargs.pop("C", None), y, op.epilogue_type(**values), **kwargs)


def refused(op, error, match, values, **kwargs):
    with pytest.raises(error, match=match):
        arguments(op, values, **kwargs)
    assert not op.is_compiled()


# ---- description time ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [Op.fprop, Op.dgrad, Op.wgrad])
@pytest.mark.parametrize("schedule,shape", [(KS.TmaWarpSpecializedCooperative, (128, 64, 64)),
                                            (KS.TmaWarpSpecializedPingpong, (64, 64, 64))])
def test_persistent_sm90_convolutions_take_a_graph(kind, schedule, shape, nothing_compiles):
    op = graph_conv(kind, tile_description=tile(schedule, shape=shape))
    assert "_evt" in op.procedural_name()
    assert op._graph == conv_graph()
    assert conv_graph().key in op.procedural_name()
    assert not op.is_compiled()


def test_a_stream_k_wgrad_takes_a_graph(nothing_compiles):
    op = graph_conv(Op.wgrad, tile_description=tile(scheduler=TS.StreamK))
    assert "_evt" in op.procedural_name() and not op.is_compiled()


def test_other_convolutions_refuse_a_graph_and_say_which_take_one(nothing_compiles):
    with pytest.raises(Unsupported, match=r"^epilogue graph: convolutions take custom epilogues on "
                                          r"persistent SM90 kernels .*got arch=90 with "
                                          r"kernel_schedule TmaWarpSpecialized$"):
        graph_conv(tile_description=tile(KS.TmaWarpSpecialized))
    math80 = MathInstruction([16, 8, 16], F16, F16, F32, cutlass.OpClass.TensorOp,
                             MathOperation.multiply_add)
    with pytest.raises(Unsupported, match=r"^epilogue graph: .* got arch=80"):
        graph_conv(arch=80, tile_description=TileDescription([128, 128, 32], 3, [2, 2, 1], math80))


def test_the_graph_d_must_be_the_convolutions_output_type(nothing_compiles):
    with pytest.raises(ValueError, match=r"^epilogue graph: its D output 'D' is float16, but C "
                                         r"\(the kernel's D\) is float32"):
        graph_conv(out=F32)


def test_names_differ_from_the_plain_convolution(nothing_compiles):
    plain = Conv2dOperation(Op.fprop, cutlass.conv.IteratorAlgorithm.optimized, 90, tile(),
                            TensorDescription(F16, NHWC, 8), TensorDescription(F16, NHWC, 8),
                            TensorDescription(F16, NHWC, 8), Stride.Strided,
                            LinearCombination(F16, 8, F32, F32), cutlass.IdentitySwizzle1)
    op = graph_conv()
    assert op.procedural_name() != plain.procedural_name()
    assert op.procedural_name().startswith(plain.procedural_name())


# ---- argument time ------------------------------------------------------------------------------

def test_good_operands_reach_the_device_check(gpu_reason, nothing_compiles):
    """Tensors shaped like y given as y is: NHWC, torch's channels-last (N, C, H, W) view, flat,
    or the (M, N) matrix; without a GPU the first error is the device's."""
    if gpu_reason is None:
        pytest.skip("a GPU is present")
    op = graph_conv()
    nchw_view = np.ones((N_, H, W, K), np.float16).transpose(0, 3, 1, 2)
    for residual in (np.ones((N_, H, W, K), np.float16), nchw_view,
                     np.ones(M * K, np.float16), np.ones((M, K), np.float16)):
        refused(op, Unsupported, "^no usable CUDA device", operands(residual=residual))


def test_operands_are_checked_against_the_implicit_gemm_output(nothing_compiles):
    op = graph_conv()
    refused(op, ValueError, r"^epilogue.residual: expected 10368 elements \(2, 9, 9, 64\) in "
                            r"TensorNHWC, got float16\[2, 9, 9, 32\]",
            operands(residual=np.ones((N_, H, W, 32), np.float16)))
    refused(op, ValueError, r"^epilogue.residual: expected float16 .*got float32",
            operands(residual=np.ones((N_, H, W, K), np.float32)))
    refused(op, ValueError, rf"^epilogue.residual: expected shape \({M}, {K}\), got float16\[{K}, "
                            rf"{M}\]", operands(residual=np.ones((K, M), np.float16)))
    refused(op, ValueError, r"^epilogue.bias: expected a contiguous vector of N=64 elements, got "
                            r"float32\[162\]", operands(bias=np.ones(M, np.float32)))
    refused(op, ValueError, r"^epilogue.out1: expected a contiguous vector of N=64 elements",
            operands(out1=np.zeros(M, np.float32)))
    refused(op, ValueError, r"^epilogue.z: the epilogue graph needs an output shaped like D of "
                            r"float16; none was given", operands(z=None))
    refused(op, ValueError, r"^epilogue.alpha: the epilogue graph reads this scalar; none was "
                            r"given", operands(alpha=None))
    refused(op, ValueError, r"^epilogue.gamma: the epilogue graph has no scalar of that name",
            operands(gamma=2.0))


def test_operand_extents_past_64_bits_are_refused_before_they_are_read(nothing_compiles):
    from fakecuda import FakeTensor

    op = graph_conv()
    huge = FakeTensor((2 ** 40, 2 ** 40, 1, 1), "float16", strides=(1, 1, 1, 1))
    refused(op, ValueError, r"^epilogue.residual: shape \(1099511627776, 1099511627776, 1, "
                            r"1\) holds more than 2\^63 - 1 elements", operands(residual=huge))


def test_operand_strides_devices_and_alignment_are_checked(nothing_compiles):
    from fakecuda import FakeTensor

    op = graph_conv()
    strided = np.ones((N_, H, W, 2 * K), np.float16)[..., ::2]
    refused(op, ValueError, r"^epilogue.residual: expected a channels-last tensor: shape "
                            r"\(2, 9, 9, 64\) packed", operands(residual=strided))
    refused(op, ValueError, r"^epilogue.bias: the vector \(and each batch's\) must start "
                            r"16-byte aligned", operands(bias=np.ones(K + 1, np.float32)[1:]))

    def fake(shape, dtype="float16", device_id=0):
        return FakeTensor(shape, dtype, device_id=device_id)

    visitor = op.epilogue_type(alpha=1.0, bias=fake((K,), "float32"),
                               residual=fake((N_, H, W, K), device_id=1),
                               out1=fake((K,), "float32"), z=fake((N_, H, W, K)))
    with pytest.raises(ValueError, match=r"^epilogue.residual: expected a tensor on cuda:0"):
        Conv2dArguments(op, problem(), fake((N_, H, W, C)), fake((K, 3, 3, C)), None,
                        fake((N_, H, W, K)), visitor)
    assert not op.is_compiled()


def test_c_bias_and_parallel_split_k_are_refused_with_a_graph(nothing_compiles):
    op = graph_conv()
    y = np.ones((N_, H, W, K), np.float16)
    refused(op, ValueError, r"^C: the operation's epilogue graph reads its own inputs", operands(),
            C=y)
    refused(op, ValueError, r"^bias: the operation's epilogue graph reads its own inputs",
            operands(), bias=np.ones(K, np.float16))
    refused(op, Unsupported, r"^split_k_mode Parallel: a custom epilogue runs on persistent SM90 "
                             r"kernels", operands(), split_k_mode=cutlass.conv.SplitKMode.Parallel)


def test_a_plain_convolution_takes_no_epilogue_operands(nothing_compiles):
    plain = Conv2dOperation(Op.fprop, cutlass.conv.IteratorAlgorithm.optimized, 90, tile(),
                            TensorDescription(F16, NHWC, 8), TensorDescription(F16, NHWC, 8),
                            TensorDescription(F16, NHWC, 8), Stride.Strided,
                            LinearCombination(F16, 8, F32, F32), cutlass.IdentitySwizzle1)
    x = np.ones((N_, H, W, C), np.float16)
    w = np.ones((K, 3, 3, C), np.float16)
    y = np.zeros((N_, H, W, K), np.float16)
    visitor = cutlass.operation.EpilogueVisitorArguments(conv_graph(), operands())
    with pytest.raises(ValueError, match=r"^epilogue.\w+: the operation has no epilogue graph"):
        Conv2dArguments(plain, problem(), x, w, None, y, visitor)
    assert not plain.is_compiled()


def test_d_through_output_op_and_twice(nothing_compiles, gpu_reason):
    op = graph_conv()
    x = np.ones((N_, H, W, C), np.float16)
    w = np.ones((K, 3, 3, C), np.float16)
    y = np.zeros((N_, H, W, K), np.float16)
    with pytest.raises(ValueError, match=r"^output_op.D: the epilogue's D output is "
                                         r"Conv2dArguments' D; got two different tensors"):
        Conv2dArguments(op, problem(), x, w, None, y,
                        op.epilogue_type(**operands(), D=y.copy()))
    if gpu_reason is not None:
        with pytest.raises(Unsupported, match="^no usable CUDA device"):
            Conv2dArguments(operation=op, problem_size=problem(), A=x, B=w,
                            output_op=op.epilogue_type(**operands(), D=y))
    assert not op.is_compiled()


def test_the_gpu_suites_graph_rows_describe(nothing_compiles):
    """The rows tests/python/gpu_conv/test_conv_epilogue_graph.py runs trace and describe."""
    tests = Path(__file__).resolve().parent
    for suite in ("gpu_conv", "gpu", "gpu_evt"):
        if str(tests / suite) not in sys.path:
            sys.path.insert(0, str(tests / suite))
    from conv_case import build_operation
    from conv_kernels import GRAPH_KERNELS, KERNELS

    assert {KERNELS[k].kind for k in GRAPH_KERNELS} == {"fprop", "dgrad", "wgrad"}
    for key in GRAPH_KERNELS:
        op = build_operation(KERNELS[key])
        assert "_evt" in op.procedural_name() and not op.is_compiled(), key
