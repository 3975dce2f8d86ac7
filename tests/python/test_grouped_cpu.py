"""Grouped GEMM without a GPU: GemmOperationGrouped's descriptions (the valid ones, and each
description-time error) and GemmGroupedArguments' checks of numpy lists, which precede any CUDA
work. Every bad input raises before anything compiles or launches, naming the argument (and
the group: ``A[3]: ...``), what was expected and what was given.

To prove that nothing is compiled, this module points TILECRAFT_NVCC at a path that does not
exist (a compile would fail with a different error) and checks ``is_compiled()`` after each
error. The GPU half (numbers, the arguments-first API, bad torch inputs) is
tests/python/gpu_grouped.
"""

import re

import numpy as np
import pytest

import tilecraft as cutlass
from tilecraft import *  # noqa: F401,F403

BF16, F16, F32, F64, S8, S32, TF32 = (cutlass.bfloat16, cutlass.float16, cutlass.float32,
                                      cutlass.float64, cutlass.int8, cutlass.int32,
                                      cutlass.tfloat32)
E4M3 = cutlass.e4m3
TC, SIMT = cutlass.OpClass.TensorOp, cutlass.OpClass.Simt
MA, MAS = MathOperation.multiply_add, MathOperation.multiply_add_saturate
KS, TS = cutlass.KernelScheduleType, cutlass.TileSchedulerType
ROW, COL = cutlass.RowMajor, cutlass.ColumnMajor
Unsupported = cutlass.UnsupportedError

pytestmark = pytest.mark.usefixtures("no_compiler")


def mode(name):
    """cutlass.SchedulerMode.<name>, looked up when a test runs (so that this module collects
    even where the grouped API is missing, and fails by name there)."""
    return getattr(cutlass.SchedulerMode, name)


def grouped(*args, **kwargs):
    return cutlass.GemmOperationGrouped(*args, **kwargs)


def td(element, layout, alignment):
    return TensorDescription(element, layout, alignment)


# ---- descriptions of every family -------------------------------------------------------------

def sm80_f16(layouts=(ROW, COL, ROW)):
    math = MathInstruction([16, 8, 16], F16, F16, F32, TC, MA)
    tile = TileDescription([128, 128, 32], 3, [2, 2, 1], math)
    la, lb, lc = layouts
    return (tile, td(F16, la, 8), td(F16, lb, 8), td(F16, lc, 8),
            LinearCombination(F16, 8, F32, F32))


def sm80_bf16():
    math = MathInstruction([16, 8, 16], BF16, BF16, F32, TC, MA)
    tile = TileDescription([128, 128, 32], 3, [2, 2, 1], math)
    return (tile, td(BF16, COL, 8), td(BF16, ROW, 8), td(BF16, COL, 8),
            LinearCombination(BF16, 8, F32, F32))


def sm80_tf32():
    math = MathInstruction([16, 8, 8], TF32, TF32, F32, TC, MA)
    tile = TileDescription([128, 128, 16], 4, [2, 2, 1], math)
    return (tile, td(TF32, ROW, 4), td(TF32, ROW, 4), td(F32, ROW, 4),
            LinearCombination(F32, 4, F32, F32))


def sm80_simt(element=F32):
    math = MathInstruction([1, 1, 1], element, element, element, SIMT, MA)
    shape, warps = ([128, 128, 8], [2, 4, 1]) if element == F32 else ([64, 64, 8], [2, 2, 1])
    tile = TileDescription(shape, 4, warps, math)
    return (tile, td(element, COL, 1), td(element, ROW, 1), td(element, ROW, 1),
            LinearCombination(element, 1, element, element))


def sm80_f64():
    math = MathInstruction([8, 8, 4], F64, F64, F64, TC, MA)
    tile = TileDescription([64, 64, 16], 4, [2, 2, 1], math)
    return (tile, td(F64, ROW, 1), td(F64, COL, 1), td(F64, COL, 1),
            LinearCombination(F64, 1, F64, F64))


