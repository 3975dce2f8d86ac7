"""Grouped GEMM on a GPU, both surfaces, every element against a float64 reference.

Seed surface (seed 002, "GEMM Grouped Operation / Arguments"): ``GemmOperationGrouped`` for
arch 80 (CUTLASS 2.x GemmGrouped; SchedulerMode.Host and .Device; f16, bf16, tf32, SIMT f32, f64,
int8 TN with an int32 or a saturated int8 output) and arch 90 (CUTLASS 3.x pointer-array grouped
kernels: bf16 cooperative with a 2x1 cluster, f16 ping-pong with relu, e4m3 -> bf16), run with
``GemmGroupedArguments`` on ragged problems: one group to 1024, empty groups (M = 0, N = 0, every
group empty), groups of one row, beta != 0 and C = None, 2-D / packed 1-D / padded operands,
torch, numpy and cupy, a side stream, arguments launched again, and stacked tensors seen as views.
Arguments-first surface (``tilecraft.api``): ``GroupedGemmArguments`` in the list form and in the
mixture-of-experts form of ``torch._grouped_mm`` (offsets on the device or the host, both B
orientations), ``get_kernels`` / ``supports`` / ``compile`` / ``run``, and the one-call
``tilecraft.grouped_gemm``. Bad input: errors name the group and the argument; nothing launches.

Every output is poisoned first (NaN for floats, -77 for integers). Integer data ("int": small
integers, dyadic alpha and beta) must match the float64 reference rounded once to D's element
EXACTLY; random floats get the error bounds of tests/python/gpu/gpu_check.py (arch 80) and
tests/python/gpu90/sm90_check.py (arch 90), whose helpers this module imports.

    python -m pytest tests/python/gpu_grouped -rs
    python -m pytest tests/python/gpu_grouped -m sanitizer       # the compute-sanitizer subset
    compute-sanitizer --tool memcheck python -m pytest tests/python/gpu_grouped -m sanitizer
    TILECRAFT_GPU_TEST_SEED=1234 python -m pytest tests/python/gpu_grouped   # replay a run

Compiles: the ten operations of TABLE, only those the selected items use, in ONE
``compiler.add_module`` (module fixture ``ops``); the two ranked first kernels of the
mixture-of-experts arguments in ONE ``api.compile_kernels`` (fixture ``moe_kernels``); the
``slow`` activation test compiles one more kernel through ``tilecraft.grouped_gemm``.
"""

import itertools
import re
import time
import warnings
from dataclasses import dataclass, replace
from types import SimpleNamespace

import pytest

import gpu_cases
import gpu_check
import gpu_helpers
import sm90_build
import sm90_case
import sm90_check
import sm90_data
import sm90_reference
import sm90_shapes
from gpu_kernels import KERNELS as SM80_ROWS
from gpu_kernels import SEED_TYPE, TORCH_TYPE
from sm90_kernels import ELEMENTS as SM90_ELEMENTS
from sm90_kernels import KERNELS as SM90_ROWS
from sm90_kernels import alignment as sm90_alignment

pytestmark = pytest.mark.gpu

HOST_ELEMENTS = {"f16", "f32", "tf32", "f64", "s8", "s32"}  # numpy (and cupy) hold these


def _torch():
    import torch

    return torch


# ---- the kernel table -------------------------------------------------------------------------

@dataclass(frozen=True)
class GroupedRow:
    """One grouped operation: the element / tile / epilogue row of the SM80 or SM90 suite it
    shares (gpu_kernels.KernelSpec or sm90_kernels.Sm90Spec) and its scheduler mode."""

    key: str
    arch: int
    spec: object
    mode: str = "Device"    # SchedulerMode member

    @property
    def a(self):
        return self.spec.element if self.arch == 80 else self.spec.a

    @property
    def b(self):
        return self.spec.element if self.arch == 80 else self.spec.b

    @property
    def out(self):
        return self.spec.out

    @property
    def layout_names(self):
        return self.spec.layout_names

    @property
    def alignments(self):
        """(A, B, C) alignments in elements."""
        if self.arch == 80:
            return self.spec.align_ab, self.spec.align_ab, self.spec.align_c
        return sm90_alignment(self.a), sm90_alignment(self.b), sm90_alignment(self.out)

    @property
    def is_int(self):
        return self.spec.is_int

    @property
    def fp8(self):
        return self.arch == 90 and self.spec.fp8_in

    @property
    def host_friendly(self):
        return {self.a, self.b, self.out} <= HOST_ELEMENTS

    def dim_multiples(self):
        return self.spec.dim_multiples()


TABLE = {}


def _row(key, arch, spec, mode="Device"):
    assert key not in TABLE, key
    TABLE[key] = GroupedRow(key, arch, replace(spec, key=key), mode)
    return key


