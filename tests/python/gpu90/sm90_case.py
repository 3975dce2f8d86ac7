"""One GEMM to run and check (Sm90Case), and random cases whose scalars suit the kernel.

Exactness budget for ``data="int"`` (small integers, dyadic alpha / beta / bias / scales):
every product and partial sum is an integer far below 2^24, so Z = alpha*acc + beta*C + bias is
exact in the float32 epilogue, and D is Z (or relu / leaky_relu / clamp of it) rounded ONCE to
D's element, exactly what the reference does. Per kernel kind:
* f16 accumulation: partial sums must be exact in f16 (integers up to 2048): |A|,|B| <= 2 and
  K <= 256 keep |acc| <= 1024.
* fp8 operands: Hopper's fp8 wgmma adds in a reduced-precision accumulator (13 mantissa bits,
  truncating) between promotions, so integers stay exact only below 2^13: |A|,|B| <= 3 and
  K <= 448 keep |acc| <= 4032, also in the fast-accumulation mode.
* int32 compute (int8 -> int32): alpha and beta are integers (the epilogue holds them as int32).
Transcendental activations are checked against a stated tolerance even on integer data.
"""

import math
from dataclasses import dataclass, replace

from sm90_kernels import KERNELS
from sm90_shapes import draw_shape


@dataclass
class Sm90Case:
    key: str
    M: int
    N: int
    K: int
    alpha: float = 1.0
    beta: float = 0.0
    with_c: bool = True
    batch: int = 0              # 0: gemm_mode Gemm on 2-D tensors; L >= 1: Batched, 3-D tensors
    split: int = 1              # split_k_slices (StreamK kernels)
    data: str = "int"           # "int" (exact) | "float" (uniform, bounded error)
    amax: int = 3
    cmax: int = 3
    span: float = 1.0           # "float" data: uniform(-span, span) for A and B
    act_args: tuple = ()
    scales: tuple = None        # (scale_a, scale_b, scale_c, scale_d) for scales=True kernels
    scale_form: str = "float"   # "float" | "tensor" (one-element float32 CUDA tensors)
    pass_unit_scales: bool = True  # pass scale_c / scale_d even when they are 1.0
    bias_per_batch: bool = False   # Batched: a (batch, len) bias, one vector per batch
    framework: str = "torch"    # "torch" | "numpy" | "cupy"
    deterministic: bool = True  # False: stream-K / split-K partial sums meet in any order
    note: str = ""

    @property
    def spec(self):
        return KERNELS[self.key]

    def __str__(self):
        mode = f"Batched L={self.batch}" if self.batch else "Gemm"
        bits = [f"{self.key}: {mode} M={self.M} N={self.N} K={self.K}",
                f"alpha={self.alpha} beta={self.beta}" + ("" if self.with_c else " C=None")]
        if self.split > 1:
            bits.append(f"split_k_slices={self.split}")
        if not self.deterministic:
            bits.append("deterministic=False")
        if self.act_args:
            bits.append(f"activation args {self.act_args}")
        if self.scales:
            bits.append(f"scales a,b,c,d={self.scales} as {self.scale_form}")
        if self.spec.bias and self.batch:
            bits.append("bias per batch" if self.bias_per_batch else "one bias for all batches")
        bits.append(f"data {self.data}" + (f"(amax={self.amax}, cmax={self.cmax})"
                                           if self.data == "int" else f"(span={self.span})"))
        bits.append(self.framework)
        if self.note:
            bits.append(self.note)
        return ", ".join(bits)


def kmax_for(spec, data):
    if data == "int" and spec.acc == "f16":
        return 256
    if data == "int" and spec.fp8_in:
        return 448
    return None


def amax_for(spec):
    if spec.acc == "f16":
        return 2
    return 4 if spec.is_int else 3


def pow2_near(x):
    """The power of two nearest to x, never 1 (so alpha is exercised)."""
    p = 2.0 ** round(math.log2(x))
    return p if p != 1.0 else (2.0 if x > 1.0 else 0.5)