def sm80_i8(out="s32"):
    math = MathInstruction([16, 8, 32], S8, S8, S32, TC, MAS)
    tile = TileDescription([128, 128, 64], 3, [2, 2, 1], math)
    if out == "s32":
        return (tile, td(S8, ROW, 16), td(S8, COL, 16), td(S32, ROW, 4),
                LinearCombination(S32, 4, S32, F32))
    return (tile, td(S8, ROW, 16), td(S8, COL, 16), td(S8, ROW, 16),
            LinearCombinationClamp(S8, 16, S32, F32))


SM80_FAMILIES = {
    "f16": sm80_f16, "bf16": sm80_bf16, "tf32": sm80_tf32, "simt_f32": sm80_simt,
    "simt_f64": lambda: sm80_simt(F64), "f64": sm80_f64, "int8_s32": sm80_i8,
    "int8_s8_clamp": lambda: sm80_i8("s8"),
}


def wgmma(element, n=128):
    k = {BF16: 16, F16: 16, E4M3: 32}[element]
    return MathInstruction([64, n, k], element, element, F32, TC, MA)


def sm90_tile(element=BF16, schedule="TmaWarpSpecializedCooperative", cluster=(1, 1, 1),
              scheduler="Persistent", shape=None):
    if shape is None:
        shape = [128, 128, 128 if element == E4M3 else 64]
        if schedule == "TmaWarpSpecializedPingpong":
            shape[0] = 64
    return TileDescription(shape, 0, None, wgmma(element), cluster_shape=list(cluster),
                           kernel_schedule=getattr(KS, schedule),
                           tile_scheduler=getattr(TS, scheduler))


def sm90_bf16(epilogue=None, tile=None, alignment=8, layouts=(ROW, COL, ROW)):
    la, lb, lc = layouts
    return (tile or sm90_tile(), td(BF16, la, alignment), td(BF16, lb, 8), td(BF16, lc, 8),
            epilogue or LinearCombination(BF16, 8, F32, F32))


def sm90_f16(epilogue=None):
    return (sm90_tile(F16), td(F16, ROW, 8), td(F16, COL, 8), td(F16, ROW, 8),
            epilogue or LinearCombination(F16, 8, F32, F32))


def sm90_e4m3(out=BF16, layouts=(ROW, COL), epilogue=None):
    align = 16 if out in (E4M3, cutlass.e5m2) else (4 if out == F32 else 8)
    return (sm90_tile(E4M3), td(E4M3, layouts[0], 16), td(E4M3, layouts[1], 16),
            td(out, ROW, align), epilogue or LinearCombination(out, align, F32, F32, scales=True))


def test_grouped_names_are_exported():
    namespace = {}
    exec("from tilecraft import *", namespace)
    for name in ("GemmOperationGrouped", "GemmGroupedArguments", "SchedulerMode"):
        assert name in namespace, f"`from tilecraft import *` does not give {name}"
    assert namespace["SchedulerMode"] is cutlass.SchedulerMode
    assert mode("Host") != mode("Device")
    from tilecraft import api

    assert callable(api.GroupedGemmArguments)
    assert callable(cutlass.grouped_gemm)


@pytest.mark.parametrize("family", list(SM80_FAMILIES))
def test_sm80_grouped_descriptions(family):
    """Every arch-80 family in both scheduler modes: named as grouped, the two modes as two
    kernels, Device by default, precompute_mode also as the 8th positional argument, not the
    GemmOperationUniversal of the same parts; nothing compiled."""
    parts = SM80_FAMILIES[family]()
    host = grouped(80, *parts, precompute_mode=mode("Host"))
    device = grouped(arch=80, tile_description=parts[0], A=parts[1], B=parts[2], C=parts[3],
                     epilogue_functor=parts[4], swizzling_functor=cutlass.IdentitySwizzle1,
                     precompute_mode=mode("Device"))
    for op in (host, device):
        assert "grouped" in op.procedural_name().lower(), op.procedural_name()
        assert not op.is_compiled()
        op.epilogue_type(1.0, 0.5)   # the epilogue's runtime values, as for GEMM
    assert host.procedural_name() != device.procedural_name()
    assert grouped(80, *parts).procedural_name() == device.procedural_name()
    positional = grouped(80, *parts, cutlass.IdentitySwizzle1, mode("Host"))
    assert positional.procedural_name() == host.procedural_name()
    universal = GemmOperationUniversal(80, *parts)
    assert universal.procedural_name() not in (host.procedural_name(), device.procedural_name())
    assert not universal.is_compiled()


