"""The float64 reference of an epilogue graph, with a bound on the kernel's error, element by
element.

The suite's epilogues are plain Python functions (evt_cases.py). ``tilecraft.epilogue.trace``
reads their source; the reference CALLS the same function on ``R`` values: an ``R`` holds the
float64 value ``v`` of the expression (torch, on the data the kernel read) and ``e``, a bound on
``|kernel's float32 value - v|`` for every element. The function's names (relu, where, ...) are
the functions of this module, imported into evt_cases.py, so that the body means the same thing
to the tracer and to the reference.

How ``e`` grows (u = 2^-24, float32's unit roundoff; every epilogue node computes in float32):

* inputs (tensors of any element type) are read exactly: e = 0. A number (a runtime scalar or a
  constant of the body) is rounded to float32 once: e = |c - float32(c)|.
* the accumulator: e = 0 where the products are integers and sum_k |a_k b_k| < 2^24 (every
  partial sum is an exact float32 integer, whatever the order); else (K + 8) 2^-23 (|A| @ |B|),
  one truncating float32 addition per term (the bound the SM80 / SM90 suites use).
* + - * / (IEEE round to nearest in CUDA, with or without FMA contraction, which only removes a
  rounding): the propagated error of the exact operation, plus one rounding u (|v| + e). Where
  the operands are exact (e = 0) and the exact result is a float32 number, the kernel computes
  it exactly and e stays 0; that is what makes "int" data checks exact.
* negate, abs, maximum, minimum, relu, clamp, select: no rounding (e is the operands' e).
* comparisons: 1 or 0, certain where |a - b| > e_a + e_b (or both exact); elsewhere the kernel may
  decide either way: e = 1, and a select on such a condition may pick either branch.
* tanh, sigmoid, silu, hardswish, gelu, gelu_tanh (tc_evt's tanhf / expf / erff: at most 2 ulps
  each, CUDA C Programming Guide, "Mathematical Functions"): Lip * e_x plus a stated bound of the
  float32 evaluation (twice the sum of its roundings; see ACTIVATION_ERROR). In a fast-math
  graph (``evaluation(shape, fast_math=True)``) tanh, sigmoid, silu and gelu_tanh take the
  documented bounds of tanh.approx.f32, __expf and __fdividef (FAST_ACTIVATION_ERROR).
* x.to(T): the kernel rounds its value (within e of v) to T, saturating fp8: the reference value
  is T's rounding of v, e becomes e + ulp_T(|v| + e) (both roundings are within half an ulp;
  fp8 magnitudes capped at the largest finite value; 0 where the value certainly saturates).
* sum along an axis of n terms: exact (e = 0) where every term is exact, all lie on one grid
  2^-k and their magnitudes add up below 2^24 grid steps; else sum(e) + gamma_n sum(|v| + e),
  gamma_n = n u / (1 - n u): the bound of ANY summation order (Higham, "Accuracy and Stability
  of Numerical Algorithms", 4.2), since threads, warp shuffles and atomics add in no fixed order.
  max / abs-max: e = max(e) over the reduced terms. A reduction reads the value before it is
  stored (the tracer reduces the expression, not the rounded output), as the reference does.

``check_output`` compares a kernel's output with an ``R``: where its rounding to the output type
is exact (e = 0, or an fp8 value that certainly saturates), EXACTLY equal to the reference
rounded once to the output type; elsewhere |got - v| <= e + ulp_T(|v| + e) as for x.to(T).
Poisoned (NaN) elements never pass.
"""

import contextlib
import math

U = 2.0 ** -24                 # float32 unit roundoff (round to nearest)
F32_TINY = 2.0 ** -126         # absolute slack of one float32 operation near zero (subnormals)
_F64_SLACK = 1.0 + 2.0 ** -20  # covers the float64 rounding of the reference's own operations

# One unit in the last place, relative, and at zero (the subnormal spacing).
ULP = {"f16": (2.0 ** -10, 2.0 ** -24), "bf16": (2.0 ** -7, 2.0 ** -133),
       "f32": (2.0 ** -23, 2.0 ** -149), "e4m3": (2.0 ** -3, 2.0 ** -9),
       "e5m2": (2.0 ** -2, 2.0 ** -16)}
FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}
TORCH_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32",
                "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}

# Largest |d act / dx| (how an error of the input grows through the activation).
LIPSCHITZ = {"tanh": 1.0, "sigmoid": 0.25, "silu": 1.1, "hardswish": 1.5, "gelu": 1.2,
             "gelu_tanh": 1.2}

_SHAPE = []   # the (M, N) an evaluation reduces over (reductions expand broadcast values to it)
_FAST = [False]   # whether the evaluation's graph computes in fast math


def _torch():
    import torch

    return torch


def element_of(dtype):
    """'f16', 'bf16', 'f32', 'e4m3', 'e5m2' from a torch dtype (or that name)."""
    name = str(dtype).replace("torch.", "")
    for element, torch_name in TORCH_DTYPES.items():
        if name in (element, torch_name):
            return element
    raise ValueError(f"no output element type for {dtype!r}")


def torch_dtype(element):
    return getattr(_torch(), TORCH_DTYPES[element])


def to64(t):
    """Any tensor (fp8 included) as float64, on its device."""
    torch = _torch()
    if t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        t = t.to(torch.float32)
    return t.to(torch.float64)


def saturate(element, v):
    """What the conversion to ``element`` does to out-of-range values (fp8: satfinite)."""
    if element in FP8_MAX:
        return v.clamp(-FP8_MAX[element], FP8_MAX[element])
    return v


def round_to(element, v):
    """``v`` rounded once to ``element`` (round to nearest even, fp8 saturating), as float64.
    Exact for a ``v`` that is a float32 number (where e = 0 it is: the kernel's own value)."""
    torch = _torch()
    v32 = saturate(element, v).to(torch.float32)
    if element == "f32":
        return v32.to(torch.float64)
    return to64(v32.to(torch_dtype(element)))


def ulp(element, magnitude):
    rel, sub = ULP[element]
    return (magnitude * rel).clamp(min=sub)


def _f32_result(v, e_in):
    """The error after the kernel rounds an operation's result to float32 (see the module's
    documentation): 0 where the operands were exact and the result is a float32 number."""
    torch = _torch()
    exact = (e_in == 0) & (v.to(torch.float32).to(torch.float64) == v)
    bound = e_in + U * (v.abs() + e_in) * _F64_SLACK + F32_TINY
    return torch.where(exact, torch.zeros_like(v), bound)


@contextlib.contextmanager
def evaluation(shape, fast_math=False):
    """Reductions in the block reduce over ``shape`` = (M, N); ``fast_math``: the graph's
    activations take their fast forms' error bounds (FAST_ACTIVATION_ERROR)."""
    _SHAPE.append(tuple(shape))
    _FAST.append(bool(fast_math))
    try:
        yield
    finally:
        _SHAPE.pop()
        _FAST.pop()