# arch 80: one row per element family of the SM80 suite, both scheduler modes, mixed layouts.
F16_DEV = _row("g80_f16_rcr_dev", 80, SM80_ROWS["f16_rcr"])
BF16_HOST = _row("g80_bf16_crc_host", 80, SM80_ROWS["bf16_crc"], "Host")
TF32_DEV = _row("g80_tf32_rrr_dev", 80, SM80_ROWS["tf32_rrr"])
SIMT32_HOST = _row("g80_simt32_crr_host", 80, SM80_ROWS["simt32_crr"], "Host")
F64_DEV = _row("g80_f64_rcc_dev", 80, SM80_ROWS["f64_rcc"])
I8_S32_DEV = _row("g80_i8_s32_dev", 80, SM80_ROWS["i8_rcr_s32"])
I8_CLAMP_HOST = _row("g80_i8_clamp_host", 80, SM80_ROWS["i8_rcr_clamp"], "Host")
# arch 90: persistent schedules only, Device scheduling.
BF16_COOP = _row("g90_bf16_coop", 90, replace(SM90_ROWS["bf16_rcr"], cluster=(2, 1, 1)))
F16_PP_RELU = _row("g90_f16_pp_relu", 90, replace(SM90_ROWS["pp_64x128"], a="f16", b="f16",
                                                   out="f16", layouts="rrr", activation="relu"))
E4M3_BF16 = _row("g90_e4m3_bf16", 90, SM90_ROWS["e4m3_rcr_bf16"])

ALL_KEYS = tuple(TABLE)
FLOAT_KEYS = tuple(k for k, r in TABLE.items() if not r.is_int)
HOST_MODE_KEYS = tuple(k for k, r in TABLE.items() if r.mode == "Host")
ONE_ROW_KEYS = tuple(k for k, r in TABLE.items() if r.dim_multiples()[0] == 1)
NUMPY_KEYS = (F16_DEV, SIMT32_HOST, I8_CLAMP_HOST, F64_DEV, F16_PP_RELU)
STACKED_KEYS = (F16_DEV, BF16_COOP)   # A row-major, B column-major, D row-major ("rcr")
SANITIZER_KEYS = (F16_DEV, SIMT32_HOST, BF16_COOP)


def _check_table():
    assert {"Host", "Device"} == {r.mode for r in TABLE.values() if r.arch == 80}
    assert {r.a for r in TABLE.values() if r.arch == 80} == {"f16", "bf16", "tf32", "f32", "f64",
                                                            "s8"}
    assert {r.out for r in TABLE.values() if r.is_int} == {"s32", "s8"}
    for key in STACKED_KEYS:
        assert TABLE[key].layout_names == ("RowMajor", "ColumnMajor", "RowMajor"), key
    for key in NUMPY_KEYS:
        assert TABLE[key].host_friendly, key
    assert len(TABLE) <= 10, "each row is one nvcc job of ~40-90 s: keep the table short"


_check_table()


# ---- operations -------------------------------------------------------------------------------

def _sm80_parts(cutlass, s):
    def dt(element):
        return getattr(cutlass, SEED_TYPE[element])

    math = cutlass.MathInstruction(list(s.inst), dt(s.element), dt(s.element), dt(s.acc),
                                   getattr(cutlass.OpClass, s.opclass),
                                   getattr(cutlass.MathOperation, s.math))
    tile = cutlass.TileDescription(list(s.tile), s.stages, list(s.warps), math)
    la, lb, lc = (getattr(cutlass, name) for name in s.layout_names)
    A = cutlass.TensorDescription(dt(s.element), la, s.align_ab)
    B = cutlass.TensorDescription(dt(s.element), lb, s.align_ab)
    C = cutlass.TensorDescription(dt(s.out), lc, s.align_c)
    if s.epilogue == "LinearCombination":
        epilogue = cutlass.LinearCombination(dt(s.out), s.align_c, dt(s.acc), dt(s.compute))
    elif s.epilogue == "LinearCombinationClamp":
        epilogue = cutlass.LinearCombinationClamp(dt(s.out), s.align_c, dt(s.acc), dt(s.compute))
    else:
        raise AssertionError(f"test bug: no grouped row uses {s.epilogue}")
    return tile, A, B, C, epilogue


def _sm90_parts(cutlass, s):
    def dt(element):
        return getattr(cutlass, SM90_ELEMENTS[element][0])

    math = cutlass.MathInstruction(list(s.inst), dt(s.a), dt(s.b), dt(s.acc),
                                   cutlass.OpClass.TensorOp,
                                   getattr(cutlass.MathOperation, s.math))
    tile = cutlass.TileDescription(
        list(s.tile), s.stages, None, math, cluster_shape=list(s.cluster),
        kernel_schedule=getattr(cutlass.KernelScheduleType, s.schedule),
        tile_scheduler=getattr(cutlass.TileSchedulerType, s.scheduler))
    la, lb, lc = (getattr(cutlass, name) for name in s.layout_names)
    A = cutlass.TensorDescription(dt(s.a), la, sm90_alignment(s.a))
    B = cutlass.TensorDescription(dt(s.b), lb, sm90_alignment(s.b))
    C = cutlass.TensorDescription(dt(s.out), lc, sm90_alignment(s.out))
    return tile, A, B, C, sm90_build.build_epilogue(cutlass, s)


def build_operation(row):
    """GemmOperationGrouped as seed 002 spells it (cutlass.float16, SchedulerMode.Host, ...)."""
    import tilecraft as cutlass

    parts = _sm80_parts if row.arch == 80 else _sm90_parts
    tile, A, B, C, epilogue = parts(cutlass, row.spec)
    return cutlass.GemmOperationGrouped(
        arch=row.arch, tile_description=tile, A=A, B=B, C=C, epilogue_functor=epilogue,
        swizzling_functor=cutlass.IdentitySwizzle1,
        precompute_mode=getattr(cutlass.SchedulerMode, row.mode))


