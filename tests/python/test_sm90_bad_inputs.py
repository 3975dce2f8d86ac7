"""Bad inputs on the SM90 (arch=90, CUTLASS 3.x TMA/wgmma) paths: each raises before anything
compiles or launches, naming the argument, what was expected and what was given.

Description-time errors come from the Python API's constructors. Argument-time errors use numpy
host arrays: GemmArguments validates modes, TMA extents, bias, aux, scales and epilogue
arguments before it looks for a GPU or a compiled kernel. To prove that nothing is compiled,
this module points TILECRAFT_NVCC at a path that does not exist (a compile would fail with a
different error) and checks ``is_compiled()`` after each error; none of it needs nvcc or a GPU.

numpy has no bfloat16 or fp8 dtypes: where a bf16 or fp8 operation is given float16 or uint8
arrays, the check under test precedes the operands' dtype check, which the comments note.
"""

import math

import numpy as np
import pytest

import tilecraft as cutlass
from tilecraft import *  # noqa: F401,F403

BF16, F16, F32, S8, S32, TF32 = (cutlass.bfloat16, cutlass.float16, cutlass.float32, cutlass.int8,
                                 cutlass.int32, cutlass.tfloat32)
E4M3, E5M2 = cutlass.e4m3, cutlass.e5m2
TC, SIMT = cutlass.OpClass.TensorOp, cutlass.OpClass.Simt
MA = MathOperation.multiply_add
FAST_ACCUM = MathOperation.multiply_add_fast_accum
KS, ES, TS = cutlass.KernelScheduleType, cutlass.EpilogueScheduleType, cutlass.TileSchedulerType
ROW, COL = cutlass.RowMajor, cutlass.ColumnMajor
Mode = cutlass.gemm.Mode
Unsupported = cutlass.UnsupportedError


pytestmark = pytest.mark.usefixtures("no_compiler")


# ---- descriptions -------------------------------------------------------------------------

def wgmma(n, a, b=None, acc=F32, op=MA):
    k = {BF16: 16, F16: 16, TF32: 8, F32: 8, S8: 32, E4M3: 32, E5M2: 32}[a]
    return MathInstruction([64, n, k], a, b or a, acc, TC, op)


def sm90_tile(shape, math, stages=0, **kw):
    return TileDescription(shape, stages, None, math, **kw)


