"""Every kernel of the table on random (often ragged) shapes, every math-instruction row of the
seed's table, random-float accuracy, and fully ragged alignment-1 shapes."""

import re
from dataclasses import replace

import pytest

from gpu_cases import random_case
from gpu_check import check_case
from gpu_kernels import ALIGN1, FLOAT_DATA, KERNELS, MATH_ROWS

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("case_index", [0, 1, 2])
@pytest.mark.parametrize("key", list(KERNELS))
def test_kernel_random_shapes(ops, rng, gen, seed_note, key, case_index):
    """Case 0: the smallest legal problem (1x1x1 where the alignment allows); cases 1-2: random
    shapes mixing tiny, tile-straddling and multi-tile ragged extents. Linear epilogues run
    case 0 without C (beta = 0: the poisoned D must not be read)."""
    spec = KERNELS[key]
    if case_index == 0:
        case = random_case(key, rng, style="min")
        if spec.epilogue == "LinearCombination":
            case = replace(case, with_c=False, beta=0.0)
    else:
        case = random_case(key, rng)
    check_case(ops, case, gen, seed_note)


@pytest.mark.uses_kernels(*MATH_ROWS.values())
@pytest.mark.parametrize("row", list(MATH_ROWS),
                         ids=lambda r: re.sub(r"[^A-Za-z0-9]+", "_", r).strip("_"))
def test_math_instruction_row(ops, rng, gen, seed_note, row):
    """One kernel per row of the seed's math-instruction table, on two more random shapes."""
    key = MATH_ROWS[row]
    for _ in range(2):
        check_case(ops, random_case(key, rng), gen, f"{row} {seed_note}")


@pytest.mark.parametrize("key", FLOAT_DATA)
def test_random_float_data(ops, rng, gen, seed_note, key):
    """uniform(-1, 1) data against float64, with the error bound of the kernel's arithmetic
    (gpu_helpers.float_data_rtol): tf32 ~2^-9, 3xTF32 1e-5 (mean 1e-6), fast_f16 ~2^-10,
    fast_bf16 ~2^-7 relative to |alpha| |A| |B| + |beta| |C|; f32 / f64 accumulation bounds."""
    for style in (None, "multi"):
        case = random_case(key, rng, style=style, data="float", alpha=0.75, beta=-1.25)
        check_case(ops, case, gen, seed_note)


RAGGED = [(1, 1, 1), (7, 13, 5), (129, 67, 33), (1, 300, 2), (257, 1, 129), (65, 130, 17),
          (3, 2, 700)]


@pytest.mark.parametrize("key", ALIGN1)
def test_alignment1_fully_ragged(ops, rng, gen, seed_note, key):
    """Alignment-1 kernels (SIMT, f64 tensor op, tf32/3xTF32 with alignment 1) on shapes that
    are multiples of nothing."""
    for M, N, K in RAGGED:
        case = replace(random_case(key, rng), M=M, N=N, K=K)
        check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", ["f16_rcr_align2", "i8_rcr_align4_clamp", "f16_rrr_t64x64x64"])
def test_small_alignments_and_other_tiles(ops, rng, gen, seed_note, key):
    """f16 with 32-bit accesses (alignment 2), int8 with alignment 4 and a 64x64x64 5-stage f16
    tile, over several more shapes."""
    for _ in range(4):
        check_case(ops, random_case(key, rng), gen, seed_note)