class R:
    """A float64 value and a bound on the kernel's error (see the module's documentation)."""

    __slots__ = ("v", "e")

    def __init__(self, v, e=None):
        torch = _torch()
        self.v = v.to(torch.float64)
        self.e = torch.zeros_like(self.v) if e is None else e

    @staticmethod
    def exact(t):
        """A tensor the kernel reads: exact."""
        return R(to64(t))

    def __repr__(self):
        return f"R(shape={tuple(self.v.shape)}, max|e|={float(self.e.max()):.3g})"

    # ---- arithmetic -----------------------------------------------------------------------
    def __add__(self, other):
        b = lift(other, self)
        v = self.v + b.v
        return R(v, _f32_result(v, self.e + b.e))

    def __radd__(self, other):
        return lift(other, self) + self

    def __sub__(self, other):
        b = lift(other, self)
        v = self.v - b.v
        return R(v, _f32_result(v, self.e + b.e))

    def __rsub__(self, other):
        return lift(other, self) - self

    def __mul__(self, other):
        b = lift(other, self)
        v = self.v * b.v
        e = self.v.abs() * b.e + b.v.abs() * self.e + self.e * b.e
        return R(v, _f32_result(v, e))

    def __rmul__(self, other):
        return lift(other, self) * self

    def __truediv__(self, other):
        torch = _torch()
        b = lift(other, self)
        v = self.v / b.v
        margin = b.v.abs() - b.e
        e = torch.where(margin > 0, (self.e + v.abs() * b.e) / margin.clamp(min=1e-300),
                        torch.full_like(v, math.inf))
        return R(v, _f32_result(v, e))

    def __rtruediv__(self, other):
        return lift(other, self) / self

    def __neg__(self):
        return R(-self.v, self.e)

    # ---- comparisons (1.0 or 0.0, as tc_evt's Less ... NotEqual) ----------------------------
    def _compare(self, other, op):
        torch = _torch()
        b = lift(other, self)
        v = op(self.v, b.v).to(torch.float64)
        spread = self.e + b.e
        certain = (spread == 0) | ((self.v - b.v).abs() > spread)
        return R(v, torch.where(certain, torch.zeros_like(v), torch.ones_like(v)))

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __eq__(self, other):  # noqa: D105 (an epilogue comparison, not object equality)
        return self._compare(other, lambda a, b: a == b)

    def __ne__(self, other):
        return self._compare(other, lambda a, b: a != b)

    __hash__ = None

    # ---- methods the tracer reads ---------------------------------------------------------
    def abs(self):
        return R(self.v.abs(), self.e)

    def to(self, dtype):
        return convert(self, element_of(dtype))

    def sum(self, dim=None):
        return _reduce(self, "sum", dim)

    def max(self, dim=None):
        return _reduce(self, "max", dim)

    def amax(self, dim=None):
        return _reduce(self, "max", dim)


def lift(x, like):
    """A number as the kernel holds it (float32), or an R as it is."""
    torch = _torch()
    if isinstance(x, R):
        return x
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"not an epilogue value: {x!r}")
    c = float(x)
    v = torch.tensor(c, dtype=torch.float64, device=like.v.device)
    return R(v, (v.to(torch.float32).to(torch.float64) - v).abs())


def _reduce(x, op, dim):
    torch = _torch()
    if not _SHAPE:
        raise RuntimeError("reductions are evaluated inside evt_ref.evaluation(shape)")
    shape = _SHAPE[-1]
    v, e = x.v.expand(shape), x.e.expand(shape)
    if dim == -1:
        dim = 1
    if dim not in (None, 0, 1):
        raise ValueError(f"dim {dim!r}")
    if op == "max":
        if dim is None:
            return R(v.max().reshape(1), e.max().reshape(1))
        return R(v.amax(dim), e.amax(dim))
    reduce = (lambda t: t.sum().reshape(1)) if dim is None else (lambda t: t.sum(dim))
    n = shape[0] * shape[1] if dim is None else shape[dim]
    total, magnitude, spread = reduce(v), reduce(v.abs()), reduce(e)
    gamma = n * U / (1 - n * U)
    bound = spread + gamma * (magnitude + spread) * _F64_SLACK + n * F32_TINY
    exact_terms = (reduce((e != 0).to(torch.float64)) == 0)
    step = _grid_step(v) if bool(exact_terms.any()) else None
    if step is not None:
        exact = exact_terms & (magnitude / step < 2.0 ** 24)
        bound = torch.where(exact, torch.zeros_like(bound), bound)
    return R(total, bound)


def _grid_step(v):
    """The largest 2^-k (k <= 40) of which every element is a multiple, or None."""
    torch = _torch()
    for k in range(41):
        scaled = v * 2.0 ** k
        if bool((scaled == torch.round(scaled)).all()):
            return 2.0 ** -k
    return None


def rounding(element, v, e):
    """(the reference rounded to ``element``, a bound on |the kernel's rounding - v|) for a
    kernel value within ``e`` of ``v``: exact where e = 0, and where an fp8 value certainly
    saturates (|v| - e >= its largest finite value: the result is that value); else
    e + ulp(|v| + e), the magnitude capped at fp8's largest value (both roundings are within
    half an ulp; the reference's own rounding goes through float32, another u |v|)."""
    torch = _torch()
    target = round_to(element, v)
    magnitude = v.abs() + e
    exact = e == 0
    if element in FP8_MAX:
        magnitude = magnitude.clamp(max=FP8_MAX[element])
        exact = exact | (v.abs() - e >= FP8_MAX[element])
    bound = e + ulp(element, magnitude) + U * magnitude
    return target, torch.where(exact, torch.zeros_like(bound), bound)