def td(element, layout, alignment=None):
    bits = {BF16: 16, F16: 16, TF32: 32, F32: 32, S8: 8, S32: 32, E4M3: 8, E5M2: 8}[element]
    return TensorDescription(element, layout, alignment or 128 // bits)


def bf16_tile(**kw):
    return sm90_tile([128, 128, 64], wgmma(128, BF16), **kw)


def fp8_tile():
    return sm90_tile([128, 128, 128], wgmma(128, E4M3))


def s8_tile():
    return sm90_tile([128, 128, 128], wgmma(128, S8, acc=S32))


def sm80_tile():
    return TileDescription([128, 128, 32], 3, [2, 2, 1],
                           MathInstruction([16, 8, 16], BF16, BF16, F32, TC, MA))


def op90(tile, a, b, c, epilogue, **kw):
    return GemmOperationUniversal(90, tile, a, b, c, epilogue, **kw)


def bf16_op(epilogue=None, arch=90, tile=None, **kw):
    epilogue = epilogue or LinearCombination(BF16, 8, F32, F32)
    return GemmOperationUniversal(arch, tile or bf16_tile(), td(BF16, ROW), td(BF16, COL),
                                  td(BF16, ROW), epilogue, **kw)


DESCRIPTION_CASES = [
    # TMA moves 16-byte vectors.
    ("tma alignment A 4 bf16", lambda: op90(bf16_tile(), td(BF16, ROW, 4), td(BF16, COL),
                                            td(BF16, ROW), LinearCombination(BF16, 8, F32, F32)),
     ValueError, r"^A: alignment 4 of bfloat16 is 64 bits; .*expected alignment 8"),
    ("tma alignment C 4 bf16", lambda: op90(bf16_tile(), td(BF16, ROW), td(BF16, COL),
                                            td(BF16, ROW, 4), LinearCombination(BF16, 4, F32, F32)),
     ValueError, r"^C: alignment 4 of bfloat16 is 64 bits"),
    # wgmma reads 32- and 8-bit operands K-major only.
    ("tf32 not TN", lambda: op90(sm90_tile([128, 128, 32], wgmma(128, TF32)), td(TF32, COL),
                                 td(TF32, COL), td(F32, ROW), LinearCombination(F32, 4, F32, F32)),
     Unsupported, r"^layouts: .*tfloat32 GEMMs take A RowMajor and B ColumnMajor \(TN\); "
                  r"got A ColumnMajor, B ColumnMajor"),
    ("fp8 not TN", lambda: op90(fp8_tile(), td(E4M3, ROW), td(E4M3, ROW), td(BF16, ROW),
                                LinearCombination(BF16, 8, F32, F32, scales=True)),
     Unsupported, r"^layouts: .*float8_e4m3 GEMMs take .*\(TN\); got A RowMajor, B RowMajor"),
    ("int8 not TN", lambda: op90(s8_tile(), td(S8, COL), td(S8, ROW), td(S32, ROW),
                                 LinearCombination(S32, 4, S32, S32)),
     Unsupported, r"^layouts: .*int8 GEMMs take .*\(TN\); got A ColumnMajor, B RowMajor"),
    ("interleaved on arch 90", lambda: op90(s8_tile(), td(S8, cutlass.ColumnMajorInterleaved32),
                                            td(S8, cutlass.RowMajorInterleaved32), td(S32, ROW),
                                            LinearCombination(S32, 4, S32, S32)),
     Unsupported, "^A: SM90 GEMMs take RowMajor or ColumnMajor operands, got "
                  "ColumnMajorInterleaved32"),
    # Schedules.
    ("cooperative at M=64", lambda: sm90_tile([64, 128, 64], wgmma(128, BF16),
                                              kernel_schedule=KS.TmaWarpSpecializedCooperative),
     ValueError, r"kernel_schedule TmaWarpSpecializedCooperative .* threadblock M must be 128 or "
                 r"256, got 64"),
    ("pingpong with stream-K", lambda: bf16_tile(kernel_schedule=KS.TmaWarpSpecializedPingpong,
                                                 tile_scheduler=TS.StreamK),
     Unsupported, "tile_scheduler StreamK runs only with kernel_schedule "
                  "TmaWarpSpecializedCooperative, got TmaWarpSpecializedPingpong"),
    ("plain warp-specialized with stream-K",
     lambda: bf16_tile(kernel_schedule=KS.TmaWarpSpecialized, tile_scheduler=TS.StreamK),
     Unsupported, "tile_scheduler StreamK runs only with .*got TmaWarpSpecialized$"),
    ("epilogue schedule mismatch",
     lambda: bf16_tile(kernel_schedule=KS.TmaWarpSpecializedCooperative,
                       epilogue_schedule=ES.TmaWarpSpecialized),
     ValueError, "epilogue_schedule TmaWarpSpecialized does not fit kernel_schedule "
                 r"TmaWarpSpecializedCooperative; expected TmaWarpSpecializedCooperative \(or Auto\)"),
    # Clusters.
    ("cluster 3x1x1", lambda: bf16_tile(cluster_shape=[3, 1, 1]),
     ValueError, r"cluster_shape \[3, 1, 1\]: expected \[1\|2\|4, 1\|2\|4, 1\] with at most 4 CTAs"),
    ("cluster 4x4x1", lambda: bf16_tile(cluster_shape=[4, 4, 1]),
     ValueError, r"cluster_shape \[4, 4, 1\]: expected .*at most 4 CTAs"),
    ("cluster z=2", lambda: bf16_tile(cluster_shape=[1, 1, 2]),
     ValueError, r"cluster_shape \[1, 1, 2\]: expected"),
    ("cluster arity", lambda: bf16_tile(cluster_shape=[2, 1]),
     ValueError, r"^cluster_shape: expected a list of 3 ints or None, got \[2, 1\] \(list\)$"),
    # Tile shapes.
    ("tile K not a multiple of the instruction K",
     lambda: sm90_tile([128, 128, 40], wgmma(128, BF16)),
     ValueError, r"threadblock_shape \[128, 128, 40\]: K must be a multiple of 16 \(the wgmma K "
                 r"for bfloat16\)"),
    ("tile N not a multiple of 16", lambda: sm90_tile([128, 72, 64], wgmma(8, BF16)),
     ValueError, r"threadblock_shape \[128, 72, 64\]: N must be a multiple of 16 in \[16, 256\]"),
    ("tile N not a multiple of the instruction N",
     lambda: sm90_tile([128, 64, 64], wgmma(128, BF16)),
     ValueError, "threadblock_shape N 64 is not a multiple of the instruction's N 128"),
    ("tile M 192", lambda: sm90_tile([192, 128, 64], wgmma(128, BF16)),
     ValueError, r"threadblock_shape \[192, 128, 64\]: M must be 64, 128 or 256"),
    ("accumulators 256x256 cooperative", lambda: sm90_tile([256, 256, 64], wgmma(256, BF16)),
     ValueError, r"\[256, 256, 64\] with TmaWarpSpecializedCooperative needs 256 accumulator "
                 "registers per thread; at most 128 fit"),
    # Stages.
    ("stages 1", lambda: bf16_tile(stages=1),
     ValueError, r"stages must be 0 \(as many as fit\) or in \[2, 12\], got 1"),
    ("stages beyond shared memory", lambda: sm90_tile([128, 256, 64], wgmma(256, BF16), 10),
     ValueError, r"\[128, 256, 64\] with 10 stages needs 480 KiB .*SM90 allows 227 KiB"),
    ("stages with the epilogue's share",
     lambda: op90(bf16_tile(stages=6), td(BF16, ROW), td(BF16, COL), td(F32, ROW),
                  LinearCombination(F32, 4, F32, F32)),
     ValueError, r"^tile_description: 6 stages of threadblock_shape \[128, 128, 64\] take 192 KiB "
                 r"of shared memory and the float32 epilogue about .* KiB; SM90 allows 227 KiB"),
    # wgmma instructions.
    ("wgmma N 12", lambda: MathInstruction([64, 12, 16], BF16, BF16, F32, TC, MA),
     ValueError, r"wgmma \[64, 12, 16\]\): instruction_shape: N must be a multiple of 8 in "
                 r"\[8, 256\], got 12"),
    ("wgmma K 32 for bf16", lambda: MathInstruction([64, 128, 32], BF16, BF16, F32, TC, MA),
     ValueError, r"K must be 16 for bfloat16 operands \(32 bytes\), got 32"),
    ("wgmma fast accum on bf16", lambda: wgmma(128, BF16, op=FAST_ACCUM),
     ValueError, "math_operation multiply_add_fast_accum is not valid for these types; expected "
                 "one of multiply_add"),
    ("wgmma on SIMT", lambda: MathInstruction([64, 128, 16], BF16, BF16, F32, SIMT, MA),
     ValueError, "opcode_class must be TensorOp, got Simt"),
    # fp8 and scales.
    ("fp8 operands without scales", lambda: op90(fp8_tile(), td(E4M3, ROW), td(E4M3, COL),
                                                 td(BF16, ROW),
                                                 LinearCombination(BF16, 8, F32, F32)),
     ValueError, r"^epilogue_functor: fp8 \(float8_e4m3\) operands carry per-tensor scales; "
                 "describe the epilogue with scales=True"),
    ("fp8 output without scales", lambda: op90(fp8_tile(), td(E4M3, ROW), td(E4M3, COL),
                                               td(E4M3, ROW),
                                               LinearCombination(E4M3, 16, F32, F32)),
     ValueError, "per-tensor scales.*scales=True"),
    ("scales with bf16 operands", lambda: bf16_op(LinearCombination(BF16, 8, F32, F32,
                                                                    scales=True)),
     Unsupported, "^epilogue_functor: per-tensor scales are for fp8 operands; got bfloat16"),
    ("aux together with scales", lambda: LinearCombination(BF16, 8, F32, F32, aux=True,
                                                           scales=True),
     Unsupported, "an aux output together with per-tensor scales"),
    ("fp8 to int8 output", lambda: op90(fp8_tile(), td(E4M3, ROW), td(E4M3, COL), td(S8, ROW),
                                        LinearCombination(S8, 16, F32, F32, scales=True)),
     Unsupported, "^C: SM90 GEMMs on float8_e4m3 operands write float16, bfloat16, float32 or "
                  "fp8; got int8"),
    # int8.
    ("int8 with an activation", lambda: op90(s8_tile(), td(S8, ROW), td(S8, COL), td(S8, ROW),
                                             LinearCombinationGeneric(relu(F32), S8, 16, S32,
                                                                      F32)),
     Unsupported, r"^epilogue_functor: integer epilogues are plain LinearCombination \(no "
                  r"activation, bias or aux output\) on SM90"),
    ("int8 with a bias", lambda: op90(s8_tile(), td(S8, ROW), td(S8, COL), td(S32, ROW),
                                      LinearCombination(S32, 4, S32, F32, bias="row",
                                                        element_bias=F32)),
     Unsupported, "^epilogue_functor: integer epilogues are plain LinearCombination"),
    # Epilogue kinds and options.
    ("LinearCombinationClamp on arch 90",
     lambda: op90(s8_tile(), td(S8, ROW), td(S8, COL), td(S8, ROW),
                  LinearCombinationClamp(S8, 16, S32, F32)),
     Unsupported, r"SM90 kernels take LinearCombination or LinearCombinationGeneric \(clamping is "
                  r"LinearCombinationGeneric\(clamp\) with runtime bounds\); got "
                  "LinearCombinationClamp"),
    ("bf16 epilogue compute", lambda: bf16_op(LinearCombination(BF16, 8, F32, BF16)),
     Unsupported, "SM90 epilogues compute in float32 .*element_epilogue is bfloat16"),
    ("bias kind", lambda: LinearCombination(BF16, 8, F32, F32, bias="diagonal"),
     ValueError, r"^bias: expected None, 'row' .* or 'column' .*, got 'diagonal'"),
    ("bias element int8", lambda: LinearCombination(BF16, 8, F32, F32, bias="row",
                                                    element_bias=S8),
     ValueError, "element_bias must be float32, float16 or bfloat16, got int8"),
    ("element_bias without bias", lambda: LinearCombination(BF16, 8, F32, F32, element_bias=F32),
     ValueError, "element_bias/element_aux: given without bias=/aux=True"),
    # visitor=True takes an epilogue graph (tilecraft.epilogue.trace), not a functor.
    ("visitor", lambda: bf16_op(visitor=True),
     TypeError, r"^epilogue_functor: expected an epilogue graph \(tilecraft\.epilogue\.trace"),
    # Arch against tile and epilogue.
    ("SM80 tile with arch 90", lambda: bf16_op(tile=sm80_tile()),
     ValueError, r"^tile_description: arch 90 builds CUTLASS 3.x kernels from a wgmma math "
                 r"instruction .*got an SM80 instruction shape \[16, 8, 16\]"),
    ("wgmma tile with arch 80", lambda: bf16_op(arch=80),
     ValueError, r"^tile_description: a wgmma instruction shape \[64, N, K\] builds SM90 "
                 "kernels; pass arch=90"),
    ("bias fusion on arch 80", lambda: bf16_op(LinearCombination(BF16, 8, F32, F32, bias="column"),
                                               arch=80, tile=sm80_tile()),
     Unsupported, "^epilogue_functor: bias, aux output, per-tensor scales, gelu_tanh, clamp and "
                  "fp8 outputs are SM90 epilogue fusions; pass arch=90"),
    ("gelu_tanh on arch 80", lambda: bf16_op(LinearCombinationGeneric(gelu_tanh(F32), BF16, 8,
                                                                      F32, F32),
                                             arch=80, tile=sm80_tile()),
     Unsupported, "SM90 epilogue fusions; pass arch=90"),
    ("SM90 settings on an SM80 tile",
     lambda: TileDescription([128, 128, 32], 3, [2, 2, 1],
                             MathInstruction([16, 8, 16], BF16, BF16, F32, TC, MA),
                             cluster_shape=[2, 1, 1]),
     ValueError, "cluster_shape, kernel_schedule, epilogue_schedule, tile_scheduler and "
                 "mma_promotion_interval are SM90 settings"),
]


@pytest.mark.parametrize("make,error,pattern", [c[1:] for c in DESCRIPTION_CASES],
                         ids=[c[0] for c in DESCRIPTION_CASES])
def test_sm90_description_errors(make, error, pattern):
    with pytest.raises(error, match=pattern):
        make()


def test_valid_sm90_descriptions_resolve_their_schedules():
    coop = bf16_tile()
    assert coop.kernel_schedule == KS.TmaWarpSpecializedCooperative
    assert coop.epilogue_schedule == ES.TmaWarpSpecializedCooperative
    assert coop.procedural_name() == "128x128x64_c1x1x1_s0_coop"
    ping = sm90_tile([64, 128, 64], wgmma(128, BF16), cluster_shape=[2, 1, 1])
    assert ping.kernel_schedule == KS.TmaWarpSpecializedPingpong
    assert ping.epilogue_schedule == ES.TmaWarpSpecialized
    assert ping.procedural_name() == "64x128x64_c2x1x1_s0_pingpong"
    streamk = bf16_tile(tile_scheduler=TS.StreamK, stages=4)
    assert streamk.procedural_name() == "128x128x64_c1x1x1_s4_coop_streamk"
    op = bf16_op(LinearCombinationGeneric(gelu(F32), BF16, 8, F32, F32, bias="column"))
    assert op.procedural_name().startswith("tilecraft_sm90_tensorop_")
    assert op.procedural_name().endswith("_bf16_128x128x64_c1x1x1_s0_coop_tnt_align8x8x8_gelu_"
                                         "bcol_bf16")
    assert op.epilogue_functor.bias == cutlass.BiasKind.per_column
    assert not op.is_compiled()


def test_fp8_output_with_scales_is_described():
    """An fp8 D is valid with scales=True (scale_d keeps its range), from both functors."""
    for out in (E4M3, E5M2):
        epilogue = LinearCombination(out, 16, F32, F32, scales=True)
        assert epilogue.scales
        op = op90(fp8_tile(), td(E4M3, ROW), td(E4M3, COL), td(out, ROW), epilogue)
        assert op.procedural_name().endswith("_scaled")
        generic = LinearCombinationGeneric(relu(F32), out, 16, F32, F32, scales=True)
        op90(fp8_tile(), td(E4M3, ROW), td(E4M3, COL), td(out, ROW), generic)


def test_stream_k_at_m64_names_the_scheduler():
    with pytest.raises(ValueError, match="StreamK.*got 64|got 64.*StreamK"):
        sm90_tile([64, 128, 64], wgmma(128, BF16), tile_scheduler=TS.StreamK)


def test_batched_swizzle_with_stream_k_says_what_to_use():
    with pytest.raises(Unsupported, match="^swizzling_functor: .*BatchedIdentitySwizzle.*"
                                          "(expected|use)"):
        bf16_op(tile=bf16_tile(tile_scheduler=TS.StreamK),
                swizzling_functor=cutlass.BatchedIdentitySwizzle)


def test_auto_stages_leave_room_for_two():
    with pytest.raises(ValueError, match="stages.*KiB"):
        op90(sm90_tile([256, 128, 128], wgmma(128, BF16)), td(BF16, ROW), td(BF16, COL),
             td(F32, ROW), LinearCombination(F32, 4, F32, F32))


# ---- arguments ------------------------------------------------------------------------------

def f16_op(epilogue=None, tile_scheduler=TS.Persistent, a_layout=ROW, c=(F16, 8)):
    tile = sm90_tile([128, 128, 64], wgmma(128, F16), tile_scheduler=tile_scheduler)
    epilogue = epilogue or LinearCombination(c[0], c[1], F32, F32)
    return op90(tile, td(F16, a_layout), td(F16, COL), td(c[0], ROW, c[1]), epilogue)


def f16_arrays(m, n, k, a_layout=ROW, out=np.float16):
    a = np.ones((m, k), np.float16)
    if a_layout == COL:
        a = np.asfortranarray(a)
    b = np.asfortranarray(np.ones((k, n), np.float16))
    return a, b, np.ones((m, n), out), np.zeros((m, n), out)


def fp8_op(out=F16):
    """e4m3 TN with per-tensor scales. numpy has no fp8 dtype: the tests give uint8 stand-ins
    and exercise only checks that precede the operands' dtype check."""
    align = 16 if out in (E4M3, E5M2) else 8
    return op90(fp8_tile(), td(E4M3, ROW), td(E4M3, COL), td(out, ROW, align),
                LinearCombination(out, align, F32, F32, scales=True))


def fp8_arrays(m=128, n=128, k=128):
    return (np.ones((m, k), np.uint8), np.asfortranarray(np.ones((k, n), np.uint8)),
            np.ones((m, n), np.float16), np.zeros((m, n), np.float16))


def gemm_args(op, m, n, k, A, B, C, D, **kw):
    if "output_op" not in kw:
        kw["output_op"] = op.epilogue_type(1.0, 0.0)
    return GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(m, n, k), A=A, B=B,
                         C=C, D=D, **kw)


