"""Problem shapes and modes on every kernel: the smallest legal extents (1 wherever TMA allows),
gemm_mode Batched (L = 1..4, row- and column-major batches), and the TMA extent rule."""

import pytest

from sm90_case import random_case, without_c
from sm90_check import check_case
from sm90_kernels import KERNELS
from sm90_shapes import tiny_shapes

pytestmark = pytest.mark.gpu

BATCHED_KEYS = ("bf16_ccc", "f16_crr", "tf32_rcr", "i8_rcr_s8", "pp_64x128",
                "coop_128x128_c2x2", "coop_256x128_c2x1", "act_hardswish")


@pytest.mark.parametrize("key", list(KERNELS))
def test_tiny_shapes(ops, rng, gen, seed_note, key):
    """M, N, K at their smallest legal values (1 for extents no alignment constrains, e.g. M
    of a row-major A and D, or K of a column-major A with a row-major B), with and without C:
    a grid of one CTA, or one cluster mostly out of bounds."""
    for shape in tiny_shapes(KERNELS[key]):
        case = random_case(key, rng, shape=shape)
        check_case(ops, case, gen, seed_note)
    case = random_case(key, rng, shape=tiny_shapes(KERNELS[key])[0])
    check_case(ops, without_c(case), gen, seed_note)


@pytest.mark.parametrize("key", BATCHED_KEYS)
def test_batched(ops, rng, gen, seed_note, key):
    """gemm_mode Batched on 3-D (L, rows, cols) tensors: L = 1, and L in 2..4 with ragged and
    tiny shapes, floats and integers, with and without C."""
    check_case(ops, random_case(key, rng, batch=1), gen, seed_note)
    for L in (2, 3, 4):
        check_case(ops, random_case(key, rng, batch=L), gen, seed_note)
    check_case(ops, random_case(key, rng, "min", batch=3), gen, seed_note)
    check_case(ops, without_c(random_case(key, rng, batch=2)), gen, seed_note)
    if not KERNELS[key].is_int:
        check_case(ops, random_case(key, rng, data="float", batch=rng.randint(2, 4)), gen,
                   seed_note)


@pytest.mark.sm90_kernels("bf16_rcr", "bf16_crr")
def test_tma_extent_rule_is_enforced(ops):
    """A contiguous extent that is not a multiple of the alignment is refused with a worded
    ValueError before anything runs (row-major A: K; column-major A: M)."""
    import torch

    import tilecraft as cutlass

    for key, (M, N, K), word in (("bf16_rcr", (64, 64, 12), "K=12"),
                                 ("bf16_crr", (12, 64, 64), "M=12")):
        spec, op = KERNELS[key], ops.get(key)

        def make(rows, cols, layout):
            t = torch.zeros(rows, cols, dtype=torch.bfloat16, device="cuda")
            return t.t().contiguous().t() if layout == "ColumnMajor" else t

        la, lb, lc = spec.layout_names
        with pytest.raises(ValueError, match=word):
            cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K),
                                  A=make(M, K, la), B=make(K, N, lb), C=None, D=make(M, N, lc),
                                  output_op=op.epilogue_type(1.0, 0.0))
