"""Every epilogue functor: LinearCombination (all kernels), LinearCombinationClamp (int8 and f16
saturation), FastLinearCombinationClamp (int8, K <= 256), LinearCombinationGeneric with all
seven activations (alpha != 1, beta != 0), and the int8 interleaved layouts."""

from dataclasses import replace

import pytest

from gpu_cases import random_case, with_min_mn
from gpu_check import check_case
from gpu_helpers import (F16_MAX, interleaved_b_column_order, pack_interleaved,
                         unpack_interleaved)
from gpu_kernels import ACTIVATION_KERNELS, CLAMP_KERNELS, KERNELS

pytestmark = pytest.mark.gpu

INT8_CLAMPS = tuple(k for k in CLAMP_KERNELS if KERNELS[k].out == "s8")


@pytest.mark.parametrize("spread", [1.0, 4.0])
@pytest.mark.parametrize("key", ACTIVATION_KERNELS)
def test_activations(ops, rng, gen, seed_note, key, spread):
    """D = act(alpha * acc + beta * C) against the float64 formula of activation.h; ``spread``
    4 reaches the saturating tails (tanh, sigmoid) and hardswish's +-3 corners."""
    for _ in range(3):
        case = random_case(key, rng)
        check_case(ops, replace(case, alpha=case.alpha * spread), gen, seed_note)


@pytest.mark.parametrize("slope", [0.0, 0.125, 0.5, 2.0, -0.25])
@pytest.mark.uses_kernels("f16_leaky_relu", "simt32_leaky_relu")
def test_leaky_relu_slopes(ops, rng, gen, seed_note, slope):
    """leaky_relu's slope arrives through operation.epilogue_type(alpha, beta, slope)."""
    for key in ("f16_leaky_relu", "simt32_leaky_relu"):
        case = random_case(key, rng)
        check_case(ops, replace(case, act_args=(slope,)), gen, seed_note)


@pytest.mark.parametrize("key", INT8_CLAMPS)
def test_int8_saturation_full_range(ops, rng, gen, seed_note, key):
    """Full-range int8 operands (|x| <= 127, K <= 256 so |acc| < 2^22 and alpha * acc + beta * C
    is exact in float32): D must equal round-half-even(ref) clamped to [-128, 127], and both
    bounds must actually occur."""
    for _ in range(2):
        case = random_case(key, rng, kmax=256, kmin=64, amax=127, cmax=100)
        alpha = rng.choice((2.0 ** -10, -(2.0 ** -10), 2.0 ** -9))
        case = replace(with_min_mn(case, 48), alpha=alpha, beta=rng.choice((1.0, -1.0, 0.5)))
        got = check_case(ops, case, gen, seed_note)
        assert bool((got == 127).any()) and bool((got == -128).any()), \
            f"{case}: no saturated outputs; the clamp was not exercised"


@pytest.mark.uses_kernels("i8_rcr_fastclamp")
def test_fast_clamp_at_k_limit(ops, rng, gen, seed_note):
    """FastLinearCombinationClamp at its largest K (256) with full-range operands."""
    for M, N in ((130, 48), (1, 16), (257, 272)):
        case = random_case("i8_rcr_fastclamp", rng, amax=127, cmax=100)
        case = replace(case, M=M, N=N, K=256, alpha=2.0 ** -10, beta=-1.0)
        check_case(ops, case, gen, seed_note)


@pytest.mark.uses_kernels("f16_rcr_clamp")
def test_f16_clamp_saturates_at_65504(ops, rng, gen, seed_note):
    """LinearCombinationClamp with an f16 D clamps to +-65504 instead of overflowing to inf."""
    for _ in range(3):
        case = with_min_mn(random_case("f16_rcr_clamp", rng, kmin=64), 40)
        got = check_case(ops, case, gen, seed_note)
        assert bool((got.abs() == F16_MAX).any()), f"{case}: nothing reached the clamp"
        assert not bool(got.isinf().any()), f"{case}: D holds inf"


@pytest.mark.uses_kernels("i8_rcr_s32")
def test_int8_to_int32_output(ops, rng, gen, seed_note):
    """int8 GEMM writing int32 through a float32 epilogue (exact below 2^24), halves rounded to
    even (alpha = 0.5)."""
    for alpha, beta in ((0.5, -1.0), (3.0, 2.0), (-1.0, 0.5)):
        # |3 * acc| <= 3 * 256 * 127^2 < 2^24: exact in the float32 epilogue.
        case = random_case("i8_rcr_s32", rng, amax=127, cmax=1000, kmax=256)
        check_case(ops, replace(case, alpha=alpha, beta=beta), gen, seed_note)


@pytest.mark.parametrize("key", ["i8_rcr_clamp", "i8_rcr_fastclamp", "f16_gelu", "f16_silu",
                                 "f64_hardswish", "f16acc_rrc_relu", "i8_interleaved"])
def test_without_c(ops, rng, gen, seed_note, key):
    """C=None and beta=0 for each epilogue kind: the poisoned D must not be read as C."""
    for _ in range(2):
        case = random_case(key, rng)
        check_case(ops, replace(case, with_c=False, beta=0.0), gen, seed_note)


@pytest.mark.uses_kernels("i8_interleaved")
def test_int8_interleaved(ops, rng, gen, seed_note):
    """A ColumnMajorInterleaved32, B RowMajorInterleaved32 (column-reordered as CUTLASS's
    interleaved kernel requires), C/D ColumnMajorInterleaved32, packed 1-D from logical
    matrices; ragged M, K and N multiples of 32."""
    for M, N, K in ((1, 32, 32), (127, 96, 160), (300, 256, 64), (33, 64, 544)):
        case = replace(random_case("i8_interleaved", rng, form="flat"), M=M, N=N, K=K)
        check_case(ops, case, gen, seed_note)
    case = random_case("i8_interleaved", rng, kmax=256, kmin=64, amax=127, cmax=100)
    check_case(ops, replace(case, alpha=2.0 ** -10, beta=1.0), gen, seed_note)


def test_interleave_packing_formula():
    """The packing helper against CUTLASS's layout formulas, element by element."""
    import numpy as np

    rows, cols = 64, 96
    x = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    cm = pack_interleaved(x, "ColumnMajorInterleaved32")
    rm = pack_interleaved(x, "RowMajorInterleaved32")
    for r in range(rows):
        for c in range(cols):
            assert cm[(c // 32) * (rows * 32) + r * 32 + c % 32] == x[r, c]
            assert rm[(r // 32) * (cols * 32) + c * 32 + r % 32] == x[r, c]
    assert (unpack_interleaved(cm, "ColumnMajorInterleaved32", rows, cols) == x).all()
    assert (unpack_interleaved(rm, "RowMajorInterleaved32", rows, cols) == x).all()


def test_interleaved_b_column_order():
    """The B column reordering equals CUTLASS's reorder_column<32> formula and is a permutation
    of each group of 32 columns."""
    order = interleaved_b_column_order(96)
    elements_per_thread, reordered_per_thread = 8 // 4, 32 // 4
    for n in range(96):
        assert order[n] == ((n // 32) * 32
                            + ((n % reordered_per_thread) // elements_per_thread) * 8
                            + ((n % 32) // reordered_per_thread) * elements_per_thread
                            + n % elements_per_thread)
    for first in (0, 32, 64):
        assert sorted(order[first:first + 32]) == list(range(first, first + 32))