def expect_refused(op, error, pattern, *arrays_and_sizes, **kw):
    m, n, k, A, B, C, D = arrays_and_sizes
    with pytest.raises(error, match=pattern):
        gemm_args(op, m, n, k, A, B, C, D, **kw)
    assert not op.is_compiled()


def test_good_arguments_reach_the_device_check(gpu_reason):
    """The arrays the cases below start from pass validation: without a GPU the first error is
    the device's. (On a GPU machine the next step would compile, so this is skipped there.)"""
    if gpu_reason is None:
        pytest.skip("a GPU is present")
    op = f16_op()
    with pytest.raises(Unsupported, match="^no usable CUDA device"):
        gemm_args(op, 128, 64, 64, *f16_arrays(128, 64, 64))
    assert not op.is_compiled()


def test_tma_contiguous_extents():
    op = f16_op()
    expect_refused(op, ValueError, "^A: K=60 must be a multiple of 8 for a RowMajor float16 MxK "
                                   r"operand of an SM90 kernel \(TMA copies 16-byte rows\); pad "
                                   "the matrix or use an arch=80 operation",
                   128, 64, 60, *f16_arrays(128, 64, 60))
    expect_refused(op, ValueError, "^D: N=60 must be a multiple of 8 for a RowMajor float16 MxN "
                                   "operand of an SM90 kernel",
                   128, 60, 64, *f16_arrays(128, 60, 64))
    col = f16_op(a_layout=COL)
    expect_refused(col, ValueError, "^A: M=100 must be a multiple of 8 for a ColumnMajor float16 "
                                    "MxK operand",
                   100, 64, 64, *f16_arrays(100, 64, 64, a_layout=COL))
    # B is column-major (K contiguous): its K is checked too (A is column-major here, so A's M
    # is fine and B's K answers).
    expect_refused(col, ValueError, "^B: K=60 must be a multiple of 8 for a ColumnMajor float16 "
                                    "KxN operand",
                   128, 64, 60, *f16_arrays(128, 64, 60, a_layout=COL))
    # bf16: the same rule (float16 stand-ins; the extent check precedes the dtype check).
    expect_refused(bf16_op(), ValueError, "^A: K=36 must be a multiple of 8 for a RowMajor "
                                          "bfloat16 MxK operand",
                   128, 64, 36, *f16_arrays(128, 64, 36))
    # A padded leading dimension does not make the extent legal.
    a, b, c, d = f16_arrays(128, 64, 64)
    expect_refused(op, ValueError, "^A: K=60 must be a multiple of 8", 128, 64, 60, a[:, :60],
                   b[:60], c, d)


