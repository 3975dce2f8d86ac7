"""tilecraft's direct grouped and depthwise fprop (``conv.IteratorAlgorithm.direct``) without a
GPU: its descriptions and their refusals in words, the SIMT float16 -> float32 instruction it
alone takes, and get_kernels listing it (ranked above the implicit-GEMM group kernels) for
depthwise and grouped problems, with fake CUDA tensors. The numbers are checked by
tests/python/gpu_conv (the ``*_direct_*`` rows)."""

import pytest

import tilecraft as cutlass
from fakecuda import T
from tilecraft import api
from tilecraft.api.arguments import Conv2dArguments, EpilogueArguments

F16, BF16, F32 = cutlass.float16, cutlass.bfloat16, cutlass.float32
NHWC = cutlass.TensorNHWC
SIMT, TC = cutlass.OpClass.Simt, cutlass.OpClass.TensorOp
Op, Alg, Group = cutlass.conv.Operator, cutlass.conv.IteratorAlgorithm, cutlass.conv.GroupMode

pytestmark = pytest.mark.usefixtures("no_compiler")


def direct(element=F16, vector=8, tile=(64, 64, 1), warps=(8, 1, 1), stages=2, mode=None,
           kind=None, arch=80, align_a=None, align_b=1, op_class=SIMT, acc=F32):
    math = cutlass.MathInstruction([1, 1, 1], element, element, acc, op_class,
                                   cutlass.MathOperation.multiply_add)
    t = cutlass.TileDescription(list(tile), stages, list(warps), math)
    return cutlass.Conv2dOperation(
        kind or Op.fprop, Alg.direct, arch, t,
        cutlass.TensorDescription(element, NHWC, align_a or vector),
        cutlass.TensorDescription(element, NHWC, align_b),
        cutlass.TensorDescription(element, NHWC, vector),
        cutlass.StrideSupport.Strided, cutlass.LinearCombination(element, vector, acc, F32),
        group_mode=mode or Group.Depthwise)


@pytest.mark.parametrize("element,vector", [(F16, 8), (BF16, 4), (F32, 4), (F16, 1)])
@pytest.mark.parametrize("mode", ["Depthwise", "MultipleGroup"])
def test_direct_kernels_are_described_and_named(element, vector, mode):
    tile = (64, 64, 1) if vector > 1 else (32, 32, 1)  # 8 pixel threads of 4 pixels for 1
    op = direct(element, vector, tile=tile, mode=getattr(Group, mode))
    snake = {"Depthwise": "depthwise", "MultipleGroup": "multiple_group"}[mode]
    assert f"_fprop_direct_{snake}_" in op.procedural_name()
    assert op.procedural_name() != direct(element, vector, tile=(2 * tile[0], tile[1], 1),
                                          mode=getattr(Group, mode)).procedural_name()
    assert not op.is_compiled()


@pytest.mark.parametrize("kwargs,match", [
    ({"arch": 90}, "CUDA-core kernel described as arch=80 .*got arch=90"),
    ({"kind": "dgrad"}, "iterator_algorithm direct computes fprop, got conv_kind dgrad"),
    ({"mode": "NoneGroup"}, "takes group_mode Depthwise .* or MultipleGroup .*got none"),
    ({"mode": "SingleGroup"}, "got single_group"),
    ({"acc": F16}, "with a float32 accumulator.*got float16 -> float16"),
    ({"align_a": 4}, "describe A and C of equal alignment; got 4 and 8"),
    ({"align_b": 2}, "describe B of alignment 1, got 2"),
    ({"tile": (64, 64, 8), "warps": (8, 1, 1)}, r"\[output pixels, output channels, 1\]"),
    ({"stages": 3}, "stages=2 \\(it has no pipeline\\)"),
    ({"tile": (64, 48, 1), "warps": (8, 1, 1), "vector": 8}, "output channels must be"),
    ({"tile": (512, 64, 1), "warps": (8, 1, 1)}, "1 to 8 per thread"),
])
def test_direct_refusals_name_the_rule(kwargs, match):
    kwargs = dict(kwargs)
    for key in ("kind", "mode"):
        if key in kwargs:
            kwargs[key] = getattr(Op if key == "kind" else Group, kwargs[key])
    with pytest.raises((ValueError, cutlass.UnsupportedError), match=match):
        direct(**kwargs)


