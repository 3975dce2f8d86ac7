"""The float64 reference's last steps and the element-wise checks: exact equality where the
arithmetic is exact (small integers, dyadic scalars), bounded error where it is not (random
floats, transcendental activations), with every mismatch located in the message."""

import math

from gpu_helpers import F16_MAX, _torch, run_case, torch_dtype
from gpu_kernels import KERNELS

# ---- the float64 reference ------------------------------------------------------------------

def erf64(x):
    return _torch().special.erf(x)


def activation_ref(name, x, args=()):
    """float64 versions of cutlass/epilogue/thread/activation.h."""
    torch = _torch()
    if name is None:
        return x
    if name == "relu":
        return torch.clamp(x, min=0.0)
    if name == "leaky_relu":
        return torch.where(x > 0, x, x * args[0])
    if name == "tanh":
        return torch.tanh(x)
    if name == "sigmoid":
        return 1.0 / (1.0 + torch.exp(-x))
    if name == "silu":
        return x / (1.0 + torch.exp(-x))
    if name == "hardswish":
        return x * torch.clamp(x + 3.0, 0.0, 6.0) / 6.0
    if name == "gelu":  # CUTLASS's GELU is the erf form, not the tanh approximation
        return 0.5 * x * (1.0 + erf64(x / math.sqrt(2.0)))
    raise ValueError(name)


# Tolerances of activations computed on the device, relative to the float64 formula:
# (atol, rtol). tanh uses tanh.approx.f32 (about 2^-11 relative error); expf / erff are within
# a few ulps; hardswish multiplies by 0.16666667f instead of dividing by 6. GELU's 1 + erf(x/√2)
# cancels for x << 0, so its absolute error is about |x| / 2 * ulp(1): atol covers |x| <= 16.
ACT_TOL_F32 = {"tanh": (1e-3, 1e-3), "sigmoid": (1e-7, 2e-6), "silu": (1e-7, 2e-6),
               "gelu": (1e-6, 2e-6), "hardswish": (1e-7, 1e-6)}
ACT_TOL_F64 = {"gelu": (1e-14, 1e-13), "hardswish": (1e-15, 1e-14)}
# Half an ulp would do for a single rounding; allow one ulp (relative, absolute-at-zero).
OUT_EPS = {"f16": (2.0 ** -24, 2.0 ** -10), "bf16": (1e-38, 2.0 ** -7),
           "f32": (1e-38, 2.0 ** -23), "f64": (0.0, 2.0 ** -52)}


def float_data_rtol(spec, K):
    """Bound on |D - ref| / scale, scale = |alpha| |A| |B| + |beta| |C|, for random floats:
    operand conversion error per product plus f32 / f64 accumulation over K."""
    f32_sum = 2 * (K + 4) * 2.0 ** -24
    if spec.element == "f64":
        return 2 * (K + 4) * 2.0 ** -53
    if spec.opclass == "Simt":
        return f32_sum
    if spec.math == "multiply_add_fast_f32":
        return 1e-5          # 3xTF32: ~1e-6 typical (the mean is checked against 1e-6 too)
    if spec.math == "multiply_add_fast_f16":
        return 2.0 ** -10 + f32_sum
    if spec.math == "multiply_add_fast_bf16":
        return 2.0 ** -7 + f32_sum
    return 2.0 ** -9 + f32_sum  # tf32: 10 explicit mantissa bits, truncated or rounded


# ---- checks ---------------------------------------------------------------------------------

def expected_output(spec, case, pre):
    """The exact mathematical output for the float64 pre-activation ``pre``."""
    torch = _torch()
    y = pre
    if spec.clamps and spec.out == "s8":
        y = torch.round(y).clamp(-128, 127)      # round half to even, then saturate
    elif spec.clamps:
        y = y.clamp(-F16_MAX, F16_MAX) if spec.out == "f16" else y
    y = activation_ref(spec.activation, y, case.act_args)
    if spec.out == "s32":
        y = torch.round(y)
    return y


def round_to_output(spec, y):
    """``y`` (exact in float32) converted once to D's element, as the epilogue does."""
    torch = _torch()
    if spec.out in ("f16", "bf16", "f32"):
        return y.to(torch.float32).to(torch_dtype(spec.out)).to(torch.float64)
    return y


def _report(what, bad, got, want, tol=None, limit=6):
    total = bad.numel()
    count = int(bad.sum())
    where = bad.nonzero()[:limit].tolist()
    lines = [f"{what}: {count} of {total} elements mismatch"]
    for idx in where:
        g, w = float(got[tuple(idx)]), float(want[tuple(idx)])
        t = "" if tol is None else f" tol {float(tol[tuple(idx)]):.3g}"
        lines.append(f"  at {tuple(idx)}: got {g!r}, want {w!r}{t}")
    return "\n".join(lines)


def assert_exact(got, want, what):
    bad = ~(got == want)   # NaN (an unwritten, poisoned element) is never equal
    assert not bool(bad.any()), _report(what, bad, got, want)


def assert_within(got, want, tol, what):
    bad = ~((got - want).abs() <= tol)
    assert not bool(bad.any()), _report(what, bad, got, want, tol)


def check_case(ops, case, gen, seed_note=""):
    """Runs and checks one case against the float64 reference, every element."""
    spec = KERNELS[case.key]
    got, pre, scale, padding = run_case(ops, case, gen)
    what = f"{case} {seed_note}".strip()
    want = expected_output(spec, case, pre)
    out_atol, out_rtol = OUT_EPS.get(spec.out, (0.0, 0.0))
    if case.data == "float":
        rtol = float_data_rtol(spec, case.K)
        tol = rtol * scale + out_rtol * want.abs() + out_atol
        assert_within(got, want, tol, what)
        if spec.math == "multiply_add_fast_f32":
            mean = float(((got - want).abs() / scale.clamp(min=1e-30)).mean())
            assert mean <= 1e-6, f"{what}: 3xTF32 mean relative error {mean:.3g} > 1e-6"
    elif spec.activation in ACT_TOL_F32:
        table = ACT_TOL_F64 if spec.compute == "f64" else ACT_TOL_F32
        atol, rtol = table[spec.activation]
        tol = atol + out_atol + (rtol + out_rtol) * want.abs()
        assert_within(got, want, tol, what)
    else:
        assert_exact(got, round_to_output(spec, want), what)
    if padding is not None:
        untouched = padding != padding if spec.out not in ("s8", "s32") else padding == -77
        assert bool(untouched.all()), f"{what}: D's padding (outside the matrix) was written"
    return got
