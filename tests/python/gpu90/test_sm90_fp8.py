"""fp8 operands (e4m3 x e4m3, e5m2 x e4m3, fast accumulation) with per-tensor scales:
Z = scale_a*scale_b*alpha*acc + scale_c*beta*C (+ bias), D = scale_d*act(Z) for fp8 D, else
act(Z). Scales as Python floats and as one-element float32 CUDA tensors must agree; scale_c /
scale_d default to 1. Operands are torch.float8_e4m3fn / torch.float8_e5m2 tensors; the
reference multiplies the fp8 values themselves (converted to float64)."""

from dataclasses import replace

import pytest

from sm90_case import batched, random_case, without_c
from sm90_check import assert_exact, check_case
from sm90_kernels import FP8_KEYS, KERNELS

pytestmark = pytest.mark.gpu

FAST = tuple(k for k in FP8_KEYS if KERNELS[k].math == "multiply_add_fast_accum")


@pytest.mark.sm90_kernels("e4m3_rcr_bf16")
def test_fp8_tensors_are_accepted(ops):
    """torch float8 tensors cross into GemmArguments (DLPack) and describe their element: the
    precondition of every other test here, reported on its own."""
    import torch

    import tilecraft as cutlass

    op = ops.get("e4m3_rcr_bf16")
    A = torch.zeros(32, 64, device="cuda").to(torch.float8_e4m3fn)
    B = torch.zeros(32, 64, device="cuda").to(torch.float8_e4m3fn).t()   # column-major K x N
    D = torch.full((32, 32), float("nan"), dtype=torch.bfloat16, device="cuda")
    try:
        arguments = cutlass.GemmArguments(
            operation=op, problem_size=cutlass.gemm.GemmCoord(32, 32, 64), A=A, B=B, C=None, D=D,
            output_op=op.epilogue_type(1.0, 0.0), scale_a=1.0, scale_b=1.0)
    except (TypeError, ValueError) as error:
        pytest.fail(f"GemmArguments refuses torch float8 operands ({type(error).__name__}: "
                    f"{error}); fp8 GEMMs cannot be run from Python")
    op.run(arguments)
    arguments.sync()
    assert bool((D == 0).all()), "zero fp8 operands must give D == 0"


@pytest.mark.parametrize("key", FP8_KEYS)
def test_fp8_exact(ops, rng, gen, seed_note, key):
    """Integer-valued fp8 operands (|x| <= 3, exact in e4m3 and e5m2), power-of-two scales:
    exact, also in the fast-accumulation mode (sums stay below 2^13); tiny shapes, C=None,
    batches."""
    for style in (None, None, "min", "edge"):
        check_case(ops, random_case(key, rng, style), gen, seed_note)
    check_case(ops, without_c(random_case(key, rng)), gen, seed_note)
    check_case(ops, batched(random_case(key, rng), rng), gen, seed_note)


@pytest.mark.parametrize("key", FP8_KEYS)
def test_fp8_random_floats(ops, rng, gen, seed_note, key):
    """uniform(-4, 4) cast to fp8, non-dyadic scales and alpha / beta: within the fp8
    accumulation bound (looser for fast accumulation) and one ulp of D."""
    for _ in range(3):
        check_case(ops, random_case(key, rng, data="float"), gen, seed_note)


@pytest.mark.parametrize("key", FP8_KEYS)
def test_fp8_scale_tensors_match_floats(ops, rng, gen, seed_note, key):
    """The same problem on the same data with the scales as floats and as device tensors: both
    right, and bit-identical to each other; scale_c / scale_d left out means 1."""
    for data in ("int", "float"):
        case = random_case(key, rng, data=data)
        state = gen.get_state()
        first = check_case(ops, case, gen, seed_note)
        gen.set_state(state)
        second = check_case(ops, replace(case, scale_form="tensor"), gen, seed_note)
        assert_exact(second.got, first.got, f"D with tensor scales vs float scales, {case}")
    unit = random_case(key, rng)
    unit = replace(unit, scales=unit.scales[:2] + (1.0, 1.0), pass_unit_scales=False)
    if KERNELS[key].fp8_out:
        unit = replace(unit, alpha=unit.alpha / 64)   # keep |D| in e4m3's range with scale_d 1
    check_case(ops, unit, gen, seed_note)


@pytest.mark.parametrize("key", FAST)
def test_fp8_fast_accum_large_k(ops, rng, gen, seed_note, key):
    """Fast accumulation never promotes to float32: K of 1024..4096 on floats (bound grows with
    K / 128) and on integers kept below 2^13 (exact)."""
    for K in (1024, 2048, 4096):
        case = random_case(key, rng, shape=(130, 144, K), data="float")
        check_case(ops, case, gen, seed_note)
    case = random_case(key, rng, shape=(64, 200, 2048), amax=1)
    check_case(ops, case, gen, seed_note)


@pytest.mark.sm90_kernels("e4m3_rcr_bf16")
def test_fp8_scale_arguments_checked(ops):
    """scale_a / scale_b are required, and scale_d must be 1.0 when D is not fp8."""
    import torch

    import tilecraft as cutlass

    op = ops.get("e4m3_rcr_bf16")
    A = torch.zeros(32, 64, device="cuda").to(torch.float8_e4m3fn)
    B = torch.zeros(32, 64, device="cuda").to(torch.float8_e4m3fn).t()
    D = torch.zeros(32, 32, dtype=torch.bfloat16, device="cuda")
    common = dict(operation=op, problem_size=cutlass.gemm.GemmCoord(32, 32, 64), A=A, B=B,
                  C=None, D=D, output_op=op.epilogue_type(1.0, 0.0))
    with pytest.raises(ValueError, match="scale_a"):
        cutlass.GemmArguments(**common, scale_b=1.0)
    with pytest.raises(ValueError, match="scale_d"):
        cutlass.GemmArguments(**common, scale_a=1.0, scale_b=1.0, scale_d=2.0)
