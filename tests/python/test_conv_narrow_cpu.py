"""Convolutions whose channels no 32-bit access divides (a first layer of 3 f16 channels): they
list arch-80 kernels of the two-stage mainloop, which loads one element at a time, with the
analytic iterator, for fprop, dgrad and wgrad; wider layers keep multistage kernels first. No GPU:
fake CUDA tensors."""

import pytest

from fakecuda import T
import tilecraft
from tilecraft import api
from tilecraft.api.arguments import Conv2dArguments, EpilogueArguments


def _channels_last(n, c, h, w, dtype="float16"):
    return T(n, c, h, w, dtype=dtype, strides=(h * w * c, 1, w * c, c))


def _stem(kind, channels=3):
    x, w = _channels_last(8, channels, 64, 64), _channels_last(32, channels, 7, 7)
    y = _channels_last(8, 32, 32, 32)
    if kind == "fprop":
        return Conv2dArguments(x, w, y, tilecraft.float32, stride=2, padding=3,
                               epilogue=EpilogueArguments(bias=T(32, dtype="float16"),
                                                          activation="relu"))
    if kind == "dgrad":  # unit stride: the two-stage strided dgrad is not built (wrong results)
        return Conv2dArguments(_channels_last(8, 32, 64, 64), w, _channels_last(8, channels, 64, 64),
                               tilecraft.float32, kind="dgrad", stride=1, padding=3)
    return Conv2dArguments(y, x, _channels_last(32, channels, 7, 7), tilecraft.float32,
                           kind="wgrad", stride=2, padding=3)


@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
def test_three_channels_list_two_stage_analytic_kernels(kind):
    args = _stem(kind)
    kernels = api.get_kernels(args, cc=90)
    assert kernels, f"no {kind} kernel for 3 channels"
    for k in kernels:
        d = k.metadata.design
        assert k.metadata.min_cc == 80 and d.stages == 2, k.metadata.kernel_name
        assert k.metadata.conv.iterator_algorithm == tilecraft.conv.IteratorAlgorithm.analytic
        assert "_analytic_" in k.metadata.kernel_name and "align1x1" in k.metadata.kernel_name
    assert kernels[0].supports(args)


def test_the_two_stage_strided_dgrad_is_not_listed():
    y, w = _channels_last(8, 32, 32, 32), _channels_last(32, 3, 7, 7)
    args = Conv2dArguments(y, w, _channels_last(8, 3, 64, 64), tilecraft.float32, kind="dgrad",
                           stride=2, padding=3)
    assert api.get_kernels(args, cc=90) == []


def test_wide_layers_keep_multistage_kernels_first():
    kernels = api.get_kernels(_stem("fprop", channels=64), cc=90)
    assert kernels[0].metadata.design.stages != 2, kernels[0].metadata.kernel_name
