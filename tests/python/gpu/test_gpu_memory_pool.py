"""The memory pool of seed 002: get_memory_pool(init, max) and get_allocated_size(), which counts
what tilecraft holds from the pool (staged host operands, workspaces) and drops when released."""

import gc

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.uses_kernels("simt32_rrr")]

np = pytest.importorskip("numpy")


def test_allocated_size_follows_staged_operands(ops):
    import tilecraft as cutlass

    cutlass.get_memory_pool(2**20, 2**32)
    op = ops.get("simt32_rrr")
    rng = np.random.default_rng()
    m, n, k = 256, 192, 128
    a = rng.integers(-3, 4, size=(m, k)).astype(np.float32)
    b = rng.integers(-3, 4, size=(k, n)).astype(np.float32)
    d = np.full((m, n), np.nan, np.float32)
    gc.collect()
    before = cutlass.get_allocated_size()
    arguments = cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(m, n, k),
                                      A=a, B=b, C=None, D=d, output_op=op.epilogue_type(1.0, 0.0))
    staged = cutlass.get_allocated_size() - before
    assert staged >= (m * k + k * n + m * n) * 4, f"staged {staged} bytes"
    op.run(arguments)
    arguments.sync()
    assert np.array_equal(d, a.astype(np.float64) @ b)
    del arguments
    gc.collect()
    import torch

    torch.cuda.synchronize()
    assert cutlass.get_allocated_size() == before


def test_pool_arguments_are_checked():
    import tilecraft as cutlass

    with pytest.raises(ValueError, match="must not exceed max"):
        cutlass.get_memory_pool(2**30, 2**20)
