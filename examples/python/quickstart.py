"""Seed 004's GEMM from Python with numpy arrays: describe, compile, run, verify.

numpy inputs are staged to the GPU and D is copied back by ``arguments.sync()``. Without a GPU
the kernel is still compiled (and cached), and the script says there is nothing to run it on.
"""

import sys

import numpy as np

import tilecraft as cutlass
from tilecraft import *  # noqa: F401,F403

math_inst = MathInstruction([1, 1, 1], cutlass.float32, cutlass.float32, cutlass.float32,
                            cutlass.OpClass.Simt, MathOperation.multiply_add)
tile_description = TileDescription([128, 128, 8], 4, [2, 4, 1], math_inst)
A = TensorDescription(cutlass.float32, cutlass.RowMajor, 1)
B = TensorDescription(cutlass.float32, cutlass.RowMajor, 1)
C = TensorDescription(cutlass.float32, cutlass.RowMajor, 1)
epilogue_functor = LinearCombination(cutlass.float32, 1, cutlass.float32, cutlass.float32)
operation = GemmOperationUniversal(arch=80, tile_description=tile_description, A=A, B=B, C=C,
                                   epilogue_functor=epilogue_functor,
                                   swizzling_functor=cutlass.IdentitySwizzle1)
print("operation:", operation.procedural_name())
cutlass.compiler.add_module([operation])
print("compiled; cache:", cutlass.compiler.cache_dir())

reason = cutlass._core.cuda_device_available()
if reason is not None:
    print(f"no GPU here ({reason}): the kernel is compiled and cached, but there is nothing to "
          "run it on.")
    sys.exit(0)

cutlass.get_memory_pool(2**8, 2**32)
rng = np.random.default_rng()
problem_size = cutlass.gemm.GemmCoord(512, 256, 128)
M, N, K = problem_size.m(), problem_size.n(), problem_size.k()
tensor_A = np.ceil(rng.uniform(-8.5, 7.5, size=(M, K))).astype(np.float32)
tensor_B = np.ceil(rng.uniform(-8.5, 7.5, size=(K, N))).astype(np.float32)
tensor_C = np.ceil(rng.uniform(-8.5, 7.5, size=(M, N))).astype(np.float32)
tensor_D = np.full((M, N), np.nan, dtype=np.float32)
alpha, beta = 1.0, 0.5

arguments = GemmArguments(operation=operation, problem_size=problem_size, A=tensor_A, B=tensor_B,
                          C=tensor_C, D=tensor_D, output_op=operation.epilogue_type(alpha, beta),
                          gemm_mode=cutlass.gemm.Mode.Gemm, split_k_slices=1)
operation.run(arguments)
arguments.sync()

reference = alpha * (tensor_A.astype(np.float64) @ tensor_B.astype(np.float64)) + beta * tensor_C
mismatches = int(np.count_nonzero(tensor_D != reference))
print(f"ran {M}x{N}x{K} on {cutlass._core.device_name()}: {mismatches} mismatches of {M * N} "
      "elements against the float64 reference")
sys.exit(0 if mismatches == 0 else 1)
