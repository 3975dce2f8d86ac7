"""Bad inputs: each raises before anything compiles or launches, naming the argument, what was
expected and what was given. These run without a GPU: validation precedes any CUDA work."""

import warnings

import numpy as np
import pytest

import tilecraft as cutlass
from tilecraft import *  # noqa: F401,F403

F16, F32, S8, S32 = cutlass.float16, cutlass.float32, cutlass.int8, cutlass.int32
TC, SIMT = cutlass.OpClass.TensorOp, cutlass.OpClass.Simt
MA = MathOperation.multiply_add


def simt_f32_op():
    math = MathInstruction([1, 1, 1], F32, F32, F32, SIMT, MA)
    tile = TileDescription([128, 128, 8], 4, [2, 4, 1], math)
    t = TensorDescription(F32, cutlass.RowMajor, 1)
    return GemmOperationUniversal(80, tile, t, t, t, LinearCombination(F32, 1, F32, F32))


def f16_op(epilogue=None):
    math = MathInstruction([16, 8, 16], F16, F16, F32, TC, MA)
    tile = TileDescription([128, 128, 32], 3, [2, 2, 1], math)
    a = TensorDescription(F16, cutlass.RowMajor, 8)
    b = TensorDescription(F16, cutlass.ColumnMajor, 8)
    c = TensorDescription(F16, cutlass.RowMajor, 8)
    epilogue = epilogue or LinearCombination(F16, 8, F32, F32)
    return GemmOperationUniversal(80, tile, a, b, c, epilogue)


def int8_fast_clamp_op():
    math = MathInstruction([16, 8, 32], S8, S8, S32, TC, MathOperation.multiply_add_saturate)
    tile = TileDescription([128, 128, 64], 3, [2, 2, 1], math)
    a = TensorDescription(S8, cutlass.RowMajor, 16)
    b = TensorDescription(S8, cutlass.ColumnMajor, 16)
    c = TensorDescription(S8, cutlass.RowMajor, 16)
    return GemmOperationUniversal(80, tile, a, b, c, FastLinearCombinationClamp(S8, 16))


def f32_arrays(m, n, k, rng=np.random.default_rng(0)):
    a = rng.integers(-3, 4, size=(m, k)).astype(np.float32)
    b = rng.integers(-3, 4, size=(k, n)).astype(np.float32)
    c = rng.integers(-3, 4, size=(m, n)).astype(np.float32)
    return a, b, c, np.full((m, n), np.nan, np.float32)


def gemm_args(op, m, n, k, A, B, C, D, **kw):
    kw.setdefault("output_op", op.epilogue_type(1.0, 0.0))
    return GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(m, n, k), A=A, B=B,
                         C=C, D=D, **kw)


# ---- descriptions -------------------------------------------------------------------------

