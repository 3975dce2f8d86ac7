"""Convolutions on a GPU through seed 002's surface (Conv2dOperation, conv.Conv2dProblemSize,
Conv2dArguments, run, sync): every conv kind x iterator algorithm x stride support x dtype
family of conv_kernels.KERNELS, on problems with asymmetric padding, strides and dilations, C
and K that are not multiples of the tile, both conv modes, beta != 0, C absent or one value per
channel, flat / 4-D / torch channels_last tensors, serial and parallel split-K, activations and
clamps, and the int8 interleaved layouts. Every output is poisoned first (NaN, or -77 for
integers) and every element is checked against torch's float64 convolution (dgrad and wgrad:
its autograd gradients): exactly for small-integer data, within the float bounds of
tests/python/gpu/gpu_check.py for random floats and transcendental activations.

    python -m pytest tests/python/gpu_conv -rs
    compute-sanitizer --tool memcheck python -m pytest tests/python/gpu_conv -m sanitizer
    TILECRAFT_GPU_TEST_SEED=1234 python -m pytest tests/python/gpu_conv   # replay a run
"""

from dataclasses import replace

import pytest

from conv_case import ConvCase, Shape, check_case, to_layout
from conv_kernels import (ACTIVATION_KERNELS, BIAS_KERNELS, CLAMP_KERNELS, CONV3D,
                          GROUPED_KERNELS, KERNELS, MATRIX, PARALLEL_SPLIT_K, SERIAL_SPLIT_K, SM90)

pytestmark = pytest.mark.gpu

C_VALUES = {1: 13, 2: 22, 4: 20, 8: 40, 16: 48, 32: 64}   # channels for each alignment
K_VALUES = {1: 19, 2: 30, 4: 36, 8: 72, 16: 80, 32: 96}   # (none a multiple of a 128 tile)

# (N, H, W, R, S, pad (top, bottom, left, right), stride, dilation)
BASE_SHAPES = {
    "3x3": (2, 9, 11, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1)),
    "asym_stride_dil": (1, 13, 10, 3, 3, (2, 0, 1, 2), (2, 1), (1, 2)),
    "1x1": (3, 7, 6, 1, 1, (0, 0, 0, 0), (1, 1), (1, 1)),
    "5x3_stride2": (2, 17, 15, 5, 3, (2, 2, 1, 1), (2, 2), (1, 1)),
    "3x5_dil": (1, 20, 12, 3, 5, (1, 0, 2, 2), (1, 2), (2, 1)),
    "asym_dil_unit": (2, 12, 9, 3, 3, (0, 2, 2, 1), (1, 1), (2, 1)),
}


def shape_for(spec, name):
    """The base shape ``name`` with channel counts the kernel's alignments take, and the stride
    or dilation the kernel's kind allows (a unity dgrad takes unit strides; the strided dgrad
    takes no dilation)."""
    n, h, w, r, s, pad, stride, dil = BASE_SHAPES[name]
    m_c, m_k = spec.channel_multiples()
    c, k = C_VALUES[m_c], K_VALUES[m_k]
    if spec.algorithm == "fixed":
        c = spec.align_a
    elif spec.algorithm == "few":
        c = 3 * spec.align_a
    if spec.kind == "dgrad" and spec.stride == "un":
        stride = (1, 1)
    if spec.kind == "dgrad" and spec.stride == "st":
        dil = (1, 1)
    if spec.epilogue == "FastLinearCombinationClamp":   # valid for an implicit GEMM K <= 256
        c = 16 if r * s > 1 else c
    if spec.persistent and spec.kind == "wgrad":   # a tile never spans two filter taps
        c = spec.tile[1]
    return Shape(n, h, w, c, k, r, s, pad, stride, dil)


MATRIX_CASES = [(key, name) for key in MATRIX for name in ("3x3", "asym_stride_dil", "1x1",
                                                           "5x3_stride2", "3x5_dil")]


@pytest.mark.parametrize("key,shape_name", MATRIX_CASES)
def test_matrix(ops, gen, seed_note, key, shape_name):
    """Every kernel of the matrix on every base shape, beta != 0, a full C."""
    spec = KERNELS[key]
    # SM90 kernels compute cross-correlation only (test_sm90_refuses_convolution_mode).
    mode = "convolution" if shape_name == "3x5_dil" and spec.arch == 80 else "cross_correlation"
    case = ConvCase(key, shape_for(spec, shape_name), alpha=1.5, beta=-0.5, mode=mode)
    check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", ["f16_fprop_opt_st", "f16_dgrad_opt_un", "f16_dgrad_an_st",
                                 "f16_wgrad_an_st", "tf32_fprop_opt", "simt32_dgrad_opt"])
