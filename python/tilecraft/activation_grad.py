"""The activations of tilecraft's epilogues in torch (their values and derivatives), for the
backward formulas of ``tilecraft.torch_ops``: elementwise tensor code that autograd, AOTAutograd
and CUDA graphs all take."""

import math

from tilecraft import interop

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_CUBIC = 0.044715
# Those whose derivative is a function of their output: the backward needs no pre-activation.
FROM_OUTPUT = frozenset({"", "identity", "relu", "sigmoid", "tanh"})
NAMES = ("identity", "relu", "leaky_relu", "sigmoid", "tanh", "silu", "hardswish", "gelu",
         "gelu_tanh", "clamp")


def _slope(args):
    return float(args[0]) if args else 0.01


def _bounds(args):
    if len(args) != 2:
        raise ValueError(f"activation_args: clamp takes (low, high), got {tuple(args)}")
    return float(args[0]), float(args[1])


def apply(name, z, args=()):
    """activation(z) as the epilogue computes it."""
    torch = interop.torch()
    functional = torch.nn.functional
    if name in ("", "identity"):
        return z
    if name == "relu":
        return torch.relu(z)
    if name == "leaky_relu":
        return functional.leaky_relu(z, _slope(args))
    if name == "sigmoid":
        return torch.sigmoid(z)
    if name == "tanh":
        return torch.tanh(z)
    if name == "silu":
        return functional.silu(z)
    if name == "hardswish":
        return functional.hardswish(z)
    if name == "gelu":
        return functional.gelu(z)
    if name == "gelu_tanh":
        return functional.gelu(z, approximate="tanh")
    if name == "clamp":
        low, high = _bounds(args)
        return torch.clamp(z, low, high)
    raise ValueError(f"activation: expected None or one of {list(NAMES)}, got {name!r}")


def derivative_from_output(name, y):
    """d activation / dz from the output y, for the names in FROM_OUTPUT (float32)."""
    y = y.float()
    if name in ("", "identity"):
        return None
    if name == "relu":
        return (y > 0).float()
    if name == "sigmoid":
        return y * (1.0 - y)
    if name == "tanh":
        return 1.0 - y * y
    raise ValueError(f"activation: {name!r} needs its pre-activation for the derivative")


def derivative(name, z, args=()):
    """d activation / dz at the pre-activation z (float32)."""
    torch = interop.torch()
    z = z.float()
    if name in FROM_OUTPUT:
        return derivative_from_output(name, apply(name, z, args))
    if name == "leaky_relu":
        return torch.where(z > 0, torch.ones_like(z), torch.full_like(z, _slope(args)))
    if name == "silu":
        s = torch.sigmoid(z)
        return s * (1.0 + z * (1.0 - s))
    if name == "hardswish":
        inner = (2.0 * z + 3.0) / 6.0
        return torch.where(z < -3.0, torch.zeros_like(z),
                           torch.where(z > 3.0, torch.ones_like(z), inner))
    if name == "gelu":
        cdf = 0.5 * (1.0 + torch.erf(z / math.sqrt(2.0)))
        pdf = torch.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
        return cdf + z * pdf
    if name == "gelu_tanh":
        t = torch.tanh(_SQRT_2_OVER_PI * (z + _GELU_CUBIC * z * z * z))
        return 0.5 * (1.0 + t) + 0.5 * z * (1.0 - t * t) * _SQRT_2_OVER_PI * (
            1.0 + 3.0 * _GELU_CUBIC * z * z)
    if name == "clamp":
        low, high = _bounds(args)
        return ((z >= low) & (z <= high)).float()
    raise ValueError(f"activation: no derivative known for {name!r}")