class Operations:
    """Grouped operations by key, built once per module; ``compile`` runs ONE add_module. A
    description that is refused, or a kernel that did not compile, fails its own tests."""

    def __init__(self):
        self._ops = {}
        self.build_errors = {}
        self.compile_error = None
        self.compile_seconds = 0.0

    def get(self, key):
        if key in self.build_errors:
            raise RuntimeError(f"building grouped kernel {key!r} failed: "
                               f"{self.build_errors[key]}\n  row: {TABLE[key]}")
        if key not in self._ops:
            self._ops[key] = build_operation(TABLE[key])
        op = self._ops[key]
        if self.compile_error is not None and not op.is_compiled():
            raise RuntimeError(f"grouped kernel {key!r} did not compile in the module's "
                               f"add_module: {self.compile_error}")
        return op

    def compile(self, keys):
        import tilecraft

        ops = []
        for key in keys:
            try:
                self._ops[key] = build_operation(TABLE[key])
                ops.append(self._ops[key])
            except Exception as error:  # its tests fail with this text (no traceback kept)
                self.build_errors[key] = f"{type(error).__name__}: {error}"
        start = time.monotonic()
        try:
            if ops:
                tilecraft.compiler.add_module(ops)
        except Exception as error:  # the kernels left uncompiled fail their tests in get()
            self.compile_error = f"{type(error).__name__}: {error}"
            warnings.warn(f"compiler.add_module failed for some grouped kernels: {error}")
        self.compile_seconds = time.monotonic() - start


@pytest.fixture(scope="module")
def ops(selected_kernel_keys, grouped_report):
    """Every grouped operation the selected items use, compiled together."""
    import sys

    operations = Operations()
    keys = [k for k in selected_kernel_keys if k in TABLE]
    operations.compile(keys)
    report = (f"tilecraft grouped GEMM suite: add_module of {len(keys)} grouped kernels took "
              f"{operations.compile_seconds:.1f} s")
    if operations.build_errors:
        report += f"; {len(operations.build_errors)} descriptions rejected: " + "; ".join(
            f"{k} ({e})" for k, e in operations.build_errors.items())
    if operations.compile_error:
        report += f"; add_module raised: {operations.compile_error}"
    grouped_report.append(report)
    sys.stderr.write("\n" + report + "\n")
    return operations


# ---- cases ------------------------------------------------------------------------------------

@dataclass
class GroupedCase:
    key: str
    sizes: list                  # [(M, N, K)] per group
    alpha: float = 1.0
    beta: float = 0.0
    with_c: bool = True
    data: str = "int"            # "int" (small integers: exact) | "float" (uniform: bounded)
    amax: int = 3                # |A|, |B| <= amax ("int")
    cmax: int = 3                # |C| <= cmax ("int")
    span: float = 1.0            # "float" A and B: uniform(-span, span)
    act_args: tuple = ()
    scales: tuple = None         # (scale_a, scale_b) passed to GemmGroupedArguments (fp8 rows)
    forms: tuple = ()            # per group "2d" | "flat" | "padded"; () = every group "2d"
    framework: str = "torch"     # "torch" | "numpy" | "cupy"
    side_stream: bool = False
    runs: int = 1                # launches of the same arguments (D poisoned again in between)
    note: str = ""

    @property
    def row(self):
        return TABLE[self.key]

    def form(self, g):
        return self.forms[g] if self.forms else "2d"

    def __str__(self):
        count = len(self.sizes)
        ms, ns, ks = zip(*self.sizes)
        empty = sum(1 for m, n, _ in self.sizes if m == 0 or n == 0)
        bits = [f"{self.key} ({self.row.mode}): {count} groups",
                f"M {min(ms)}..{max(ms)} N {min(ns)}..{max(ns)} K {min(ks)}..{max(ks)}",
                f"{empty} empty", f"alpha={self.alpha} beta={self.beta}"
                + ("" if self.with_c else " C=None")]
        if count <= 8:
            bits.append("sizes " + " ".join(f"{m}x{n}x{k}" for m, n, k in self.sizes))
        if self.scales:
            bits.append(f"scale_a={self.scales[0]} scale_b={self.scales[1]}")
        if self.act_args:
            bits.append(f"activation args {self.act_args}")
        if self.forms:
            bits.append("forms " + ",".join(sorted(set(self.forms))))
        bits.append(f"data {self.data}" + (f"(amax={self.amax}, cmax={self.cmax})"
                                           if self.data == "int" else f"(span={self.span})"))
        bits.append(self.framework)
        if self.side_stream:
            bits.append("side stream")
        if self.runs > 1:
            bits.append(f"{self.runs} launches of one GemmGroupedArguments")
        if self.note:
            bits.append(self.note)
        return ", ".join(bits)


def draw_sizes(row, rng, count, style=None, mn_max=None, kmax=None, data="int", specials=True):
    """``count`` legal (M, N, K) for the row (each operand's contiguous extent a multiple of its
    alignment; other extents down to 1), drawn as the SM80 / SM90 suites draw single problems.
    ``specials``: one group is empty (M = 0) and one has the fewest rows the layouts allow (1
    unless A or D is column-major with an alignment)."""
    spec = row.spec
    if row.arch == 80:
        kmax = kmax or gpu_cases.kmax_for(spec)
        sizes = [gpu_cases.draw_shape(spec, rng, style, kmax=kmax,
                                      mn_max=mn_max or gpu_cases.M_N_MAX)
                 for _ in range(count)]
    else:
        kmax = kmax or sm90_case.kmax_for(spec, data) or sm90_shapes.K_MAX
        sizes = [sm90_shapes.draw_shape(spec, rng, style, kmax=kmax,
                                        mn_max=mn_max or sm90_shapes.M_N_MAX)
                 for _ in range(count)]
    if specials and count >= 3:
        fewest_rows = row.dim_multiples()[0]
        empty, thin = rng.sample(range(count), 2)
        sizes[empty] = (0,) + tuple(sizes[empty][1:])
        sizes[thin] = (fewest_rows,) + tuple(sizes[thin][1:])
    return [tuple(s) for s in sizes]