def convert(x, element):
    """x.to(element): round to ``element`` (fp8 saturating)."""
    if element == "f32":
        return R(x.v, x.e)  # the kernel's value is float32 already
    return R(*rounding(element, x.v, x.e))


# ---- the functions an epilogue body calls (names the tracer knows) --------------------------

def _value(x):
    if not isinstance(x, R):
        raise TypeError(f"an epilogue function of a number: {x!r}")
    return x


def relu(x):
    torch = _torch()
    x = _value(x)
    v = x.v.clamp(min=0.0)
    negative = (x.v + x.e) <= 0     # the kernel's value is <= 0 too: relu gives exactly 0
    return R(v, torch.where(negative, torch.zeros_like(v), x.e))


def where(condition, if_true, if_false):
    """condition != 0 ? if_true : if_false; where the condition is uncertain, either branch."""
    torch = _torch()
    c = _value(condition)
    a, b = lift(if_true, c), lift(if_false, c)
    pick = c.v != 0
    v = torch.where(pick, a.v, b.v)
    e_pick = torch.where(pick, a.e, b.e)
    other_v = torch.where(pick, b.v, a.v)
    other_e = torch.where(pick, b.e, a.e)
    certain = ((c.v == 0) & (c.e == 0)) | (c.v.abs() > c.e)
    either = torch.maximum(e_pick, (other_v - v).abs() + other_e)
    return R(v, torch.where(certain, e_pick, either))


def maximum(a, b):
    torch = _torch()
    a = lift(a, b) if not isinstance(a, R) else a
    b = lift(b, a)
    return R(torch.maximum(a.v, b.v), torch.maximum(a.e, b.e))


def minimum(a, b):
    torch = _torch()
    a = lift(a, b) if not isinstance(a, R) else a
    b = lift(b, a)
    return R(torch.minimum(a.v, b.v), torch.maximum(a.e, b.e))


def abs(x):  # noqa: A001 (the epilogue language's abs)
    return _value(x).abs()


def leaky_relu(x, slope):
    x = _value(x)
    return where(x > 0.0, x, x * slope)


def clamp(x, lo, hi):
    return minimum(maximum(_value(x), lo), hi)


def square(x):
    """UnaryOp.square (no Python spelling: the suite builds such graphs by hand)."""
    x = _value(x)
    return x * x


def reciprocal(x):
    """UnaryOp.reciprocal (built by hand, like square)."""
    return 1.0 / _value(x)


def _activation(name, x, value):
    torch = _torch()
    x = _value(x)
    ax, av = x.v.abs(), value.abs()
    table = FAST_ACTIVATION_ERROR if _FAST[-1] and name in FAST_ACTIVATION_ERROR else \
        ACTIVATION_ERROR
    act = table[name](ax, av)
    return R(value, LIPSCHITZ[name] * x.e + act * _F64_SLACK + F32_TINY * torch.ones_like(value))


# The float32 evaluation's own error, |x| and |act(x)| given: twice the sum of the roundings of
# tc_evt's formula (in evt_functions_text.cpp), tanhf / expf / erff counted at 2 ulps = 4u of
# their result.
def _sech2(z):
    return 1.0 / _torch().cosh(z.clamp(max=700.0)) ** 2


def _gelu_error(ax, av):
    # 0.5 x (1 + erff(x * 0.70710678f)): the argument's two roundings (2u of it) pass through
    # erf' = 2/sqrt(pi) exp(-arg^2) (taken at the low end of the argument's error), erff 4u,
    # (1 + erf) 2u, times 0.5 |x|; then two products (2u of the result)
    arg = ax * 0.70710678118654752
    arg_error = 2 * U * arg
    slope = 1.1283791670955126 * _torch().exp(-(arg - arg_error).clamp(min=0.0) ** 2)
    return 2 * (0.5 * ax * (slope * arg_error + 6 * U) + 2 * U * av)