@pytest.mark.parametrize("form", ["nhwc", "channels_last"])
def test_tensor_forms(ops, gen, seed_note, key, form):
    """4-D tensors in layout order, and torch (N, C, H, W) tensors in channels_last format."""
    spec = KERNELS[key]
    case = ConvCase(key, shape_for(spec, "asym_dil_unit"), alpha=1.0, beta=1.0, form=form)
    check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", ["f16_fprop_opt_st", "f16_dgrad_an_un", "bf16_fprop_opt",
                                 "simt32_fprop_an", "f16_fprop_opt_relu"])
def test_bias_per_channel(ops, gen, seed_note, key):
    """C as one value per output channel (a bias), broadcast over N, P, Q."""
    spec = KERNELS[key]
    case = ConvCase(key, shape_for(spec, "3x3"), alpha=0.5, beta=1.0, c_form="bias",
                    form="channels_last")
    check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", ["f16_fprop_an_un", "f16_wgrad_opt_un", "bf16_dgrad_opt",
                                 "f64_wgrad_opt", "simt64_fprop_opt"])
def test_no_c(ops, gen, seed_note, key):
    """C=None with beta 0."""
    spec = KERNELS[key]
    case = ConvCase(key, shape_for(spec, "5x3_stride2"), alpha=2.0, beta=0.0, c_form="none")
    check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", BIAS_KERNELS)
@pytest.mark.parametrize("c_form,shape_name", [("none", "3x3"), ("full", "5x3_stride2"),
                                               ("none", "asym_stride_dil")])
def test_sm90_fused_bias(ops, gen, seed_note, key, c_form, shape_name):
    """SM90 epilogues adding a bias of one value per output channel before the activation."""
    spec = KERNELS[key]
    beta = 0.0 if c_form == "none" else 0.5
    case = ConvCase(key, shape_for(spec, shape_name), alpha=1.0, beta=beta, c_form=c_form,
                    form="channels_last")
    check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", [k for k in SM90 if KERNELS[k].element != "tf32"])
def test_sm90_larger_problem(ops, gen, seed_note, key):
    """Many tiles in every direction (and for wgrad a long reduction over N, P, Q)."""
    shape = Shape(4, 28, 28, 64, 136, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1))
    check_case(ops, ConvCase(key, shape, alpha=1.0, beta=1.0, form="channels_last"), gen,
               seed_note)


@pytest.mark.parametrize("key", ACTIVATION_KERNELS)
@pytest.mark.parametrize("data", ["int", "float"])
def test_activation(ops, gen, seed_note, key, data):
    spec = KERNELS[key]
    case = ConvCase(key, shape_for(spec, "asym_stride_dil"), alpha=0.25, beta=0.5, data=data)
    check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", CLAMP_KERNELS)
@pytest.mark.parametrize("shape_name", ["3x3", "asym_stride_dil"])
def test_clamp(ops, gen, seed_note, key, shape_name):
    """Saturating epilogues: int8 outputs rounded and clamped to [-128, 127]."""
    spec = KERNELS[key]
    alpha = 4.0 if spec.out == "s8" else 1.0
    case = ConvCase(key, shape_for(spec, shape_name), alpha=alpha, beta=1.0)
    check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", ["i8_fprop_opt_interleaved"])
@pytest.mark.parametrize("shape_name", ["3x3", "5x3_stride2", "1x1"])
def test_interleaved_int8(ops, gen, seed_note, key, shape_name):
    """TensorNC32HW32 activations and outputs, a TensorC32RSK32 filter (output channels
    reordered within groups of 32 as cutlass::reorder_convK<32> does)."""
    spec = KERNELS[key]
    case = ConvCase(key, shape_for(spec, shape_name), alpha=2.0, beta=1.0)
    check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", SERIAL_SPLIT_K)
@pytest.mark.parametrize("slices", [2, 5])
def test_split_k_serial(ops, gen, seed_note, key, slices):
    spec = KERNELS[key]
    case = ConvCase(key, shape_for(spec, "3x3"), alpha=1.0, beta=0.5, split_k=slices)
    check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", PARALLEL_SPLIT_K)