def amax_for(row):
    return gpu_cases.amax_for(row.spec) if row.arch == 80 else sm90_case.amax_for(row.spec)


def scalars(row, rng, data, K, amax):
    """(alpha, beta, cmax, activation args) suited to the row's epilogue (never alpha == 1 or
    beta == 0), sized for the largest K of the groups."""
    if row.arch == 80:
        if data == "float":
            return 0.75, -1.25, 3, ()
        alpha, beta, args, cmax = gpu_cases.epilogue_scalars(row.spec, rng, K, amax)
        return alpha, beta, cmax, args
    spec = replace(row.spec, scales=False)   # fp8 scales: chosen by the test, see GroupedCase
    span = 4.0 if row.fp8 else 1.0
    sigma = sm90_case.acc_sigma(spec, data, amax, span, K)
    alpha, beta, cmax, _ = sm90_case.scalars(spec, rng, data, sigma)
    return alpha, beta, cmax, sm90_case.activation_args(spec, rng, data)


def random_case(key, rng, count, data="int", style=None, mn_max=None, kmax=None, specials=True,
                sizes=None, **overrides):
    """A GroupedCase of ``count`` random groups (or ``sizes``), scalars to suit; ``overrides``
    win."""
    row = TABLE[key]
    sizes = sizes or draw_sizes(row, rng, count, style, mn_max, kmax, data, specials)
    amax = amax_for(row)
    k_max = max([k for m, n, k in sizes if m and n] or [1])
    alpha, beta, cmax, act_args = scalars(row, rng, data, k_max, amax)
    fields = dict(key=key, sizes=list(sizes), alpha=alpha, beta=beta, data=data, amax=amax,
                  cmax=cmax, span=4.0 if row.fp8 else 1.0, act_args=act_args)
    fields.update(overrides)
    return GroupedCase(**fields)


def without_c(case):
    return replace(case, with_c=False, beta=0.0)


# ---- data, launch, reference --------------------------------------------------------------------

def torch_dtype(element):
    if element in TORCH_TYPE:
        return gpu_helpers.torch_dtype(element)
    return sm90_data.torch_dtype(element)


def random_values(row, shape, element, data, amax, gen, span=1.0):
    if row.arch == 90:
        return sm90_data.random_values(shape, element, data, amax, gen, span)
    return gpu_helpers.random_values(shape, element, data, amax, gen)


def poison_value(element):
    return gpu_helpers.poison_for(element)   # -77 for integers, NaN for floats


def poisoned(shape, element):
    torch = _torch()
    return torch.full(shape, poison_value(element), dtype=torch_dtype(element),
                      device=gpu_helpers.DEVICE)


def still_poisoned(t):
    """Every element of ``t`` is still the poison (nothing wrote it)."""
    torch = _torch()
    if t.dtype.is_floating_point:
        return bool(torch.isnan(t.float()).all())
    return bool((t == -77).all())


@dataclass
class GroupOutcome:
    got: object       # D as float64 (M, N) on the device
    z: object         # float64 pre-activation: alpha * scale_a * scale_b * A B + beta C
    mm_abs: object    # |alpha sa sb| (|A| @ |B|): the scale of accumulation errors
    acc_abs: object   # |alpha sa sb A B|
    c_abs: object     # |beta C| (0 without C)
    padding: object   # D's padding (allocation outside the matrix), or None


def _framework(case, tensors):
    if case.framework == "cupy":
        import cupy

        return [cupy.from_dlpack(t) for t in tensors]
    return list(tensors)


def _launch(op, arguments, case):
    """op.run on the tensors' current stream (a fresh side stream if asked); returns the side
    stream, kept alive until arguments.sync() has waited on it."""
    torch = _torch()
    if not case.side_stream:
        op.run(arguments)
        return None
    torch.cuda.synchronize(gpu_helpers.DEVICE)  # the data was made on torch's default stream
    if case.framework == "cupy":
        import cupy

        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            op.run(arguments)
    else:
        stream = torch.cuda.Stream(device=gpu_helpers.DEVICE)
        with torch.cuda.stream(stream):
            op.run(arguments)
    return stream