def _gelu_tanh_error(ax, av):
    # 0.5 x (1 + tanhf(0.7978846f (x + 0.044715f x x x))): the inner value's six roundings (at
    # most u (2.4 |x| + 0.25 |x|^3)) pass through tanh' = sech^2 (taken at the low end), tanhf 4u,
    # (1 + t) 2u, times 0.5 |x|; then two products
    inner = 0.7978845608028654 * (ax + 0.044715 * ax ** 3)
    inner_error = U * (2.4 * ax + 0.25 * ax ** 3)
    slope = _sech2((inner - inner_error).clamp(min=0.0))
    return 2 * (0.5 * ax * (slope * inner_error + 6 * U) + 2 * U * av)


ACTIVATION_ERROR = {
    # tanhf(x)
    "tanh": lambda ax, av: 8 * U * av,
    # 1 / (1 + expf(-x)): expf 4u, the sum and the quotient u each, relative to the result
    "sigmoid": lambda ax, av: 12 * U * av,
    # x / (1 + expf(-x))
    "silu": lambda ax, av: 12 * U * av,
    # x * min(max(x + 3, 0), 6) / 6: for |x| < 3, (x + 3) rounds (u |x + 3| times |x| / 6)
    # (elsewhere the clamp is exact); then the product and the quotient
    "hardswish": lambda ax, av: 2 * U * (_torch().where(ax < 3.0, ax * (ax + 3.0) / 6.0,
                                                        _torch().zeros_like(ax)) + 2 * av),
    "gelu": _gelu_error,
    "gelu_tanh": _gelu_tanh_error,
}


# Fast math (EpilogueGraph.fast_math), from the documented bounds: tanh.approx.f32's relative
# error is at most 2^-11 (PTX ISA, "tanh"); __expf(x) is within 2 + floor(|1.173 x|) ulps and
# __fdividef within 2 ulps (CUDA C Programming Guide, "Intrinsic Functions"); an ulp of a float32
# is at most 2^-23 of its magnitude; gelu's erf is Abramowitz and Stegun's 7.1.26 (absolute error
# at most 1.5e-7). tests/python/gpu_evt/test_evt_fast_math.py measures them.
TANH_APPROX = 2.0 ** -11


def expf_approx(ax):
    """__expf's relative error at -x (its argument in sigmoid and silu)."""
    return (2.0 + 1.173 * ax) * 2.0 ** -23


def _gelu_tanh_fast_error(ax, av):
    # 0.5 x (1 + tanh.approx(inner)): the inner value's roundings through tanh' as above, the
    # approximation's 2^-11 |t|, (1 + t) u, times 0.5 |x|; then two products
    inner = 0.7978845608028654 * (ax + 0.044715 * ax ** 3)
    inner_error = U * (2.4 * ax + 0.25 * ax ** 3)
    slope = _sech2((inner - inner_error).clamp(min=0.0))
    t = _torch().tanh(inner)
    return 0.5 * ax * (2 * slope * inner_error + TANH_APPROX * t + 4 * U) + 4 * U * av


def _gelu_fast_error(ax, av):
    # 0.5 x (2 - r) or 0.5 x r, r = erfc(a), a = |x| 0.70710678f, by Abramowitz and Stegun
    # 7.1.26 (|error| <= 1.5e-7) with __fdividef and __expf: the argument's roundings (2u of it)
    # through erfc' (at the low end of the argument's error); the formula's 1.5e-7; its float32
    # evaluation, relative to r: t's fma and quotient (5u, through the polynomial at most 5x),
    # the polynomial's four fmas (at most 4.5x cancellation), a^2's rounding (a^2 u) and
    # __expf's (2 + 1.173 a^2) ulps, two products: (64 + 4.5 a^2) u, doubled; (2 - r) u; times
    # 0.5 |x|; then two products
    torch = _torch()
    a = ax * 0.70710678118654752
    arg_error = 2 * U * a
    slope = 1.1283791670955126 * torch.exp(-(a - arg_error).clamp(min=0.0) ** 2)
    r = torch.special.erfc(a)
    return 0.5 * ax * (slope * arg_error + 1.5e-7 + 2 * (64 + 4.5 * a ** 2) * U * r + 4 * U) \
        + 4 * U * av


