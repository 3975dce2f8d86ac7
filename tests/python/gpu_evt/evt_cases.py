"""The suite's epilogue graphs: plain Python functions, traced by ``tilecraft.epilogue.trace`` and
called on ``evt_ref.R`` values for the float64 reference (the names they use, relu, where, ...,
are evt_ref's functions). Two graphs use UnaryOp.square / reciprocal, which Python spells
otherwise, and are built with the core's graph builder (the C++ API's twin) instead; their
function is the reference.

Each ``Case`` says what the function's parameters are (``In``: a runtime scalar, a full M x N
tensor, M values (row) or N values (column), of which element type and data), what it returns
(``Out``, in return order: stores M x N of an element type, reductions of float32 over rows,
columns or all), on which kernels it runs (keys of evt_kernels.KERNELS) and, for a graph that
arch 80 refuses, the refusal's message. Importing this module needs neither torch nor tilecraft
(tests/python/test_epilogue_graph_cpu.py traces every case on the CPU).

Bodies avoid arithmetic on numbers alone (``448.0 / 2.0``): Python would fold it in float64,
the kernel computes it in float32.
"""

from dataclasses import dataclass, field

try:
    import torch
except ImportError:  # tracing needs no torch: only the reference evaluates .to(torch.<dtype>)
    torch = None

from evt_ref import (abs, clamp, gelu, gelu_tanh, hardswish, leaky_relu, maximum,  # noqa: A004
                     minimum, reciprocal, relu, sigmoid, silu, square, tanh, where)

# The shape graphs are traced with (any M != N > 1 does: a graph is free of the problem size).
TRACE_M, TRACE_N = 6, 10
ELEMENT_NAMES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32",
                 "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "e4m3": 1, "e5m2": 1}


@dataclass(frozen=True)
class In:
    """A parameter after the accumulator.

    kind: "scalar" (a runtime number), "full" (M x N, laid out like D), "row" (M values: (M, 1)
    in the function, passed as (M,); "row2d": passed as (M, 1)), "col" (N values, (N,)),
    "col2d" ((1, N) in the function and at run time).
    Data: "int" runs use integers in ``ints`` (tensors) or multiples of 1/4 in [lo, hi]
    (scalars); "float" runs uniform(lo, hi). fill="mask": 0 or 1.
    """

    kind: str
    dtype: str = "f16"
    lo: float = -1.0
    hi: float = 1.0
    ints: tuple = (-4, 4)
    fill: str = "signed"


@dataclass(frozen=True)
class Out:
    """An output, in return order: kind "store" (M x N of dtype), "row" / "col" / "all"
    (float32 reductions: M values, N values, one value)."""

    name: str
    kind: str = "store"
    dtype: str = "f32"


