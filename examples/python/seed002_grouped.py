"""Seed 002's grouped GEMM ("GEMM Grouped Operation", "GEMM Grouped Arguments"), spelled as the
seed spells it with its imports changed to tilecraft: describe the kernel from a math
instruction, a tile, three operand descriptions and an epilogue; GemmOperationGrouped with
SchedulerMode.Device; compiler.add_module; GemmGroupedArguments with one numpy array per
problem for a handful of ragged problems (an empty one and a one-row one among them); run;
sync (which copies each D back into its numpy array); then every element against a float64
reference.

    python examples/python/seed002_grouped.py

Without a GPU the kernel is still compiled (and cached), and the script says there is nothing to
run it on.
"""

import sys

import numpy as np

import tilecraft as pycutlass
from tilecraft import *  # noqa: F401,F403
import tilecraft as cutlass

# ---- Operation description ------------------------------------------------------------------
math_inst = MathInstruction(
    [16, 8, 16], cutlass.float16, cutlass.float16, cutlass.float32,
    cutlass.OpClass.TensorOp, MathOperation.multiply_add
)

tile_description = TileDescription(
    [128, 128, 32], 3, [2, 2, 1],
    math_inst
)

A = TensorDescription(
    cutlass.float16, cutlass.RowMajor, 8
)

B = TensorDescription(
    cutlass.float16, cutlass.ColumnMajor, 8
)

C = TensorDescription(
    cutlass.float32, cutlass.RowMajor, 4
)

epilogue_functor = LinearCombination(cutlass.float32, 4, cutlass.float32, cutlass.float32)

operation = GemmOperationGrouped(
    80, tile_description, A, B, C,
    epilogue_functor, cutlass.IdentitySwizzle1,
    precompute_mode=SchedulerMode.Device
)
print("operation:", operation.procedural_name())

# ---- Code emission and compilation ----------------------------------------------------------
pycutlass.compiler.add_module([operation,])
print("compiled; cache:", cutlass.compiler.cache_dir())

reason = cutlass._core.cuda_device_available()
if reason is not None:
    print(f"no GPU here ({reason}): the grouped kernel is compiled and cached, but there is "
          "nothing to run it on.")
    sys.exit(0)

pycutlass.get_memory_pool(2**8, 2**32)

# ---- Arguments: one (M, N, K) and one tensor of each operand per problem -----------------------
# K is a multiple of 8 (A row-major and B column-major are read 8 halves at a time), N a multiple
# of 4 (D row-major, 4 floats at a time); M is free. M = 0: an empty problem.
problem_sizes_coord = [
    cutlass.gemm.GemmCoord(256, 128, 64),
    cutlass.gemm.GemmCoord(37, 96, 136),
    cutlass.gemm.GemmCoord(0, 64, 32),
    cutlass.gemm.GemmCoord(1, 256, 256),
    cutlass.gemm.GemmCoord(513, 44, 24),
    cutlass.gemm.GemmCoord(130, 200, 8),
]

rng = np.random.default_rng()
tensor_As, tensor_Bs, tensor_Cs, tensor_Ds = [], [], [], []
for size in problem_sizes_coord:
    M, N, K = size.m(), size.n(), size.k()
    tensor_As.append(np.ceil(rng.uniform(-4.5, 3.5, size=(M, K))).astype(np.float16))
    tensor_Bs.append(np.asfortranarray(  # column-major (K, N)
        np.ceil(rng.uniform(-4.5, 3.5, size=(K, N))).astype(np.float16)))
    tensor_Cs.append(np.ceil(rng.uniform(-4.5, 3.5, size=(M, N))).astype(np.float32))
    tensor_Ds.append(np.full((M, N), np.nan, dtype=np.float32))  # poisoned: unwritten shows

alpha = 1.5
beta = 0.5
output_op = operation.epilogue_type(*([alpha, beta]))

arguments = GemmGroupedArguments(
    operation, problem_sizes_coord, tensor_As, tensor_Bs, tensor_Cs, tensor_Ds,
    output_op=output_op
)

# ---- Kernel launching and sync ----------------------------------------------------------------
operation.run(arguments)

arguments.sync()

# ---- Check every element of every problem against float64 -------------------------------------
mismatches = 0
total = 0
for g, size in enumerate(problem_sizes_coord):
    reference = (alpha * (tensor_As[g].astype(np.float64) @ tensor_Bs[g].astype(np.float64))
                 + beta * tensor_Cs[g].astype(np.float64))
    bad = int(np.count_nonzero(~(tensor_Ds[g] == reference)))  # NaN never equals
    mismatches += bad
    total += reference.size
    print(f"problem {g}: {size.m()}x{size.n()}x{size.k()}: {bad} mismatches of "
          f"{reference.size} elements")
print(f"ran {len(problem_sizes_coord)} problems in one launch on {cutlass._core.device_name()}: "
      f"{mismatches} mismatches of {total} elements against the float64 reference")
sys.exit(0 if mismatches == 0 else 1)
