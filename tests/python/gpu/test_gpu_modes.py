"""The four GEMM modes: Gemm with serial split-K, GemmSplitKParallel, Batched (3-D, flat and
broadcast operands) and Array; and every swizzle under the modes it serves."""

from dataclasses import replace

import pytest

from gpu_cases import random_case, serial_bound_ok
from gpu_check import check_case
from gpu_kernels import ARRAY, BATCHED, KERNELS, PARALLEL_SPLIT_K, SERIAL_SPLIT_K, SWIZZLE_KERNELS

pytestmark = pytest.mark.gpu


def _bounded(key):
    # Serial split-K stores partial results in D: keep them exact in f16 / bf16 / int32 D.
    return KERNELS[key].out in ("f16", "bf16", "s32")


@pytest.mark.parametrize("key", SERIAL_SPLIT_K)
def test_serial_split_k(ops, rng, gen, seed_note, key):
    """gemm_mode Gemm with split_k_slices 2..4 (slices share D through a semaphore)."""
    spec = KERNELS[key]
    for slices in (2, 3, 4):
        case = random_case(key, rng, kmin=slices * spec.tile[2], bounded=_bounded(key),
                           split=slices)
        if case.K < slices:
            case = replace(case, split=case.K)
        assert serial_bound_ok(case), case
        check_case(ops, case, gen, seed_note)


@pytest.mark.uses_kernels("simt32_rrr")
def test_serial_split_k_more_slices_than_k_tiles(ops, rng, gen, seed_note):
    """split_k_slices larger than K / tile_K: CUTLASS launches fewer partitions."""
    for K in (8, 24, 40):
        case = random_case("simt32_rrr", rng, split=4)
        check_case(ops, replace(case, K=K), gen, seed_note)


@pytest.mark.parametrize("key", PARALLEL_SPLIT_K)
def test_parallel_split_k(ops, rng, gen, seed_note, key):
    """GemmSplitKParallel with 2..4 slices: partials in the accumulator type, one reduction
    applying the epilogue (so even clamping int8 outputs stay exact)."""
    spec = KERNELS[key]
    for slices in (2, 3, 4):
        case = random_case(key, rng, kmin=slices * spec.tile[2], mode="GemmSplitKParallel",
                           split=slices)
        check_case(ops, case, gen, seed_note)
    # Small K: fewer partitions than slices asked for, and C absent (beta = 0).
    case = random_case(key, rng, mode="GemmSplitKParallel", split=3, kmin=3,
                       kmax=spec.tile[2] * 2)
    check_case(ops, replace(case, with_c=False, beta=0.0), gen, seed_note)


BATCH_FORMS = ["3d", "flat", "broadcast"]


def _batched_case(key, rng, mode, form):
    batch = rng.randint(2, 5)
    case = random_case(key, rng, mode=mode, batch=batch)
    if form == "flat":
        return replace(case, form="flat")
    if form == "broadcast":  # one operand stored once, batch stride 0
        return replace(case, broadcast=rng.choice(("A", "B", "C", "AC")))
    return case


@pytest.mark.parametrize("form", BATCH_FORMS)
@pytest.mark.parametrize("key", BATCHED)
def test_batched(ops, rng, gen, seed_note, key, form):
    """gemm_mode Batched on (batch, rows, cols) tensors, 1-D packed batches, and batches
    where A, B or C is a single matrix expanded over the batch."""
    if KERNELS[key].interleaved and form != "flat":
        pytest.skip("interleaved operands are 1-D packed")
    for _ in range(2):
        check_case(ops, _batched_case(key, rng, "Batched", form), gen, seed_note)


@pytest.mark.parametrize("form", ["3d", "broadcast"])
@pytest.mark.parametrize("key", ARRAY)
def test_array(ops, rng, gen, seed_note, key, form):
    """gemm_mode Array: the same problems through per-batch pointer arrays."""
    for _ in range(2):
        check_case(ops, _batched_case(key, rng, "Array", form), gen, seed_note)


@pytest.mark.uses_kernels("f16_ccc", "simt32_ccc")
def test_batched_single_batch_and_column_major_batches(ops, rng, gen, seed_note):
    """batch == 1 in both batched modes, and column-major 3-D batches of a larger count."""
    for mode in ("Batched", "Array"):
        check_case(ops, random_case("f16_ccc", rng, mode=mode, batch=1), gen, seed_note)
        check_case(ops, random_case("simt32_ccc", rng, mode=mode, batch=9), gen, seed_note)


@pytest.mark.parametrize("key", SWIZZLE_KERNELS)
def test_swizzle_grids(ops, rng, gen, seed_note, key):
    """Each swizzle on grids of many threadblocks (ragged), in Gemm mode, with serial split-K
    (linear epilogues) and batched; BatchedIdentitySwizzle also in Array mode."""
    spec = KERNELS[key]
    tm, tn, tk = spec.tile
    mm, mn, _ = spec.dim_multiples()
    for M, N in ((9 * tm + mm, 2 * tn + 3 * mn), (tm - mm, 11 * tn + mn), (5 * tm, 5 * tn)):
        M, N = -(-M // mm) * mm, -(-N // mn) * mn
        check_case(ops, replace(random_case(key, rng), M=M, N=N), gen, seed_note)
    if spec.epilogue == "LinearCombination":
        case = random_case(key, rng, kmin=3 * tk, bounded=_bounded(key), split=3)
        check_case(ops, replace(case, M=3 * tm + mm, N=2 * tn + mn), gen, seed_note)
    modes = ("Batched", "Array") if spec.swizzle == "BatchedIdentitySwizzle" else ("Batched",)
    for mode in modes:
        case = random_case(key, rng, mode=mode, batch=rng.randint(2, 6))
        check_case(ops, case, gen, seed_note)
