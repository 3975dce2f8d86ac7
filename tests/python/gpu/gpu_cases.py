"""Random GemmCases that respect each kernel's alignment and keep integer results exact.

Exactness budget (why the default ranges below are what they are):
* f32 / s32 accumulation and f32 epilogues: small integers times dyadic alpha/beta stay far
  below 2^24, so the device result is the exact value rounded ONCE to D's element, which is
  what the reference does (float64 -> float32 (exact) -> D's element, round to nearest even).
* f16 accumulation with an f16 epilogue (tags "f16acc"): every partial sum and every epilogue
  step must be exact in f16 (integers up to 2048, halves up to 1024): |A|,|B| <= 2, K <= 120,
  |alpha| <= 2, so |alpha * acc| <= 960, plus |beta * C| <= 1.5.
* serial split-K re-reads D between slices: the partial results must be exact in D's element.
* int8 clamps: alpha is a power of two chosen so about half of the outputs saturate.
* FastLinearCombinationClamp converts the accumulator with a 2^22 trick: K <= 256.
"""

import math
from dataclasses import replace

from gpu_helpers import GemmCase
from gpu_kernels import KERNELS

M_N_MAX = 520


def kmax_for(spec):
    if "f16acc" in spec.tags:
        return 120
    if spec.epilogue == "FastLinearCombinationClamp":
        return 256
    return 520


def amax_for(spec):
    if "f16acc" in spec.tags:
        return 2
    return 4 if spec.is_int else 3


def _dim(rng, mult, tile, hi, style):
    if style == "min":
        v = mult
    elif style == "small":
        v = rng.randint(1, 40)
    elif style == "tile":      # straddling a tile boundary
        v = tile + rng.randint(-2 * mult - 3, 2 * mult + 3)
    else:                      # several tiles, ragged
        v = rng.randint(tile + 1, max(tile + 2, min(hi, 3 * tile + tile // 2)))
    v = max(mult, -(-v // mult) * mult)
    return min(v, max(mult, hi // mult * mult))


def draw_shape(spec, rng, style=None, kmin=1, kmax=None, mn_max=M_N_MAX):
    """(M, N, K) with M, N, K multiples of what the operands' alignment needs; ``style`` "min"
    gives the smallest legal problem, None a random mix of small / boundary / multi-tile."""
    mm, mn, mk = spec.dim_multiples()
    tm, tn, tk = spec.tile
    kmax = kmax or kmax_for(spec)
    styles = [style] * 3 if style else [rng.choice(("small", "tile", "multi")) for _ in range(3)]
    M = _dim(rng, mm, tm, mn_max, styles[0])
    N = _dim(rng, mn, tn, mn_max, styles[1])
    K = _dim(rng, mk, tk, kmax, styles[2] if styles[2] != "tile" else "multi")
    if K < kmin:
        K = min(-(-kmin // mk) * mk, kmax // mk * mk)
    return M, N, K


def pow2_near(x):
    """The power of two nearest to x, but never 1 (alpha == 1 would not exercise alpha)."""
    p = 2.0 ** round(math.log2(x))
    return p if p != 1.0 else (2.0 if x > 1.0 else 0.5)


def acc_sigma(amax, K):
    """Standard deviation of a K-term dot product of uniform integers in [-amax, amax]."""
    var = amax * (amax + 1) / 3.0
    return max(1.0, math.sqrt(K) * var)


def epilogue_scalars(spec, rng, K, amax, bounded=False):
    """(alpha, beta, activation args, cmax) suited to the kernel's epilogue; never alpha == 1
    or beta == 0, so both scalars are exercised."""
    if spec.epilogue == "LinearCombinationGeneric":
        alpha = pow2_near(3.0 / acc_sigma(amax, K))          # pre-activations of about +-3
        beta = rng.choice((0.5, -0.25, 0.75))
        args = (rng.choice((0.125, 0.25, 0.5)),) if spec.activation == "leaky_relu" else ()
        if rng.random() < 0.5:
            alpha = -alpha
        return alpha, beta, args, 3
    if spec.clamps and spec.out == "s8":                      # about half of D saturates
        alpha = pow2_near(90.0 / acc_sigma(amax, K))
        return alpha * rng.choice((1, -1)), rng.choice((1.0, -1.0, 0.5, 2.0)), (), 60
    if spec.clamps:                                          # f16 D: overflow past 65504
        return pow2_near(60000.0 / acc_sigma(amax, K)), rng.choice((1.0, -2.0)), (), 3
    if bounded:                                              # serial split-K: integers only
        return rng.choice((2.0, -1.0, 3.0)), rng.choice((1.0, -1.0, 2.0)), (), 1
    if spec.out == "s32":
        return rng.choice((2.0, -1.0, 0.5, 3.0)), rng.choice((1.0, -2.0, 0.5)), (), 60
    if "f16acc" in spec.tags:
        return rng.choice((2.0, -1.0, 1.5, 0.5)), rng.choice((1.0, -1.0, 0.5)), (), 3
    return rng.choice((2.0, -1.5, 0.5, 0.75)), rng.choice((1.0, -2.0, 0.5, 1.5)), (), 3


def random_case(key, rng, style=None, **overrides):
    """A GemmCase for ``key`` with a random legal shape and scalars; ``overrides`` win."""
    spec = KERNELS[key]
    kmax = overrides.pop("kmax", None)
    kmin = overrides.pop("kmin", 1)
    bounded = overrides.pop("bounded", False)
    M, N, K = draw_shape(spec, rng, style, kmin=kmin, kmax=kmax)
    amax = overrides.get("amax", 1 if bounded else amax_for(spec))
    alpha, beta, args, cmax = epilogue_scalars(spec, rng, K, amax, bounded)
    if bounded:
        cmax = 1
    fields = dict(key=key, M=M, N=N, K=K, alpha=alpha, beta=beta, act_args=args, amax=amax,
                  cmax=cmax)
    fields.update(overrides)
    return GemmCase(**fields)


def with_min_mn(case, lo):
    """``case`` with M and N raised to at least ``lo`` (kept legal for the kernel)."""
    mm, mn, _ = KERNELS[case.key].dim_multiples()
    return replace(case, M=max(case.M, -(-lo // mm) * mm), N=max(case.N, -(-lo // mn) * mn))


def serial_bound_ok(case):
    """Serial split-K writes partial results to D: are they exact in D's element?"""
    spec = KERNELS[case.key]
    limit = {"f16": 2048, "bf16": 256}.get(spec.out)
    if limit is None:
        return True
    bound = abs(case.alpha) * case.K * case.amax ** 2 + abs(case.beta) * case.cmax
    return bound <= limit
