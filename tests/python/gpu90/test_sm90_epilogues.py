"""Epilogue families: the nine activations of LinearCombinationGeneric, per-row and per-column
bias (float32 / bfloat16 / with an activation), the aux output of the pre-activation value, and
fused epilogues without C (the poisoned D must not be read as C)."""

from dataclasses import replace

import pytest

from sm90_case import batched, random_case, without_c
from sm90_check import check_case
from sm90_kernels import ACTIVATION_KEYS, AUX_KEYS, BIAS_KEYS, KERNELS

pytestmark = pytest.mark.gpu

FUSED_KEYS = tuple(k for k, s in KERNELS.items()
                   if s.family == "epilogue" and (s.bias or s.aux or s.activation))


@pytest.mark.parametrize("spread", [1.0, 4.0])
@pytest.mark.parametrize("key", ACTIVATION_KEYS)
def test_activation(ops, rng, gen, seed_note, key, spread):
    """D = act(alpha * acc + beta * C) on integer data, pre-activations about +-3 (spread 1) or
    +-12 (spread 4: tanh / sigmoid tails, hardswish's corners, gelu's cancellation)."""
    for style in (None, None, "edge"):
        case = random_case(key, rng, style)
        check_case(ops, replace(case, alpha=case.alpha * spread), gen, seed_note)
    check_case(ops, batched(random_case(key, rng), rng), gen, seed_note)


@pytest.mark.parametrize("key", ACTIVATION_KEYS)
def test_activation_random_floats(ops, rng, gen, seed_note, key):
    for _ in range(2):
        check_case(ops, random_case(key, rng, data="float"), gen, seed_note)


@pytest.mark.parametrize("slope", [0.0, 0.125, 0.5, 2.0, -0.25])
@pytest.mark.sm90_kernels("act_leaky_relu")
def test_leaky_relu_slopes(ops, rng, gen, seed_note, slope):
    """The slope reaches the kernel through operation.epilogue_type(alpha, beta, slope)."""
    for _ in range(2):
        case = random_case("act_leaky_relu", rng, act_args=(slope,))
        check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (0.0, 0.0), (-0.5, 2.5), (4.0, 6.0),
                                    (-100.0, -50.0), (-1e30, 1e30)])
@pytest.mark.sm90_kernels("act_clamp")
def test_clamp_bounds(ops, rng, gen, seed_note, bounds):
    """clamp(lower, upper) = min(max(Z, lower), upper): bounds that clip both sides, pin every
    value (lower == upper), sit entirely above or below the data, or never bind."""
    for _ in range(2):
        case = random_case("act_clamp", rng, act_args=bounds)
        check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", BIAS_KEYS)
def test_bias(ops, rng, gen, seed_note, key):
    """Z = alpha*acc + beta*C + bias, bias 'row' (M values) or 'column' (N values): integer and
    float data, ragged and tiny shapes, and batches with one vector per batch ((L, len), rows
    16-byte aligned) or one vector shared by all batches ((len,))."""
    for style in (None, None, "min", "edge"):
        check_case(ops, random_case(key, rng, style), gen, seed_note)
    check_case(ops, random_case(key, rng, data="float"), gen, seed_note)
    for per_batch in (True, False):
        case = batched(random_case(key, rng, bias_per_batch=per_batch), rng)
        check_case(ops, case, gen, seed_note)


@pytest.mark.parametrize("key", AUX_KEYS)
def test_aux(ops, rng, gen, seed_note, key):
    """aux = Z (before the activation, element_aux, D's layout), D = act(Z); both poisoned
    before the launch and checked element by element."""
    for style in (None, None, "min", "edge"):
        check_case(ops, random_case(key, rng, style), gen, seed_note)
    check_case(ops, random_case(key, rng, data="float"), gen, seed_note)
    check_case(ops, batched(random_case(key, rng, bias_per_batch=True), rng), gen, seed_note)


@pytest.mark.parametrize("key", FUSED_KEYS)
def test_fused_without_c(ops, rng, gen, seed_note, key):
    """C=None and beta=0: the epilogue is handed D's (NaN-poisoned) address as C; reading it
    would put NaN into D."""
    for style in (None, "min"):
        check_case(ops, without_c(random_case(key, rng, style)), gen, seed_note)