@pytest.mark.parametrize("swizzle", ["IdentitySwizzle1", "IdentitySwizzle2", "IdentitySwizzle4",
                                     "IdentitySwizzle8"])
def test_sm80_identity_swizzles(swizzle):
    op = grouped(80, *sm80_f16(), swizzling_functor=getattr(cutlass, swizzle))
    assert "grouped" in op.procedural_name().lower()


SM90_VALID = {
    "bf16_coop": lambda: sm90_bf16(),
    "bf16_coop_c2x1": lambda: sm90_bf16(tile=sm90_tile(cluster=(2, 1, 1))),
    "bf16_pingpong": lambda: sm90_bf16(tile=sm90_tile(schedule="TmaWarpSpecializedPingpong")),
    "bf16_ccc": lambda: sm90_bf16(layouts=(COL, COL, COL)),
    "f16_relu": lambda: sm90_f16(LinearCombinationGeneric(relu(F32), F16, 8, F32, F32)),
    "f16_gelu": lambda: sm90_f16(LinearCombinationGeneric(gelu(F32), F16, 8, F32, F32)),
    "e4m3_bf16": lambda: sm90_e4m3(),
    "e4m3_f16": lambda: sm90_e4m3(F16),
    "e4m3_f32": lambda: sm90_e4m3(F32),
    "bf16_bias_per_expert": lambda: sm90_bf16(_bias_epilogue()),
    "bf16_bias_silu": lambda: sm90_bf16(LinearCombinationGeneric(silu(F32), BF16, 8, F32, F32,
                                                                 bias="column")),
}


@pytest.mark.parametrize("name", list(SM90_VALID))
def test_sm90_grouped_descriptions(name):
    """arch 90: persistent cooperative / ping-pong schedules, clusters, every majorness of
    16-bit operands, activations, e4m3 TN with f16 / bf16 / f32 output; Device scheduling."""
    parts = SM90_VALID[name]()
    op = grouped(90, *parts, precompute_mode=mode("Device"))
    assert "grouped" in op.procedural_name().lower(), op.procedural_name()
    assert grouped(90, *parts).procedural_name() == op.procedural_name()
    assert not op.is_compiled()
    op.epilogue_type(1.0, 0.0)


def _bias_epilogue(per="column"):
    return LinearCombination(BF16, 8, F32, F32, bias=per, element_bias=BF16)


def _aux_epilogue():
    return LinearCombinationGeneric(gelu(F32), BF16, 8, F32, F32, aux=True)


