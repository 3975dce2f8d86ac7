"""Inputs from torch (2-D/3-D strided, 1-D packed, padded leading dimensions, D aliasing C,
side streams), cupy (through DLPack and natively allocated) and numpy (staged to the GPU and
copied back by arguments.sync())."""

from dataclasses import replace

import pytest

from gpu_cases import random_case
from gpu_check import check_case
from gpu_kernels import KERNELS

pytestmark = pytest.mark.gpu

FORM_KEYS = ("f16_rcr", "f16_ccc", "f16_crr", "bf16_crc", "tf32_crc", "f32x3_rcc", "f64_rrr",
             "f64_ccc", "simt32_rcr", "simt32_ccr", "simt64_rcc", "i8_rcc_clamp",
             "i8_rcr_fastclamp", "f16acc_rcr")


@pytest.mark.parametrize("form", ["flat", "padded"])
@pytest.mark.parametrize("key", FORM_KEYS)
def test_torch_forms(ops, rng, gen, seed_note, key, form):
    """1-D packed operands, and leading dimensions larger than the matrix (the padding of A and
    B holds NaN, which must never be read; D's padding must stay poisoned)."""
    for _ in range(2):
        check_case(ops, random_case(key, rng, form=form), gen, seed_note)


@pytest.mark.parametrize("key", ["f16_rcr", "simt32_rrr", "i8_rcr_clamp", "f64_ccc",
                                 "f16_gelu"])
def test_d_aliases_c(ops, rng, gen, seed_note, key):
    """D and C the same tensor: the epilogue reads each element of C before writing it."""
    for _ in range(2):
        check_case(ops, random_case(key, rng, alias_cd=True), gen, seed_note)


@pytest.mark.parametrize("key", ["f16_rcr", "simt32_ccc", "tf32_rcr"])
def test_torch_side_stream(ops, rng, gen, seed_note, key):
    """Launch inside ``with torch.cuda.stream(s)``: run() uses torch's current stream and sync()
    waits for it; also with serial split-K (its semaphore workspace on that stream)."""
    check_case(ops, random_case(key, rng, side_stream=True), gen, seed_note)
    spec = KERNELS[key]
    case = random_case(key, rng, side_stream=True, kmin=2 * spec.tile[2], split=2,
                       bounded=spec.out == "f16")
    check_case(ops, case, gen, seed_note)


NUMPY_KEYS = ("f16_rcr", "f16_ccr", "tf32_rrr", "f64_crc", "simt32_ccc", "simt32_rcr",
              "simt64_rrr", "i8_rcr_clamp", "i8_rcr_s32")


@pytest.mark.parametrize("form", ["2d", "flat"])
@pytest.mark.parametrize("key", NUMPY_KEYS)
def test_numpy(ops, rng, gen, seed_note, key, form):
    """numpy arrays (C- or Fortran-ordered, or 1-D packed): staged to the device, D copied back
    into the numpy array by sync()."""
    check_case(ops, random_case(key, rng, form=form, framework="numpy"), gen, seed_note)
    case = random_case(key, rng, form=form, framework="numpy")
    check_case(ops, replace(case, with_c=False, beta=0.0), gen, seed_note)


@pytest.mark.uses_kernels("simt32_rrr", "f16_ccc", "i8_interleaved")
def test_numpy_batched_split_and_interleaved(ops, rng, gen, seed_note):
    """numpy through Batched (3-D arrays), serial split-K and interleaved int8."""
    check_case(ops, random_case("simt32_rrr", rng, mode="Batched", batch=3, framework="numpy"),
               gen, seed_note)
    check_case(ops, random_case("f16_ccc", rng, mode="Array", batch=2, framework="numpy"),
               gen, seed_note)
    check_case(ops, random_case("simt32_rrr", rng, split=3, kmin=24, framework="numpy"),
               gen, seed_note)
    check_case(ops, random_case("i8_interleaved", rng, framework="numpy"), gen, seed_note)


CUPY_KEYS = ("f16_rcc", "f16_crr", "tf32_rrr", "f64_rcr", "simt64_rrr", "simt32_ccc",
             "i8_rcc_clamp", "bf16_rcr")


@pytest.mark.parametrize("form", ["2d", "flat"])
@pytest.mark.parametrize("key", CUPY_KEYS)
def test_cupy_dlpack(ops, rng, gen, seed_note, key, form):
    """cupy arrays (cupy.from_dlpack views, strides preserved) on cupy's current stream, also
    on a non-blocking cupy stream."""
    pytest.importorskip("cupy", reason="cupy is not installed")
    if KERNELS[key].element == "bf16" and form == "flat":
        pytest.skip("one bf16 case is enough")
    check_case(ops, random_case(key, rng, form=form, framework="cupy"), gen, seed_note)
    check_case(ops, random_case(key, rng, form=form, framework="cupy", side_stream=True), gen,
               seed_note)