def bias_op(bias="column", element_bias=F32):
    return f16_op(LinearCombinationGeneric(gelu(F32), F16, 8, F32, F32, bias=bias,
                                           element_bias=element_bias))


def test_bias_presence():
    arrays = (128, 64, 64, *f16_arrays(128, 64, 64))
    expect_refused(bias_op(), ValueError, r"^bias: the operation's epilogue adds a per-column \(N\) "
                                          "bias vector; none was given", *arrays)
    expect_refused(bias_op("row"), ValueError, r"^bias: .*per-row \(M\) bias vector; none was "
                                               "given", *arrays)
    expect_refused(f16_op(), ValueError, "^bias: this operation's epilogue adds no bias; describe "
                                         "the epilogue with bias='row' or bias='column'",
                   *arrays, bias=np.zeros(64, np.float32))


def test_bias_shape_dtype_rank_alignment():
    op = bias_op()
    arrays = (128, 64, 64, *f16_arrays(128, 64, 64))
    expect_refused(op, ValueError, r"^bias: expected a contiguous vector of N=64 elements, got "
                                   r"float32\[128\]", *arrays, bias=np.zeros(128, np.float32))
    expect_refused(bias_op("row"), ValueError, r"^bias: expected a contiguous vector of M=128 "
                                               r"elements, got float32\[64\]",
                   *arrays, bias=np.zeros(64, np.float32))
    expect_refused(op, ValueError, r"^bias: expected float32 \(the epilogue's element_bias\), got "
                                   "float16", *arrays, bias=np.zeros(64, np.float16))
    expect_refused(op, ValueError, r"^bias: expected a 1-D vector of N=64 elements, got "
                                   r"float32\[1, 1, 64\]", *arrays,
                   bias=np.zeros((1, 1, 64), np.float32))
    expect_refused(op, ValueError, r"^bias: expected a vector of N=64 or \(batch=1, N=64\) with "
                                   r"contiguous rows, got float32\[2, 64\]", *arrays,
                   bias=np.zeros((2, 64), np.float32))
    expect_refused(op, ValueError, r"^bias: expected a contiguous vector of N=64 elements, got "
                                   r"float32\[64\] strides \(2,\)", *arrays,
                   bias=np.zeros(128, np.float32)[::2])
    expect_refused(op, ValueError, "^bias: the vector .* must start 16-byte aligned", *arrays,
                   bias=np.zeros(65, np.float32)[1:])
    # Batched: one vector per batch, (batch, N).
    batch = 2
    a, b, c, d = (np.stack([x] * batch) for x in f16_arrays(128, 64, 64))
    expect_refused(op, ValueError, r"^bias: expected a vector of N=64 or \(batch=2, N=64\)", 128,
                   64, 64, a, b, c, d, gemm_mode=Mode.Batched, batch=batch,
                   bias=np.zeros((3, 64), np.float32))


