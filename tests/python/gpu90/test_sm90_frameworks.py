"""Operands from numpy (host arrays staged to the device; D and aux copied back by sync()) and
from cupy (DLPack views of device memory), including the SM90 bias and aux arguments. numpy and
cupy hold no bfloat16 / fp8, so these use the f16 / f32 / int8 kernels."""

import pytest

from sm90_case import batched, random_case, without_c
from sm90_check import check_case
from sm90_kernels import HOST_FRIENDLY

pytestmark = pytest.mark.gpu

KEYS = tuple(k for k in ("f16_rcr", "f16_ccr_f32out", "tf32_rcr", "f32tc_rcc", "i8_rcr_s8",
                         "i8_rcr_s32", "bias_row_f32", "aux_relu", "act_silu")
             if k in HOST_FRIENDLY)


def _cases(key, rng, framework):
    yield random_case(key, rng, framework=framework)
    yield random_case(key, rng, "min", framework=framework)
    yield without_c(random_case(key, rng, framework=framework))
    yield batched(random_case(key, rng, framework=framework), rng)


@pytest.mark.parametrize("key", KEYS)
def test_numpy(ops, rng, gen, seed_note, key):
    for case in _cases(key, rng, "numpy"):
        check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", KEYS)
def test_cupy(ops, rng, gen, seed_note, key):
    pytest.importorskip("cupy", reason="cupy is not installed")
    for case in _cases(key, rng, "cupy"):
        check_case(ops, case, gen, seed_note)


@pytest.mark.sm90_kernels("bias_row_f32", "tf32_rcr")
def test_cupy_native_arrays(ops, rng, seed_note):
    """Arrays cupy allocated itself (C and Fortran order), bias included, against numpy
    float64."""
    cp = pytest.importorskip("cupy", reason="cupy is not installed")
    import numpy as np

    import tilecraft as cutlass

    state = np.random.default_rng(rng.getrandbits(63))
    for key, (M, N, K), dtype in (("bias_row_f32", (77, 40, 136), np.float16),
                                  ("tf32_rcr", (130, 36, 44), np.float32)):
        op = ops.get(key)
        A = cp.asarray(state.integers(-3, 4, (M, K)).astype(dtype), order="C")
        B = cp.asarray(state.integers(-3, 4, (K, N)).astype(dtype), order="F")
        C = cp.asarray(state.integers(-3, 4, (M, N)).astype(dtype), order="C")
        D = cp.full((M, N), cp.nan, dtype=dtype, order="C")
        extra = {}
        bias = np.zeros((M, 1))
        if key == "bias_row_f32":
            bias = state.integers(-8, 9, M).astype(np.float32) / 2
            extra["bias"] = cp.asarray(bias)
            bias = bias[:, None].astype(np.float64)
        arguments = cutlass.GemmArguments(
            operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K), A=A, B=B, C=C, D=D,
            output_op=op.epilogue_type(0.5, -1.5), **extra)
        op.run(arguments)
        arguments.sync()
        ref = 0.5 * (cp.asnumpy(A).astype(np.float64) @ cp.asnumpy(B).astype(np.float64))
        ref = ref - 1.5 * cp.asnumpy(C).astype(np.float64) + bias
        ref = ref.astype(np.float32).astype(dtype)
        got = cp.asnumpy(D)
        bad = ~(got == ref)
        assert not bad.any(), (f"{key} {M}x{N}x{K}: {int(bad.sum())} of {bad.size} mismatch, "
                               f"first at {np.argwhere(bad)[:4].tolist()} {seed_note}")