@dataclass(frozen=True)
class Case:
    name: str
    fn: object
    inputs: dict
    outputs: tuple
    sm90: tuple = ("f16coop",)
    sm80: tuple = ("f16",)
    refused80: str = ""       # validate_for(80)'s refusal (a regex); then no sm80 run
    refused80_op: str = ""    # the operation's refusal at arch 80, where it differs
    build: object = None      # builds the graph by hand (core) instead of tracing fn
    layout: str = "RowMajor"  # D's layout, which full tensors share
    fast_math: bool = False   # the graph's fast math (EpilogueGraph.fast_math)
    ab_ints: int = 2          # "int" runs: A and B integers in [-ab_ints, ab_ints]
    note: str = ""
    tags: tuple = field(default_factory=tuple)

    @property
    def d_name(self):
        stores = [o.name for o in self.outputs if o.kind == "store"]
        return "D" if "D" in stores else stores[0]

    @property
    def d_element(self):
        return next(o.dtype for o in self.outputs if o.name == self.d_name)

    def full_elements(self):
        """Element types of every M x N tensor the kernel reads or writes (D included)."""
        return [s.dtype for s in self.inputs.values() if s.kind == "full"] + \
            [o.dtype for o in self.outputs if o.kind == "store"]

    def contiguous_multiple(self):
        """What D's contiguous extent (N for RowMajor, M for ColumnMajor) must be a multiple of:
        every full tensor is accessed 16 bytes at a time."""
        return max(16 // ELEMENT_BYTES[e] for e in self.full_elements())


class Example:
    """What the tracer reads of an example tensor: its shape and dtype (torch's dtype name)."""

    def __init__(self, shape, element):
        self.shape, self.dtype = tuple(shape), ELEMENT_NAMES[element]

    def __repr__(self):
        return f"Example({self.shape}, {self.dtype})"


def trace_examples(case, m=TRACE_M, n=TRACE_N):
    """The keyword arguments of epilogue.trace for ``case``: the accumulator, every parameter
    and every output (the example outputs give the stored types)."""
    shapes = {"full": (m, n), "row": (m, 1), "row2d": (m, 1), "col": (n,), "col2d": (1, n)}
    out = {"accum": Example((m, n), "f32")}
    for name, spec in case.inputs.items():
        out[name] = 0.5 if spec.kind == "scalar" else Example(shapes[spec.kind], spec.dtype)
    for o in case.outputs:
        extent = {"store": (m, n), "row": (m,), "col": (n,), "all": (1,)}[o.kind]
        out[o.name] = Example(extent, o.dtype)
    return out


def make_graph(case):
    """The case's epilogue graph (traced, or built by hand)."""
    import tilecraft

    graph = case.build(tilecraft) if case.build is not None else \
        tilecraft.epilogue.trace(case.fn, **trace_examples(case))
    graph.fast_math = case.fast_math
    return graph


# ---- the graphs -----------------------------------------------------------------------------

def seed_relu_amax(accum, alpha, C, beta, bias):
    D = relu(alpha * accum + beta * C + bias)
    return D, D.abs().max()


def scalar_affine(accum, alpha, beta):
    D = alpha * accum + beta - 1.5
    return D


def accum_only(accum):
    D = accum
    return D


def negate_abs_constants(accum):
    D = abs(-accum * 0.5 + 3.0) - accum.abs() * 0.25
    return D


def row_col_full_mix(accum, row_scale, col_bias, C):
    D = accum * row_scale + col_bias + C
    return D


def square_reciprocal(accum, C):
    D = square(accum) * reciprocal(abs(C) + 1.0)
    return D


def build_square_reciprocal(tilecraft):
    """square_reciprocal built node by node (each in its own statement: a fixed node order)."""
    core, dt = tilecraft._core, tilecraft.DataType
    g = core.EpilogueGraph()
    acc = g.accumulator()
    c = g.tensor("C", dt.f16, core.Broadcast.full)
    sq = g.unary(core.UnaryOp.square, acc)
    c_abs = g.unary(core.UnaryOp.abs, c)
    one = g.constant(1.0)
    den = g.binary(core.BinaryOp.add, c_abs, one)
    rec = g.unary(core.UnaryOp.reciprocal, den)
    d = g.binary(core.BinaryOp.mul, sq, rec)
    g.store(d, "D", dt.f32)
    g.validate()
    return g


def leaky_relu_slope(accum, bias, slope):
    D = leaky_relu(accum + bias, slope)
    return D


def tanh_scaled(accum, scale):
    D = tanh(accum * scale)
    return D


def sigmoid_gate(accum, C):
    D = sigmoid(accum) * C
    return D


def silu_gated(accum, up):
    D = silu(accum) * up
    return D


def hardswish_bias(accum, bias):
    D = hardswish(accum * 0.5 + bias)
    return D


def gelu_bias_residual(accum, bias, residual):
    D = gelu(accum + bias) + residual
    return D


def gelu_bias_residual_bfloat(accum, bias, residual):
    D = gelu(accum + bias) + residual
    return D


def gelu_tanh_bias(accum, bias):
    D = gelu_tanh(accum + bias)
    return D


def clamp_scalar_constant(accum, alpha, lo):
    D = clamp(accum * alpha, lo, 6.0)
    return D


def div_sub_abs(accum, C, bias):
    D = (accum - C) / (abs(bias) + 1.0)
    return D


def maximum_minimum(accum, C, hi):
    D = minimum(maximum(accum, C), hi)
    return D


def compare_codes(accum, t):
    D = (accum < t) + (accum <= t) * 2.0 + (accum > t) * 4.0 + (accum >= t) * 8.0 + \
        (accum == t) * 16.0 + (accum != t) * 32.0
    return D


def where_full(accum, C):
    D = where(accum > C, accum - C, C * 0.5)
    return D


def where_mask_tensor(accum, mask):
    D = where(mask, accum, -accum)
    return D


def relu_equal_zero(accum, C, bias):
    z = relu(accum - C)
    D = where(z == 0.0, bias, z)
    return D


def convert_chain(accum, alpha):
    y = (accum * alpha).to(torch.float16)
    h = accum.to(torch.bfloat16)
    D = y * 2.0 + h
    return D


def fp8_e4m3_aux_amax(accum, alpha, bias, amax_prev):
    y = relu(alpha * accum + bias)
    D = y
    scale = 448.0 / amax_prev
    q = (y * scale).to(torch.float8_e4m3fn)
    return D, q, y.abs().max()


def fp8_e5m2_aux_rowmax(accum, s):
    q = (accum * s).to(torch.float8_e5m2)
    D = accum * 0.5
    return D, q, accum.abs().max(dim=1)


def multi_store_dtypes(accum, alpha, bias):
    z = alpha * accum + bias
    D = gelu(z)
    zf = z
    zb = (z * 0.5).to(torch.bfloat16)
    return D, zf, zb, z.sum(dim=1)


def reductions_sum_axes(accum, C):
    D = relu(accum + C)
    return D, D.sum(dim=1), D.sum(dim=0), D.sum()


def reductions_max_axes(accum, alpha, offset):
    D = accum * alpha - offset
    return D, D.max(dim=1), D.amax(dim=0), D.amax()


def reductions_absmax_axes(accum, C):
    D = accum * C
    return D, D.abs().max(dim=1), D.abs().amax(dim=0), D.abs().max()


def side_outputs_keep(accum, beta, C):
    D = relu(accum)
    E = accum * beta + C
    return D, E, (accum - C).max(dim=0)


def shared_subexpression(accum, alpha, C):
    x = alpha * accum + C
    D = x * x + x
    return D, x


def shared_value_reductions(accum, alpha, C):
    t = alpha * accum + C
    D = t * t + t
    return D, t.sum(dim=1), t.amax(dim=0), t.abs().max()


def shared_store_reread(accum, alpha, bias, C):
    y = relu(alpha * accum + bias)
    D = y * C - y + bias
    return D, y, y.sum(dim=0)


def deep_scalar_chain(accum, s):
    x = accum * s - 0.25
    x = x * s - 0.25
    x = x * s + 0.5
    x = x * s - 0.25
    x = x * s + 0.125
    x = x * s - 0.25
    x = x * s + 0.5
    x = x * s - 0.25
    x = x * s + 0.125
    x = x * s - 0.5
    D = x
    return D


def d_not_first(accum, C):
    E = accum - C
    D = accum + C
    return E, D


def unnamed_outputs(accum):
    return relu(accum) * 2.0, accum.sum(dim=1)


def colmajor_layout(accum, alpha, C):
    D = accum + C
    aux = accum * alpha
    return D, aux, D.sum(dim=0)


def batched_mix(accum, rs, C, cb):
    D = relu(accum * rs + C + cb)
    aux = accum - C
    return D, aux, D.sum(dim=1), aux.amax(dim=0), D.abs().max()


def fp8_d_scaled_amax(accum, alpha, bias, amax_prev):
    y = relu(alpha * accum + bias)
    D = (y * (448.0 / amax_prev)).to(torch.float8_e4m3fn)
    return D, y.abs().max()


def e4m3_gemm_fp8_out(accum, scale, dscale):
    y = relu(accum * scale)
    D = (y * dscale).to(torch.float8_e4m3fn)
    return D, y.abs().max()


def fast_activations(accum, scale, C):
    D = tanh(accum * scale) + sigmoid(accum) * C
    S = silu(accum)
    E = gelu(accum)
    return D, S, E


def fast_gelu_tanh_residual(accum, bias, C):
    D = gelu_tanh(accum + bias) + C
    return D


def fast_functions(accum):
    T = tanh(accum)
    Sg = sigmoid(accum)
    Sl = silu(accum)
    G = gelu_tanh(accum)
    Ge = gelu(accum)
    return T, Sg, Sl, G, Ge


# ---- the table ------------------------------------------------------------------------------

S = In("scalar", lo=0.5, hi=2.0)            # a positive scalar
SS = In("scalar", lo=-1.5, hi=1.5)          # a signed one
FULL = In("full")
FP8_REFUSAL = r"float8_e\dm\d values are arch=90 epilogues \(SM80 kernels have no fp8\)"
GELU_TANH_REFUSAL = r"gelu_tanh is an arch=90 activation"
CASES = [
    Case("seed_relu_amax", seed_relu_amax,
         {"alpha": S, "C": FULL, "beta": SS, "bias": In("col")},
         (Out("D", "store", "f16"), Out("out1", "all")),
         sm90=("f16coop", "f16pp"), note="the issue's example, the seed's EVT flow"),
    Case("scalar_affine", scalar_affine, {"alpha": SS, "beta": SS}, (Out("D", "store", "f16"),)),
    Case("accum_only", accum_only, {}, (Out("D", "store", "f32"),)),
    Case("negate_abs_constants", negate_abs_constants, {}, (Out("D", "store", "f16"),)),
    Case("row_col_full_mix", row_col_full_mix,
         {"row_scale": In("row", "f32", 0.5, 2.0), "col_bias": In("col2d", "bf16"),
          "C": In("full", "bf16")},
         (Out("D", "store", "f16"),)),
    Case("square_reciprocal", square_reciprocal, {"C": FULL}, (Out("D", "store", "f32"),),
         build=build_square_reciprocal, note="UnaryOp.square and reciprocal, built by hand"),
    Case("leaky_relu_slope", leaky_relu_slope,
         {"bias": In("row2d"), "slope": In("scalar", lo=0.125, hi=0.5)},
         (Out("D", "store", "f16"),)),
    Case("tanh_scaled", tanh_scaled, {"scale": In("scalar", lo=0.05, hi=0.3)},
         (Out("D", "store", "f32"),)),
    Case("sigmoid_gate", sigmoid_gate, {"C": FULL}, (Out("D", "store", "f16"),)),
    Case("silu_gated", silu_gated, {"up": FULL}, (Out("D", "store", "f16"),)),
    Case("hardswish_bias", hardswish_bias, {"bias": In("col", lo=-2.0, hi=2.0)},
         (Out("D", "store", "f16"),)),
    Case("gelu_bias_residual", gelu_bias_residual, {"bias": In("col"), "residual": FULL},
         (Out("D", "store", "f16"),)),
    Case("gelu_bias_residual_bfloat", gelu_bias_residual_bfloat,
         {"bias": In("col", "bf16"), "residual": In("full", "bf16")},
         (Out("D", "store", "bf16"),), sm90=("bf16coop",), sm80=("bf16",)),
    Case("gelu_tanh_bias", gelu_tanh_bias, {"bias": In("col")}, (Out("D", "store", "f16"),),
         refused80=r"gelu_tanh is an arch=90 activation"),
    Case("clamp_scalar_constant", clamp_scalar_constant,
         {"alpha": S, "lo": In("scalar", lo=-6.0, hi=-1.0)}, (Out("D", "store", "f16"),),
         refused80=r"clamp is an arch=90 activation"),
    Case("div_sub_abs", div_sub_abs, {"C": FULL, "bias": In("col", "f32", -3.0, 3.0)},
         (Out("D", "store", "f32"),)),
    Case("maximum_minimum", maximum_minimum,
         {"C": FULL, "hi": In("col", lo=0.0, hi=4.0, ints=(0, 6))}, (Out("D", "store", "f16"),)),
    Case("compare_codes", compare_codes, {"t": In("col", ints=(-3, 3))},
         (Out("D", "store", "f16"),), ab_ints=1,
         note="every comparison; small integers make equality common"),
    Case("where_full", where_full, {"C": FULL}, (Out("D", "store", "f16"),)),
    Case("where_mask_tensor", where_mask_tensor, {"mask": In("full", fill="mask")},
         (Out("D", "store", "f16"),)),
    Case("relu_equal_zero", relu_equal_zero, {"C": FULL, "bias": In("row")},
         (Out("D", "store", "f16"),)),
    Case("convert_chain", convert_chain, {"alpha": SS}, (Out("D", "store", "f32"),)),
    Case("fp8_e4m3_aux_amax", fp8_e4m3_aux_amax,
         {"alpha": S, "bias": In("col"), "amax_prev": In("scalar", lo=1.0, hi=4.0)},
         (Out("D", "store", "f16"), Out("q", "store", "e4m3"), Out("out2", "all")),
         refused80=FP8_REFUSAL,
         note="fp8 output with a scale computed in the epilogue (some values saturate), and "
              "the amax of the unscaled values"),
    Case("fp8_e5m2_aux_rowmax", fp8_e5m2_aux_rowmax, {"s": In("scalar", lo=2.0, hi=64.0)},
         (Out("D", "store", "f16"), Out("q", "store", "e5m2"), Out("out2", "row")),
         refused80=FP8_REFUSAL),
    Case("fp8_d_scaled_amax", fp8_d_scaled_amax,
         {"alpha": S, "bias": In("col"), "amax_prev": In("scalar", lo=1.0, hi=4.0)},
         (Out("D", "store", "e4m3"), Out("out1", "all")),
         refused80=FP8_REFUSAL, refused80_op=r"fp8 outputs are SM90 epilogue fusions",
         note="fp8 D from 16-bit operands, its scale computed in the epilogue, its amax"),
    Case("multi_store_dtypes", multi_store_dtypes, {"alpha": S, "bias": In("col")},
         (Out("D", "store", "f16"), Out("zf", "store", "f32"), Out("zb", "store", "bf16"),
          Out("out3", "row"))),
    Case("reductions_sum_axes", reductions_sum_axes, {"C": FULL},
         (Out("D", "store", "f16"), Out("out1", "row"), Out("out2", "col"), Out("out3", "all")),
         sm90=("f16coop", "f16pp", "f16streamk")),
    Case("reductions_max_axes", reductions_max_axes,
         {"alpha": S, "offset": In("scalar", lo=4.0, hi=16.0)},
         (Out("D", "store", "f16"), Out("out1", "row"), Out("out2", "col"), Out("out3", "all")),
         sm90=("f16coop", "f16pp"), note="mostly negative values: atomic max of negatives"),
    Case("reductions_absmax_axes", reductions_absmax_axes, {"C": FULL},
         (Out("D", "store", "f16"), Out("out1", "row"), Out("out2", "col"), Out("out3", "all")),
         sm90=("f16coop", "f16pp")),
    Case("side_outputs_keep", side_outputs_keep, {"beta": SS, "C": FULL},
         (Out("D", "store", "f16"), Out("E", "store", "f32"), Out("out2", "col")),
         note="outputs D does not depend on"),
    Case("shared_subexpression", shared_subexpression, {"alpha": S, "C": FULL},
         (Out("D", "store", "f32"), Out("x", "store", "f16")),
         note="a value read three times (computed once: a topological visitor) and stored "
              "once"),
    Case("shared_value_reductions", shared_value_reductions, {"alpha": S, "C": FULL},
         (Out("D", "store", "f32"), Out("out1", "row"), Out("out2", "col"), Out("out3", "all")),
         note="t = alpha * acc + C read twice (one topological visitor) and reduced on every "
              "axis"),
    Case("shared_store_reread", shared_store_reread,
         {"alpha": S, "bias": In("col"), "C": FULL},
         (Out("D", "store", "f16"), Out("y", "store", "bf16"), Out("out2", "col")),
         note="a shared value stored (bf16), reduced and read again; a column bias read twice"),
    Case("deep_scalar_chain", deep_scalar_chain, {"s": In("scalar", lo=0.5, hi=1.0)},
         (Out("D", "store", "f32"),),
         note="22 nodes deep, nothing shared: deeper than the tree form takes (topological)"),
    Case("d_not_first", d_not_first, {"C": FULL},
         (Out("E", "store", "f32"), Out("D", "store", "f16")),
         note="the store named D is the kernel's D though E comes first"),
    Case("unnamed_outputs", unnamed_outputs, {},
         (Out("out0", "store", "f16"), Out("out1", "row")),
         note="unnamed returns are out<i>; the first store is D"),
    Case("colmajor_layout", colmajor_layout, {"alpha": SS, "C": FULL},
         (Out("D", "store", "f16"), Out("aux", "store", "f32"), Out("out2", "col")),
         layout="ColumnMajor", note="D, C and aux column-major"),
    Case("batched_mix", batched_mix,
         {"rs": In("row", "f32", 0.5, 2.0), "C": FULL, "cb": In("col")},
         (Out("D", "store", "f16"), Out("aux", "store", "bf16"), Out("out2", "row"),
          Out("out3", "col"), Out("out4", "all"))),
    Case("e4m3_gemm_fp8_out", e4m3_gemm_fp8_out,
         {"scale": In("scalar", lo=0.5, hi=2.0), "dscale": In("scalar", lo=2.0, hi=16.0)},
         (Out("D", "store", "e4m3"), Out("out1", "all")),
         sm90=("e4m3coop",), sm80=(), refused80=FP8_REFUSAL,
         refused80_op=r"fp8 outputs are SM90 epilogue fusions",
         note="fp8 operands (no scales fusion: the graph scales) and fp8 D with its amax"),
    # fast math: tanh.approx.f32, __expf, __fdividef (evt_ref's bounds: PTX and CUDA's)
    Case("fast_activations", fast_activations,
         {"scale": In("scalar", lo=0.5, hi=4.0), "C": In("full", lo=-2.0, hi=2.0)},
         (Out("D", "store", "f16"), Out("S", "store", "f32"), Out("E", "store", "bf16")),
         fast_math=True, sm90=("f16coop", "f16pp"),
         note="fast math on both architectures: tanh, sigmoid, silu, gelu"),
    Case("fast_gelu_tanh_residual", fast_gelu_tanh_residual,
         {"bias": In("col", "f32"), "C": In("full", "bf16")}, (Out("D", "store", "bf16"),),
         fast_math=True,
         sm90=("bf16coop",), refused80=GELU_TANH_REFUSAL,
         note="fast gelu_tanh; the residual read as the source C"),
    Case("fast_functions", fast_functions, {},
         (Out("T", "store", "f32"), Out("Sg", "store", "f32"), Out("Sl", "store", "f32"),
          Out("G", "store", "f32"), Out("Ge", "store", "f32")), fast_math=True,
         refused80=GELU_TANH_REFUSAL,
         ab_ints=4, note="each fast function alone, in float32 (test_evt_fast_math sweeps it)"),
]

BY_NAME = {case.name: case for case in CASES}
assert len(BY_NAME) == len(CASES), "case names must be distinct"


def op_key(kernel, case):
    """'sm90-f16coop-seed_relu_amax': the kernel key, then the case."""
    return f"{kernel}-{case.name}"


def split_key(key):
    """(kernel key, Case) of an op key."""
    arch, kernel, name = key.split("-", 2)
    return f"{arch}-{kernel}", BY_NAME[name]


def run_keys():
    """Op keys of the items that run: every case on its SM90 kernels, and on its SM80 kernels
    unless arch 80 refuses its graph."""
    keys = []
    for case in CASES:
        keys += [op_key(f"sm90-{k}", case) for k in case.sm90]
        if not case.refused80:
            keys += [op_key(f"sm80-{k}", case) for k in case.sm80]
    return keys


def refused_keys():
    """Op keys of the graphs arch 80 refuses (an item asserts the refusal)."""
    return [op_key(f"sm80-{(case.sm80 or ('f16',))[0]}", case) for case in CASES
            if case.refused80]