@pytest.mark.parametrize("slices", [3, 16])
def test_split_k_parallel(ops, gen, seed_note, key, slices):
    """Partial sums in a workspace, then CUTLASS's ReduceSplitK with the epilogue."""
    spec = KERNELS[key]
    shape = shape_for(spec, "asym_dil_unit" if spec.stride == "un" else "3x3")
    case = ConvCase(key, shape, alpha=-1.0, beta=0.25, split_k=slices, split_mode="Parallel")
    check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", ["f16_fprop_opt_st", "bf16_wgrad_opt", "tf32_dgrad_opt",
                                 "f32x3_fprop_opt", "f64_fprop_opt", "simt32_wgrad_opt",
                                 "f16_dgrad_opt_st"])
@pytest.mark.parametrize("shape_name", ["asym_stride_dil", "5x3_stride2"])
def test_float_data(ops, gen, seed_note, key, shape_name):
    """Random floats in [-1, 1]: within the accumulation's error bound of the float64 result."""
    spec = KERNELS[key]
    case = ConvCase(key, shape_for(spec, shape_name), alpha=1.0, beta=0.5, data="float")
    check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", ["f16_fprop_opt_st", "f16_dgrad_opt_st", "f16_wgrad_opt_st"])
def test_larger_problem(ops, gen, seed_note, key):
    """A ResNet-like layer with many tiles in every direction."""
    shape = Shape(4, 28, 28, 64, 136, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1))
    check_case(ops, ConvCase(key, shape, alpha=1.0, beta=1.0, form="channels_last"), gen,
               seed_note)


# (groups, C, K) each grouped kernel takes (tile N 64): one group per CTA or more CTAs per group
# (single group), several groups per CTA with K a multiple of the tile or not (multiple group),
# and depthwise channel counts on and off a multiple of 8.
GROUP_CONFIGS = {
    "f16_fprop_opt_sg": [(2, 48, 128), (3, 48, 192), (2, 16, 256)],
    "f16_fprop_an_sg": [(2, 48, 128), (4, 32, 256)],
    "f16_fprop_an_mg": [(4, 32, 64), (8, 64, 64), (12, 96, 96), (2, 16, 64)],
    "bf16_fprop_an_mg_align4": [(4, 16, 64), (8, 32, 32)],
    "f16_fprop_opt_sg_n32": [(4, 128, 128), (3, 48, 96), (32, 1024, 1024)],
    "f16_fprop_an_mg_n32": [(8, 128, 128), (4, 32, 32), (6, 48, 96)],
    "simt32_fprop_an_dw": [(40, 40, 40), (37, 37, 37)],
    "simt16_fprop_an_dw": [(24, 24, 24), (72, 72, 72)],
    # direct: channel counts off the CTA's channel block; a thread's vector in one group or
    # (depthwise) spanning as many; K / groups above and below C / groups
    "f16_fprop_direct_dw": [(24, 24, 24), (136, 136, 136)],
    "bf16_fprop_direct_dw_relu": [(20, 20, 20), (44, 44, 44)],
    "f32_fprop_direct_dw": [(12, 12, 12), (40, 40, 40)],
    "f16_fprop_direct_dw_v1": [(37, 37, 37)],
    "f16_fprop_direct_mg": [(2, 16, 32), (4, 64, 128), (3, 48, 24)],
    "f16_fprop_direct_mg_v4": [(32, 128, 128), (8, 32, 64)],
    "f32_fprop_direct_mg_v1": [(3, 9, 15), (5, 5, 10)],
}
GROUP_CASES = [(key, config, name) for key in GROUPED_KERNELS for config in GROUP_CONFIGS[key]
               for name in ("3x3", "asym_stride_dil", "5x3_stride2")]


@pytest.mark.parametrize("key,config,shape_name", GROUP_CASES)
def test_grouped_fprop(ops, gen, seed_note, key, config, shape_name):
    """Grouped and depthwise fprop (Conv2dProblemSize groups > 1) against torch's grouped
    convolution in float64; beta != 0 with a full C, channels-last tensors, and once in
    convolution mode."""
    groups, c, k = config
    n, h, w, r, s, pad, stride, dil = BASE_SHAPES[shape_name]
    shape = Shape(n, h, w, c, k, r, s, pad, stride, dil, groups)
    mode = "convolution" if shape_name == "5x3_stride2" else "cross_correlation"
    case = ConvCase(key, shape, alpha=1.5, beta=-0.5, mode=mode, form="channels_last")
    check_case(ops, case, gen, seed_note)


