"""Element-wise checks of D (and aux) against the float64 reference, every element.

Exact equality where the arithmetic is exact ("int" data with a linear / relu / leaky_relu /
clamp epilogue: Z is exact in float32 and D is Z rounded once); otherwise a stated bound

    |D - ref| <= |scale_d| * (Lip(act) * tol_Z + act_err) + one ulp of D's element,
    tol_Z = rtol_data * |g alpha| (|A| @ |B|) + 2^-22 * (|g alpha acc| + |sc beta C| + |bias|),

rtol_data covering the accumulation (and tf32 / fp8 tensor-core precision) and 2^-22 the
float32 epilogue's few roundings. aux (= Z rounded to element_aux) gets tol_Z and one ulp.
"""

from sm90_reference import (ACT_TOL, EXACT_ACTIVATIONS, ULP, activation_ref, lipschitz,
                            round_to, saturate)
from sm90_run import run_case

EPILOGUE_RTOL = 2.0 ** -22


def data_rtol(spec, K):
    """Bound on the accumulator's error relative to sum_k |a_k b_k|, for "float" data."""
    f32_sum = (K + 8) * 2.0 ** -23          # one (truncating) float32 rounding per addition
    if spec.acc == "f16":
        return (K + 8) * 2.0 ** -10
    if spec.a in ("tf32", "f32"):
        return 2.0 ** -9 + f32_sum          # f32 inputs read as tf32 (10 mantissa bits)
    if spec.fp8_in:
        # fp8 wgmma adds into a 13-mantissa-bit (truncating) accumulator; CUTLASS promotes it
        # to float32 every 4 wgmmas (K = 128) unless in the fast-accumulation mode.
        blocks = 1 if spec.math != "multiply_add_fast_accum" else -(-K // 128)
        return 2.0 ** -10 * blocks + f32_sum
    return f32_sum


def exact_case(case):
    return case.data == "int" and case.spec.activation in EXACT_ACTIVATIONS


def check_budget(case):
    """The test's own premise for exact checks (see sm90_case): fail loudly if broken."""
    spec = case.spec
    bound = case.K * case.amax ** 2
    if case.data == "int" and spec.acc == "f16":
        assert bound <= 2048, f"test bug: f16 accumulator not exact for {case}"
    if case.data == "int" and spec.fp8_in:
        assert bound < 2 ** 13, f"test bug: fp8 accumulator not exact for {case}"


def _report(what, bad, got, want, tol=None, limit=8):
    count = int(bad.sum())
    lines = [f"{what}: {count} of {bad.numel()} elements mismatch"]
    for idx in bad.nonzero()[:limit].tolist():
        g, w = float(got[tuple(idx)]), float(want[tuple(idx)])
        t = "" if tol is None else f" (tolerance {float(tol[tuple(idx)]):.3g})"
        lines.append(f"  at {tuple(idx)}: got {g!r}, want {w!r}{t}")
    return "\n".join(lines)


def assert_exact(got, want, what):
    bad = ~(got == want)    # a NaN (poison never overwritten) is never equal
    assert not bool(bad.any()), _report(what, bad, got, want)


def assert_within(got, want, tol, what):
    bad = ~((got - want).abs() <= tol)
    assert not bool(bad.any()), _report(what, bad, got, want, tol)


def assert_f32_exact(z, case):
    """Z must be exact in the epilogue's compute type (int32 for int32 epilogues)."""
    import torch

    if case.spec.compute == "s32":
        assert bool((z.abs() < 2 ** 31).all()), f"test bug: Z overflows int32 for {case}"
        return
    assert bool((z.to(torch.float32).to(torch.float64) == z).all()), \
        f"test bug: Z is not exact in float32 for {case}"


def check_outcome(case, out, what):
    spec = case.spec
    want_y = activation_ref(spec.activation, out.z, case.act_args)
    want = saturate(spec.out, out.d_scale * want_y)
    urtol, uatol = ULP[spec.out]
    if exact_case(case):
        check_budget(case)
        assert_f32_exact(out.z, case)
        assert_exact(out.got, round_to(spec.out, out.d_scale * want_y), f"D of {what}")
    else:
        tol_z = EPILOGUE_RTOL * out.z_abs
        if case.data == "float":
            tol_z = tol_z + data_rtol(spec, case.K) * out.mm_abs
        tol = lipschitz(spec, case.act_args) * tol_z
        if spec.activation in ACT_TOL:
            atol, rtol, ztol = ACT_TOL[spec.activation]
            tol = tol + atol + rtol * want_y.abs() + ztol * out.z.abs()
        tol = abs(out.d_scale) * tol
        tol = tol + urtol * (want.abs() + tol) + uatol
        assert_within(out.got, want, tol, f"D of {what}")
    if out.got_aux is not None:
        aux_el = spec.aux_element
        if case.data == "int":
            assert_f32_exact(out.z, case)
            assert_exact(out.got_aux, round_to(aux_el, out.z), f"aux of {what}")
        else:
            tol = EPILOGUE_RTOL * out.z_abs + data_rtol(spec, case.K) * out.mm_abs
            urtol, uatol = ULP[aux_el]
            tol = tol + urtol * (out.z.abs() + tol) + uatol
            assert_within(out.got_aux, out.z, tol, f"aux of {what}")


def check_case(ops, case, gen, seed_note=""):
    """Runs ``case`` and checks every element of D (and aux); returns the Outcome."""
    out = run_case(ops, case, gen)
    check_outcome(case, out, f"{case} {seed_note}".strip())
    return out