DESCRIPTION_ERRORS = [
    ("sm90 host scheduling", lambda: grouped(90, *sm90_bf16(), precompute_mode=mode("Host")),
     ValueError, r"precompute_mode|SchedulerMode"),
    ("sm90 stream-K", lambda: grouped(90, *sm90_bf16(tile=sm90_tile(scheduler="StreamK"))),
     ValueError, r"StreamK|tile_scheduler"),
    ("sm90 non-persistent schedule",
     lambda: grouped(90, *sm90_bf16(tile=sm90_tile(schedule="TmaWarpSpecialized"))),
     ValueError, r"kernel_schedule|persistent"),
    ("sm90 per-row bias", lambda: grouped(90, *sm90_bf16(_bias_epilogue("row"))), ValueError,
     r"per-row"),
    ("sm90 aux output", lambda: grouped(90, *sm90_bf16(_aux_epilogue())), ValueError, r"aux"),
    ("sm90 alignment 4 of bf16", lambda: grouped(90, *sm90_bf16(alignment=4)),
     ValueError, r"^A: .*alignment"),
    ("sm90 e4m3 not TN", lambda: grouped(90, *sm90_e4m3(layouts=(ROW, ROW))),
     ValueError, r"TN|ColumnMajor"),
    ("sm90 e4m3 to e4m3", lambda: grouped(90, *sm90_e4m3(E4M3)), ValueError, r"C\b|float8"),
    ("sm90 tile on arch 80", lambda: grouped(80, *sm90_bf16()), ValueError, r"arch=90|arch 90"),
    ("interleaved int8", lambda: grouped(
        80, TileDescription([128, 128, 64], 3, [2, 2, 1],
                            MathInstruction([16, 8, 32], S8, S8, S32, TC, MAS)),
        td(S8, cutlass.ColumnMajorInterleaved32, 16), td(S8, cutlass.RowMajorInterleaved32, 16),
        td(S8, cutlass.ColumnMajorInterleaved32, 16), LinearCombinationClamp(S8, 16, S32, F32)),
     ValueError, r"RowMajor or ColumnMajor|[Ii]nterleaved"),
    ("horizontal swizzle", lambda: grouped(80, *sm80_f16(),
                                           swizzling_functor=cutlass.HorizontalSwizzle),
     ValueError, r"swizzl"),
    ("batched swizzle", lambda: grouped(80, *sm80_f16(),
                                        swizzling_functor=cutlass.BatchedIdentitySwizzle),
     ValueError, r"swizzl"),
    ("arch 70", lambda: grouped(70, *sm80_f16()), ValueError, r"arch"),
    ("precompute_mode as a string", lambda: grouped(80, *sm80_f16(), precompute_mode="Device"),
     TypeError, r"precompute_mode"),
    ("precompute_mode as an int", lambda: grouped(80, *sm80_f16(), precompute_mode=1),
     TypeError, r"precompute_mode"),
    ("unknown keyword", lambda: grouped(80, *sm80_f16(), schedule_mode=mode("Host")),
     TypeError, r"schedule_mode"),
    ("swizzle as a string", lambda: grouped(80, *sm80_f16(), swizzling_functor="identity"),
     TypeError, r"swizzling_functor"),
]


@pytest.mark.parametrize("make,error,pattern", [c[1:] for c in DESCRIPTION_ERRORS],
                         ids=[c[0] for c in DESCRIPTION_ERRORS])
def test_grouped_description_errors(make, error, pattern):
    """Refused when described (UnsupportedError is a ValueError), with words."""
    with pytest.raises(error, match=pattern):
        make()


def test_sm90_host_scheduling_says_what_to_use():
    with pytest.raises(ValueError) as info:
        grouped(90, *sm90_bf16(), precompute_mode=mode("Host"))
    assert "Device" in str(info.value), str(info.value)


# ---- GemmGroupedArguments on numpy lists: checked before any CUDA work --------------------------

SIZES = [(64, 32, 16), (0, 32, 24), (7, 48, 8), (33, 16, 40)]   # an empty group included


def simt_op():
    return grouped(80, *sm80_simt(), precompute_mode=mode("Host"))   # A col, B row, C row


def f16_op(arch=80):
    return grouped(arch, *(sm80_f16() if arch == 80 else sm90_f16()))  # A row, B col, C row


def arrays(sizes, dtype, layouts=("c", "r", "r"), seed=0):
    """Lists of numpy A (M, K), B (K, N), C and D (M, N) in the layouts ("r" / "c")."""
    rng = np.random.default_rng(seed)

    def lay(x, layout):
        return np.asfortranarray(x) if layout == "c" else np.ascontiguousarray(x)

    A, B, C, D = [], [], [], []
    for m, n, k in sizes:
        A.append(lay(rng.integers(-3, 4, size=(m, k)).astype(dtype), layouts[0]))
        B.append(lay(rng.integers(-3, 4, size=(k, n)).astype(dtype), layouts[1]))
        C.append(lay(rng.integers(-3, 4, size=(m, n)).astype(dtype), layouts[2]))
        D.append(lay(np.full((m, n), np.nan, dtype), layouts[2]))
    return A, B, C, D