DESCRIPTION_CASES = [
    ("tensorop shape on simt", lambda: MathInstruction([16, 8, 16], F16, F16, F32, SIMT, MA),
     "is not a Simt instruction"),
    ("simt shape on tensorop", lambda: MathInstruction([1, 1, 1], F16, F16, F32, TC, MA),
     r"\[1, 1, 1\] is not a TensorOp instruction"),
    ("bf16 accumulator", lambda: MathInstruction([16, 8, 16], cutlass.bfloat16, cutlass.bfloat16,
                                                 cutlass.bfloat16, TC, MA),
     "bfloat16 operands with a bfloat16 accumulator"),
    ("int8 without saturate", lambda: MathInstruction([16, 8, 32], S8, S8, S32, TC, MA),
     "expected one of multiply_add_saturate"),
    ("fast_f32 on f16", lambda: MathInstruction([16, 8, 8], F16, F16, F32, TC,
                                                MathOperation.multiply_add_fast_f32),
     "multiply_add_fast_f32 is not valid"),
    ("mixed operand types", lambda: MathInstruction([16, 8, 16], F16, cutlass.bfloat16, F32, TC, MA),
     "float16 and bfloat16"),
    ("instruction shape arity", lambda: MathInstruction([16, 8], F16, F16, F32, TC, MA),
     r"instruction_shape: expected a list of 3 ints, got \[16, 8\] \(list\)"),
    ("warps do not divide", lambda: TileDescription(
        [128, 96, 32], 3, [2, 5, 1], MathInstruction([16, 8, 16], F16, F16, F32, TC, MA)),
     "does not divide threadblock_shape"),
    ("warp tile vs instruction", lambda: TileDescription(
        [64, 64, 32], 3, [8, 1, 1], MathInstruction([16, 8, 16], F16, F16, F32, TC, MA)),
     "not a multiple of the instruction shape"),
    ("shared memory", lambda: TileDescription(
        [256, 256, 64], 6, [2, 2, 1], MathInstruction([16, 8, 16], F16, F16, F32, TC, MA)),
     "KiB of shared memory"),
    ("stages", lambda: TileDescription(
        [128, 128, 32], 1, [2, 2, 1], MathInstruction([16, 8, 16], F16, F16, F32, TC, MA)),
     "stages must be in"),
    ("alignment not power of two", lambda: TensorDescription(F16, cutlass.RowMajor, 3),
     "power of two"),
    ("alignment wider than 128 bits", lambda: TensorDescription(F32, cutlass.RowMajor, 8),
     "at most 128 bits"),
    ("interleaved non-int8", lambda: TensorDescription(F16, cutlass.ColumnMajorInterleaved32, 8),
     "8-bit integers only"),
    ("fast clamp f16", lambda: FastLinearCombinationClamp(F16, 8), "must be int8 or uint8"),
    ("epilogue access width", lambda: LinearCombination(F16, 16, F32, F32),
     "at most 128 bits"),
    ("arch", lambda: GemmOperationUniversal(
        70, TileDescription([128, 128, 8], 4, [2, 4, 1],
                            MathInstruction([1, 1, 1], F32, F32, F32, SIMT, MA)),
        TensorDescription(F32, cutlass.RowMajor, 1), TensorDescription(F32, cutlass.RowMajor, 1),
        TensorDescription(F32, cutlass.RowMajor, 1), LinearCombination(F32, 1, F32, F32)),
     "arch: expected 80 .*or 90 .*got 70"),
]


@pytest.mark.parametrize("make,pattern", [c[1:] for c in DESCRIPTION_CASES],
                         ids=[c[0] for c in DESCRIPTION_CASES])
def test_description_errors(make, pattern):
    with pytest.raises((ValueError, cutlass.UnsupportedError), match=pattern):
        make()


def _tile_f16():
    return TileDescription([128, 128, 32], 3, [2, 2, 1],
                           MathInstruction([16, 8, 16], F16, F16, F32, TC, MA))


def test_operand_element_must_match_instruction():
    bf = TensorDescription(cutlass.bfloat16, cutlass.RowMajor, 8)
    t = TensorDescription(F16, cutlass.RowMajor, 8)
    with pytest.raises(ValueError, match="^A: element bfloat16 does not match"):
        GemmOperationUniversal(80, _tile_f16(), bf, t, t, LinearCombination(F16, 8, F32, F32))


def test_epilogue_alignment_must_match_c():
    t8 = TensorDescription(F16, cutlass.RowMajor, 8)
    t4 = TensorDescription(F16, cutlass.RowMajor, 4)
    with pytest.raises(ValueError, match="elements_per_access 8 must equal C's alignment 4"):
        GemmOperationUniversal(80, _tile_f16(), t8, t8, t4, LinearCombination(F16, 8, F32, F32))


def test_tensorop_alignment_too_narrow():
    t1 = TensorDescription(F16, cutlass.RowMajor, 1)
    t8 = TensorDescription(F16, cutlass.RowMajor, 8)
    with pytest.raises(ValueError, match="^A: alignment 1 of float16 is 16 bits"):
        GemmOperationUniversal(80, _tile_f16(), t1, t8, t8, LinearCombination(F16, 8, F32, F32))


def test_interleaved_layout_triple():
    math = MathInstruction([16, 8, 32], S8, S8, S32, TC, MathOperation.multiply_add_saturate)
    tile = TileDescription([128, 128, 64], 3, [2, 2, 1], math)
    a = TensorDescription(S8, cutlass.ColumnMajorInterleaved32, 16)
    c = TensorDescription(S8, cutlass.RowMajor, 16)
    with pytest.raises(cutlass.UnsupportedError, match="interleaved int8 GEMM takes"):
        GemmOperationUniversal(80, tile, a, a, c, LinearCombinationClamp(S8, 16, S32, F32))


def test_swizzle_type_and_activation_type():
    t = TensorDescription(F16, cutlass.RowMajor, 8)
    with pytest.raises(TypeError, match="swizzling_functor"):
        GemmOperationUniversal(80, _tile_f16(), t, t, t, LinearCombination(F16, 8, F32, F32),
                               swizzling_functor="identity")
    with pytest.raises(TypeError, match="activation: expected relu"):
        LinearCombinationGeneric("relu", F16, 8, F32, F32)