def aux_op():
    return f16_op(LinearCombinationGeneric(relu(F32), F16, 8, F32, F32, bias="row", aux=True))


def test_aux():
    op = aux_op()
    arrays = (128, 64, 64, *f16_arrays(128, 64, 64))
    bias = np.zeros(128, np.float16)
    expect_refused(op, ValueError, "^aux: the operation's epilogue writes the pre-activation value "
                                   "to an aux tensor shaped like D; none was given",
                   *arrays, bias=bias)
    expect_refused(op, ValueError, r"^aux: expected shape \(128, 64\), got float16\[128, 32\]",
                   *arrays, bias=bias, aux=np.zeros((128, 32), np.float16))
    expect_refused(op, ValueError, r"^aux: expected float16 \(from its TensorDescription\), got "
                                   "float32", *arrays, bias=bias, aux=np.zeros((128, 64), np.float32))
    expect_refused(op, ValueError, "^aux: RowMajor needs unit stride along columns", *arrays,
                   bias=bias, aux=np.asfortranarray(np.zeros((128, 64), np.float16)))
    expect_refused(f16_op(), ValueError, "^aux: this operation's epilogue writes no aux output; "
                                         "describe the epilogue with aux=True",
                   *arrays, aux=np.zeros((128, 64), np.float16))