# __fdividef(x, y) is 0 for |y| > 2^126 (CUDA C Programming Guide): 1 + __expf(-x) passes 2^126
# at x = -126 ln 2 = -87.34 (less __expf's error), below which sigmoid's and silu's whole value is
# lost (at most 2^-126 and 87.4 * 2^-126 = 1.03e-36). With |x| and |value| only: x < 0 there is
# |value| < 1 (x > 87 gives sigmoid 1 and silu x).
FDIVIDEF_ZERO_BELOW = -87.0


def _fast_quotient_error(ax, av):
    """__fdividef(., 1 + __expf(-x)): __expf's error passes through at most whole, the sum u, the
    quotient 2 ulps; the whole value where the divisor passes 2^126."""
    lost = (ax > -FDIVIDEF_ZERO_BELOW) & (av < 1.0)
    return (expf_approx(ax) + 2 * U + 8 * U) * av + _torch().where(lost, av, 0.0 * av)


FAST_ACTIVATION_ERROR = {
    # tanh.approx.f32
    "tanh": lambda ax, av: TANH_APPROX * av,
    # __fdividef(1, 1 + __expf(-x))
    "sigmoid": _fast_quotient_error,
    # __fdividef(x, 1 + __expf(-x))
    "silu": _fast_quotient_error,
    "gelu": _gelu_fast_error,
    "gelu_tanh": _gelu_tanh_fast_error,
}


def tanh(x):
    return _activation("tanh", x, _torch().tanh(_value(x).v))


def sigmoid(x):
    return _activation("sigmoid", x, _torch().sigmoid(_value(x).v))


def silu(x):
    v = _value(x).v
    return _activation("silu", x, v * _torch().sigmoid(v))


def hardswish(x):
    v = _value(x).v
    return _activation("hardswish", x, v * (v + 3.0).clamp(0.0, 6.0) / 6.0)


def gelu(x):
    v = _value(x).v
    return _activation("gelu", x, 0.5 * v * (1.0 + _torch().special.erf(v / math.sqrt(2.0))))


def gelu_tanh(x):
    v = _value(x).v
    k = math.sqrt(2.0 / math.pi)
    return _activation("gelu_tanh", x, 0.5 * v * (1.0 + _torch().tanh(k * (v + 0.044715 * v ** 3))))


# ---- checks ----------------------------------------------------------------------------------

def mismatches(got, want, element):
    """(bad mask, target, tolerance) of a kernel output against an R (see the module's
    documentation)."""
    torch = _torch()
    got64 = to64(got)
    v = want.v.expand(got64.shape)
    e = want.e.expand(got64.shape)
    if not bool(torch.isfinite(v).all() & torch.isfinite(e).all()):
        raise AssertionError("test bug: the reference or its error bound is not finite (the data "
                             "must keep divisors away from zero and values in range)")
    target, tol = rounding(element, v, e)
    exact_ok = got64 == target
    bounded_ok = (got64 - saturate(element, v)).abs() <= tol
    ok = torch.where(tol == 0, exact_ok, bounded_ok)
    return ~ok, target, tol


def check_output(got, want, element, what, limit=8):
    """Every element of ``got`` against ``want`` (an R); AssertionError listing mismatches."""
    bad, target, tol = mismatches(got, want, element)
    if not bool(bad.any()):
        return
    got64 = to64(got)
    exact = int((tol[bad] == 0).sum())
    lines = [f"{what}: {int(bad.sum())} of {bad.numel()} elements mismatch ({exact} of them "
             f"checked exactly)"]
    for idx in bad.nonzero()[:limit].tolist():
        i = tuple(idx)
        lines.append(f"  at {i}: got {float(got64[i])!r}, want {float(target[i])!r} "
                     f"(float64 {float(want.v.expand(got64.shape)[i])!r}, tolerance "
                     f"{float(tol[i]):.3g})")
    raise AssertionError("\n".join(lines))
