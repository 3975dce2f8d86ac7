"""Schedule families on bf16: pingpong, plain warp-specialized, cooperative; clusters 2x1, 1x2,
2x2, 4x1, 1x4; explicit stages; tile K 32 / 128; Auto schedules; swizzles; and the StreamK tile
scheduler (stream-K with split_k_slices 1, split-K with 2..4, large K, batches)."""

import pytest

from sm90_case import batched, random_case
from sm90_check import check_case
from sm90_kernels import SCHEDULE_KEYS, STREAMK_KEYS, KERNELS
from sm90_shapes import round_up

pytestmark = pytest.mark.gpu

STREAMK = STREAMK_KEYS[0]


def _grid_shape(spec, rng, m_clusters, n_clusters):
    """A problem covering about m x n cluster-tiles, ragged at both ends."""
    mm, mn, mk = spec.dim_multiples()
    M = m_clusters * spec.tile[0] * spec.cluster[0] + rng.randint(1, 40)
    N = n_clusters * spec.tile[1] * spec.cluster[1] + rng.randint(1, 40)
    K = rng.randint(1, 5 * spec.tile[2])
    return round_up(M, mm), round_up(N, mn), round_up(K, mk)


@pytest.mark.parametrize("key", SCHEDULE_KEYS)
def test_schedule(ops, rng, gen, seed_note, key):
    """Ragged random shapes, grids of several clusters with partial clusters at the edges,
    random floats, and a batch."""
    spec = KERNELS[key]
    for style in (None, None, "edge"):
        check_case(ops, random_case(key, rng, style), gen, seed_note)
    for m, n in ((2, 1), (1, 3), (3, 2)):
        check_case(ops, random_case(key, rng, shape=_grid_shape(spec, rng, m, n)), gen,
                   seed_note)
    check_case(ops, random_case(key, rng, data="float"), gen, seed_note)
    check_case(ops, batched(random_case(key, rng), rng), gen, seed_note)


@pytest.mark.parametrize("key", [k for k in SCHEDULE_KEYS if KERNELS[k].swizzle !=
                                 "IdentitySwizzle1"])
def test_swizzle_large_grids(ops, rng, gen, seed_note, key):
    """Swizzled / N-major rasterization over grids wider and taller than the swizzle."""
    spec = KERNELS[key]
    for m, n in ((9, 2), (1, 11), (5, 5)):
        check_case(ops, random_case(key, rng, shape=_grid_shape(spec, rng, m, n)), gen,
                   seed_note)


@pytest.mark.parametrize("split", [1, 2, 3, 4])
@pytest.mark.sm90_kernels(STREAMK)
def test_streamk_split_k(ops, rng, gen, seed_note, split):
    """split_k_slices 1 (stream-K heuristic) and 2..4 (split-K; partial sums reduced in a
    float32 workspace), gemm_mode Gemm: exact on integers, bounded on floats; K from a few
    k-tiles per slice down to fewer k-tiles than slices."""
    tk = KERNELS[STREAMK].tile[2]
    for kmin in (split * tk, split * 2 * tk):
        case = random_case(STREAMK, rng, kmin=kmin, kmax=max(640, kmin), split=split)
        check_case(ops, case, gen, seed_note)
    case = random_case(STREAMK, rng, kmin=split * tk, kmax=max(640, split * tk), split=split,
                       data="float")
    check_case(ops, case, gen, seed_note)
    small_k = random_case(STREAMK, rng, shape=(77, 136, 8 * split), split=split)
    check_case(ops, small_k, gen, seed_note)   # fewer k-tiles than slices


@pytest.mark.parametrize("split", [1, 4])
@pytest.mark.sm90_kernels(STREAMK)
def test_streamk_nondeterministic_reduction(ops, rng, gen, seed_note, split):
    """deterministic=False: partial sums meet in any order. Integer data stays exact (every
    order gives the same sums); floats stay within the bound."""
    for shape in ((96, 120, 4096), (512, 512, 2048), (33, 264, 1024)):
        case = random_case(STREAMK, rng, shape=shape, amax=2, split=split, deterministic=False)
        check_case(ops, case, gen, seed_note)
    case = random_case(STREAMK, rng, shape=(200, 200, 5000), data="float", split=split,
                       deterministic=False)
    check_case(ops, case, gen, seed_note)


@pytest.mark.sm90_kernels(STREAMK)
def test_streamk_large_k(ops, rng, gen, seed_note):
    """Few output tiles and K of thousands: the stream-K scheduler splits K across CTAs.
    |A|,|B| <= 2 keeps integer sums exact below 2^24."""
    for (M, N), K in (((96, 120), 4096), ((130, 8), 8192), ((1, 264), 6152)):
        for split in (1, 3):
            case = random_case(STREAMK, rng, shape=(M, N, K), amax=2, split=split)
            check_case(ops, case, gen, seed_note)
    case = random_case(STREAMK, rng, shape=(200, 200, 5000), data="float")
    check_case(ops, case, gen, seed_note)


@pytest.mark.sm90_kernels(STREAMK)
def test_streamk_batched(ops, rng, gen, seed_note):
    for _ in range(2):
        check_case(ops, batched(random_case(STREAMK, rng, kmin=256), rng), gen, seed_note)


@pytest.mark.sm90_kernels("bf16_rcr")
def test_split_k_needs_streamk(ops):
    """split_k_slices > 1 on a Persistent-scheduler kernel is refused with a worded error."""
    import torch

    import tilecraft as cutlass

    op = ops.get("bf16_rcr")
    A = torch.zeros(64, 256, dtype=torch.bfloat16, device="cuda")
    B = torch.zeros(256, 64, dtype=torch.bfloat16, device="cuda").t().contiguous().t()
    D = torch.zeros(64, 64, dtype=torch.bfloat16, device="cuda")
    with pytest.raises(ValueError, match="StreamK"):  # UnsupportedError is a ValueError
        cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(64, 64, 256),
                              A=A, B=B, C=None, D=D, output_op=op.epilogue_type(1.0, 0.0),
                              split_k_slices=2)