# ---- arguments ------------------------------------------------------------------------------

def test_operand_dtype():
    op = simt_f32_op()
    a, b, c, d = f32_arrays(64, 32, 16)
    with pytest.raises(ValueError, match="^A: expected float32 .*got float64"):
        gemm_args(op, 64, 32, 16, a.astype(np.float64), b, c, d)
    assert not op.is_compiled()


def test_operand_shapes():
    op = simt_f32_op()
    a, b, c, d = f32_arrays(64, 32, 16)
    with pytest.raises(ValueError, match=r"^B: expected shape \(16, 32\), got float32\[16, 31\]"):
        gemm_args(op, 64, 32, 16, a, b[:, :31], c, d)
    with pytest.raises(ValueError, match=r"^C: expected shape \(64, 32\)"):
        gemm_args(op, 64, 32, 16, a, b, c[:63], d)
    with pytest.raises(ValueError, match="^D: expected 2048 elements"):
        gemm_args(op, 64, 32, 16, a, b, c, np.zeros(2047, np.float32))
    with pytest.raises(ValueError, match="^A: expected a 2-D tensor"):
        gemm_args(op, 64, 32, 16, a.reshape(1, 1, 64, 16), b, c, d)
    with pytest.raises(ValueError, match="^A: expected shape .*for a batch of 2"):
        gemm_args(op, 64, 32, 16, a, b, c, d, gemm_mode=cutlass.gemm.Mode.Batched, batch=2)
    with pytest.raises(ValueError, match="^A: expected a leading batch dimension of 2"):
        gemm_args(op, 64, 32, 16, np.stack([a] * 3), b, c, d,
                  gemm_mode=cutlass.gemm.Mode.Batched, batch=2)


def test_strides_the_layout_cannot_express():
    op = simt_f32_op()
    a, b, c, d = f32_arrays(16, 16, 16)
    with pytest.raises(ValueError, match="^A: RowMajor needs unit stride along columns"):
        gemm_args(op, 16, 16, 16, np.asfortranarray(a), b, c, d)
    with pytest.raises(ValueError, match=r"^B: stride -\d+ of dimension \d is negative"):
        gemm_args(op, 16, 16, 16, a, b[::-1], c, d)


def test_alignment_of_leading_dimension_and_pointer():
    op = f16_op()
    rng = np.random.default_rng(1)
    m, n, k = 64, 64, 12
    a = rng.integers(-3, 4, size=(m, k)).astype(np.float16)
    b = np.asfortranarray(rng.integers(-3, 4, size=(k, n)).astype(np.float16))
    c = rng.integers(-3, 4, size=(m, n)).astype(np.float16)
    d = np.zeros_like(c)
    with pytest.raises(ValueError, match="^A: leading dimension 12 is not a multiple of the "
                                         "8-element alignment"):
        gemm_args(op, m, n, k, a, b, c, d)
    big = rng.integers(-3, 4, size=(m, 24)).astype(np.float16)  # leading dimension 24
    b16 = np.asfortranarray(rng.integers(-3, 4, size=(16, n)).astype(np.float16))
    with pytest.raises(ValueError, match="^A: data pointer 0x[0-9a-f]+ is not 16-byte aligned"):
        gemm_args(op, m, n, 16, big[:, 1:17], b16, c, d)


def test_modes_slices_batch():
    op = simt_f32_op()
    a, b, c, d = f32_arrays(16, 16, 16)
    with pytest.raises(ValueError, match="^split_k_slices: expected >= 1, got 0"):
        gemm_args(op, 16, 16, 16, a, b, c, d, split_k_slices=0)
    with pytest.raises(ValueError, match="^batch: expected >= 1, got 0"):
        gemm_args(op, 16, 16, 16, a, b, c, d, gemm_mode=cutlass.gemm.Mode.Batched, batch=0)
    with pytest.raises(ValueError, match="^batch: only Batched and Array modes take a batch"):
        gemm_args(op, 16, 16, 16, a, b, c, d, batch=2)
    with pytest.raises(ValueError, match="^split_k_slices: gemm_mode Batched does not split K"):
        gemm_args(op, 16, 16, 16, a, b, c, d, gemm_mode=cutlass.gemm.Mode.Batched,
                  split_k_slices=2)
    with pytest.raises(ValueError, match="^split_k_slices: 17 slices of K=16"):
        gemm_args(op, 16, 16, 16, a, b, c, d, split_k_slices=17)
    with pytest.raises(ValueError, match="^problem_size: M, N and K must be >= 1"):
        gemm_args(op, 0, 16, 16, a, b, c, d)
    with pytest.raises(TypeError, match=r"^split_k_slices: expected an int, got 1.5 \(float\)$"):
        gemm_args(op, 16, 16, 16, a, b, c, d, split_k_slices=1.5)