@pytest.mark.uses_kernels("simt32_rrr", "f16_rcc", "i8_rcr_clamp")
def test_cupy_modes(ops, rng, gen, seed_note):
    """cupy through Batched, Array, serial and parallel split-K."""
    pytest.importorskip("cupy", reason="cupy is not installed")
    for case in (random_case("simt32_rrr", rng, mode="Batched", batch=4, framework="cupy"),
                 random_case("f16_rcc", rng, mode="Array", batch=3, framework="cupy"),
                 random_case("simt32_rrr", rng, split=2, kmin=16, framework="cupy"),
                 random_case("i8_rcr_clamp", rng, mode="GemmSplitKParallel", split=2, kmin=128,
                             framework="cupy")):
        check_case(ops, case, gen, seed_note)


@pytest.mark.uses_kernels("simt32_ccc", "f16_rcr")
def test_cupy_native_arrays(ops, rng, seed_note):
    """Arrays allocated by cupy itself (Fortran and C order), checked against numpy float64."""
    cp = pytest.importorskip("cupy", reason="cupy is not installed")
    import numpy as np
    import tilecraft as cutlass

    state = np.random.default_rng(rng.getrandbits(63))
    for key, M, N, K, order in (("simt32_ccc", 77, 45, 131, "F"), ("f16_rcr", 130, 72, 96, "C")):
        spec = KERNELS[key]
        dtype = np.float32 if spec.element == "f32" else np.float16
        la, lb, lc = (("F" if ch == "c" else "C") for ch in spec.layouts)
        A = cp.asarray(state.integers(-3, 4, (M, K)).astype(dtype), order=la)
        B = cp.asarray(state.integers(-3, 4, (K, N)).astype(dtype), order=lb)
        C = cp.asarray(state.integers(-3, 4, (M, N)).astype(dtype), order=lc)
        D = cp.full((M, N), cp.nan, dtype=dtype, order=lc)
        op = ops.get(key)
        arguments = cutlass.GemmArguments(
            operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K), A=A, B=B, C=C, D=D,
            output_op=op.epilogue_type(0.5, -1.5), gemm_mode=cutlass.gemm.Mode.Gemm,
            split_k_slices=1)
        op.run(arguments)
        arguments.sync()
        ref = 0.5 * (cp.asnumpy(A).astype(np.float64) @ cp.asnumpy(B).astype(np.float64))
        ref = (ref - 1.5 * cp.asnumpy(C).astype(np.float64)).astype(np.float32).astype(dtype)
        got = cp.asnumpy(D)
        bad = ~(got == ref)
        assert not bad.any(), (f"{key} {M}x{N}x{K} ({order}): {int(bad.sum())} of {bad.size} "
                               f"mismatch, first at {np.argwhere(bad)[:4].tolist()} {seed_note}")


@pytest.mark.uses_kernels("simt32_rrr")
def test_arguments_outlive_their_stream(ops):
    """Arguments owning device buffers (serial split-K's workspace) may be dropped after the
    stream they ran on was destroyed: freeing them must not name that stream. (cupy destroys its
    streams; before the fix a later garbage collection crashed the process.)"""
    import gc

    cupy = pytest.importorskip("cupy")
    import tilecraft as cutlass

    op = ops.get("simt32_rrr")
    m, n, k = 96, 80, 64
    a = cupy.random.randint(-3, 4, size=(m, k)).astype(cupy.float32)
    b = cupy.random.randint(-3, 4, size=(k, n)).astype(cupy.float32)
    expected = a.astype(cupy.float64) @ b.astype(cupy.float64)
    for _ in range(20):
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            d = cupy.full((m, n), cupy.nan, dtype=cupy.float32)
            arguments = cutlass.GemmArguments(
                operation=op, problem_size=cutlass.gemm.GemmCoord(m, n, k), A=a, B=b, C=None,
                D=d, output_op=op.epilogue_type(1.0, 0.0), split_k_slices=2)
            assert arguments.workspace_bytes > 0
            op.run(arguments)
        arguments.sync()
        assert bool((d == expected).all())
        del stream
        gc.collect()
        del arguments
        gc.collect()
        cupy.cuda.Device().synchronize()
        cupy.empty(1 << 20, dtype=cupy.uint8)  # allocate after the frees
    cupy.cuda.Device().synchronize()
