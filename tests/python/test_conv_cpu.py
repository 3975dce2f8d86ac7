"""Convolution without a GPU: Conv2dOperation's descriptions (the valid ones, and each
description-time error), conv.Conv2dProblemSize's extents and refusals, and Conv2dArguments'
checks of numpy tensors, which precede any CUDA work. Every bad input raises before anything
compiles or launches, naming the argument, what was expected and what was given.

TILECRAFT_NVCC points at a path that does not exist for this module (a compile would fail with
another error), and ``is_compiled()`` is checked after each refusal. The numbers are checked by
tests/python/gpu_conv.
"""

import numpy as np
import pytest

import tilecraft as cutlass
from tilecraft import *  # noqa: F401,F403

F16, BF16, F32, F64, S8, S32, TF32 = (cutlass.float16, cutlass.bfloat16, cutlass.float32,
                                      cutlass.float64, cutlass.int8, cutlass.int32,
                                      cutlass.tfloat32)
TC, SIMT = cutlass.OpClass.TensorOp, cutlass.OpClass.Simt
MA = MathOperation.multiply_add
NHWC = cutlass.TensorNHWC
Op, Alg, Stride = cutlass.conv.Operator, cutlass.conv.IteratorAlgorithm, cutlass.conv.StrideSupport
Unsupported = cutlass.UnsupportedError

pytestmark = pytest.mark.usefixtures("no_compiler")


def f16_parts(alignment=8):
    math = MathInstruction([16, 8, 16], F16, F16, F32, TC, MA)
    tile = TileDescription([128, 128, 32], 3, [2, 2, 1], math)
    return (tile, TensorDescription(F16, NHWC, alignment), TensorDescription(F16, NHWC, alignment),
            TensorDescription(F16, NHWC, alignment),
            LinearCombination(F16, alignment, F32, F32))


def simt_parts():
    math = MathInstruction([1, 1, 1], F32, F32, F32, SIMT, MA)
    tile = TileDescription([128, 128, 8], 4, [4, 2, 1], math)
    return (tile, TensorDescription(F32, NHWC, 1), TensorDescription(F32, NHWC, 1),
            TensorDescription(F32, NHWC, 1), LinearCombination(F32, 1, F32, F32))


def depthwise_parts(element=F16, stages=2, align_a=1, align_b=1, op_class=SIMT):
    math = MathInstruction([1, 1, 1], element, element, element, op_class, MA)
    tile = TileDescription([64, 64, 8], stages, [2, 2, 1], math)
    return (tile, TensorDescription(element, NHWC, align_a), TensorDescription(element, NHWC, align_b),
            TensorDescription(element, NHWC, 1), LinearCombination(element, 1, element, element))


def conv(kind=None, algorithm=None, parts=None, stride=None, arch=80, swizzle=None, **kwargs):
    tile, A, B, C, epilogue = parts or f16_parts()
    return Conv2dOperation(kind or Op.fprop, algorithm or Alg.optimized, arch, tile, A, B, C,
                           stride or Stride.Strided, epilogue,
                           swizzle or cutlass.IdentitySwizzle1, **kwargs)