def run_grouped(ops, case, gen, on_each_run):
    """Makes the case's data, poisons D, builds GemmGroupedArguments exactly as a user writes
    them, launches ``case.runs`` times (D poisoned again before each) and calls
    ``on_each_run(run, outcomes)`` with one GroupOutcome per group after each sync."""
    import tilecraft as cutlass

    torch = _torch()
    row = case.row
    op = ops.get(case.key)
    la, lb, lc = row.layout_names
    align_a, align_b, align_c = row.alignments
    fill_in = 127 if row.is_int else float("nan")   # input padding: reading it shows
    logical, placed = [], []
    for g, (M, N, K) in enumerate(case.sizes):
        A = random_values(row, (M, K), row.a, case.data, case.amax, gen, case.span)
        B = random_values(row, (K, N), row.b, case.data, case.amax, gen, case.span)
        C = (random_values(row, (M, N), row.out, case.data, case.cmax, gen)
             if case.with_c else None)
        logical.append((A, B, C))
        form = case.form(g)

        def put(x, layout, align, fill):
            if case.framework == "numpy":
                x = x.cpu().numpy()
            return gpu_helpers.place(x, layout, form, 2 * align, fill)

        pA = put(A, la, align_a, fill_in)
        pB = put(B, lb, align_b, fill_in)
        pC = put(C, lc, align_c, poison_value(row.out)) if C is not None else None
        pD = put(poisoned((M, N), row.out), lc, align_c, poison_value(row.out))
        placed.append((pA, pB, pC, pD))

    A_list = _framework(case, [p[0].passed for p in placed])
    B_list = _framework(case, [p[1].passed for p in placed])
    C_list = _framework(case, [p[2].passed for p in placed]) if case.with_c else None
    D_list = _framework(case, [p[3].passed for p in placed])
    kwargs = dict(operation=op,
                  problem_sizes=[cutlass.gemm.GemmCoord(M, N, K) for M, N, K in case.sizes],
                  A=A_list, B=B_list, C=C_list, D=D_list,
                  output_op=op.epilogue_type(case.alpha, case.beta, *case.act_args))
    if case.scales:
        kwargs.update(scale_a=case.scales[0], scale_b=case.scales[1])
    arguments = cutlass.GemmGroupedArguments(**kwargs)
    references = [reference(case, A, B, C) for A, B, C in logical]

    for run in range(case.runs):
        if run:
            for _, _, _, pD in placed:   # poison D again (the matrix only; padding is kept)
                view = pD.passed
                if case.framework == "numpy":
                    view[...] = poison_value(row.out)
                else:
                    view.fill_(poison_value(row.out))
        stream = _launch(op, arguments, case)
        arguments.sync()
        del stream
        outcomes = []
        for (pA, pB, pC, pD), (z, mm_abs, acc_abs, c_abs) in zip(placed, references):
            out = pD.passed
            if case.framework == "numpy":
                out = torch.from_numpy(out)
            got = sm90_data.to64(pD.to_logical(out))
            padding = pD.padding if case.framework != "numpy" else None
            outcomes.append(GroupOutcome(got, z, mm_abs, acc_abs, c_abs, padding))
        on_each_run(run, outcomes)


def reference(case, A, B, C):
    """(z, mm_abs, acc_abs, c_abs) in float64 on the device for one group's logical
    operands."""
    sa, sb = case.scales or (1.0, 1.0)
    gain = case.alpha * sa * sb
    A64, B64 = sm90_data.to64(A), sm90_data.to64(B)
    z = gain * (A64 @ B64)
    acc_abs = z.abs()
    mm_abs = abs(gain) * (A64.abs() @ B64.abs())
    c_abs = 0.0 * z
    if C is not None and case.beta != 0:
        c_term = case.beta * sm90_data.to64(C)
        z = z + c_term
        c_abs = c_term.abs()
    return z, mm_abs, acc_abs, c_abs


# ---- checks -------------------------------------------------------------------------------------

def _mismatch_text(g, size, bad, got, want, tol, limit=4):
    count = int(bad.sum())
    lines = [f"  group {g} (M={size[0]} N={size[1]} K={size[2]}): {count} of {bad.numel()} "
             "elements mismatch"]
    for idx in bad.nonzero()[:limit].tolist():
        t = "" if tol is None else f" (tolerance {float(tol[tuple(idx)]):.3g})"
        lines.append(f"    at {tuple(idx)}: got {float(got[tuple(idx)])!r}, want "
                     f"{float(want[tuple(idx)])!r}{t}")
    return "\n".join(lines)


def expected(case, g, outcome):
    """(want, tol): tol None means D must equal ``want`` exactly."""
    row, spec = case.row, case.row.spec
    K = case.sizes[g][2]
    z = outcome.z
    if row.arch == 80:
        want = gpu_check.expected_output(spec, case, z)
        if case.data == "float":
            out_atol, out_rtol = gpu_check.OUT_EPS[spec.out]
            scale = outcome.mm_abs + outcome.c_abs
            tol = gpu_check.float_data_rtol(spec, K) * scale + out_rtol * want.abs() + out_atol
            return want, tol
        return gpu_check.round_to_output(spec, want), None
    want_y = sm90_reference.activation_ref(spec.activation, z, case.act_args)
    if case.data == "int" and spec.activation in sm90_reference.EXACT_ACTIVATIONS:
        premise = SimpleNamespace(spec=spec, K=K, amax=case.amax, data=case.data)
        sm90_check.check_budget(premise)         # the exactness premise of int data
        sm90_check.assert_f32_exact(z, premise)
        return sm90_reference.round_to(spec.out, want_y), None
    tol_z = sm90_check.EPILOGUE_RTOL * (outcome.acc_abs + outcome.c_abs)
    if case.data == "float":
        tol_z = tol_z + sm90_check.data_rtol(spec, K) * outcome.mm_abs
    tol = sm90_reference.lipschitz(spec, case.act_args) * tol_z
    if spec.activation in sm90_reference.ACT_TOL:
        atol, rtol, ztol = sm90_reference.ACT_TOL[spec.activation]
        tol = tol + atol + rtol * want_y.abs() + ztol * z.abs()
    want = sm90_reference.saturate(spec.out, want_y)
    urtol, uatol = sm90_reference.ULP[spec.out]
    return want, tol + urtol * (want.abs() + tol) + uatol