# Direct kernels on layers of realistic size (several CTAs along the pixels and the channels,
# ragged at both ends), with uniform float data, a per-channel C (a bias) and no C; filters of
# every window path (3 and 5 wide, chunks of 3 for 7, 1 and 5 at stride 2, grouped 1x5) and the
# general one (dilated columns).
@pytest.mark.parametrize("key,config,c_form,filt", [
    ("f16_fprop_direct_dw", (144, 144, 144), "bias", (3, 3, 1, 1)),
    ("bf16_fprop_direct_dw_relu", (96, 96, 96), "none", (3, 3, 2, 1)),
    ("f16_fprop_direct_mg_v4", (32, 128, 128), "bias", (3, 3, 1, 1)),
    ("f16_fprop_direct_mg", (32, 1024, 1024), "none", (3, 3, 1, 1)),
    ("f16_fprop_direct_dw", (136, 136, 136), "none", (5, 5, 1, 1)),
    ("f16_fprop_direct_dw", (136, 136, 136), "bias", (5, 5, 2, 1)),
    ("f32_fprop_direct_dw", (40, 40, 40), "none", (7, 7, 1, 1)),
    ("bf16_fprop_direct_dw_relu", (20, 20, 20), "none", (1, 1, 2, 1)),
    ("f16_fprop_direct_mg", (4, 64, 128), "bias", (1, 5, 1, 1)),
    ("f16_fprop_direct_dw", (24, 24, 24), "none", (3, 3, 1, 2)),
])
def test_direct_fprop_layers(ops, gen, seed_note, key, config, c_form, filt):
    groups, c, k = config
    r, s, stride, dil = filt
    pad = (r // 2, r // 2, s // 2 * dil, s // 2 * dil)
    shape = Shape(3, 29, 30, c, k, r, s, pad, (stride, stride), (1, dil), groups)
    case = ConvCase(key, shape, alpha=1.0, beta=1.0 if c_form == "bias" else 0.0, c_form=c_form,
                    form="channels_last", data="float")
    check_case(ops, case, gen, seed_note)


# 3-D: (N, D, H, W, T, R, S, pad (front, back, top, bottom, left, right), stride (depth, rows,
# columns), dilation)
CONV3D_SHAPES = {
    "3x3x3": (2, 6, 7, 5, 3, 3, 3, (1, 1, 1, 1, 1, 1), (1, 1, 1), (1, 1, 1)),
    "asym_stride": (1, 9, 8, 10, 3, 3, 2, (1, 0, 0, 2, 1, 1), (2, 1, 2), (1, 1, 1)),
    "dilated": (2, 7, 9, 6, 3, 2, 3, (2, 1, 1, 1, 0, 2), (1, 1, 1), (2, 1, 2)),
    "dilated_xc": (2, 7, 9, 6, 3, 2, 3, (2, 1, 1, 1, 0, 2), (1, 1, 1), (2, 1, 2)),
    "1x1x1": (1, 4, 5, 6, 1, 1, 1, (0, 0, 0, 0, 0, 0), (1, 1, 1), (1, 1, 1)),
    "3x3x3_conv": (2, 6, 7, 5, 3, 3, 3, (1, 1, 1, 1, 1, 1), (1, 1, 1), (1, 1, 1)),
}
CONV3D_MODES = {"dilated": "convolution", "3x3x3_conv": "convolution"}


def shape_3d(spec, name):
    """A 3-D base shape with the channel counts the kernel's alignments take (none a multiple of
    a tile) and the strides a unity dgrad takes."""
    n, d, h, w, t, r, s, pad, stride, dil = CONV3D_SHAPES[name]
    m_c, m_k = spec.channel_multiples()
    if spec.kind == "dgrad" and spec.stride == "un":
        stride = (1, 1, 1)
    if spec.kind == "dgrad" and spec.stride == "st":  # CUTLASS's strided dgrad: no dilation
        dil = (1, 1, 1)
    c = C_VALUES[m_c]
    if spec.persistent and spec.kind == "wgrad":   # a tile never spans two filter taps
        c = spec.tile[1]
    return Shape(n, h, w, c, K_VALUES[m_k], r, s, pad[2:], stride[1:], dil[1:],
                 depth=(d, t, pad[0], pad[1], stride[0], dil[0]))


@pytest.mark.parametrize("key,shape_name", [(k, n) for k in CONV3D for n in CONV3D_SHAPES])
def test_conv3d(ops, gen, seed_note, key, shape_name):
    """CUTLASS's Conv3d kernels (fprop, both dgrad forms, wgrad; tensor cores and CUDA cores)
    against torch's float64 conv3d and its gradients; beta != 0, a full C, channels-last-3d
    tensors; dilations in both modes, convolution mode without them."""
    spec = KERNELS[key]
    # SM90 kernels compute cross-correlation only (TMA im2col reads the filter unflipped)
    mode = CONV3D_MODES.get(shape_name, "cross_correlation") if spec.arch == 80 else \
        "cross_correlation"
    case = ConvCase(key, shape_3d(spec, shape_name), alpha=1.5, beta=-0.5, mode=mode,
                    form="channels_last")
    check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key,extra", [
    ("f16_fprop3d_opt", {"split_k": 3}), ("f16_wgrad3d_opt", {"split_k": 4,
                                                              "split_mode": "Parallel"}),
    ("f16_fprop3d_an", {"c_form": "bias", "beta": 1.0}), ("f16_dgrad3d_opt_un", {"form": "flat"}),
])
def test_conv3d_split_k_bias_and_forms(ops, gen, seed_note, key, extra):
    spec = KERNELS[key]
    case = ConvCase(key, shape_3d(spec, "3x3x3"), **{"alpha": 1.0, "beta": 0.5, **extra})
    check_case(ops, case, gen, seed_note)


