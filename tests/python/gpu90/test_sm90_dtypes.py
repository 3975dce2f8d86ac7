"""Element types x operand majorness (plain LinearCombination, cooperative, cluster 1x1): f16
(f32 and f16 accumulation, f16 and f32 D), bf16 in all four A/B majorness combinations and a
column-major D, tf32 / f32 (TN), fp8 (TN, with per-tensor scales), int8 (TN, s32 / s8 / f32 D)."""

import pytest

from sm90_case import batched, random_case, without_c
from sm90_check import check_case
from sm90_kernels import DTYPE_KEYS, KERNELS

pytestmark = pytest.mark.gpu

# Random floats everywhere but int8 (integer-only) and f16 accumulation, whose worst-case bound
# (a rounding of the f16 running sum per k-step: K * 2^-11 of sum |a b|) proves nothing; its
# exact integer tests (partial sums exact in f16) are its check.
FLOAT_DATA_KEYS = tuple(k for k in DTYPE_KEYS if not KERNELS[k].is_int and KERNELS[k].acc != "f16")


@pytest.mark.parametrize("key", DTYPE_KEYS)
def test_dtype_exact(ops, rng, gen, seed_note, key):
    """Small-integer data (exact arithmetic): ragged random shapes, the smallest legal shape,
    C=None with beta=0, and a batch; alpha != 1, beta != 0; D must equal the reference."""
    for style in (None, None, None, "min", "edge"):
        check_case(ops, random_case(key, rng, style), gen, seed_note)
    check_case(ops, without_c(random_case(key, rng)), gen, seed_note)
    check_case(ops, batched(random_case(key, rng), rng), gen, seed_note)


@pytest.mark.parametrize("key", FLOAT_DATA_KEYS)
def test_dtype_random_floats(ops, rng, gen, seed_note, key):
    """uniform(-1, 1) data (uniform(-4, 4) before the fp8 cast), non-dyadic alpha / beta:
    within the accumulation bound and one ulp of D."""
    for style in (None, None, "edge"):
        check_case(ops, random_case(key, rng, style, data="float"), gen, seed_note)
    check_case(ops, batched(random_case(key, rng, data="float"), rng), gen, seed_note)