def test_fast_linear_combination_clamp_k_limit():
    op = int8_fast_clamp_op()
    rng = np.random.default_rng(2)
    m, n, k = 32, 32, 288
    a = rng.integers(-3, 4, size=(m, k)).astype(np.int8)
    b = np.asfortranarray(rng.integers(-3, 4, size=(k, n)).astype(np.int8))
    c = rng.integers(-3, 4, size=(m, n)).astype(np.int8)
    with pytest.raises(ValueError, match="FastLinearCombinationClamp is exact only for K <= 256, "
                                         "got K=288"):
        gemm_args(op, m, n, k, a, b, c, np.zeros_like(c))


def test_epilogue_arguments():
    op = f16_op(LinearCombinationGeneric(leaky_relu(F32), F16, 8, F32, F32))
    with pytest.raises(ValueError, match="takes alpha, beta and 1 activation argument; got 0"):
        op.epilogue_type(1.0, 0.0)
    with pytest.raises(ValueError, match="got 2 activation argument"):
        op.epilogue_type(1.0, 0.0, 0.1, 0.2)
    plain = simt_f32_op()
    a, b, c, d = f32_arrays(16, 16, 16)
    with pytest.raises(ValueError, match="^C: beta is 0.5.* but no C tensor"):
        gemm_args(plain, 16, 16, 16, a, b, None, d, output_op=plain.epilogue_type(1.0, 0.5))
    with pytest.raises(TypeError, match="^output_op: expected operation.epilogue_type"):
        gemm_args(plain, 16, 16, 16, a, b, c, d, output_op=(1.0, 0.0))


def test_keywords():
    op = simt_f32_op()
    a, b, c, d = f32_arrays(16, 16, 16)
    with pytest.raises(TypeError, match="unexpected keyword argument 'split_k_slice'; did you "
                                        "mean 'split_k_slices'"):
        gemm_args(op, 16, 16, 16, a, b, c, d, split_k_slice=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'gemmmode'; did you mean "
                                        "'gemm_mode'"):
        gemm_args(op, 16, 16, 16, a, b, c, d, gemmmode=cutlass.gemm.Mode.Gemm)
    with pytest.raises(TypeError,
                       match=r"^A: expected a torch, cupy or numpy array, got \[\[.*\(list\)$"):
        gemm_args(op, 16, 16, 16, a.tolist(), b, c, d)
    with pytest.raises(TypeError, match="^problem_size: expected cutlass.gemm.GemmCoord"):
        GemmArguments(operation=op, problem_size=(16, 16, 16), A=a, B=b, C=c, D=d)
    with pytest.raises(ValueError, match="^A: dtype complex64 is not a GEMM element type"):
        gemm_args(op, 16, 16, 16, a.astype(np.complex64), b, c, d)


def test_misspelled_split_k_splices_is_an_alias_with_a_warning(gpu_reason):
    op = simt_f32_op()
    a, b, c, d = f32_arrays(16, 16, 16)
    with pytest.warns(UserWarning, match="'split_k_splices' is a misspelling of 'split_k_slices'"):
        try:
            gemm_args(op, 16, 16, 16, a, b, c, d, split_k_splices=0)
        except ValueError as error:  # the alias reached validation under its right name
            assert str(error).startswith("split_k_slices: expected >= 1, got 0")


def test_compiler_and_pool_inputs():
    with pytest.raises(TypeError, match=r"operations\[0\]: expected a GemmOperationUniversal"):
        cutlass.compiler.add_module(["not an operation"])
    with pytest.raises(cutlass.UnsupportedError, match="does not compile with NVRTC yet"):
        cutlass.compiler.nvrtc()
    with pytest.raises(ValueError, match="^init_pool_size: expected a byte count"):
        cutlass.get_memory_pool(-1, 2**20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cutlass.gemm.GemmCoord(1, 2, 3).n() == 2
