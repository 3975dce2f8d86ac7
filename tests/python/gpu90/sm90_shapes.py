"""Random legal problem shapes for an SM90 kernel.

TMA needs only each operand's contiguous extent to be a multiple of its 16-byte alignment
(Sm90Spec.dim_multiples); every other extent is arbitrary, down to 1. Shapes straddle tile and
cluster boundaries and are never required to be multiples of the tile.
"""

M_N_MAX = 720      # 2.8 cluster-tiles of the widest cluster (4 x 128 or 2 x 256) in the table
K_MAX = 640


def round_up(v, mult):
    return max(mult, -(-v // mult) * mult)


def round_down(v, mult):
    return max(mult, v // mult * mult)


def _dim(rng, mult, extent, hi, style, reach=2.5):
    """One extent: a multiple of ``mult`` in [mult, hi]. ``extent`` is what a CTA cluster covers
    (tile x cluster) along this dimension, or the tile's K; "multi" reaches ``reach`` of them."""
    if style == "min":
        v = mult
    elif style == "small":
        v = rng.randint(1, 40)
    elif style == "edge":          # just below / above one cluster-tile
        v = extent + rng.choice((-1, 1)) * rng.randint(1, 2 * mult + 2)
    else:                          # several cluster-tiles, ragged
        v = rng.randint(extent + 1, max(extent + 2, min(hi, int(reach * extent))))
    return min(round_up(v, mult), round_down(hi, mult))


def draw_shape(spec, rng, style=None, kmin=1, kmax=None, mn_max=M_N_MAX):
    """(M, N, K) legal for ``spec``. ``style`` "min" is the smallest legal problem; None mixes
    "small", "edge" and "multi" per dimension at random."""
    mm, mn, mk = spec.dim_multiples()
    tm, tn, tk = spec.tile
    cm, cn, _ = spec.cluster
    kmax = kmax or K_MAX
    styles = [style] * 3 if style else [rng.choice(("small", "edge", "multi")) for _ in range(3)]
    M = _dim(rng, mm, tm * cm, mn_max, styles[0])
    N = _dim(rng, mn, tn * cn, mn_max, styles[1])
    K = _dim(rng, mk, tk, kmax, styles[2], reach=kmax / tk)
    if K < kmin:
        K = min(round_up(kmin, mk), round_down(kmax, mk))
    return M, N, K


def tiny_shapes(spec):
    """The smallest legal extents, alone and together: 1 wherever no alignment applies."""
    mm, mn, mk = spec.dim_multiples()
    return [(mm, mn, mk), (mm, 2 * mn + mn, mk), (3 * mm, mn, 5 * mk), (mm + mm, mn, 2 * mk)]