@pytest.mark.conv_kernels("f16_dgrad3d_an_st", "f16_dgrad3d_opt_un")
def test_conv3d_dgrad_refuses_what_its_kernel_cannot_take(ops):
    """The strided 3-D dgrad takes no dilation (depth included), the unity one no stride."""
    strided = shape_3d(KERNELS["f16_dgrad3d_an_st"], "3x3x3")
    _refused(ops, "f16_dgrad3d_an_st", replace(strided, depth=(6, 3, 1, 1, 1, 2)),
             r"dilation \(2, 1, 1\): the strided dgrad kernel takes no dilation")
    unity = shape_3d(KERNELS["f16_dgrad3d_opt_un"], "3x3x3")
    _refused(ops, "f16_dgrad3d_opt_un", replace(unity, stride=(2, 1)), "unit strides")


@pytest.mark.conv_kernels("s90_f16_dgrad3d_pp")
def test_sm90_conv3d_dgrad_refuses_a_depth_stride(ops):
    """SM90 dgrad takes unit strides in every dimension, the depth included."""
    shape = shape_3d(KERNELS["s90_f16_dgrad3d_pp"], "3x3x3")
    _refused(ops, "s90_f16_dgrad3d_pp", replace(shape, depth=(6, 3, 1, 1, 2, 1)),
             r"stride \(2, 1, 1\): SM90 dgrad kernels take unit strides only")


@pytest.mark.conv_kernels("f16_fprop3d_opt", "f16_fprop_opt_st")
def test_refuses_a_problem_of_the_other_dimension(ops):
    spec = KERNELS["f16_fprop3d_opt"]
    three_d = shape_3d(spec, "3x3x3")
    planar = shape_for(KERNELS["f16_fprop_opt_st"], "3x3")
    _refused(ops, "f16_fprop3d_opt", three_d, "a 3-D operation .TensorNDHWC. needs a "
             "conv.Conv3dProblemSize", problem_shape=planar)
    _refused(ops, "f16_fprop_opt_st", planar, "a 3-D problem .conv.Conv3dProblemSize. needs an "
             "operation of TensorNDHWC operands", problem_shape=three_d)