def check_outcomes(case, outcomes, what):
    """Every element of every group's D against the reference; D's padding untouched."""
    assert len(outcomes) == len(case.sizes)
    failures, bad_groups = [], 0
    for g, outcome in enumerate(outcomes):
        size = case.sizes[g]
        assert tuple(outcome.got.shape) == (size[0], size[1]), \
            f"{what}: group {g}: D read back as {tuple(outcome.got.shape)}"
        if outcome.padding is not None:
            assert still_poisoned(outcome.padding), \
                f"{what}: group {g}: D's padding (outside the matrix) was written"
        if outcome.got.numel() == 0:
            continue
        want, tol = expected(case, g, outcome)
        if tol is None:
            bad = ~(outcome.got == want)    # NaN (poison never overwritten) is never equal
        else:
            bad = ~((outcome.got - want).abs() <= tol)
        if bool(bad.any()):
            bad_groups += 1
            if len(failures) < 4:
                failures.append(_mismatch_text(g, size, bad, outcome.got, want, tol))
    assert not bad_groups, (f"{what}: {bad_groups} of {len(case.sizes)} groups mismatch\n"
                            + "\n".join(failures))


def check_case(ops, case, gen, seed_note=""):
    what = f"{case} {seed_note}".strip()

    def on_each_run(run, outcomes):
        check_outcomes(case, outcomes, what if case.runs == 1 else f"launch {run + 1}: {what}")

    run_grouped(ops, case, gen, on_each_run)


# ---- the seed surface: numerical tests ----------------------------------------------------------

@pytest.mark.parametrize("key", ALL_KEYS)
def test_ragged_groups(ops, rng, gen, seed_note, key):
    """One group; then 5-12 ragged groups with an empty group and a group of the fewest rows,
    with C and beta != 0; then the same groups without C (beta = 0: the poisoned D must not be
    read). fp8 rows also pass per-tensor scales (folded into alpha)."""
    row = TABLE[key]
    check_case(ops, random_case(key, rng, 1), gen, seed_note)
    case = random_case(key, rng, rng.randint(5, 12))
    if row.fp8:
        case = replace(case, scales=(rng.choice((0.5, 2.0)), rng.choice((0.25, 1.0, 4.0))))
    check_case(ops, case, gen, seed_note)
    check_case(ops, without_c(replace(case, scales=None)), gen, seed_note)


@pytest.mark.parametrize("key", FLOAT_KEYS)
def test_random_float_data(ops, rng, gen, seed_note, key):
    """uniform(-1, 1) operands (uniform(-4, 4) for fp8) and non-dyadic scalars, against
    float64 within each kernel's stated error bound."""
    check_case(ops, random_case(key, rng, rng.randint(3, 8), data="float"), gen, seed_note)


@pytest.mark.parametrize("key", (F16_DEV, BF16_HOST, SIMT32_HOST, I8_CLAMP_HOST, BF16_COOP,
                                 F16_PP_RELU))
def test_1024_small_groups(ops, rng, gen, seed_note, key):
    """1024 groups of small random sizes (extents up to 40, about one in eight groups empty)
    in one launch, with C."""
    row = TABLE[key]
    sizes = draw_sizes(row, rng, 1024, style="small", mn_max=64, kmax=64)
    sizes = [(0, n, k) if rng.random() < 0.125 else (m, n, k) for m, n, k in sizes]
    check_case(ops, random_case(key, rng, 1024, sizes=sizes), gen, seed_note)


@pytest.mark.parametrize("key", (F16_DEV, SIMT32_HOST, F64_DEV, BF16_COOP))
def test_group_counts(ops, rng, gen, seed_note, key):
    """Group counts from 1 to a few hundred, ragged sizes."""
    for count in (1, 2, 3, 31, 64, 257):
        case = random_case(key, rng, count, mn_max=160, kmax=128)
        check_case(ops, case, gen, f"{count} groups {seed_note}")


@pytest.mark.parametrize("key", ONE_ROW_KEYS)
def test_groups_of_one_row(ops, rng, gen, seed_note, key):
    """Every group a single row (decoding: one token per problem), N and K ragged."""
    row = TABLE[key]
    sizes = [(1, n, k) for _, n, k in draw_sizes(row, rng, 33, specials=False)]
    check_case(ops, random_case(key, rng, 33, sizes=sizes), gen, seed_note)


@pytest.mark.parametrize("key", (F16_DEV, BF16_HOST, SIMT32_HOST, BF16_COOP))
def test_empty_groups(ops, rng, gen, seed_note, key):
    """Empty groups first and last, a group with N = 0, and a launch in which every group is
    empty (nothing to write)."""
    row = TABLE[key]
    sizes = draw_sizes(row, rng, 5, specials=False)
    _, mn, mk = row.dim_multiples()
    sizes[0] = (0,) + sizes[0][1:]
    sizes[-1] = (0,) + sizes[-1][1:]
    sizes[2] = (sizes[2][0], 0, sizes[2][2])
    check_case(ops, random_case(key, rng, 5, sizes=sizes), gen, f"first/last empty {seed_note}")
    all_empty = [(0, mn * 3, mk * 2), (0, mn, mk), (0, mn * 5, mk)]
    check_case(ops, random_case(key, rng, 3, sizes=all_empty), gen, f"all empty {seed_note}")


