"""Split-K variants of convolution kernels in get_kernels (no GPU: fake CUDA tensors): arch-80
kernels of a plain linear epilogue split a long reduction (wgrad of a small filter over a large
image) into slices, in parallel for a narrower output and serially for one of the accumulator's
type; fused bias or activation, and SM90 kernels, do not split."""

import pytest

from fakecuda import T
import tilecraft
from tilecraft import api
from tilecraft.api.arguments import Conv2dArguments, EpilogueArguments


def _channels_last(n, c, h, w, dtype="float16"):
    return T(n, c, h, w, dtype=dtype, strides=(h * w * c, 1, w * c, c))


def _wgrad(out_dtype):
    dy, x = _channels_last(32, 64, 56, 56), _channels_last(32, 64, 56, 56)
    return Conv2dArguments(dy, x, _channels_last(64, 64, 3, 3, out_dtype), tilecraft.float32,
                           kind="wgrad", padding=1)


@pytest.mark.parametrize("out_dtype,parallel", [("float16", True), ("float32", False)])
def test_a_long_wgrad_reduction_offers_split_k_slices(out_dtype, parallel):
    kernels = api.get_kernels(_wgrad(out_dtype), cc=90)
    split = [k for k in kernels if k.metadata.design.split_k_slices > 1]
    assert split, "no split-K variant offered"
    for k in split:
        d = k.metadata.design
        assert k.metadata.min_cc == 80 and d.split_k_slices in (2, 4, 8, 16, 32, 64)
        assert d.split_k_parallel is parallel
        assert k.metadata.kernel_name.endswith(
            f"_splitk{d.split_k_slices}" + ("_parallel" if parallel else ""))
    # A long reduction onto 64 x 576 outputs: the model ranks a split variant first.
    assert kernels[0].metadata.design.split_k_slices > 1, kernels[0].metadata.kernel_name


def test_fused_epilogues_and_short_reductions_do_not_split():
    x, w = _channels_last(32, 64, 56, 56), _channels_last(64, 64, 3, 3)
    y = _channels_last(32, 64, 56, 56)
    bias = T(64, dtype="float16")
    fused = Conv2dArguments(x, w, y, tilecraft.float32, padding=1,
                            epilogue=EpilogueArguments(bias=bias, activation="relu"))
    plain = Conv2dArguments(x, w, y, tilecraft.float32, padding=1)
    for args in (fused, plain):  # fprop: 100,352 x 64 outputs fill the GPU without splitting
        assert not [k for k in api.get_kernels(args, cc=90)
                    if k.metadata.design.split_k_slices > 1]