@pytest.mark.sanitizer
@pytest.mark.parametrize("key,extra", [
    ("f16_fprop_opt_st", {}), ("f16_dgrad_an_st", {}), ("f16_wgrad_opt_un", {}),
    ("f16_fprop_few", {}), ("f16_fprop_fixed", {}),
    ("f16_wgrad_opt_st", {"split_k": 3, "split_mode": "Parallel"}),
    ("f16_fprop_opt_st", {"split_k": 3}), ("i8_fprop_opt_interleaved", {}),
    ("f16_fprop_an_mg", {"groups": (12, 96, 96)}), ("simt32_fprop_an_dw", {"groups": (37, 37, 37)}),
    ("f16_fprop_opt_sg_n32", {"groups": (8, 128, 256)}),
    ("f16_fprop_an_mg_n32", {"groups": (16, 128, 256)}),
    ("f16_dgrad3d_an_st", {"conv3d": "asym_stride"}), ("f16_wgrad3d_opt", {"conv3d": "dilated"}),
    ("f16_fprop_direct_dw", {"groups": (136, 136, 136)}),
    ("f16_fprop_direct_mg_v4", {"groups": (8, 32, 64)}),
    ("f32_fprop_direct_mg_v1", {"groups": (3, 9, 15)}),
    ("s90_f16_fprop_coop", {}), ("s90_f16_fprop_pp_bias_relu", {}),
    ("s90_f16_wgrad_coop_sk", {}), ("s90_f16_wgrad_coop_sk", {"split_k": 3}),
    ("s90_bf16_wgrad_pp", {}), ("s90_f16_dgrad_coop", {}), ("s90_f16_fprop_coop_sk", {"split_k": 2}),
    ("s90_f16_fprop3d_coop", {"conv3d": "dilated"}),
    ("s90_f16_wgrad3d_coop_sk", {"conv3d": "asym_stride", "split_k": 2}),
])
def test_sanitizer_subset(ops, gen, seed_note, key, extra):
    """Small problems with ragged edges: what compute-sanitizer memcheck runs."""
    spec = KERNELS[key]
    extra = dict(extra)
    shape = shape_for(spec, "asym_stride_dil")
    if "groups" in extra:
        groups, c, k = extra.pop("groups")
        shape = replace(shape, c=c, k=k, groups=groups)
    if "conv3d" in extra:
        shape = shape_3d(spec, extra.pop("conv3d"))
    case = ConvCase(key, shape, alpha=1.0, beta=0.5, **extra)
    check_case(ops, case, gen, seed_note)


# ---- bad input: a clear error, and nothing launches (D stays poisoned) ------------------------

def _operands(spec, shape, torch, form="flat"):
    from conv_case import extents, torch_dtype

    a_ext, b_ext, d_ext = extents(spec, shape)
    make = lambda ext, el: torch.ones(ext, dtype=torch_dtype(el), device="cuda")  # noqa: E731
    poison = -77 if spec.out in ("s8", "s32") else float("nan")
    d = torch.full(d_ext, poison, dtype=torch_dtype(spec.out), device="cuda")
    return (to_layout(make(a_ext, spec.element), "act", spec, form),
            to_layout(make(b_ext, spec.element), "filter", spec, form),
            to_layout(make(d_ext, spec.out), "output", spec, form),
            to_layout(d, "output", spec, form), d)


def _untouched(d):
    return d.isnan().all() if d.is_floating_point() else (d == -77).all()


def _refused(ops, key, shape, match, *, problem_shape=None, form="flat", mutate=None,
             split_k=1, split_mode="Serial"):
    import tilecraft as cutlass
    import torch

    from conv_case import problem_size

    spec = KERNELS[key]
    op = ops.get(key)
    a, b, c, d, d_logical = _operands(spec, shape, torch, form)
    if mutate:
        a, b, c, d = mutate(a, b, c, d)
    problem = problem_size(ConvCase(key, problem_shape or shape, split_k=split_k),
                           problem_shape or shape)
    with pytest.raises((ValueError, TypeError, cutlass.UnsupportedError), match=match):
        args = cutlass.Conv2dArguments(op, problem, a, b, c, d, op.epilogue_type(1.0, 1.0),
                                       getattr(cutlass.conv.SplitKMode, split_mode), split_k)
        op.run(args)
    torch.cuda.synchronize()
    assert bool(_untouched(d_logical)), "D was written by a refused launch"


@pytest.mark.conv_kernels("f16_fprop_opt_st")
def test_refuses_channel_counts_that_disagree(ops):
    spec = KERNELS["f16_fprop_opt_st"]
    shape = shape_for(spec, "3x3")
    wrong = replace(shape, c=shape.c + 8)   # tensors for C, problem for C + 8
    _refused(ops, "f16_fprop_opt_st", shape, r"A \(x\): expected .* elements",
             problem_shape=wrong)


@pytest.mark.conv_kernels("f16_fprop_opt_st")
def test_refuses_output_shape_that_does_not_match(ops):
    import torch

    spec = KERNELS["f16_fprop_opt_st"]
    shape = shape_for(spec, "asym_stride_dil")

    def shorter_d(a, b, c, d):
        return a, b, c, torch.full((d.numel() - spec.align_c,), float("nan"), device="cuda",
                                   dtype=torch.float16)

    _refused(ops, "f16_fprop_opt_st", shape, r"D \(y\): expected", mutate=shorter_d)