@pytest.mark.parametrize("key", (F16_DEV, BF16_HOST, SIMT32_HOST, F64_DEV, BF16_COOP,
                                 F16_PP_RELU))
def test_operand_forms(ops, rng, gen, seed_note, key):
    """Per group, operands as 2-D strided tensors, packed 1-D tensors, or 2-D views with a
    padded leading dimension (padding of inputs NaN, of D poisoned and checked untouched)."""
    count = rng.randint(6, 10)
    forms = tuple(rng.choice(("2d", "flat", "padded")) for _ in range(count))
    forms = ("flat", "padded") + forms[2:]
    check_case(ops, random_case(key, rng, count, forms=forms), gen, seed_note)


@pytest.mark.parametrize("key", NUMPY_KEYS)
def test_numpy_operands(ops, rng, gen, seed_note, key):
    """numpy arrays: staged to the GPU, D copied back by arguments.sync()."""
    count = rng.randint(3, 7)
    forms = tuple(rng.choice(("2d", "flat")) for _ in range(count))
    check_case(ops, random_case(key, rng, count, framework="numpy", forms=forms), gen, seed_note)


@pytest.mark.parametrize("key", (F16_DEV, SIMT32_HOST, F16_PP_RELU))
def test_cupy_operands(ops, rng, gen, seed_note, key):
    """cupy arrays (views of torch memory through DLPack) on cupy's current stream and on a
    non-blocking cupy stream."""
    pytest.importorskip("cupy", reason="cupy is not installed")
    check_case(ops, random_case(key, rng, 5, framework="cupy"), gen, seed_note)
    check_case(ops, random_case(key, rng, 5, framework="cupy", side_stream=True), gen, seed_note)


@pytest.mark.parametrize("key", (F16_DEV, SIMT32_HOST, BF16_COOP))
def test_side_stream(ops, rng, gen, seed_note, key):
    """Launched on a fresh torch stream (the current stream when run() is called)."""
    check_case(ops, random_case(key, rng, 6, side_stream=True), gen, seed_note)


@pytest.mark.parametrize("key", (F16_DEV, BF16_HOST, I8_CLAMP_HOST, BF16_COOP))
def test_arguments_launched_again(ops, rng, gen, seed_note, key):
    """One GemmGroupedArguments launched three times, D poisoned again before each: the
    prepared arrays (and the Host scheduler's precomputed schedule) serve every launch."""
    check_case(ops, random_case(key, rng, 7, runs=3), gen, seed_note)


@pytest.mark.parametrize("key", STACKED_KEYS)
def test_views_of_stacked_tensors(ops, rng, gen, seed_note, key):
    """A mixture-of-experts layer through the list form: A[g] are row slices of one (T, K)
    activation, B[g] = w[g].t() of one contiguous (G, N, K) weight, D[g] row slices of one
    (T, N) output whose rows past the last group stay untouched."""
    import tilecraft as cutlass

    torch = _torch()
    row = TABLE[key]
    tokens = [rng.choice((0, 1, 7, 64, 130, 257)) for _ in range(7)]
    G, K, N, tail = len(tokens), 8 * rng.randint(4, 40), 8 * rng.randint(4, 40), 3
    T = sum(tokens) + tail
    x = random_values(row, (T, K), row.a, "int", 2, gen)
    w = random_values(row, (G, N, K), row.b, "int", 2, gen)
    y = poisoned((T, N), row.out)
    ends = list(itertools.accumulate(tokens))
    starts = [0] + ends[:-1]
    op = ops.get(key)
    alpha = 0.5
    arguments = cutlass.GemmGroupedArguments(
        op, [cutlass.gemm.GemmCoord(m, N, K) for m in tokens],
        [x[s:e] for s, e in zip(starts, ends)], [w[g].t() for g in range(G)], None,
        [y[s:e] for s, e in zip(starts, ends)], output_op=op.epilogue_type(alpha, 0.0))
    op.run(arguments)
    arguments.sync()
    want = torch.empty(T, N, dtype=torch.float64, device="cuda")
    for g, (s, e) in enumerate(zip(starts, ends)):
        want[s:e] = alpha * (sm90_data.to64(x[s:e]) @ sm90_data.to64(w[g]).t())
    got = sm90_data.to64(y[:ends[-1]])
    want = sm90_reference.round_to(row.out, want[:ends[-1]])
    bad = ~(got == want)
    assert not bool(bad.any()), (f"{key} stacked views, tokens {tokens} N={N} K={K} "
                                 f"{seed_note}: {int(bad.sum())} of {bad.numel()} mismatch at "
                                 f"{bad.nonzero()[:4].tolist()}")
    assert still_poisoned(y[ends[-1]:]), f"{key}: rows past the last group were written"


@pytest.mark.sanitizer
@pytest.mark.parametrize("key", SANITIZER_KEYS)
def test_sanitizer_subset(ops, rng, gen, seed_note, key):
    """Small ragged launches (an empty group, a one-row group, padded operands) for
    compute-sanitizer: ``-m sanitizer``."""
    count = 5
    case = random_case(key, rng, count, mn_max=150, kmax=96,
                       forms=("2d", "padded", "flat", "2d", "padded"))
    check_case(ops, case, gen, seed_note)
    check_case(ops, without_c(case), gen, seed_note)