def acc_sigma(spec, data, amax, span, K):
    """Standard deviation of one accumulator: K products of independent uniforms."""
    var = amax * (amax + 1) / 3.0 if data == "int" else span * span / 3.0
    return max(1e-3, math.sqrt(K) * var)


def activation_args(spec, rng, data):
    if spec.activation == "leaky_relu":
        return (rng.choice((0.125, 0.25, 0.5, 2.0, -0.25)),)
    if spec.activation == "clamp":
        lo = -rng.choice((0.5, 1.0, 2.5))
        return (lo, rng.choice((lo, 0.0, 1.5, 3.0)))   # lower == upper is legal
    return ()


def scalars(spec, rng, data, sigma):
    """(alpha, beta, cmax, scales): alpha != 1 and beta != 0, sized so pre-activations sit
    around +-3 for activations, about half of an int8 D saturates, and fp8 D stays in range."""
    dyadic = data == "int"
    scales = None
    if spec.scales:
        sa = rng.choice((0.5, 2.0, 1.0)) if dyadic else rng.choice((0.8, 1.7))
        sb = rng.choice((0.25, 1.0, 4.0)) if dyadic else rng.choice((1.3, 0.55))
        sc = rng.choice((0.5, 1.0, 2.0)) if dyadic else rng.choice((0.6, 1.45))
        scales = (sa, sb, sc, 1.0)
    gain = scales[0] * scales[1] if scales else 1.0
    sign = rng.choice((1.0, -1.0))
    if spec.activation is not None:
        target = 3.0 / (gain * sigma)
        alpha = sign * (pow2_near(target) if dyadic else target * 0.93)
        beta = rng.choice((0.5, -0.25, 0.75)) if dyadic else rng.choice((0.45, -0.3))
        cmax = 3
    elif spec.out == "s8":
        alpha, beta, cmax = sign * pow2_near(90.0 / sigma), rng.choice((1.0, -1.0, 0.5, 2.0)), 60
    elif spec.compute == "s32":
        alpha, beta, cmax = rng.choice((2.0, -1.0, 3.0)), rng.choice((1.0, -2.0, 2.0)), 1000
    else:
        alpha = rng.choice((2.0, -1.5, 0.5, 0.75)) if dyadic else rng.choice((0.7, -1.3, 1.9))
        beta = rng.choice((1.0, -2.0, 0.5, 1.5)) if dyadic else rng.choice((0.4, -0.8, 1.25))
        cmax = 3
    if spec.fp8_out:   # D = scale_d * Z in fp8: aim |D| at about 64 (e4m3 tops out at 448)
        z = abs(alpha) * gain * sigma + abs(beta) * cmax * scales[2] + 1.0
        sd = pow2_near(64.0 / z) if dyadic else 60.0 / z
        scales = scales[:3] + (sd,)
    return alpha, beta, cmax, scales


def random_case(key, rng, style=None, data="int", kmin=1, kmax=None, shape=None, **overrides):
    """A case for ``key``: a random legal shape (or ``shape``), data and scalars sized for that
    shape; ``overrides`` win (override M, N or K through ``shape`` so the scalars follow)."""
    spec = KERNELS[key]
    kmax = kmax or kmax_for(spec, data)
    M, N, K = shape or draw_shape(spec, rng, style, kmin=kmin, kmax=kmax)
    amax = overrides.get("amax", amax_for(spec))
    span = overrides.get("span", 4.0 if spec.fp8_in else 1.0)
    sigma = acc_sigma(spec, data, amax, span, K)
    alpha, beta, cmax, scales = scalars(spec, rng, data, sigma)
    fields = dict(key=key, M=M, N=N, K=K, alpha=alpha, beta=beta, data=data, amax=amax,
                  cmax=cmax, span=span, act_args=activation_args(spec, rng, data),
                  scales=scales)
    fields.update(overrides)
    return Sm90Case(**fields)


def batched(case, rng, low=2, high=4):
    """``case`` in gemm_mode Batched with L in [low, high]."""
    return replace(case, batch=rng.randint(low, high))


def without_c(case):
    return replace(case, with_c=False, beta=0.0)
