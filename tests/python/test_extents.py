"""64-bit extents (issue 27, TRUNC-1) and supports()/get_kernels() agreement, without a GPU.

Tensors are fake CUDA tensors (tests/python/fakecuda.py: DLPack objects that claim a CUDA device
and are never read), so the argument checks of every surface are reached on the CPU: extents and
strides are checked in 64 bits when arguments are made, what no kernel's 32-bit index can hold is
refused naming the tensor and dimension (never truncated), and a kernel is listed by
get_kernels(args) exactly when supports(args) is ok, fp8 fast accumulation included.
"""

import random

import numpy as np
import pytest

import tilecraft as cutlass
import tilecraft.api as api
from fakecuda import FakeTensor, T

pytestmark = pytest.mark.usefixtures("no_compiler")

BIG = 2**31 + 8


def channels_last(n, c, h, w, dtype="float32"):
    return FakeTensor((n, c, h, w), dtype, strides=(h * w * c, 1, w * c, c))


# ---- the audit's reproduction (repro/trunc1_extents.py) -----------------------------------------

def test_grouped_m_beyond_32_bits_is_refused_not_made_negative():
    with pytest.raises(ValueError, match=r"^A\[0\]: extent 2147483656 of dimension 0 \(M\) exceeds "
                                         r"the kernel's 32-bit index \(at most 2147483647\)"):
        api.GroupedGemmArguments([T(BIG, 8, dtype="bfloat16")], [T(8, 8, dtype="bfloat16")],
                                 [T(BIG, 8, dtype="bfloat16")], np.float32)


def test_conv_filter_count_beyond_32_bits_is_refused_not_read_as_4():
    with pytest.raises(ValueError, match=r"^B \(w\): extent 4294967300 of dimension 0 exceeds the "
                                         r"kernel's 32-bit index"):
        api.Conv2dArguments(channels_last(1, 4, 8, 8), channels_last(2**32 + 4, 4, 3, 3),
                            channels_last(1, 4, 8, 8), np.float32, padding=1)


@pytest.mark.parametrize("shapes, text", [
    (((BIG, 8), (8, 8), (BIG, 8)), r"^A: extent 2147483656 of dimension 0 \(M\) exceeds"),
    (((8, 2**32 + 8), (2**32 + 8, 8), (8, 8)), r"^A: extent 4294967304 of dimension 1 \(K\)"),
    (((8, 8), (8, BIG), (8, BIG)), r"^B: extent 2147483656 of dimension 1 \(N\)"),
    (((70000, 8, 8), (70000, 8, 8), (70000, 8, 8)),
     r"^A: extent 70000 of dimension 0 \(batch L\) exceeds the 65535 batches"),
])
def test_gemm_extents_no_kernel_can_index_are_refused(shapes, text):
    a, b, out = (T(*s, dtype="bfloat16") for s in shapes)
    with pytest.raises(ValueError, match=text):
        api.arguments.GemmArguments(A=a, B=b, out=out, accumulator_type=np.float32)


# ---- further hostile values of the same kind -----------------------------------------------------

@pytest.mark.parametrize("strides, shape, text", [
    ((-8, 1), (4, 8), r"^A: stride -8 of dimension 0 is negative"),
    ((2**62, 1), (4, 8), r"^A: stride 4611686018427387904 of dimension 0 \(extent 4\) addresses "
                         r"elements beyond 64-bit offsets"),
    ((2**62, 2**62), (2, 2), r"^A: strides .* address elements beyond 64-bit offsets"),
    ((1, 1), (2**62, 1), r"^A: strides .* address more than 2\^63 - 1 bytes"),
])
def test_hostile_strides_are_refused_naming_the_tensor(strides, shape, text):
    a = FakeTensor(shape, "float16", strides=strides)
    with pytest.raises(ValueError, match=text):
        api.arguments.GemmArguments(A=a, B=T(shape[1], 8, dtype="float16"),
                                    out=T(shape[0], 8, dtype="float16"),
                                    accumulator_type=np.float32)


