"""The operation-first API (seed 002) on cuda:1 while cuda:0 is current: every GEMM mode (Gemm,
serial and parallel split-K, Batched, Array) of arch-80 kernels, arch-90 kernels (stream-K's
workspace, fp8 scales, a fused bias + GELU, Batched), grouped GEMM (both arch-80 scheduler modes,
an arch-90 pointer-array kernel) and convolutions (fprop, wgrad, parallel split-K, arch 90), in
torch, cupy and numpy, on the default stream of cuda:1 and on a side stream of it. The cases are
the GPU suites' own (fresh random data, outputs poisoned, every element against float64); only
their DEVICE is cuda:1 here (conftest.py)."""

from dataclasses import replace

import pytest

import conv_case
import gpu_cases
import gpu_check
import sm90_case
import sm90_check
import test_gpu_grouped as grouped
from conv_kernels import KERNELS
from multi_kernels import CONV_KEYS, GROUPED_KEYS, SM90_KEYS


def _sm80_cases(rng):
    key = "f16_rcr"
    tile_k = gpu_cases.KERNELS[key].tile[2]
    serial = gpu_cases.random_case(key, rng, kmin=3 * tile_k, bounded=True, split=3)
    assert gpu_cases.serial_bound_ok(serial), serial
    yield gpu_cases.random_case(key, rng)
    yield serial
    yield gpu_cases.random_case(key, rng, kmin=4 * tile_k, mode="GemmSplitKParallel", split=4)
    for mode in ("Batched", "Array"):
        yield gpu_cases.random_case(key, rng, mode=mode, batch=3)
        yield replace(gpu_cases.random_case(key, rng, mode=mode, batch=2), broadcast="B")
        yield gpu_cases.random_case("simt32_ccc", rng, mode=mode, batch=4)
    yield replace(gpu_cases.random_case(key, rng), side_stream=True)
    yield replace(gpu_cases.random_case(key, rng), framework="cupy")
    yield replace(gpu_cases.random_case(key, rng, mode="Batched", batch=2), framework="cupy",
                  side_stream=True)
    yield replace(gpu_cases.random_case("bf16_crc", rng, data="float"), form="padded")
    yield replace(gpu_cases.random_case(key, rng), framework="numpy")


@pytest.mark.sanitizer
def test_sm80_gemm_modes(kernels, rng, gen, seed_note):
    for case in _sm80_cases(rng):
        gpu_check.check_case(kernels.sm80, case, gen, seed_note)


@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.sanitizer)
                                 if k == "coop_streamk" else k for k in SM90_KEYS])
def test_sm90_gemm(kernels, rng, gen, seed_note, key):
    ops = kernels.sm90
    sm90_check.check_case(ops, sm90_case.random_case(key, rng), gen, seed_note)
    sm90_check.check_case(ops, sm90_case.random_case(key, rng, data="float"), gen, seed_note)
    if key == "bf16_rcr":
        sm90_check.check_case(ops, sm90_case.batched(sm90_case.random_case(key, rng), rng), gen,
                              seed_note)


@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.sanitizer)
                                 if k == "g90_bf16_coop" else k for k in GROUPED_KEYS])
def test_grouped_gemm(kernels, rng, gen, seed_note, key):
    ops = kernels.grouped
    grouped.check_case(ops, grouped.random_case(key, rng, 7), gen, seed_note)
    grouped.check_case(ops, replace(grouped.random_case(key, rng, 5), side_stream=True), gen,
                       seed_note)
    grouped.check_case(ops, grouped.random_case(key, rng, 4, data="float"), gen, seed_note)


# N, H, W, C, K, R, S, padding, stride, dilation: channel counts every listed kernel aligns to.
CONV_SHAPE = conv_case.Shape(2, 9, 11, 40, 72, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1))


@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.sanitizer)
                                 if k == "f16_fprop_opt_st" else k for k in CONV_KEYS])
def test_convolution(kernels, gen, seed_note, key):
    spec = KERNELS[key]
    shape = CONV_SHAPE
    ops = kernels.conv
    conv_case.check_case(ops, conv_case.ConvCase(key, shape, alpha=1.5, beta=-0.5), gen,
                         seed_note)
    if spec.arch == 80:
        conv_case.check_case(ops, conv_case.ConvCase(key, shape, alpha=-1.0, beta=0.25, split_k=3,
                                                     split_mode="Parallel"), gen, seed_note)
        conv_case.check_case(ops, conv_case.ConvCase(key, shape, beta=0.5, split_k=2), gen,
                             seed_note)
    else:
        conv_case.check_case(ops, conv_case.ConvCase(key, shape, data="float", c_form="none"),
                             gen, seed_note)
