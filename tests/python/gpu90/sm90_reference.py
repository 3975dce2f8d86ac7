"""The float64 reference's last steps: activations (as cutlass/epilogue/thread/activation.h
defines them), D = scale_d * act(Z) for fp8 D, and the conversion to D's element (round to
nearest even; int8 saturates; fp8 saturates to its largest finite value, as the SM90
epilogue's cvt.rn.satfinite does)."""

import math

from sm90_data import FP8_MAX, torch_dtype


def _torch():
    import torch

    return torch


SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def activation_ref(name, x, args=()):
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
        return torch.sigmoid(x)
    if name == "silu":
        return x * torch.sigmoid(x)
    if name == "hardswish":
        return x * torch.clamp(x + 3.0, 0.0, 6.0) / 6.0
    if name == "gelu":  # the erf form
        return 0.5 * x * (1.0 + torch.special.erf(x / math.sqrt(2.0)))
    if name == "gelu_tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        return 0.5 * x * (1.0 + torch.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x ** 3)))
    if name == "clamp":  # min(max(x, lower), upper)
        return torch.clamp(torch.clamp(x, min=args[0]), max=args[1])
    raise ValueError(name)


# Activations whose float32 result is exact for an exact float32 input (given dyadic args).
EXACT_ACTIVATIONS = (None, "relu", "leaky_relu", "clamp")

# Largest |d act / dx|: how an error in Z grows through the activation.
LIPSCHITZ = {None: 1.0, "relu": 1.0, "tanh": 1.0, "sigmoid": 0.25, "silu": 1.1,
             "hardswish": 1.5, "gelu": 1.13, "gelu_tanh": 1.13, "clamp": 1.0}

# |device act(z) - act(z)| <= atol + rtol * |act(z)| + ztol * |z|, for an exact float32 z:
# tanh is tanh.approx.f32 (relative error below 2^-10.9); sigmoid and silu divide by
# 1 + expf(-z) (a few ulps); hardswish multiplies by 0.16666667f; gelu uses erff, whose
# 1 + erf(z / sqrt 2) cancels for z << 0 (absolute error ~ |z| ulp(1)); gelu_tanh is
# 0.5 z (1 + tanh.approx(...)), so tanh's error reaches it times |z| / 2.
ACT_TOL = {"tanh": (1e-6, 1e-3, 0.0), "sigmoid": (1e-7, 4e-6, 0.0),
           "silu": (1e-7, 4e-6, 0.0), "hardswish": (1e-7, 2e-6, 0.0),
           "gelu": (1e-6, 4e-6, 1e-6), "gelu_tanh": (1e-6, 2e-3, 6e-4)}


def lipschitz(spec, args):
    if spec.activation == "leaky_relu":
        return max(1.0, abs(args[0]))
    return LIPSCHITZ[spec.activation]


def saturate(element, y):
    """What the conversion to ``element`` does to out-of-range values."""
    if element in FP8_MAX:
        return y.clamp(-FP8_MAX[element], FP8_MAX[element])
    if element == "s8":
        return y.clamp(-128, 127)
    return y


def round_to(element, y):
    """``y`` (float64, exact in float32) converted once to ``element``, back as float64."""
    torch = _torch()
    if element == "s8":
        return torch.round(y).clamp(-128, 127)          # cvt.rni.sat: half to even, saturate
    if element == "s32":
        if not bool((y == torch.round(y)).all()):
            raise AssertionError("test bug: an int32 result that is not an integer")
        return y
    y32 = saturate(element, y).to(torch.float32)
    if element in ("f32", "tf32"):
        return y32.to(torch.float64)
    return y32.to(torch_dtype(element)).to(torch.float64)


# One unit in the last place, relative (rtol) and at zero (atol: the subnormal spacing).
ULP = {"f16": (2.0 ** -10, 2.0 ** -24), "bf16": (2.0 ** -7, 2.0 ** -133),
       "f32": (2.0 ** -23, 2.0 ** -149), "e4m3": (2.0 ** -3, 2.0 ** -9),
       "e5m2": (2.0 ** -2, 2.0 ** -16), "s8": (0.0, 1.0), "s32": (0.0, 0.0)}
