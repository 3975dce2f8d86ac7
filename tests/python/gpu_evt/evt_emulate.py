"""A float32 emulation of what an epilogue kernel computes, on the CPU: the case's function called
on float32 torch values, with the kernel's conversions (round to nearest, fp8 saturating) and
float32 reductions. It stands in for the GPU where there is none, so that the suite's data,
reference and tolerances can be checked on the CPU (tests/python/test_epilogue_graph_cpu.py):
a correct float32 implementation must pass every check, a corrupted one must not.

``emulated(case)`` swaps the epilogue language's functions of evt_cases.py for float32 ones while
the case's function runs.
"""

import contextlib
import math

import evt_cases
from evt_ref import TANH_APPROX, element_of, expf_approx, saturate, torch_dtype


def _torch():
    import torch

    return torch


class E:
    """A float32 value as an epilogue kernel holds it."""

    __slots__ = ("v",)
    shape = None   # (M, N), for reductions of broadcast values

    def __init__(self, v):
        self.v = v.to(_torch().float32)

    def _b(self, other):
        if isinstance(other, E):
            return other.v
        return _torch().tensor(float(other), dtype=_torch().float32)

    def __add__(self, o):
        return E(self.v + self._b(o))

    def __radd__(self, o):
        return E(self._b(o) + self.v)

    def __sub__(self, o):
        return E(self.v - self._b(o))

    def __rsub__(self, o):
        return E(self._b(o) - self.v)

    def __mul__(self, o):
        return E(self.v * self._b(o))

    def __rmul__(self, o):
        return E(self._b(o) * self.v)

    def __truediv__(self, o):
        return E(self.v / self._b(o))

    def __rtruediv__(self, o):
        return E(self._b(o) / self.v)

    def __neg__(self):
        return E(-self.v)

    def __lt__(self, o):
        return E((self.v < self._b(o)).float())

    def __le__(self, o):
        return E((self.v <= self._b(o)).float())

    def __gt__(self, o):
        return E((self.v > self._b(o)).float())

    def __ge__(self, o):
        return E((self.v >= self._b(o)).float())

    def __eq__(self, o):
        return E((self.v == self._b(o)).float())

    def __ne__(self, o):
        return E((self.v != self._b(o)).float())

    __hash__ = None

    def abs(self):
        return E(self.v.abs())

    def to(self, dtype):
        element = element_of(dtype)
        return E(store(self, element).to(_torch().float32))

    def _full(self):
        return self.v.expand(E.shape)

    def sum(self, dim=None):
        v = self._full()
        return E(v.sum().reshape(1) if dim is None else v.sum(1 if dim == -1 else dim))

    def max(self, dim=None):
        v = self._full()
        return E(v.max().reshape(1) if dim is None else v.amax(1 if dim == -1 else dim))

    amax = max


def store(x, element):
    """x converted to ``element`` as the kernel stores it (fp8 saturating)."""
    v = x.v
    if element == "f32":
        return v.clone()
    return saturate(element, v).to(torch_dtype(element)) if element not in ("f16", "bf16") \
        else v.to(torch_dtype(element))


def _f(x):
    return x.v if isinstance(x, E) else _torch().tensor(float(x), dtype=_torch().float32)


FUNCTIONS = {
    "relu": lambda x: E(x.v.clamp(min=0.0)),
    "where": lambda c, a, b: E(_torch().where(c.v != 0, _f(a), _f(b))),
    "maximum": lambda a, b: E(_torch().maximum(_f(a), _f(b))),
    "minimum": lambda a, b: E(_torch().minimum(_f(a), _f(b))),
    "abs": lambda x: E(x.v.abs()),
    "leaky_relu": lambda x, s: E(_torch().where(x.v > 0, x.v, x.v * _f(s))),
    "clamp": lambda x, lo, hi: E(_torch().minimum(_torch().maximum(x.v, _f(lo)), _f(hi))),
    "square": lambda x: E(x.v * x.v),
    "reciprocal": lambda x: E(1.0 / x.v),
    "tanh": lambda x: E(_torch().tanh(x.v)),
    "sigmoid": lambda x: E(1.0 / (1.0 + _torch().exp(-x.v))),
    "silu": lambda x: E(x.v / (1.0 + _torch().exp(-x.v))),
    "hardswish": lambda x: E(x.v * (x.v + 3.0).clamp(0.0, 6.0) / 6.0),
    "gelu": lambda x: E(0.5 * x.v * (1.0 + _torch().erf(x.v * 0.70710678118654752))),
    "gelu_tanh": lambda x: E(0.5 * x.v * (1.0 + _torch().tanh(
        0.79788456080286536 * (x.v + 0.044715 * x.v * x.v * x.v)))),
}