def test_scales():
    op = fp8_op()
    arrays = (128, 128, 128, *fp8_arrays())
    expect_refused(op, ValueError, r"^scale_a: the operation's fp8 epilogue applies per-tensor "
                                   r"scales; pass scale_a \(a float, or a one-element float32 "
                                   r"CUDA tensor\)", *arrays, scale_b=1.0)
    expect_refused(op, ValueError, "^scale_b: the operation's fp8 epilogue applies per-tensor "
                                   "scales", *arrays, scale_a=1.0)
    expect_refused(op, ValueError, r"^scale_d: scales only fp8 outputs \(as in CUTLASS\); D is "
                                   "float16, so scale_d must be 1.0, got 2.0", *arrays,
                   scale_a=1.0, scale_b=1.0, scale_d=2.0)
    expect_refused(op, ValueError, "^scale_a: expected a float or a one-element float32 CUDA "
                                   r"tensor, got float32\[2\]", *arrays,
                   scale_a=np.ones(2, np.float32), scale_b=1.0)
    expect_refused(op, ValueError, "^scale_b: expected a float or a one-element float32 CUDA "
                                   r"tensor, got float64\[1\]", *arrays,
                   scale_a=1.0, scale_b=np.ones(1, np.float64))
    expect_refused(op, TypeError, "^scale_c: expected a float or a one-element float32 CUDA "
                                  r"tensor, got '1.0' \(str\)$",
                   *arrays, scale_a=1.0, scale_b=1.0, scale_c="1.0")
    # Scales on an operation without them.
    expect_refused(f16_op(), ValueError, "^scale_a: per-tensor scales are for fp8 operations "
                                         "described with scales=True; this operation takes none",
                   128, 64, 64, *f16_arrays(128, 64, 64), scale_a=1.0)
    expect_refused(f16_op(), ValueError, "^scale_d: per-tensor scales are for fp8 operations",
                   128, 64, 64, *f16_arrays(128, 64, 64), scale_d=1.0)


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_scales_must_be_finite(value):
    op = fp8_op()
    expect_refused(op, ValueError, "^scale_a: .*finite", 128, 128, 128, *fp8_arrays(),
                   scale_a=value, scale_b=1.0)


