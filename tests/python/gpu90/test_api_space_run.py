"""Every kernel tilecraft.api lists runs the arguments its metadata admits: a random sample of
the SM90 and SM80 spaces, each given random arguments built from its own metadata (dtypes,
layouts, alignments; ragged extents elsewhere), must be supported, be listed by get_kernels for
those arguments, run without a run-time refusal, and be exact (small integers, every element).

TILECRAFT_SPACE_RUN_SAMPLE=N samples N kernels per architecture (default 3; the issue's sweep is
20 + 20). The sample follows the suite's seed (TILECRAFT_GPU_TEST_SEED).
"""

import os
import random

import pytest

from gpu_harness import SEED
from sm90_data import place, poison_value, random_values, to64, torch_dtype

pytestmark = pytest.mark.gpu

SAMPLE = int(os.environ.get("TILECRAFT_SPACE_RUN_SAMPLE", "3"))
MAX_K = 512  # integer data in [-2, 2]: every sum of K products is exact in f16 accumulators


def _element(dtype):
    return "f32" if dtype.name == "tf32" else dtype.name


def _sample():
    import tilecraft
    import tilecraft.api as cutlass_api

    if tilecraft._core.cuda_device_available() is not None:
        return []
    kernels = cutlass_api.get_kernels(cc=90)
    by_arch = {80: [], 90: []}
    for kernel in kernels:
        by_arch.setdefault(kernel.metadata.min_cc, []).append(kernel)
    rng = random.Random(f"{SEED}/space-run")
    return [k for arch in (80, 90) for k in rng.sample(by_arch[arch], SAMPLE)]


_KERNELS = None


def _kernels():
    global _KERNELS
    if _KERNELS is None:
        _KERNELS = _sample()
    return _KERNELS


@pytest.fixture(scope="module")
def compiled():
    import tilecraft.api as cutlass_api

    global _KERNELS
    kernels = _kernels()
    cutlass_api.compile_kernels(kernels)
    yield kernels
    _KERNELS = None  # the sample lives as long as the module's tests, not the process


def _extent(rng, multiple, largest):
    """A random extent that is a multiple of ``multiple`` but, where possible, not of twice it."""
    top = max(1, largest // multiple)
    value = rng.randrange(1, top + 1)
    if value % 2 == 0 and value + 1 <= top:
        value += 1
    return value * multiple


def _arguments_for(metadata, rng, gen):
    """A, B, out for ``metadata``: each operand's contiguous extent a multiple of its alignment,
    the other extents ragged."""
    import torch

    import tilecraft

    operands = metadata.operands
    row = tilecraft.Layout.RowMajor
    need = {"M": 1, "N": 1, "K": 1}
    for op, (rows, cols) in ((operands.A, ("M", "K")), (operands.B, ("K", "N")),
                             (operands.out, ("M", "N"))):
        contiguous = cols if op.layout == row else rows
        need[contiguous] = max(need[contiguous], op.alignment)
    m = _extent(rng, need["M"], 700)
    n = _extent(rng, need["N"], 700)
    k = _extent(rng, need["K"], MAX_K)
    batch = rng.choice((1, 1, 2))
    lead = (batch,) if batch > 1 else ()
    ea, eb, eo = (_element(operands.A.dtype), _element(operands.B.dtype),
                  _element(operands.out.dtype))
    A = place(random_values(lead + (m, k), ea, "int", 2, gen), operands.A.layout.name)
    B = place(random_values(lead + (k, n), eb, "int", 2, gen), operands.B.layout.name)
    out = place(torch.full(lead + (m, n), poison_value(eo), device="cuda",
                           dtype=torch_dtype(eo)), operands.out.layout.name)
    return A, B, out, (m, n, k, batch)


def _expected(A, B, out_element):
    """The exact product converted once to the out element (round to nearest even; s8
    saturates)."""
    ref = to64(A) @ to64(B)
    if out_element == "s8":
        return ref.clamp(-128, 127)
    return to64(ref.to(torch_dtype(out_element)))


@pytest.mark.parametrize("index", range(2 * SAMPLE))
def test_listed_kernel_runs_what_its_metadata_admits(compiled, index, rng, gen):
    import torch

    import tilecraft.api as cutlass_api

    if not compiled:
        pytest.skip("no CUDA device")
    kernel = compiled[index]
    meta = kernel.metadata
    A, B, out, shape = _arguments_for(meta, rng, gen)
    note = f"{meta.kernel_name} on (M, N, K, L) = {shape}"
    accumulator = torch.int32 if meta.operands.accumulator.name == "s32" else torch.float32
    if meta.operands.accumulator.name == "f16":
        accumulator = torch.float16
    # A fast-accumulation fp8 kernel runs only arguments that allow it (its metadata says so).
    args = cutlass_api.arguments.GemmArguments(A=A, B=B, out=out, accumulator_type=accumulator,
                                               use_fast_accum=meta.operands.fast_accum)
    status = kernel.supports(args)
    assert status, f"{note}: not supported: {status.error}"
    listed = {k.metadata.kernel_name for k in cutlass_api.get_kernels(args, cc=90)}
    assert meta.kernel_name in listed, f"{note}: supported but not listed by get_kernels(args)"
    kernel.run(args)
    torch.cuda.synchronize()
    expected = _expected(A, B, _element(meta.operands.out.dtype))
    got = to64(out)
    bad = ~(got == expected)
    assert not bad.any(), (f"{note}: {int(bad.sum())} of {bad.numel()} elements differ from the "
                           f"exact result (first at {bad.nonzero()[0].tolist()})")