# ---- the seed surface: bad input ----------------------------------------------------------------

BAD_SIZES = [(16, 16, 16), (0, 16, 24), (24, 32, 16), (8, 16, 32)]


def good_lists(row, sizes=BAD_SIZES):
    """Legal A, B, C, D lists (torch, on the device) for ``row``; D poisoned."""
    torch = _torch()
    la, lb, lc = row.layout_names
    gen = torch.Generator(device="cuda")
    gen.manual_seed(7)
    A, B, C, D = [], [], [], []
    for M, N, K in sizes:
        A.append(sm90_data.place(random_values(row, (M, K), row.a, "int", 2, gen), la))
        B.append(sm90_data.place(random_values(row, (K, N), row.b, "int", 2, gen), lb))
        C.append(sm90_data.place(random_values(row, (M, N), row.out, "int", 2, gen), lc))
        D.append(sm90_data.place(poisoned((M, N), row.out), lc))
    return A, B, C, D


def expect_refused(make, needles, outputs, exceptions=(ValueError, TypeError)):
    """``make()`` raises, its text matches every regex of ``needles``, and every output tensor
    is still poisoned."""
    with pytest.raises(exceptions) as info:
        make()
    text = str(info.value)
    for needle in needles:
        assert re.search(needle, text), f"the error does not name {needle!r}: {text!r}"
    for i, t in enumerate(outputs):
        assert still_poisoned(t), f"output {i} was written by a refused call ({text})"
    return text


@pytest.mark.parametrize("key", (F16_DEV, BF16_COOP))
def test_bad_grouped_arguments(ops, key):
    """Lists of different lengths, a problem count that does not match the lists, a group of
    another dtype, a member whose strides do not match its layout, a wrong shape, a negative
    size, beta without C: each raises naming the group and the argument, and nothing is
    launched (every D stays poisoned)."""
    import tilecraft as cutlass

    torch = _torch()
    row = TABLE[key]
    op = ops.get(key)
    sizes = [cutlass.gemm.GemmCoord(*s) for s in BAD_SIZES]
    A, B, C, D = good_lists(row)
    out = op.epilogue_type(1.0, 0.5)

    def make(sizes=sizes, A=A, B=B, C=C, D=D, output_op=out):
        return cutlass.GemmGroupedArguments(op, sizes, A, B, C, D, output_op=output_op)

    make()  # the unmodified lists are legal (nothing launched: run() is never called)
    expect_refused(lambda: make(B=B[:3]), [r"\bB\b", r"\b4\b", r"\b3\b"], D)
    expect_refused(lambda: make(sizes=sizes[:3]), [r"\b(A|B|C|D)\b", r"\b3\b", r"\b4\b"], D)
    wrong = torch.float32 if row.a != "f32" else torch.float16
    A_bad = list(A)
    A_bad[3] = A[3].to(wrong)
    expect_refused(lambda: make(A=A_bad), [r"A\[3\]", {"f16": "float16", "bf16": "bfloat16"}.get(
        row.a, row.a)], D)
    B_bad = list(B)   # B[2] described ColumnMajor, given row-major (or the reverse)
    B_bad[2] = B[2].contiguous() if not B[2].is_contiguous() else B[2].t().contiguous().t()
    expect_refused(lambda: make(B=B_bad), [r"B\[2\]"], D)
    A_strided = list(A)   # A[0] (16, 16) as every other column of a (16, 32): no layout fits
    A_strided[0] = torch.cat([A[0], A[0]], dim=1)[:, ::2]
    expect_refused(lambda: make(A=A_strided), [r"A\[0\]"], D)
    D_bad = list(D)
    D_bad[2] = poisoned((25, 32), row.out)
    expect_refused(lambda: make(D=D_bad), [r"D\[2\]", r"\b24\b"], D + [D_bad[2]])
    neg = list(sizes)
    neg[1] = cutlass.gemm.GemmCoord(-8, 16, 24)
    expect_refused(lambda: make(sizes=neg), [r"problem_sizes\[1\]"], D)
    expect_refused(lambda: make(C=None), [r"\bC\b", r"beta"], D)
    C_bad = list(C)
    C_bad[3] = C[3].to(wrong)
    expect_refused(lambda: make(C=C_bad), [r"C\[3\]"], D)
    assert still_poisoned(torch.cat([d.reshape(-1) for d in D]))


@pytest.mark.grouped_kernels(F16_DEV)
def test_tensors_on_two_devices(ops):
    """A group's tensor on another GPU than the others: refused, naming it."""
    import tilecraft as cutlass

    torch = _torch()
    if torch.cuda.device_count() < 2:
        pytest.skip(f"needs two CUDA devices, torch sees {torch.cuda.device_count()}")
    row = TABLE[F16_DEV]
    op = ops.get(F16_DEV)
    A, B, C, D = good_lists(row)
    A = list(A)
    A[2] = A[2].to("cuda:1")
    sizes = [cutlass.gemm.GemmCoord(*s) for s in BAD_SIZES]
    expect_refused(lambda: cutlass.GemmGroupedArguments(op, sizes, A, B, C, D,
                                                        output_op=op.epilogue_type(1.0, 0.5)),
                   [r"A\[2\]", r"cuda:1"], D)