def test_numpy_scalar_scale_is_a_value():
    op = fp8_op()
    # Taken as the value 2.0, it meets the rule that scale_d is 1.0 for a non-fp8 D.
    expect_refused(op, ValueError, "^scale_d: scales only fp8 outputs", 128, 128, 128,
                   *fp8_arrays(), scale_a=1.0, scale_b=1.0, scale_d=np.float32(2.0))


def test_sm90_modes():
    op = f16_op()
    arrays = (128, 64, 64, *f16_arrays(128, 64, 64))
    expect_refused(op, Unsupported, "^split_k_slices: 2 needs an SM90 kernel built with "
                                    "tile_scheduler StreamK; this one uses Persistent",
                   *arrays, split_k_slices=2)
    expect_refused(op, Unsupported, r"^gemm_mode: SM90 kernels run Gemm \(split-K through "
                                    r"split_k_slices on a StreamK tile scheduler\) and Batched; "
                                    "got Array$", *arrays, gemm_mode=Mode.Array)
    expect_refused(op, Unsupported, "^gemm_mode: SM90 kernels run Gemm .*got GemmSplitKParallel$",
                   *arrays, gemm_mode=Mode.GemmSplitKParallel, split_k_slices=2)
    # Stream-K kernels take split-K slices; the general rules still hold.
    streamk = f16_op(tile_scheduler=TS.StreamK)
    expect_refused(streamk, ValueError, "^split_k_slices: 65 slices of K=64 leave empty slices",
                   *arrays, split_k_slices=65)