def coords(sizes):
    return [cutlass.gemm.GemmCoord(m, n, k) for m, n, k in sizes]


def make_args(op, sizes, A, B, C, D, **kw):
    kw.setdefault("output_op", op.epilogue_type(1.0, 0.5))
    return GemmGroupedArguments(op, sizes, A, B, C, D, **kw)


def swap_in(lst, g, value):
    out = list(lst)
    out[g] = value
    return out


def expect_refused(op, error, needles, *args, **kw):
    """GemmGroupedArguments(op, *args, **kw) raises ``error`` whose text matches each regex of
    ``needles``; the operation was not compiled, and numpy D arrays are untouched."""
    with pytest.raises(error) as info:
        make_args(op, *args, **kw)
    text = str(info.value)
    for needle in needles:
        assert re.search(needle, text), f"error does not name {needle!r}: {text!r}"
    assert not op.is_compiled()
    D = args[4] if len(args) > 4 else kw.get("D")
    for d in D or ():
        if isinstance(d, np.ndarray) and d.size and d.dtype.kind == "f":
            assert np.isnan(d).all(), "a refused call wrote D"
    return text


def test_good_lists_reach_the_device_check(gpu_reason):
    """The lists the cases below start from pass validation: without a GPU the first error is
    the device's. (On a GPU machine the next step would compile, so this is skipped there.)"""
    if gpu_reason is None:
        pytest.skip("a GPU is present")
    for op, dtype, layouts in ((simt_op(), np.float32, ("c", "r", "r")),
                               (f16_op(), np.float16, ("r", "c", "r")),
                               (f16_op(90), np.float16, ("r", "c", "r"))):
        A, B, C, D = arrays(SIZES, dtype, layouts)
        with pytest.raises(Unsupported, match="^no usable CUDA device"):
            make_args(op, coords(SIZES), A, B, C, D)
        with pytest.raises(Unsupported, match="^no usable CUDA device"):   # C None, beta 0
            make_args(op, coords(SIZES), A, B, None, D, output_op=op.epilogue_type(2.0, 0.0))
        assert not op.is_compiled()


def test_list_lengths_and_problem_count():
    op = simt_op()
    A, B, C, D = arrays(SIZES, np.float32)
    sizes = coords(SIZES)
    expect_refused(op, ValueError, [r"\bB\b", r"\b4\b", r"\b3\b"], sizes, A, B[:3], C, D)
    expect_refused(op, ValueError, [r"\bD\b", r"\b5\b"], sizes, A, B, C, D + D[:1])
    expect_refused(op, ValueError, [r"\bC\b", r"\b2\b"], sizes, A, B, C[:2], D)
    expect_refused(op, ValueError, [r"\b(A|B|C|D|problem_sizes)\b", r"\b3\b", r"\b4\b"],
                   sizes[:3], A, B, C, D)
    expect_refused(op, ValueError, [r"problem_sizes"], [], [], [], [], [])


