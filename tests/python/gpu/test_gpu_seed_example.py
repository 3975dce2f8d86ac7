"""The seed 004 README example, verbatim except its imports (pycutlass and cutlass are tilecraft).

It keeps the README's misspelled ``split_k_splices=1`` (accepted with a warning)."""

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.uses_kernels("simt32_rrr")]

pytest.importorskip("tilecraft", reason="tilecraft is not importable")
pytest.importorskip("torch", reason="torch is not installed")

import tilecraft as pycutlass  # noqa: E402
from tilecraft import *  # noqa: E402,F401,F403
import tilecraft as cutlass  # noqa: E402
import torch  # noqa: E402


@pytest.mark.filterwarnings("ignore:GemmArguments. 'split_k_splices'")
def test_seed_004_readme_example(ops):
    # `ops` compiled simt32_rrr, the same description: add_module below is a cache hit.
    pycutlass.get_memory_pool(2**8, 2**32)

    math_inst = MathInstruction(
        [1, 1, 1], cutlass.float32, cutlass.float32, cutlass.float32,
        cutlass.OpClass.Simt, MathOperation.multiply_add
    )

    tile_description = TileDescription(
        [128, 128, 8], 4, [2, 4, 1],
        math_inst
    )

    A = TensorDescription(
        cutlass.float32, cutlass.RowMajor, 1
    )

    B = TensorDescription(
        cutlass.float32, cutlass.RowMajor, 1
    )

    C = TensorDescription(
        cutlass.float32, cutlass.RowMajor, 1
    )

    epilogue_functor = LinearCombination(cutlass.float32, 1, cutlass.float32, cutlass.float32)

    operation = GemmOperationUniversal(
        arch=80, tile_description=tile_description,
        A=A, B=B, C=C, 
        epilogue_functor=epilogue_functor, 
        swizzling_functor=cutlass.IdentitySwizzle1
    )

    pycutlass.compiler.add_module([operation,])

    problem_size = cutlass.gemm.GemmCoord(512, 256, 128)

    tensor_A = torch.ceil(torch.empty(size=(problem_size.m(), problem_size.k()), dtype=torch.float32, device="cuda").uniform_(-8.5, 7.5))
    tensor_B = torch.ceil(torch.empty(size=(problem_size.k(), problem_size.n()), dtype=torch.float32, device="cuda").uniform_(-8.5, 7.5))
    tensor_C = torch.ceil(torch.empty(size=(problem_size.m(), problem_size.n()), dtype=torch.float32, device="cuda").uniform_(-8.5, 7.5))
    tensor_D = torch.empty_like(tensor_C)


    alpha = 1.0
    beta = 0.0

    arguments = GemmArguments(
        operation=operation, problem_size=problem_size,
        A=tensor_A, B=tensor_B, C=tensor_C, D=tensor_D,
        output_op=operation.epilogue_type(alpha, beta),
        gemm_mode=cutlass.gemm.Mode.Gemm, split_k_splices=1
    )

    operation.run(arguments)

    arguments.sync()

    tensor_D_ref = alpha * tensor_A @ tensor_B + beta * tensor_C

    assert torch.equal(tensor_D, tensor_D_ref)