def clamp_op():
    return f16_op(LinearCombinationGeneric(clamp(F32), F16, 8, F32, F32))


def test_epilogue_arguments():
    op = clamp_op()
    arrays = (128, 64, 64, *f16_arrays(128, 64, 64))
    # operation.epilogue_type checks the values...
    with pytest.raises(ValueError, match="^output_op: clamp's bounds must satisfy lower <= upper, "
                                         "got lower=2.0+, upper=-2.0+"):
        op.epilogue_type(1.0, 0.0, 2.0, -2.0)
    with pytest.raises(ValueError, match="^output_op: clamp's bounds must satisfy lower <= upper, "
                                         "got lower=nan"):
        op.epilogue_type(1.0, 0.0, math.nan, 1.0)
    with pytest.raises(ValueError, match=r"^output_op: LinearCombinationGeneric\(clamp\) takes "
                                         "alpha, beta and 2 activation argument.*; got 1 "
                                         "activation argument"):
        op.epilogue_type(1.0, 0.0, 2.0)
    with pytest.raises(ValueError, match=r"^output_op: LinearCombinationGeneric\(gelu\) takes "
                                         "alpha, beta; got 1 activation argument"):
        bias_op().epilogue_type(1.0, 0.0, 0.5)
    leaky = f16_op(LinearCombinationGeneric(leaky_relu(F32), F16, 8, F32, F32, bias="row"))
    with pytest.raises(ValueError, match="takes alpha, beta and 1 activation argument; got 0"):
        leaky.epilogue_type(1.0, 0.0)
    with pytest.raises(ValueError, match="^output_op: alpha and beta must be finite"):
        op.epilogue_type(math.inf, 0.0, -1.0, 1.0)
    # ... and GemmArguments checks them again, for values changed after epilogue_type.
    params = op.epilogue_type(1.0, 0.0, -1.0, 1.0)
    params.activation_args = [2.0, -2.0]
    expect_refused(op, ValueError, "^output_op: clamp's bounds must satisfy lower <= upper", *arrays,
                   output_op=params)
    params.activation_args = [1.0]
    expect_refused(op, ValueError, r"^output_op: LinearCombinationGeneric\(clamp\) takes alpha, "
                                   "beta and 2 activation argument.*; got 1", *arrays,
                   output_op=params)
    params.activation_args = [-1.0, 1.0]
    params.beta = math.nan
    expect_refused(op, ValueError, "^output_op: alpha and beta must be finite", *arrays,
                   output_op=params)
    # Without output_op, GemmArguments asks for epilogue_type(1.0, 0.0): clamp needs its bounds.
    with pytest.raises(ValueError, match="takes alpha, beta and 2 activation argument.*; got 0"):
        GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(128, 64, 64),
                      A=arrays[3], B=arrays[4], C=arrays[5], D=arrays[6])
    assert not op.is_compiled()


def test_deterministic_must_be_a_bool():
    op = f16_op(tile_scheduler=TS.StreamK)
    with pytest.raises(TypeError, match="^deterministic: expected True or False, got 'no'"):
        cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(128, 64, 64),
                              A=np.zeros((128, 64), np.float16), B=np.zeros((64, 64), np.float16),
                              C=None, D=np.zeros((128, 64), np.float16), deterministic="no")
    assert not op.is_compiled()


def test_launch_with_pdl_must_be_a_bool():
    op = f16_op()
    with pytest.raises(TypeError, match="^launch_with_pdl: expected True or False, got 1"):
        cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(128, 64, 64),
                              A=np.zeros((128, 64), np.float16), B=np.zeros((64, 64), np.float16),
                              C=None, D=np.zeros((128, 64), np.float16), launch_with_pdl=1)
    assert not op.is_compiled()
