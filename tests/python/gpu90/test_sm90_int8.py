"""int8 x int8 -> int32 accumulation (TN) with full-range operands, checked exactly: int32 D
through an int32 epilogue, int8 D (float32 epilogue: round half to even, then saturate to
[-128, 127]) and float32 D."""

import pytest

from sm90_case import random_case
from sm90_check import check_case

pytestmark = pytest.mark.gpu


@pytest.mark.sm90_kernels("i8_rcr_s32")
def test_int8_to_int32_full_range(ops, rng, gen, seed_note):
    """|A|,|B| <= 127 and K <= 512: |acc| < 2^23, and integer alpha / beta in the int32
    epilogue keep D inside int32."""
    for alpha, beta in ((1.0, 0.0), (3.0, -2.0), (-2.0, 1.0)):
        case = random_case("i8_rcr_s32", rng, kmax=512, amax=127, cmax=100000, alpha=alpha,
                           beta=beta)
        check_case(ops, case, gen, seed_note)


@pytest.mark.sm90_kernels("i8_rcr_s8")
def test_int8_saturation_and_rounding(ops, rng, gen, seed_note):
    """int8 D from the float32 epilogue: cvt.rni.sat rounds half to even and saturates.
    Full-range operands with alpha = +-2^-10 / 2^-9 (alpha*acc + beta*C exact in float32)
    must saturate at both bounds; alpha = 0.5 / -0.25 on small operands makes about half of
    the results exact halves, which must round to the even neighbour in both directions."""
    import torch

    for alpha in (2.0 ** -10, -(2.0 ** -10), 2.0 ** -9):
        case = random_case("i8_rcr_s8", rng, kmin=64, kmax=256, amax=127, cmax=100,
                           alpha=alpha, beta=rng.choice((1.0, -1.0, 0.5)))
        case.M, case.N = max(case.M, 48), max(case.N, 48)
        out = check_case(ops, case, gen, seed_note)
        assert bool((out.got == 127).any()) and bool((out.got == -128).any()), \
            f"{case}: no saturated outputs, the clamp was not exercised"
    for alpha in (0.5, -0.25):
        case = random_case("i8_rcr_s8", rng, kmax=64, amax=3, cmax=20, alpha=alpha, beta=1.0)
        case.M, case.N = max(case.M, 16), max(case.N, 16)
        out = check_case(ops, case, gen, seed_note)
        ties = (out.z - torch.floor(out.z) == 0.5) & (out.z.abs() < 127)
        floor_even = torch.remainder(torch.floor(out.z), 2) == 0
        assert bool((ties & floor_even).any()) and bool((ties & ~floor_even).any()), \
            f"{case}: no halves rounding down and up; round-half-even not exercised"


@pytest.mark.sm90_kernels("i8_rcc_f32")
def test_int8_to_float32(ops, rng, gen, seed_note):
    """Full-range operands into a column-major float32 D: exact below 2^24."""
    for alpha in (1.0, -0.5, 2.0):
        case = random_case("i8_rcc_f32", rng, kmax=512, amax=127, cmax=100, alpha=alpha,
                           beta=rng.choice((1.0, -1.5)))
        check_case(ops, case, gen, seed_note)