def test_negative_extents_are_refused_by_dimension():
    with pytest.raises(ValueError, match=r"^B\[0\]: extent -8 of dimension 1 is negative"):
        api.GroupedGemmArguments([T(8, 8, dtype="float16")],
                                 [FakeTensor((8, -8), "float16", strides=(8, 1))],
                                 [T(8, 8, dtype="float16")], np.float32)
    with pytest.raises(ValueError, match=r"^out: extent -4 of dimension 2 is negative"):
        api.Conv2dArguments(channels_last(1, 4, 8, 8), channels_last(4, 4, 3, 3),
                            FakeTensor((1, 4, -4, 8), "float32", strides=(256, 1, 32, 4)),
                            np.float32, padding=1)


def test_conv_tensors_beyond_the_32_bit_implicit_gemm_are_refused():
    with pytest.raises(ValueError, match=r"^A \(x\): 8589934592 elements exceed the kernels' "
                                         r"32-bit implicit-GEMM index"):
        api.Conv2dArguments(channels_last(1, 8, 2**15, 2**15, "float16"),
                            channels_last(8, 8, 1, 1, "float16"),
                            channels_last(1, 8, 2**15, 2**15, "float16"), np.float32)


def test_kernels_whose_tiles_overrun_32_bits_are_refused_and_not_listed():
    m = 2**31 - 104  # fits 32 bits; rounded up to tiles of 128 it does not
    args = api.arguments.GemmArguments(A=T(m, 64, dtype="float16"), B=T(64, 64, dtype="float16"),
                                       out=T(m, 64, dtype="float16"), accumulator_type=np.float32)
    listed = api.get_kernels(args, cc=90)
    assert listed
    assert all(-(-m // k.metadata.design.tile_shape[0]) * k.metadata.design.tile_shape[0]
               <= 2**31 - 1 for k in listed)
    wide = api.get_kernels(cc=90, metadata_filter=lambda md: md.min_cc == 90
                           and md.operands.A.dtype == cutlass.Float16
                           and md.operands.out.dtype == cutlass.Float16
                           and md.operands.B.layout == cutlass.Layout.RowMajor
                           and md.operands.out.layout == cutlass.Layout.RowMajor
                           and md.operands.accumulator == cutlass.Float32
                           and md.design.tile_shape[0] == 256)[0]
    status = wide.supports(args)
    assert not status
    assert str(status.error).startswith(
        "A: M (extent of dimension 0) = 2147483544, rounded up to whole tiles of 256")


def test_stacked_grouped_shape_errors_name_out():
    offsets = np.array([8], dtype=np.int32)
    with pytest.raises(ValueError, match=r"^out: expected \(8, 8\) for A's rows and B's N"):
        api.GroupedGemmArguments(T(8, 8, dtype="float16"), T(1, 8, 8, dtype="float16"),
                                 T(8, 16, dtype="float16"), np.float32, offsets=offsets)


# ---- supports() and get_kernels() agree (deliverable 8) ----------------------------------------

def _fp8_arguments(fast):
    a = T(256, 128, dtype="e4m3")
    b = FakeTensor((128, 256), "e4m3", strides=(1, 128))  # column-major (K, N)
    out = T(256, 256, dtype="bfloat16")
    return api.arguments.GemmArguments(A=a, B=b, out=out, accumulator_type=np.float32,
                                       use_fast_accum=fast)


def _fp8_kernels():
    return api.get_kernels(cc=90, metadata_filter=lambda m: m.operands.A.dtype == cutlass.float8_e4m3
                           and m.operands.B.dtype == cutlass.float8_e4m3
                           and m.operands.out.dtype == cutlass.BFloat16)


@pytest.mark.parametrize("fast", [False, True])
def test_fp8_supports_agrees_with_get_kernels(fast):
    args = _fp8_arguments(fast)
    listed = {k.metadata.kernel_name for k in api.get_kernels(args, cc=90)}
    kernels = _fp8_kernels()
    assert any(k.metadata.operands.fast_accum for k in kernels)
    disagree = [k.metadata.kernel_name for k in kernels
                if bool(k.supports(args)) != (k.metadata.kernel_name in listed)]
    assert disagree == [], f"{len(disagree)} disagree, e.g. {disagree[:3]}"
    fast_listed = [k for k in kernels if k.metadata.operands.fast_accum
                   and k.metadata.kernel_name in listed]
    assert bool(fast_listed) == fast


def test_a_fast_accumulation_kernel_says_why_it_refuses_plain_arguments():
    kernel = next(k for k in _fp8_kernels() if k.metadata.operands.fast_accum
                  and k.metadata.operands.B.layout == cutlass.Layout.ColumnMajor)
    status = kernel.supports(_fp8_arguments(False))
    assert not status
    assert "use_fast_accum=True" in str(status.error)
    assert kernel.supports(_fp8_arguments(True))


def test_sampled_arguments_agree_over_a_sample_of_the_space():
    rng = random.Random(f"extents/{__name__}")
    space = api.get_kernels(cc=90)
    sample = rng.sample(space, 3000)
    for m, n, k, dtype, out in [(128, 96, 64, "float16", "float32"),
                                (2**31 - 104, 64, 64, "float16", "float16"),
                                (64, 8_000_000, 64, "float16", "float16"),
                                (33, 17, 9, "float32", "float32")]:
        args = api.arguments.GemmArguments(A=T(m, k, dtype=dtype), B=T(k, n, dtype=dtype),
                                           out=T(m, n, dtype=out), accumulator_type=np.float32)
        listed = {x.metadata.kernel_name for x in api.get_kernels(args, cc=90)}
        disagree = [x.metadata.kernel_name for x in sample
                    if bool(x.supports(args)) != (x.metadata.kernel_name in listed)]
        assert disagree == [], f"({m}, {n}, {k}): {len(disagree)} disagree, e.g. {disagree[:3]}"


# ---- the describe layer (audit MISC) -------------------------------------------------------------

def test_conv3d_operation_refuses_2d_descriptions():
    MA = cutlass.MathOperation.multiply_add
    math = cutlass.MathInstruction([16, 8, 16], cutlass.float16, cutlass.float16, cutlass.float32,
                                   cutlass.OpClass.TensorOp, MA)
    tile = cutlass.TileDescription([128, 128, 32], 3, [2, 2, 1], math)
    nhwc = cutlass.TensorDescription(cutlass.float16, cutlass.TensorNHWC, 8)
    epilogue = cutlass.LinearCombination(cutlass.float16, 8, cutlass.float32, cutlass.float32)
    with pytest.raises(ValueError, match=r"^A: Conv3dOperation takes TensorNDHWC descriptions .* "
                                         r"got TensorNHWC"):
        cutlass.Conv3dOperation(cutlass.conv.Operator.fprop, cutlass.conv.IteratorAlgorithm.optimized,
                                80, tile, nhwc, nhwc, nhwc, cutlass.conv.StrideSupport.Strided,
                                epilogue)


def test_simt_tiles_whose_accumulators_cannot_fit_the_registers_are_refused():
    math = cutlass.MathInstruction([1, 1, 1], cutlass.float32, cutlass.float32, cutlass.float32,
                                   cutlass.OpClass.Simt, cutlass.MathOperation.multiply_add)
    with pytest.raises(ValueError, match=r"1024 float32 accumulators, 1024 32-bit registers; a "
                                         r"thread has at most 255"):
        cutlass.TileDescription([2048, 128, 8], 2, [2, 4, 1], math)


# ---- the stacked form with its offsets left on the device -----------------------------------

def test_device_offsets_are_never_read_and_give_representative_groups():
    """offsets_on_device: the arguments are made without reading the offsets (this machine has
    no GPU to read them from), with total_rows / groups rows a group for checks and ranking."""
    offsets = T(3, dtype="int32")
    args = api.GroupedGemmArguments(T(100, 64, dtype="bfloat16"),
                                    FakeTensor((3, 64, 32), "bfloat16", strides=(2048, 1, 64)),
                                    T(100, 32, dtype="bfloat16"), np.float32, offsets=offsets,
                                    offsets_on_device=True)
    assert args._native.offsets_on_device
    assert args._native.problem_count == 3
    assert [(s.m(), s.n(), s.k()) for s in args._native.problem_sizes] == [(33, 32, 64),
                                                                           (33, 32, 64),
                                                                           (34, 32, 64)]


def test_the_weight_gradient_form_sums_over_rows_and_always_reads_offsets_on_the_device():
    """A 2-D B: problem g is (M, N, rows of g), columns of A times rows of B into matrix g of
    out; the offsets are read on the device without being asked to, and C is refused."""
    A = FakeTensor((64, 100), "bfloat16", strides=(1, 64))   # (M, total_rows), column-major
    B, out = T(100, 32, dtype="bfloat16"), T(3, 64, 32, dtype="bfloat16")
    args = api.GroupedGemmArguments(A, B, out, np.float32, offsets=T(3, dtype="int32"))
    assert args._native.offsets_on_device
    assert [(s.m(), s.n(), s.k()) for s in args._native.problem_sizes] == [(64, 32, 33),
                                                                           (64, 32, 33),
                                                                           (64, 32, 34)]
    with pytest.raises(ValueError, match=r"^C: expected none with a 2-D B"):
        api.GroupedGemmArguments(A, B, out, np.float32, offsets=T(3, dtype="int32"), C=out,
                                 beta=1.0)
    with pytest.raises(ValueError, match=r"^out: expected \(groups=3, M=64, N=32\)"):
        api.GroupedGemmArguments(A, B, T(2, 64, 32, dtype="bfloat16"), np.float32,
                                 offsets=T(3, dtype="int32"))
    with pytest.raises(ValueError, match=r"^offsets: expected a 1-D int32 CUDA tensor"):
        api.GroupedGemmArguments(A, B, out, np.float32,
                                 offsets=np.array([10, 20, 100], dtype=np.int32))
    with pytest.raises(ValueError, match=r"^bias: expected none with a 2-D B"):
        api.GroupedGemmArguments(A, B, out, np.float32, offsets=T(3, dtype="int32"),
                                 bias=T(3, 32, dtype="bfloat16"))
    with pytest.raises(ValueError, match=r"^out: expected row-major matrices \(stride 1 along "
                                         r"N\) with a 2-D B, got .*strides \(2048, 1, 64\)"):
        api.GroupedGemmArguments(A, B, FakeTensor((3, 64, 32), "bfloat16", strides=(2048, 1, 64)),
                                 np.float32, offsets=T(3, dtype="int32"))
    with pytest.raises(ValueError, match=r"^offsets: expected a 1-D tensor with one end row per "
                                         r"group, got int32\[3, 1\]"):
        api.GroupedGemmArguments(A, B, out, np.float32, offsets=T(3, 1, dtype="int32"))
    with pytest.raises(ValueError, match=r"^B: expected \(total_rows=100, N\) to match A's "
                                         r"columns, got bfloat16\[99, 32\]"):
        api.GroupedGemmArguments(A, T(99, 32, dtype="bfloat16"), out, np.float32,
                                 offsets=T(3, dtype="int32"))
    with pytest.raises(ValueError, match=r"^A: expected a CUDA tensor, got one on the host"):
        api.GroupedGemmArguments(np.zeros((64, 100), dtype=np.float16), B, out, np.float32,
                                 offsets=T(3, dtype="int32"))


def test_device_offsets_are_refused_on_the_host_and_without_the_stacked_form():
    host_offsets = np.array([10, 20, 100], dtype=np.int32)
    with pytest.raises(ValueError, match=r"^offsets: expected a 1-D int32 CUDA tensor of "
                                         r"cumulative end rows \(read on the device\)"):
        api.GroupedGemmArguments(T(100, 64, dtype="bfloat16"), T(3, 64, 32, dtype="bfloat16"),
                                 T(100, 32, dtype="bfloat16"), np.float32, offsets=host_offsets,
                                 offsets_on_device=True)
    with pytest.raises(ValueError, match="^offsets: expected one end row per group of B"):
        api.GroupedGemmArguments(T(100, 64, dtype="bfloat16"), T(3, 64, 32, dtype="bfloat16"),
                                 T(100, 32, dtype="bfloat16"), np.float32,
                                 offsets=T(2, dtype="int32"), offsets_on_device=True)
    with pytest.raises(ValueError, match="^offsets_on_device: given without offsets"):
        api.GroupedGemmArguments([T(8, 8, dtype="float16")], [T(8, 8, dtype="float16")],
                                 [T(8, 8, dtype="float16")], np.float32, offsets_on_device=True)
    with pytest.raises(TypeError, match="^offsets_on_device: expected True or False"):
        cutlass.grouped_gemm(T(8, 8, dtype="float16"), T(1, 8, 8, dtype="float16"),
                             T(1, dtype="int32"), out=T(8, 8, dtype="float16"),
                             offsets_on_device="yes")