def test_group_dtype_shape_and_strides_name_the_group():
    op = simt_op()
    A, B, C, D = arrays(SIZES, np.float32)
    sizes = coords(SIZES)
    swap = swap_in
    expect_refused(op, ValueError, [r"^A\[2\]", r"float32", r"float64"], sizes,
                   swap(A, 2, A[2].astype(np.float64)), B, C, D)
    expect_refused(op, ValueError, [r"^C\[3\]", r"float32"], sizes, A, B,
                   swap(C, 3, C[3].astype(np.float16)), D)
    expect_refused(op, ValueError, [r"^B\[0\]", r"\(16, 32\)"], sizes, A,
                   swap(B, 0, np.ones((16, 31), np.float32)), C, D)
    expect_refused(op, ValueError, [r"^D\[3\]", r"\(33, 16\)"], sizes, A, B, C,
                   swap(D, 3, np.full((16, 33), np.nan, np.float32)))
    # A is described ColumnMajor: a row-major (C-order) member cannot be read as one.
    expect_refused(op, ValueError, [r"^A\[0\]", r"ColumnMajor"], sizes,
                   swap(A, 0, np.ascontiguousarray(A[0])), B, C, D)
    # A member with every other row of a taller column-major array: no layout expresses it.
    tall = np.asfortranarray(np.ones((14, 8), np.float32))
    expect_refused(op, ValueError, [r"^A\[2\]"], sizes, swap(A, 2, tall[::2]), B, C, D)
    expect_refused(op, ValueError, [r"^B\[3\]", r"negative"], sizes, A,
                   swap(B, 3, B[3][::-1]), C, D)
    expect_refused(op, ValueError, [r"^D\[2\]"], sizes, A, B, C,
                   swap(D, 2, np.full(7 * 48 - 1, np.nan, np.float32)))


def test_sizes_negative_and_beta_without_c():
    op = simt_op()
    A, B, C, D = arrays(SIZES, np.float32)
    sizes = coords(SIZES)
    negative = list(sizes)
    negative[2] = cutlass.gemm.GemmCoord(7, -48, 8)
    expect_refused(op, ValueError, [r"problem_sizes\[2\]"], negative, A, B, C, D)
    expect_refused(op, ValueError, [r"\bC\b", r"beta"], sizes, A, B, None, D,
                   output_op=op.epilogue_type(1.0, 0.5))


def test_alignment_of_each_group():
    """The contiguous extent of every group's operands must be a multiple of the described
    alignment (arch 80: the access width; arch 90: TMA's 16 bytes)."""
    for arch in (80, 90):
        op = f16_op(arch)
        sizes = [(64, 32, 16), (16, 32, 12), (8, 16, 8)]   # group 1: K = 12 (A row-major)
        A, B, C, D = arrays(sizes, np.float16, ("r", "c", "r"))
        expect_refused(op, ValueError, [r"^A\[1\]", r"\b12\b"], coords(sizes), A, B, C, D)
        sizes = [(64, 32, 16), (16, 32, 16), (8, 20, 8)]   # group 2: N = 20 (D row-major)
        A, B, C, D = arrays(sizes, np.float16, ("r", "c", "r"))
        expect_refused(op, ValueError, [r"^(C|D)\[2\]", r"\b20\b"], coords(sizes), A, B, C, D)


def test_argument_types():
    op = simt_op()
    A, B, C, D = arrays(SIZES, np.float32)
    sizes = coords(SIZES)
    expect_refused(op, TypeError, [r"^A\b", r"list"], sizes, A[0], B, C, D)
    expect_refused(op, TypeError, [r"problem_sizes"], tuple(SIZES), A, B, C, D)
    expect_refused(op, TypeError, [r"problem_sizes"], list(SIZES), A, B, C, D)
    expect_refused(op, TypeError, [r"A\[1\]|\bA\b"], sizes, swap_in(A, 1, [[1.0]]), B, C, D)
    with pytest.raises(TypeError, match="problem_size\\b|unexpected keyword"):
        GemmGroupedArguments(operation=op, problem_size=sizes, A=A, B=B, C=C, D=D)
    assert not op.is_compiled()


def test_operation_must_be_grouped():
    """GemmGroupedArguments on a GemmOperationUniversal: refused, saying what it needs."""
    universal = GemmOperationUniversal(80, *sm80_simt())
    A, B, C, D = arrays(SIZES, np.float32)
    with pytest.raises((TypeError, ValueError), match=r"(?i)grouped"):
        make_args(universal, coords(SIZES), A, B, C, D)
    assert not universal.is_compiled()