def test_simt_half_into_float_is_the_direct_kernel_only():
    """The SIMT float16 -> float32 instruction exists for the direct convolution: CUTLASS's SIMT
    GEMMs and implicit-GEMM convolutions refuse it, naming the kernels that take it."""
    math = cutlass.MathInstruction([1, 1, 1], F16, F16, F32, SIMT, cutlass.MathOperation.multiply_add)
    tile = cutlass.TileDescription([128, 128, 8], 2, [2, 4, 1], math)
    A = cutlass.TensorDescription(F16, cutlass.RowMajor, 1)
    with pytest.raises(cutlass.UnsupportedError, match="tilecraft's direct convolution"):
        cutlass.GemmOperationUniversal(80, tile, A, A, cutlass.TensorDescription(F32, cutlass.RowMajor, 1),
                                       cutlass.LinearCombination(F32, 1, F32, F32))
    with pytest.raises(cutlass.UnsupportedError, match="iterator_algorithm direct"):
        cutlass.Conv2dOperation(
            Op.fprop, Alg.analytic, 80, cutlass.TileDescription([64, 64, 8], 2, [2, 2, 1], math),
            cutlass.TensorDescription(F16, NHWC, 1), cutlass.TensorDescription(F16, NHWC, 1),
            cutlass.TensorDescription(F16, NHWC, 1), cutlass.StrideSupport.Strided,
            cutlass.LinearCombination(F16, 1, F32, F32), group_mode=Group.Depthwise)


def _channels_last(n, c, h, w, dtype="float16"):
    return T(n, c, h, w, dtype=dtype, strides=(h * w * c, 1, w * c, c))


def _fprop(c, k, groups, dtype="float16", hw=56, epilogue=None):
    x, y = _channels_last(32, c, hw, hw, dtype), _channels_last(32, k, hw, hw, dtype)
    w = _channels_last(k, c // groups, 3, 3, dtype)
    return Conv2dArguments(x, w, y, cutlass.float32, padding=1, groups=groups,
                           **({"epilogue": epilogue} if epilogue else {}))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_depthwise_problems_list_direct_kernels_first(dtype):
    kernels = api.get_kernels(_fprop(144, 144, 144, dtype), cc=90)
    direct_kernels = [k for k in kernels if "_direct_depthwise_" in k.metadata.kernel_name]
    assert len(direct_kernels) >= 3, [k.metadata.kernel_name for k in kernels[:5]]
    assert "_direct_depthwise_" in kernels[0].metadata.kernel_name, kernels[0].metadata.kernel_name
    assert kernels[0].metadata.min_cc == 80
    vector = 8 if dtype != "float32" else 4
    assert kernels[0].metadata.operands.A.alignment == vector


def test_grouped_problems_list_direct_kernels_above_the_multiple_group_kernels():
    """ResNeXt's 3x3 (32 groups of 4 channels): the implicit GEMM spends its tile on zeros."""
    kernels = api.get_kernels(_fprop(128, 128, 32), cc=90)
    names = [k.metadata.kernel_name for k in kernels]
    assert "_direct_multiple_group_" in names[0], names[:5]
    assert kernels[0].metadata.operands.A.alignment == 4  # 4 channels per group
    assert any("_analytic_multiple_group_" in n for n in names)


@pytest.mark.parametrize("c,mode", [(1024, "single_group"), (512, "multiple_group"),
                                    (256, "multiple_group")])
def test_grouped_problems_list_tiles_one_group_wide(c, mode):
    """ResNeXt's 32 groups of 32, 16 and 8 channels: tensor-op tiles 32 channels wide (one group,
    or 2 and 4 of them) beside the space's 64-wide ones, and the narrow ones ranked above those."""
    kernels = api.get_kernels(_fprop(c, c, 32, hw=14), cc=90)
    tensor_op = [k for k in kernels if "_tensorop_" in k.metadata.kernel_name]
    narrow = [k for k in tensor_op if k.metadata.design.tile_shape[1] == 32]
    assert narrow and all(f"_{mode}_" in k.metadata.kernel_name for k in narrow)
    assert tensor_op[0].metadata.design.tile_shape[1] == 32, tensor_op[0].metadata.kernel_name
    args = _fprop(c, c, 32, hw=14)
    assert all(k.supports(args) for k in narrow[:4])


def test_direct_kernels_take_a_bias_and_an_activation():
    bias = T(144, dtype="float16")
    args = _fprop(144, 144, 144, epilogue=EpilogueArguments(bias=bias, activation="relu"))
    kernels = [k for k in api.get_kernels(args, cc=90) if "_direct_" in k.metadata.kernel_name]
    assert kernels and all(k.supports(args) for k in kernels)


def test_direct_kernels_refuse_what_they_cannot_run_in_words():
    dw = [k for k in api.get_kernels(_fprop(144, 144, 144), cc=90)
          if "_direct_depthwise_" in k.metadata.kernel_name][0]
    grouped = _fprop(128, 128, 32)
    status = dw.supports(grouped)
    assert not status and "C == K == groups" in status.error
    odd = _fprop(96, 96, 16)  # 6 channels per group: off an access of 4
    mg = [k for k in api.get_kernels(grouped, cc=90)
          if "_direct_multiple_group_" in k.metadata.kernel_name][0]
    status = mg.supports(odd)
    assert not status and "C / groups and K / groups multiples" in status.error


def test_ungrouped_and_backward_problems_list_no_direct_kernel():
    ungrouped = _fprop(64, 64, 1)
    assert not [k for k in api.get_kernels(ungrouped, cc=90) if "_direct_" in k.metadata.kernel_name]