@pytest.mark.conv_kernels("f16_fprop_fixed")
def test_refuses_fixed_channels_with_other_channel_count(ops):
    spec = KERNELS["f16_fprop_fixed"]
    shape = replace(shape_for(spec, "3x3"), c=2 * spec.align_a)
    _refused(ops, "f16_fprop_fixed", shape, "fixed_channels: C=8 must equal the kernel's access "
             "size of 4")


@pytest.mark.conv_kernels("f16_fprop_opt_st")
def test_refuses_channels_first_tensor(ops):
    spec = KERNELS["f16_fprop_opt_st"]
    shape = shape_for(spec, "3x3")

    def channels_first(a, b, c, d):
        return a.permute(0, 3, 1, 2).contiguous(), b, c, d

    _refused(ops, "f16_fprop_opt_st", shape, "channels-first tensor", form="nhwc",
             mutate=channels_first)


@pytest.mark.conv_kernels("f16_fprop_opt_st", "f16_fprop_opt_sg", "f16_fprop_an_mg",
                          "simt32_fprop_an_dw")
def test_refuses_groups_a_kernel_cannot_take(ops):
    """groups on an ungrouped kernel; K / groups off a single-group kernel's tile or above a
    multiple-group kernel's; C != groups on a depthwise kernel; split K on a grouped kernel."""
    spec = KERNELS["f16_fprop_opt_st"]
    base = shape_for(spec, "3x3")
    _refused(ops, "f16_fprop_opt_st", replace(base, c=32, k=64, groups=2),
             "groups=2: this kernel computes ungrouped convolutions")
    _refused(ops, "f16_fprop_opt_sg", replace(base, c=32, k=64, groups=2),
             "K / groups = 32 output channels per group must be a multiple of this "
             "single_group kernel's tile N=64")
    _refused(ops, "f16_fprop_an_mg", replace(base, c=32, k=256, groups=2),
             "multiple_group kernel's tile N=64 must be a multiple of K / groups = 128")
    _refused(ops, "f16_fprop_an_mg", replace(base, c=48, k=64, groups=4),
             r"A \(x\): C / groups=12 is not a multiple of the 8-element alignment")
    _refused(ops, "simt32_fprop_an_dw", replace(base, c=32, k=32, groups=16),
             "a depthwise kernel takes C == K == groups")
    _refused(ops, "f16_fprop_opt_sg", replace(base, c=32, k=128, groups=2),
             "grouped convolutions do not split K", split_k=2)


@pytest.mark.conv_kernels("f16_dgrad_opt_un")
def test_refuses_strides_on_unity_dgrad(ops):
    spec = KERNELS["f16_dgrad_opt_un"]
    shape = replace(shape_for(spec, "3x3"), stride=(2, 2))
    _refused(ops, "f16_dgrad_opt_un", shape, "unit strides")


@pytest.mark.conv_kernels("f16_dgrad_opt_st")
def test_refuses_dilation_with_strides_on_strided_dgrad(ops):
    spec = KERNELS["f16_dgrad_opt_st"]
    shape = replace(shape_for(spec, "3x3"), stride=(2, 1), dilation=(1, 2))
    _refused(ops, "f16_dgrad_opt_st", shape, "no dilation")


@pytest.mark.conv_kernels("f16_dgrad_an_st")
def test_refuses_dilation_on_strided_dgrad_at_unit_stride(ops):
    spec = KERNELS["f16_dgrad_an_st"]
    shape = replace(shape_for(spec, "3x3"), dilation=(2, 2))
    _refused(ops, "f16_dgrad_an_st", shape, "strided dgrad kernel takes no dilation")


@pytest.mark.conv_kernels("f16_dgrad_an_st")
def test_refuses_parallel_split_k_on_strided_dgrad(ops):
    spec = KERNELS["f16_dgrad_an_st"]
    _refused(ops, "f16_dgrad_an_st", shape_for(spec, "3x3"), "has no parallel split-K",
             split_k=3, split_mode="Parallel")


@pytest.mark.conv_kernels("i8_fprop_an_fastclamp")
def test_refuses_fast_clamp_beyond_its_k_limit(ops):
    spec = KERNELS["i8_fprop_an_fastclamp"]
    shape = replace(shape_for(spec, "3x3"), c=48)   # implicit GEMM K = 48 * 9 = 432
    _refused(ops, "i8_fprop_an_fastclamp", shape, "K=432 exceeds FastLinearCombinationClamp's "
             "limit of 256")