def problem(n=2, h=9, w=11, c=40, k=72, r=3, s=3, pad=(1, 1, 1, 1), stride=(1, 1),
            dilation=(1, 1), mode=None, split=1, groups=1):
    return cutlass.conv.Conv2dProblemSize(
        cutlass.Tensor4DCoord(n, h, w, c), cutlass.Tensor4DCoord(k, r, s, c // groups),
        cutlass.Tensor4DCoord(*pad), cutlass.MatrixCoord(*stride), cutlass.MatrixCoord(*dilation),
        mode or cutlass.conv.Mode.cross_correlation, split, groups)


# ---- descriptions -----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
@pytest.mark.parametrize("algorithm", ["analytic", "optimized"])
@pytest.mark.parametrize("stride", ["Strided", "Unity"])
def test_every_kind_algorithm_and_stride_support_is_described(kind, algorithm, stride):
    op = conv(getattr(Op, kind), getattr(Alg, algorithm), stride=getattr(Stride, stride))
    name = op.procedural_name()
    assert kind in name and algorithm in name, name
    assert op.conv_kind == getattr(Op, kind)
    assert op.iterator_algorithm == getattr(Alg, algorithm)
    assert op.stride_support == getattr(Stride, stride)
    assert not op.is_compiled()


def test_names_differ_by_every_conv_field():
    names = {conv(getattr(Op, k), getattr(Alg, a), stride=getattr(Stride, s)).procedural_name()
             for k in ("fprop", "dgrad", "wgrad") for a in ("analytic", "optimized")
             for s in ("Strided", "Unity")}
    assert len(names) == 12, names


@pytest.mark.parametrize("algorithm", ["fixed_channels", "few_channels"])
def test_few_channel_iterators_are_fprop_tensor_op_only(algorithm):
    assert conv(Op.fprop, getattr(Alg, algorithm), f16_parts(4))
    with pytest.raises(Unsupported, match=f"iterator_algorithm {algorithm} is for fprop, got "
                                          "conv_kind dgrad"):
        conv(Op.dgrad, getattr(Alg, algorithm), f16_parts(4))
    with pytest.raises(Unsupported, match="needs the TensorOp instruction"):
        conv(Op.fprop, getattr(Alg, algorithm), simt_parts())


def test_the_two_stage_strided_dgrad_is_refused():
    tile, A, B, C, epilogue = f16_parts(1)
    two_stage = TileDescription([128, 128, 32], 2, [2, 2, 1], tile.math_instruction)
    with pytest.raises(Unsupported, match="^stages: CUTLASS's two-stage strided dgrad .* got "
                                          "stages=2 with stride_support Strided"):
        conv(Op.dgrad, Alg.analytic, (two_stage, A, B, C, epilogue))
    assert conv(Op.dgrad, Alg.analytic, (two_stage, A, B, C, epilogue), Stride.Unity)


def test_gemm_layouts_are_refused():
    tile, A, B, C, epilogue = f16_parts()
    row = TensorDescription(F16, cutlass.RowMajor, 8)
    with pytest.raises(Unsupported,
                       match="A: a convolution operand is TensorNHWC, TensorNDHWC .* got RowMajor"):
        Conv2dOperation(Op.fprop, Alg.optimized, 80, tile, row, B, C, Stride.Strided, epilogue,
                        cutlass.IdentitySwizzle1)


Group = cutlass.conv.GroupMode


@pytest.mark.parametrize("mode,algorithm,parts", [
    ("SingleGroup", "optimized", None), ("SingleGroup", "analytic", None),
    ("MultipleGroup", "analytic", None), ("Depthwise", "analytic", "depthwise_f16"),
    ("Depthwise", "analytic", "depthwise_f32")])
def test_group_modes_are_described_and_named(mode, algorithm, parts):
    parts = {None: None, "depthwise_f16": depthwise_parts(),
             "depthwise_f32": depthwise_parts(F32)}[parts]
    op = conv(Op.fprop, getattr(Alg, algorithm), parts=parts, group_mode=getattr(Group, mode))
    assert op.group_mode == getattr(Group, mode)
    snake = {"SingleGroup": "single_group", "MultipleGroup": "multiple_group",
             "Depthwise": "depthwise"}[mode]
    assert f"fprop_{algorithm}_{snake}_" in op.procedural_name()
    assert op.procedural_name() != conv(Op.fprop, getattr(Alg, algorithm),
                                        parts=parts).procedural_name()
    assert conv().group_mode == Group.NoneGroup
    assert not op.is_compiled()


@pytest.mark.parametrize("kwargs,match", [
    ({"kind": "dgrad", "mode": "SingleGroup"}, "group_mode single_group is for fprop .* got "
                                               "conv_kind dgrad"),
    ({"mode": "MultipleGroup"}, "optimized grouped iterators compute one group per CTA"),
    ({"mode": "SingleGroup", "algorithm": "few_channels"}, "analytic or optimized, got "
                                                           "few_channels"),
    ({"mode": "SingleGroup", "arch": 90}, "grouped convolutions are CUTLASS 2.x kernels; "
                                          "describe arch=80"),
    ({"mode": "SingleGroup", "parts": "simt"}, "kernels use tensor cores"),
    ({"mode": "Depthwise"}, "depthwise kernels run on CUDA cores"),
    ({"mode": "Depthwise", "parts": "depthwise", "algorithm": "optimized"},
     "depthwise takes iterator_algorithm analytic, got optimized"),
    ({"mode": "Depthwise", "parts": "depthwise3"}, "two-stage pipelines; describe stages=2, got 3"),
    ({"mode": "Depthwise", "parts": "depthwise_a4"}, "one element at a time; describe alignment 1 "
                                                     "for A and B, got 4 and 1"),
    ({"mode": "Depthwise", "parts": "depthwise_b2"}, "describe alignment 1 for A and B, got 1 "
                                                     "and 2"),
])
def test_group_mode_refusals_name_the_rule(kwargs, match):
    parts = {None: None, "simt": simt_parts(), "depthwise": depthwise_parts(),
             "depthwise3": depthwise_parts(stages=3), "depthwise_a4": depthwise_parts(align_a=4),
             "depthwise_b2": depthwise_parts(align_b=2)}[kwargs.get("parts")]
    arch = kwargs.get("arch", 80)
    if arch == 90:
        parts = sm90_parts()
    algorithm = getattr(Alg, kwargs.get("algorithm", "analytic" if "parts" in kwargs
                                        else "optimized"))
    with pytest.raises((ValueError, Unsupported), match=match):
        conv(getattr(Op, kwargs.get("kind", "fprop")), algorithm, parts=parts, arch=arch,
             group_mode=getattr(Group, kwargs["mode"]))


def test_grouped_arguments_take_the_grouped_filter_and_refuse_parallel_split_k():
    op = conv(Op.fprop, Alg.analytic, group_mode=Group.MultipleGroup)
    p = problem(c=64, k=64, groups=4)
    x, w, y = operands(p)
    assert w.shape == (64, 3, 3, 16)  # taken: the GPU suite runs it
    with pytest.raises(ValueError, match=r"B \(w\): expected 9216 elements \(64, 3, 3, 16\)"):
        Conv2dArguments(op, p, x, np.ones((64, 3, 3, 64), np.float16), None, y,
                        op.epilogue_type(1.0, 0.0))
    with pytest.raises(Unsupported, match="grouped convolutions do not split K"):
        cutlass._core.compile_split_k_parallel([op._op])


NDHWC = cutlass.TensorNDHWC


def conv3d_parts(element=F16, align=8, simt=False):
    if simt:
        tile, A, B, C, epilogue = simt_parts()
    else:
        tile, A, B, C, epilogue = f16_parts(align)
    return (tile, TensorDescription(A.element, NDHWC, A.alignment),
            TensorDescription(B.element, NDHWC, B.alignment),
            TensorDescription(C.element, NDHWC, C.alignment), epilogue)


def problem3d(n=2, d=5, h=7, w=6, c=32, k=48, t=3, r=3, s=3, pad=(1, 1, 1, 1, 1, 1),
              stride=(1, 1, 1), dilation=(1, 1, 1)):
    return cutlass.conv.Conv3dProblemSize((n, d, h, w, c), (k, t, r, s, c), pad, stride, dilation)


@pytest.mark.parametrize("kind,algorithm,stride", [
    ("fprop", "optimized", "Strided"), ("fprop", "analytic", "Unity"),
    ("dgrad", "optimized", "Unity"), ("dgrad", "analytic", "Strided"),
    ("wgrad", "optimized", "Strided"), ("wgrad", "analytic", "Strided")])
def test_conv3d_operations_are_described(kind, algorithm, stride):
    op = cutlass.Conv3dOperation(getattr(Op, kind), getattr(Alg, algorithm), 80,
                                 *conv3d_parts()[:4], getattr(Stride, stride), conv3d_parts()[4])
    assert "ndhwcndhwcndhwc" in op.procedural_name()
    assert repr(op).startswith("Conv3dOperation(")
    assert conv(getattr(Op, kind), getattr(Alg, algorithm), parts=conv3d_parts(),
                stride=getattr(Stride, stride)).procedural_name() == op.procedural_name()
    assert conv(getattr(Op, kind), getattr(Alg, algorithm), parts=conv3d_parts(simt=True),
                stride=getattr(Stride, stride))


@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
@pytest.mark.parametrize("schedule,tile", [("TmaWarpSpecialized", (128, 128, 64)),
                                           ("TmaWarpSpecializedCooperative", (128, 128, 64)),
                                           ("TmaWarpSpecializedPingpong", (64, 128, 64))])
def test_sm90_conv3d_operations_are_described(kind, schedule, tile):
    """SM90 3-D convolutions: CUTLASS's ConvUniversal and tilecraft's persistent forms over TMA
    im2col of 5-D tensors."""
    tile_desc, _, _, _, epilogue = sm90_parts(
        tile=tile, schedule=getattr(cutlass.KernelScheduleType, schedule))
    parts = (tile_desc, TensorDescription(F16, NDHWC, 8), TensorDescription(F16, NDHWC, 8),
             TensorDescription(F16, NDHWC, 8), epilogue)
    stride = Stride.Unity if kind == "dgrad" else Stride.Strided
    op = conv(getattr(Op, kind), parts=parts, stride=stride, arch=90)
    assert op.procedural_name().startswith(f"tilecraft_sm90_tensorop_{kind}_optimized")
    assert "ndhwcndhwcndhwc" in op.procedural_name()


@pytest.mark.parametrize("kwargs,match", [
    ({"arch": 90, "group": True}, "grouped convolutions are CUTLASS 2.x kernels; describe "
                                  "arch=80"),
    ({"kind": "dgrad", "stride": "Strided"}, "3-D dgrad is analytic with stride_support "
                                             "strided, or optimized with unity"),
    ({"kind": "dgrad", "algorithm": "analytic", "stride": "Unity"}, "3-D dgrad is analytic"),
    ({"kind": "wgrad", "stride": "Unity"}, "3-D wgrad takes stride_support strided"),
    ({"align": 4}, "loads 128 bits at a time on tensor cores; describe alignment 8, got 4"),
    ({"algorithm": "few_channels"}, "takes iterator_algorithm analytic or optimized"),
    ({"mixed": True}, "A, B and C are all TensorNHWC .2-D. or all TensorNDHWC .3-D."),
    ({"group": True}, "grouped convolutions take TensorNHWC operands, got TensorNDHWC"),
])
def test_conv3d_refusals_name_the_rule(kwargs, match):
    parts = conv3d_parts(align=kwargs.get("align", 8))
    if kwargs.get("arch") == 90:
        tile, A, B, C, epilogue = sm90_parts()
        parts = (tile, TensorDescription(F16, NDHWC, 8), TensorDescription(F16, NDHWC, 8),
                 TensorDescription(F16, NDHWC, 8), epilogue)
    if kwargs.get("mixed"):
        parts = parts[:3] + (TensorDescription(F16, NHWC, 8),) + parts[4:]
    extra = {"group_mode": cutlass.conv.GroupMode.SingleGroup} if kwargs.get("group") else {}
    kind = getattr(Op, kwargs.get("kind", "fprop"))
    stride = getattr(Stride, kwargs.get("stride", "Unity" if kind == Op.dgrad else "Strided"))
    with pytest.raises((ValueError, Unsupported), match=match):
        conv(kind, getattr(Alg, kwargs.get("algorithm", "optimized")), parts=parts,
             stride=stride, arch=kwargs.get("arch", 80), **extra)


def test_conv3d_problem_size_follows_torch_and_names_bad_extents():
    p = problem3d(d=9, pad=(1, 0, 1, 1, 0, 2), stride=(2, 1, 2), dilation=(1, 2, 1))
    assert (p.spatial_dims, p.D, p.T, p.Z, p.P, p.Q) == (3, 9, 3, 4, 5, 3)
    assert repr(p).startswith("Conv3dProblemSize(N=2 D=9 ")
    with pytest.raises(ValueError, match="filter_size: the dilated depth T=5 .* deeper than the "
                                         "padded input depth 4"):
        problem3d(d=2, t=5)
    with pytest.raises(ValueError, match="stride and dilation: expected >= 1 in depth"):
        problem3d(stride=(0, 1, 1))
    with pytest.raises(ValueError, match=r"padding: expected six ints \(front, back, top, "
                                         r"bottom, left, right\), got \(1, 1, 1, 1\)"):
        cutlass.conv.Conv3dProblemSize((2, 5, 7, 6, 32), (48, 3, 3, 3, 32), (1, 1, 1, 1),
                                       (1, 1, 1), (1, 1, 1))


def test_conv3d_operation_refuses_a_2d_problem_and_the_other_way_round():
    op3 = conv(Op.fprop, Alg.optimized, parts=conv3d_parts())
    p2, p3 = problem(c=32, k=48), problem3d()
    x, w, y = operands(p2)
    with pytest.raises(ValueError, match="a 3-D operation .TensorNDHWC. needs a "
                                         "conv.Conv3dProblemSize"):
        Conv2dArguments(op3, p2, x, w, None, y, op3.epilogue_type(1.0, 0.0))
    op2 = conv()
    x3 = np.ones((p3.N, p3.D, p3.H, p3.W, p3.C), np.float16)
    w3 = np.ones((p3.K, p3.T, p3.R, p3.S, p3.C), np.float16)
    y3 = np.zeros((p3.N, p3.Z, p3.P, p3.Q, p3.K), np.float16)
    with pytest.raises(ValueError, match="a 3-D problem .conv.Conv3dProblemSize. needs an "
                                         "operation of TensorNDHWC operands"):
        Conv2dArguments(op2, p3, x3, w3, None, y3, op2.epilogue_type(1.0, 0.0))
    with pytest.raises(ValueError, match=r"B \(w\): expected 41472 elements \(48, 3, 3, 3, 32\)"):
        Conv2dArguments(op3, p3, x3, w3[:, :2], None, y3, op3.epilogue_type(1.0, 0.0))


def test_conv_layouts_are_refused_by_gemm():
    tile, A, B, C, epilogue = f16_parts()
    with pytest.raises((ValueError, Unsupported), match="TensorNHWC"):
        GemmOperationUniversal(80, tile, A, B, C, epilogue, cutlass.IdentitySwizzle1)


def test_int8_is_fprop_only():
    math = MathInstruction([16, 8, 32], S8, S8, S32, TC, MathOperation.multiply_add_saturate)
    tile = TileDescription([128, 128, 64], 3, [2, 2, 1], math)
    parts = (tile, TensorDescription(S8, NHWC, 16), TensorDescription(S8, NHWC, 16),
             TensorDescription(S8, NHWC, 16), LinearCombinationClamp(S8, 16, S32, F32))
    assert conv(Op.fprop, parts=parts)
    with pytest.raises(Unsupported, match="int8 convolutions are fprop only, got wgrad"):
        conv(Op.wgrad, parts=parts)


def test_interleaved_layouts_go_together():
    math = MathInstruction([16, 8, 32], S8, S8, S32, TC, MathOperation.multiply_add_saturate)
    tile = TileDescription([128, 128, 64], 3, [2, 2, 1], math)
    A = TensorDescription(S8, cutlass.TensorNC32HW32, 16)
    B = TensorDescription(S8, cutlass.TensorC32RSK32, 16)
    C = TensorDescription(S8, cutlass.TensorNC32HW32, 8)
    epilogue = LinearCombinationClamp(S8, 8, S32, F32)
    assert Conv2dOperation(Op.fprop, Alg.optimized, 80, tile, A, B, C, Stride.Strided, epilogue,
                           cutlass.IdentitySwizzle1)
    with pytest.raises(Unsupported, match="interleaved int8 convolution takes A TensorNC32HW32, "
                                          "B TensorC32RSK32"):
        Conv2dOperation(Op.fprop, Alg.optimized, 80, tile, A, TensorDescription(S8, NHWC, 16), C,
                        Stride.Strided, epilogue, cutlass.IdentitySwizzle1)


def test_swizzles_other_than_identity_are_refused():
    with pytest.raises(Unsupported, match="swizzling_functor: convolutions take IdentitySwizzle1"):
        conv(swizzle=cutlass.HorizontalSwizzle)


def test_bad_enumerators_name_the_argument():
    tile, A, B, C, epilogue = f16_parts()
    with pytest.raises(TypeError, match="conv_kind"):
        Conv2dOperation("fprop", Alg.optimized, 80, tile, A, B, C, Stride.Strided, epilogue,
                        cutlass.IdentitySwizzle1)
    with pytest.raises(TypeError, match="iterator_algorithm"):
        Conv2dOperation(Op.fprop, 1, 80, tile, A, B, C, Stride.Strided, epilogue,
                        cutlass.IdentitySwizzle1)


def test_tensor_op_alignment_below_32_bits_is_refused():
    with pytest.raises((ValueError, Unsupported), match="alignment 1 of float16 is 16 bits"):
        conv(parts=f16_parts(1))


# ---- Conv2dProblemSize ------------------------------------------------------------------------

def test_problem_size_output_extent_follows_torch():
    p = problem(h=13, w=10, pad=(2, 0, 1, 2), stride=(2, 1), dilation=(1, 2))
    assert (p.P, p.Q) == ((13 + 2 - 2 - 1) // 2 + 1, (10 + 3 - 4 - 1) // 1 + 1)
    assert (p.pad_h, p.pad_w, p.pad_bottom, p.pad_right) == (2, 1, 0, 2)


@pytest.mark.parametrize("kwargs,match", [
    ({"n": 0}, "N"),
    ({"c": 40, "k": 72, "r": 13, "h": 9, "pad": (0, 0, 0, 0)}, "filter_size: the dilated 13x3 filter .* larger than the padded"),
    ({"stride": (0, 1)}, "stride"),
    ({"dilation": (1, -1)}, "dilation"),
    ({"pad": (-1, 0, 0, 0)}, "pad"),
    ({"split": 0}, "split_k_slices"),
])
def test_problem_size_refusals_name_the_extent(kwargs, match):
    with pytest.raises(ValueError, match=match):
        problem(**kwargs)


def test_problem_size_checks_groups_against_channels():
    with pytest.raises(ValueError, match="groups"):
        cutlass.conv.Conv2dProblemSize(
            cutlass.Tensor4DCoord(1, 8, 8, 30), cutlass.Tensor4DCoord(16, 3, 3, 30),
            cutlass.Tensor4DCoord(1, 1, 1, 1), cutlass.MatrixCoord(1, 1),
            cutlass.MatrixCoord(1, 1), cutlass.conv.Mode.cross_correlation, 1, 4)


# ---- Conv2dArguments: the checks that precede any CUDA work ----------------------------------

def operands(p, dtype=np.float16):
    x = np.ones((p.N, p.H, p.W, p.C), dtype=dtype)
    w = np.ones((p.K, p.R, p.S, p.C // p.groups), dtype=dtype)
    y = np.zeros((p.N, p.P, p.Q, p.K), dtype=dtype)
    return x, w, y


def test_arguments_refuse_channel_counts_that_disagree():
    op, p = conv(), problem()
    x, w, y = operands(p)
    with pytest.raises(ValueError, match=r"B \(w\): expected 25920 elements \(72, 3, 3, 40\)"):
        Conv2dArguments(op, p, x, w[:, :, :, :39].copy(), y, y, op.epilogue_type(1.0, 0.0))
    assert not op.is_compiled()


def test_arguments_refuse_an_output_that_does_not_match():
    op, p = conv(), problem(stride=(2, 2))
    x, w, _ = operands(p)
    y = np.zeros((p.N, 9, 11, p.K), dtype=np.float16)   # the stride-1 extent
    with pytest.raises(ValueError, match=r"D \(y\): expected .* elements \(2, 5, 6, 72\)"):
        Conv2dArguments(op, p, x, w, None, y, op.epilogue_type(1.0, 0.0))


def test_arguments_refuse_the_wrong_dtype():
    op, p = conv(), problem()
    x, w, y = operands(p)
    with pytest.raises(ValueError, match=r"A \(x\): expected float16 .* got float32"):
        Conv2dArguments(op, p, x.astype(np.float32), w, y, y, op.epilogue_type(1.0, 0.0))


def test_arguments_refuse_a_missing_c_with_beta():
    op, p = conv(), problem()
    x, w, y = operands(p)
    with pytest.raises(ValueError, match="C: beta is 0.5.* no C tensor"):
        Conv2dArguments(op, p, x, w, None, y, op.epilogue_type(1.0, 0.5))


def test_arguments_refuse_a_gemm_operation():
    tile, _, _, _, epilogue = f16_parts()
    row, col = cutlass.RowMajor, cutlass.ColumnMajor
    gemm_op = GemmOperationUniversal(80, tile, TensorDescription(F16, row, 8),
                                     TensorDescription(F16, col, 8), TensorDescription(F16, row, 8),
                                     epilogue, cutlass.IdentitySwizzle1)
    p = problem()
    x, w, y = operands(p)
    with pytest.raises(ValueError, match="is not a convolution; describe a Conv2dOperation"):
        Conv2dArguments(gemm_op, p, x, w, y, y, gemm_op.epilogue_type(1.0, 0.0))


def test_arguments_refuse_unknown_keywords_and_missing_tensors():
    op, p = conv(), problem()
    x, w, y = operands(p)
    with pytest.raises(TypeError, match="unexpected keyword argument 'alpha'"):
        Conv2dArguments(op, p, x, w, y, y, alpha=1.0)
    with pytest.raises(TypeError, match="missing required argument 'D'"):
        Conv2dArguments(operation=op, problem_size=p, A=x, B=w)


def test_strided_dgrad_has_no_identity_swizzle_2():
    assert conv(Op.dgrad, stride=Stride.Unity, swizzle=cutlass.IdentitySwizzle2)
    assert conv(Op.dgrad, swizzle=cutlass.IdentitySwizzle4)
    with pytest.raises(Unsupported, match="strided dgrad kernel takes IdentitySwizzle1, 4 or 8"):
        conv(Op.dgrad, swizzle=cutlass.IdentitySwizzle2)


# ---- SM90 (CUTLASS 3.x ConvUniversal) descriptions --------------------------------------------

def sm90_parts(element=F16, tile=(128, 128, 64), schedule=None, bias=None, activation=None,
               scheduler=None):
    k = {F16: 16, BF16: 16, cutlass.e4m3: 32}.get(element, 8)
    math = MathInstruction([64, tile[1], k], element, element, F32, TC, MA)
    schedule = schedule or cutlass.KernelScheduleType.TmaWarpSpecialized
    tile_desc = TileDescription(list(tile), 0, None, math, kernel_schedule=schedule,
                                tile_scheduler=scheduler or cutlass.TileSchedulerType.Persistent)
    out = F32 if element == TF32 else BF16 if element == cutlass.e4m3 else element
    bits = {F16: 16, BF16: 16, cutlass.e4m3: 8}
    align_in, align_out = 128 // bits.get(element, 32), 128 // bits.get(out, 32)
    fusions = {"bias": bias, "element_bias": out} if bias else {}
    if activation:
        epilogue = LinearCombinationGeneric(getattr(cutlass, activation), out, align_out, F32, F32,
                                            **fusions)
    else:
        epilogue = LinearCombination(out, align_out, F32, F32, **fusions)
    return (tile_desc, TensorDescription(element, NHWC, align_in),
            TensorDescription(element, NHWC, align_in), TensorDescription(out, NHWC, align_out),
            epilogue)


@pytest.mark.parametrize("kind,stride", [("fprop", "Strided"), ("dgrad", "Unity"),
                                         ("wgrad", "Strided")])
def test_sm90_kinds_are_described(kind, stride):
    op = conv(getattr(Op, kind), parts=sm90_parts(), stride=getattr(Stride, stride), arch=90)
    assert op.procedural_name().startswith(f"tilecraft_sm90_tensorop_{kind}_optimized")
    assert not op.is_compiled()


@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
@pytest.mark.parametrize("schedule,tile", [("TmaWarpSpecializedCooperative", (128, 128, 64)),
                                           ("TmaWarpSpecializedPingpong", (64, 128, 64))])
def test_sm90_persistent_kinds_are_described(kind, schedule, tile):
    """tilecraft's persistent SM90 convolutions (CUTLASS's persistent GEMM kernels over the conv
    mainloop): every kind, on the cooperative and ping-pong schedules, named for them."""
    epilogue = {} if kind == "wgrad" else {"bias": "column", "activation": "relu"}
    parts = sm90_parts(tile=tile, schedule=getattr(cutlass.KernelScheduleType, schedule),
                       **epilogue)
    stride = Stride.Unity if kind == "dgrad" else Stride.Strided
    op = conv(getattr(Op, kind), parts=parts, stride=stride, arch=90)
    short = {"TmaWarpSpecializedCooperative": "_coop_",
             "TmaWarpSpecializedPingpong": "_pingpong_"}[schedule]
    assert short in op.procedural_name()
    assert not op.is_compiled()


def test_sm90_stream_k_wgrad_is_described():
    """Split-K or stream-K wgrad: the persistent cooperative kernel on the stream-K scheduler."""
    parts = sm90_parts(schedule=cutlass.KernelScheduleType.TmaWarpSpecializedCooperative,
                       scheduler=cutlass.TileSchedulerType.StreamK)
    op = conv(Op.wgrad, parts=parts, arch=90)
    assert "_coop_streamk_" in op.procedural_name()


@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
def test_sm90_persistent_convolutions_are_not_listed_before_their_gpu_run(kind):
    """get_kernels lists CUTLASS's ConvUniversal for SM90 and not tilecraft's persistent kernels,
    which are described explicitly until the GPU suites have run them (issue 31)."""
    from fakecuda import T
    from tilecraft import api

    def channels_last(n, c, h, w):
        return T(n, c, h, w, dtype="float16", strides=(h * w * c, 1, w * c, c))

    x, w, y = channels_last(32, 64, 56, 56), channels_last(64, 64, 3, 3), \
        channels_last(32, 64, 56, 56)
    make = {"fprop": lambda: api.Conv2dArguments(x, w, y, cutlass.float32, padding=1),
            "dgrad": lambda: api.Conv2dArguments.dgrad(y, w, x, cutlass.float32, padding=1),
            "wgrad": lambda: api.Conv2dArguments.wgrad(y, x, w, cutlass.float32, padding=1)}
    names = [k.metadata.kernel_name for k in api.get_kernels(make[kind](), cc=90)]
    assert any(n.startswith(f"tilecraft_sm90_tensorop_{kind}") for n in names), names[:5]
    assert not [n for n in names if "_coop_" in n or "_pingpong_" in n]


def test_sm90_fused_bias_and_activation_and_tf32_fprop():
    assert conv(parts=sm90_parts(bias="column", activation="relu"), arch=90)
    assert conv(parts=sm90_parts(element=TF32, tile=(128, 128, 32)), arch=90)


@pytest.mark.parametrize("kwargs,match", [
    ({"kind": "dgrad", "stride": "Strided"}, "SM90 dgrad kernels .* take unit strides only"),
    ({"algorithm": "analytic"}, "TMA im2col.* describe iterator_algorithm optimized"),
    ({"kind": "wgrad", "element": "tf32"}, "wgmma allows for 16-bit types only; got tfloat32"),
    ({"kind": "wgrad", "scheduler": "StreamK"},
     "StreamK runs only with kernel_schedule TmaWarpSpecializedCooperative, got "
     "TmaWarpSpecialized"),
    ({"kind": "wgrad", "scheduler": "StreamK", "schedule": "TmaWarpSpecializedPingpong"},
     "StreamK runs only with kernel_schedule TmaWarpSpecializedCooperative, got "
     "TmaWarpSpecializedPingpong"),
    ({"bias": "row"}, "one value per output channel: describe bias=\"column\""),
    ({"kind": "wgrad", "bias": "column"}, "a bias belongs to fprop or dgrad"),
    ({"element": "e4m3"}, "fp8 convolutions need per-tensor scales"),
])
def test_sm90_refusals_name_the_rule(kwargs, match):
    element = {"tf32": TF32, "e4m3": cutlass.e4m3}.get(kwargs.get("element"), F16)
    tile = (128, 128, 32) if element == TF32 else (128, 128, 128) if element == cutlass.e4m3 \
        else kwargs.get("tile", (128, 128, 64))
    schedule = getattr(cutlass.KernelScheduleType, kwargs["schedule"]) \
        if "schedule" in kwargs else None
    scheduler = getattr(cutlass.TileSchedulerType, kwargs["scheduler"]) \
        if "scheduler" in kwargs else None
    kind = getattr(Op, kwargs.get("kind", "fprop"))
    stride = getattr(Stride, kwargs.get("stride", "Unity" if kind == Op.dgrad else "Strided"))
    algorithm = getattr(Alg, kwargs.get("algorithm", "optimized"))
    with pytest.raises((ValueError, Unsupported), match=match):  # the tile's rules, or the conv's
        parts = sm90_parts(element=element, tile=tile, schedule=schedule,
                           bias=kwargs.get("bias"), scheduler=scheduler)
        conv(kind, algorithm, parts=parts, stride=stride, arch=90)


def test_sm90_arguments_refuse_parallel_split_k_and_a_missing_bias():
    op = conv(parts=sm90_parts(bias="column", activation="relu"), arch=90)
    p = problem(c=64, k=64)
    x, w, y = operands(p)
    with pytest.raises(ValueError, match="bias: the operation's epilogue adds a bias of 64"):
        Conv2dArguments(op, p, x, w, None, y, op.epilogue_type(1.0, 0.0))
    with pytest.raises(ValueError, match="bias: expected a contiguous tensor of 64 values"):
        Conv2dArguments(op, p, x, w, None, y, op.epilogue_type(1.0, 0.0),
                        bias=np.zeros(32, dtype=np.float16))
    plain = conv(parts=sm90_parts(), arch=90)
    with pytest.raises(ValueError, match="epilogue adds no bias"):
        Conv2dArguments(plain, p, x, w, None, y, plain.epilogue_type(1.0, 0.0),
                        bias=np.zeros(64, dtype=np.float16))
    assert not op.is_compiled() and not plain.is_compiled()


# ---- the arguments-first API (tilecraft.api.Conv2dArguments) and tilecraft.conv2d ------------

def channels_last(*shape, dtype=np.float16):
    """A numpy (N, C, H, W) view whose memory is (N, H, W, C)."""
    n, c, h, w = shape
    return np.ones((n, h, w, c), dtype).transpose(0, 3, 1, 2)


def test_api_conv_arguments_check_shapes_before_anything_else():
    import tilecraft.api as api

    x, w = channels_last(2, 64, 14, 14), channels_last(128, 64, 3, 3)
    with pytest.raises(ValueError, match=r"A \(y\)|out \(y\): expected \(2, 128, 14, 14\)"):
        api.Conv2dArguments(x, w, channels_last(2, 128, 12, 12), np.float32, padding=1)
    with pytest.raises(ValueError, match=r"channels-first: call \.contiguous\(memory_format="
                                         r"torch\.channels_last\)"):
        api.Conv2dArguments(np.ascontiguousarray(x), w, channels_last(2, 128, 14, 14),
                            np.float32, padding=1)
    with pytest.raises(ValueError, match="B \\(w\\): expected 64 channels per filter"):
        api.Conv2dArguments(x, channels_last(128, 32, 3, 3), channels_last(2, 128, 14, 14),
                            np.float32, padding=1)
    with pytest.raises(ValueError, match="kind: expected 'fprop', 'dgrad', 'wgrad'"):
        api.Conv2dArguments(x, w, channels_last(2, 128, 14, 14), np.float32, kind="xgrad")
    with pytest.raises(ValueError, match="^A: expected a CUDA tensor"):
        api.Conv2dArguments(x, w, channels_last(2, 128, 14, 14), np.float32, padding=1)


def test_api_conv_epilogue_takes_no_gemm_fusions():
    import tilecraft.api as api

    x, w, y = channels_last(2, 64, 14, 14), channels_last(128, 64, 3, 3), \
        channels_last(2, 128, 14, 14)
    with pytest.raises(ValueError, match="bias_per_row and fp8 scales are GEMM fusions"):
        api.Conv2dArguments(x, w, y, np.float32, padding=1,
                            epilogue=api.arguments.EpilogueArguments(bias_per_row=True))
    with pytest.raises(ValueError, match="^epilogue: get_kernels lists no convolution with a "
                                         "custom epilogue graph yet; describe one explicitly"):
        api.Conv2dArguments(x, w, y, np.float32, padding=1,
                            epilogue=api.arguments.EpilogueArguments(graph=object()))


def test_api_lists_conv_kernel_classes():
    import tilecraft.api as api

    assert api.Sm80ConvKernel is not api.Sm90ConvKernel
    assert "Conv2dArguments" in api.__all__


def test_conv2d_takes_torch_cuda_tensors():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="^x: expected a torch CUDA tensor"):
        cutlass.conv2d(torch.ones(1, 8, 4, 4), torch.ones(8, 8, 1, 1))


def test_conv3d_takes_5d_torch_cuda_tensors():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match="^x: expected a torch CUDA tensor .channels_last_3d"):
        cutlass.conv3d(torch.ones(1, 8, 4, 4, 4), torch.ones(8, 8, 1, 1, 1))
    with pytest.raises(TypeError, match="^w: expected a torch CUDA tensor"):
        cutlass.conv3d(_FakeCuda((1, 8, 4, 4, 4)), np.ones((8, 8, 1, 1, 1)))


class _FakeCuda:
    """Passes conv3d's type check on a machine without a GPU (its rank is what is checked)."""

    def __new__(cls, shape):
        torch = pytest.importorskip("torch")

        class Fake(torch.Tensor):
            @property
            def is_cuda(self):
                return True

        return torch.ones(shape).as_subclass(Fake)


def test_conv3d_and_conv2d_name_a_tensor_of_the_wrong_rank():
    with pytest.raises(ValueError, match=r"x, w: expected 5-D tensors \(N, C, D, H, W\) and "
                                         r"\(K, C, T, R, S\), got \(1, 8, 4, 4\)"):
        cutlass.conv3d(_FakeCuda((1, 8, 4, 4)), _FakeCuda((8, 8, 1, 1)))
    with pytest.raises(ValueError, match=r"x, w: expected 4-D tensors \(N, C, H, W\) and "
                                         r"\(K, C, R, S\), got \(1, 8, 4, 4, 4\)"):
        cutlass.conv2d(_FakeCuda((1, 8, 4, 4, 4)), _FakeCuda((8, 8, 1, 1, 1)))


@pytest.mark.parametrize("kwargs,match", [
    ({"stride": (1, 2)}, r"stride: expected an int or three ints \(depth, rows, columns\)"),
    ({"dilation": True}, "dilation: expected an int or three ints"),
    ({"padding": (1, 1, 1, 1)}, r"padding: expected an int, three ints .* or six"),
    ({"padding": False}, "padding: expected an int, three or six ints"),
])
def test_api_conv3d_arguments_name_a_bad_geometry(kwargs, match):
    import tilecraft.api as api

    x = np.ones((2, 8, 4, 4, 4), np.float16)
    with pytest.raises(TypeError, match=match):
        api.Conv3dArguments(x, x, x, np.float32, **kwargs)


def test_split_k_parallel_flag_and_companions_are_checked():
    op = conv()
    with pytest.raises(TypeError, match="split_k_parallel: expected a bool, got 'yes'"):
        cutlass.compiler.add_module([op], split_k_parallel="yes")
    with pytest.raises(Unsupported, match="strided dgrad kernel has no parallel split-K"):
        cutlass._core.compile_split_k_parallel([conv(Op.dgrad)._op])
    with pytest.raises(Unsupported, match="SM90 convolutions have no parallel split-K form; use "
                                          "split_k_slices=1, SplitKMode.Serial on a persistent"):
        cutlass._core.compile_split_k_parallel([conv(parts=sm90_parts(), arch=90)._op])
    tile, A, B, C, epilogue = f16_parts()
    row, col = cutlass.RowMajor, cutlass.ColumnMajor
    grouped = GemmOperationGrouped(80, tile, TensorDescription(F16, row, 8),
                                   TensorDescription(F16, col, 8), TensorDescription(F16, row, 8),
                                   epilogue, cutlass.IdentitySwizzle1,
                                   cutlass.SchedulerMode.Device)
    with pytest.raises(ValueError, match=r"operations\[0\]: .* is a grouped GEMM, which has no "
                                         "split-K-parallel form"):
        cutlass._core.compile_split_k_parallel([grouped._op])


def test_sm90_arguments_refuse_a_bias_of_the_wrong_type():
    op = conv(parts=sm90_parts(bias="column", activation="relu"), arch=90)
    p = problem(c=64, k=64)
    x, w, y = operands(p)
    with pytest.raises(ValueError, match="bias: expected float16 .* got float32"):
        Conv2dArguments(op, p, x, w, None, y, op.epilogue_type(1.0, 0.0),
                        bias=np.zeros(64, dtype=np.float32))


def test_one_by_one_convolutions_are_the_gemm_on_the_same_memory():
    """conv2d's 1x1 route: the GEMM views of channels-last tensors compute torch's convolution
    (CPU tensors, float64); other shapes, strides, paddings and groups keep the conv kernels."""
    torch = pytest.importorskip("torch")
    from tilecraft.conv_ops import _as_gemm_operands

    g = torch.Generator().manual_seed(14)
    cl = torch.channels_last
    x = (torch.rand(3, 24, 5, 7, generator=g, dtype=torch.float64) * 2 - 1).contiguous(
        memory_format=cl)
    w = (torch.rand(40, 24, 1, 1, generator=g, dtype=torch.float64) * 2 - 1).contiguous(
        memory_format=cl)
    out = torch.full((3, 40, 5, 7), float("nan"), dtype=torch.float64).contiguous(
        memory_format=cl)
    a, b, d = _as_gemm_operands(x, w, out, 1, 0, 1)
    assert a.data_ptr() == x.data_ptr() and d.data_ptr() == out.data_ptr()  # views, no copies
    d.copy_(a @ b)
    want = torch.nn.functional.conv2d(x, w)
    assert torch.equal(out, want) or float((out - want).abs().max()) < 1e-12
    w3 = torch.zeros(40, 24, 3, 3, dtype=torch.float64).contiguous(memory_format=cl)
    assert _as_gemm_operands(x, w3, out, 1, 1, 1) is None
    assert _as_gemm_operands(x, w, out, 2, 0, 1) is None
    assert _as_gemm_operands(x, w, out, 1, (0, 0, 1, 0), 1) is None
    assert _as_gemm_operands(x, w, out, 1, 0, 2) is None


def test_conv2d_refuses_a_bad_tuning_mode_first():
    torch = pytest.importorskip("torch")
    x = torch.zeros(1, 8, 4, 4)
    with pytest.raises(ValueError, match=r"tuning: expected None or one of .*got 'fast'"):
        cutlass.conv2d(x, x, tuning="fast")


def test_each_family_operation_refuses_arguments_of_another_kind_by_name():
    """One run for every family's operation: what is not that family's arguments is refused,
    naming the argument and what it expected, before anything is launched."""
    tile, A, B, C, epilogue = f16_parts()
    row, col = cutlass.RowMajor, cutlass.ColumnMajor
    grouped = GemmOperationGrouped(80, tile, TensorDescription(F16, row, 8),
                                   TensorDescription(F16, col, 8), TensorDescription(F16, row, 8),
                                   epilogue, cutlass.IdentitySwizzle1,
                                   cutlass.SchedulerMode.Device)
    for op, expected in ((conv(), "tilecraft.Conv2dArguments"),
                         (grouped, "tilecraft.GemmGroupedArguments")):
        for wrong in ("a string", None, 3):
            with pytest.raises(TypeError, match=f"arguments: expected a {expected}, got "):
                op.run(wrong)