def _fast_tanh(v):
    """tanh.approx.f32 at its documented worst (relative error 2^-11), toward zero."""
    return _torch().tanh(v) * (1.0 - TANH_APPROX)


def _fast_quotient(numerator, v):
    """numerator / (1 + __expf(-v)) by __fdividef, at __expf's and __fdividef's documented worst
    (toward zero): 0 where the divisor passes 2^126."""
    torch = _torch()
    worst = expf_approx(v.abs()) + 2.0 ** -22
    divisor = 1.0 + torch.exp(-v)
    quotient = numerator / divisor * (1.0 - worst)
    return torch.where(divisor > 2.0 ** 126, 0.0 * quotient, quotient)


def _fast_gelu(v):
    """The fast gelu at its bound's worst: r = erfc(a) moved down by Abramowitz and Stegun
    7.1.26's 1.5e-7 and by twice (64 + 4.5 a^2) u of itself (evt_ref._gelu_fast_error)."""
    torch = _torch()
    a = v.abs() * 0.70710678118654752
    r = torch.special.erfc(a)
    r = (r - 1.5e-7 - 2 * (64 + 4.5 * a * a) * 2.0 ** -24 * r).clamp(min=0.0)
    return 0.5 * v * torch.where(v >= 0, 2.0 - r, r)


# Fast math (Case.fast_math): the approximate forms at the bounds evt_ref says they keep.
FAST_FUNCTIONS = {
    "gelu": lambda x: E(_fast_gelu(x.v)),
    "tanh": lambda x: E(_fast_tanh(x.v)),
    "sigmoid": lambda x: E(_fast_quotient(1.0, x.v)),
    "silu": lambda x: E(_fast_quotient(x.v, x.v)),
    "gelu_tanh": lambda x: E(0.5 * x.v * (1.0 + _fast_tanh(
        0.79788456080286536 * (x.v + 0.044715 * x.v * x.v * x.v)))),
}


@contextlib.contextmanager
def emulated(shape, fast_math=False):
    """Inside: evt_cases' functions compute in float32 (E values), in their fast forms with
    ``fast_math``; reductions over ``shape``."""
    saved = {name: getattr(evt_cases, name) for name in FUNCTIONS}
    E.shape = tuple(shape)
    functions = dict(FUNCTIONS, **(FAST_FUNCTIONS if fast_math else {}))
    try:
        for name, fn in functions.items():
            setattr(evt_cases, name, fn)
        yield
    finally:
        for name, fn in saved.items():
            setattr(evt_cases, name, fn)
        E.shape = None


def emulate(run):
    """The outputs an epilogue kernel would write for ``run`` (an evt_run.Run, unbatched)."""
    torch = _torch()
    case = run.case
    assert not run.batch
    acc = E(run.a.to(torch.float32) @ run.b.to(torch.float32))
    args = {}
    for name, value in run.inputs.items():
        spec = case.inputs[name]
        if spec.kind == "scalar":
            args[name] = E(torch.tensor(value, dtype=torch.float32))
        elif spec.kind in ("row", "row2d"):
            args[name] = E(value.reshape(-1, 1).to(torch.float32))
        elif spec.kind in ("col", "col2d"):
            args[name] = E(value.reshape(1, -1).to(torch.float32))
        else:
            args[name] = E(value.to(torch.float32))
    with emulated((run.M, run.N), case.fast_math):
        results = case.fn(acc, **args)
    results = results if isinstance(results, tuple) else (results,)
    out = {}
    for o, value in zip(case.outputs, results):
        if o.kind == "store":
            out[o.name] = store(E(value.v.expand(run.M, run.N)), o.dtype)
        else:
            out[o.name] = value.v.clone()
    return out


def corrupt_one(t, element):
    """``t`` with its middle element moved toward zero by four units in the last place of
    ``element`` (of float32: 2^-7 relative), at least 1/16 (from zero: up): what a wrong kernel
    would write (toward zero: a saturated fp8 value stays representable)."""
    torch = _torch()
    flat = t.reshape(-1).to(torch.float64)
    i = flat.numel() // 2
    rel = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -9, "e4m3": 2.0 ** -3,
           "e5m2": 2.0 ** -2}[element]
    x = float(flat[i])
    step = max(abs(x) * rel * 4, 2.0 ** -4)
    flat[i] = x - math.copysign(step, x) if x != 0 else step
    if element in ("e4m3", "e5m2"):
        flat = flat.to(torch.float32)
    return flat.to(t.dtype).reshape(t.shape)