@pytest.mark.conv_kernels("f16_fprop_opt_st")
def test_refuses_filters_beyond_the_optimized_iterators(ops):
    shape = Shape(1, 40, 40, 8, 8, 33, 3, (16, 16, 1, 1))
    _refused(ops, "f16_fprop_opt_st", shape, "up to 32")


@pytest.mark.conv_kernels("f16_fprop_opt_st")
def test_refuses_channels_off_the_alignment(ops):
    spec = KERNELS["f16_fprop_opt_st"]
    shape = replace(shape_for(spec, "3x3"), c=42)
    _refused(ops, "f16_fprop_opt_st", shape, "C=42 is not a multiple of the 8-element")


@pytest.mark.conv_kernels("f16_fprop_opt_st")
def test_refuses_wrong_dtype(ops):
    def f32_a(a, b, c, d):
        return a.float(), b, c, d

    spec = KERNELS["f16_fprop_opt_st"]
    _refused(ops, "f16_fprop_opt_st", shape_for(spec, "3x3"), r"A \(x\): expected float16",
             mutate=f32_a)


@pytest.mark.conv_kernels("s90_f16_fprop", "s90_f16_fprop_coop")
def test_sm90_refuses_split_k(ops):
    for key in ("s90_f16_fprop", "s90_f16_fprop_coop"):
        _refused(ops, key, shape_for(KERNELS[key], "3x3"),
                 "does not split K; use 1, a persistent SM90 kernel built with tile_scheduler "
                 "StreamK", split_k=2)
    spec = KERNELS["s90_f16_fprop"]
    _refused(ops, "s90_f16_fprop", shape_for(spec, "3x3"), "no parallel split-K form",
             split_k=2, split_mode="Parallel")


@pytest.mark.conv_kernels("s90_f16_fprop")
def test_sm90_refuses_convolution_mode(ops):
    import tilecraft as cutlass
    import torch

    from conv_case import problem_size

    spec = KERNELS["s90_f16_fprop"]
    shape = shape_for(spec, "3x3")
    op = ops.get("s90_f16_fprop")
    a, b, c, d, d_logical = _operands(spec, shape, torch)
    problem = problem_size(ConvCase("s90_f16_fprop", shape, mode="convolution"), shape)
    with pytest.raises(ValueError, match="SM90 kernels compute cross-correlation only"):
        cutlass.Conv2dArguments(op, problem, a, b, c, d, op.epilogue_type(1.0, 1.0))
    assert bool(_untouched(d_logical))


@pytest.mark.conv_kernels("s90_f16_dgrad")
def test_sm90_refuses_strided_dgrad(ops):
    spec = KERNELS["s90_f16_dgrad"]
    shape = replace(shape_for(spec, "3x3"), stride=(2, 2))
    _refused(ops, "s90_f16_dgrad", shape, "SM90 dgrad kernels take unit strides only")


@pytest.mark.conv_kernels("s90_f16_wgrad_coop_sk")
def test_sm90_persistent_wgrad_refuses_a_tile_across_filter_taps(ops):
    spec = KERNELS["s90_f16_wgrad_coop_sk"]
    shape = replace(shape_for(spec, "3x3"), c=96)
    _refused(ops, "s90_f16_wgrad_coop_sk", shape, "C 96: this persistent SM90 wgrad tiles")


@pytest.mark.conv_kernels("s90_f16_fprop")
def test_sm90_refuses_channels_off_the_tma_alignment(ops):
    spec = KERNELS["s90_f16_fprop"]
    shape = replace(shape_for(spec, "3x3"), c=44)
    _refused(ops, "s90_f16_fprop", shape, "C=44 is not a multiple of the 8-element")


@pytest.mark.conv_kernels("s90_f16_fprop_bias_relu")
def test_sm90_refuses_a_missing_bias(ops):
    spec = KERNELS["s90_f16_fprop_bias_relu"]
    _refused(ops, "s90_f16_fprop_bias_relu", shape_for(spec, "3x3"),
             "adds a bias of 72 float16 values")


def test_every_row_compiles(ops):
    """Every description of the table is accepted and compiled (the others' failures would
    show there first)."""
    if ops.build_errors or ops.compile_error:
        pytest.fail(f"refused: {ops.build_errors}; compile: {ops.compile_error}")


test_every_row_compiles = pytest.mark.conv_kernels(*KERNELS)(test_every_row_compiles)
