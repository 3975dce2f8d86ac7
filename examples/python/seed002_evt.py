"""Seed 002's epilogue visitor tree ("GEMM Operation" with ``visitor=True``, "Getting output_op",
"Sync results": ``output_op.sync()``), spelled as the seed spells it with its imports changed to
tilecraft. The epilogue is a Python function of the accumulator, traced into a graph:

    D = relu(alpha * accum + beta * C + bias),  amax = max |D|,  row_sum = D summed per row

one kernel computes all three. numpy operands are staged to the GPU; ``output_op.sync()`` waits
and copies every output back; then every element is checked against a float64 reference.

    python examples/python/seed002_evt.py

An arch=90 kernel runs on a compute capability 9.0 device, an arch=80 one elsewhere. Without a
GPU the arch=90 kernel is still compiled (and cached), and the script says there is nothing to
run it on.
"""

import sys

import numpy as np

import tilecraft as pycutlass
from tilecraft import *  # noqa: F401,F403
import tilecraft as cutlass

M, N, K = 300, 136, 64   # M and N are not multiples of the 128 x 128 tile


def relu(x):  # the name the tracer reads; numpy evaluates the reference with it
    return np.maximum(x, 0)


def epilogue(accum, alpha, C, beta, bias):
    D = relu(alpha * accum + beta * C + bias)
    return D, D.abs().max(), D.sum(dim=1)


# ---- The epilogue visitor tree: the function read with example operands (shapes, dtypes) ------
examples = dict(accum=np.empty((M, N), np.float32), alpha=1.0, C=np.empty((M, N), np.float32),
                beta=1.0, bias=np.empty((N,), np.float32), D=np.empty((M, N), np.float32))
epilogue_functor = pycutlass.epilogue.trace(epilogue, **examples)
print("epilogue graph:", epilogue_functor)


def describe(arch):
    if arch == 90:
        math_inst = MathInstruction([64, 128, 16], cutlass.float16, cutlass.float16,
                                    cutlass.float32, cutlass.OpClass.TensorOp,
                                    MathOperation.multiply_add)
        tile_description = TileDescription(
            [128, 128, 64], 0, None, math_inst, cluster_shape=[1, 1, 1],
            kernel_schedule=cutlass.KernelScheduleType.TmaWarpSpecializedCooperative,
            epilogue_schedule=cutlass.EpilogueScheduleType.Auto,
            tile_scheduler=cutlass.TileSchedulerType.Persistent)
    else:
        math_inst = MathInstruction([16, 8, 16], cutlass.float16, cutlass.float16,
                                    cutlass.float32, cutlass.OpClass.TensorOp,
                                    MathOperation.multiply_add)
        tile_description = TileDescription([128, 128, 32], 3, [2, 2, 1], math_inst)
    A = TensorDescription(cutlass.float16, cutlass.RowMajor, 8)
    B = TensorDescription(cutlass.float16, cutlass.ColumnMajor, 8)
    C = TensorDescription(cutlass.float32, cutlass.RowMajor, 4)
    return GemmOperationUniversal(arch, tile_description, A, B, C, epilogue_functor,
                                  cutlass.IdentitySwizzle1, visitor=True)


reason = cutlass._core.cuda_device_available()
arch = 90 if reason is not None or cutlass._core.device_compute_capability() == 90 else 80
operation = describe(arch)
print("operation:", operation.procedural_name())

# ---- Code emission and compilation ------------------------------------------------------------
pycutlass.compiler.add_module([operation,])
print("compiled; cache:", cutlass.compiler.cache_dir())
if reason is not None:
    print(f"no GPU here ({reason}): the kernel is compiled and cached, but there is nothing to "
          "run it on.")
    sys.exit(0)

# ---- Arguments: small integers, so that D and amax are exact in float32 ------------------------
rng = np.random.default_rng()
tensor_A = np.ceil(rng.uniform(-4.5, 3.5, size=(M, K))).astype(np.float16)
tensor_B = np.asfortranarray(np.ceil(rng.uniform(-4.5, 3.5, size=(K, N))).astype(np.float16))
tensor_C = np.ceil(rng.uniform(-4.5, 3.5, size=(M, N))).astype(np.float32)
bias = np.ceil(rng.uniform(-4.5, 3.5, size=(N,))).astype(np.float32)
tensor_D = np.full((M, N), np.nan, dtype=np.float32)  # poisoned: unwritten shows
amax = np.full((1,), np.nan, dtype=np.float32)
row_sum = np.full((M,), np.nan, dtype=np.float32)
alpha, beta = 1.5, 0.5

output_op = operation.epilogue_type(alpha=alpha, C=tensor_C, beta=beta, bias=bias, out1=amax,
                                    out2=row_sum, problem_size=[M, N])
arguments = GemmArguments(
    operation=operation, problem_size=cutlass.gemm.GemmCoord(M, N, K),
    A=tensor_A, B=tensor_B, C=None, D=tensor_D, output_op=output_op
)

# ---- Kernel launching and sync ----------------------------------------------------------------
operation.run(arguments)
output_op.sync()

# ---- Every element against float64 -------------------------------------------------------------
accum = tensor_A.astype(np.float64) @ tensor_B.astype(np.float64)
reference = np.maximum(alpha * accum + beta * tensor_C + bias, 0)
bad_d = int(np.count_nonzero(~(tensor_D == reference)))  # NaN never equals
bad_amax = int(not amax[0] == np.abs(reference).max())
# Row sums add float32 partial sums in any order (atomics): within float32 rounding of the sum.
row_reference = reference.sum(axis=1)
bad_rows = int(np.count_nonzero(~(np.abs(row_sum - row_reference)
                                  <= 1e-6 * np.abs(reference).sum(axis=1) + 1e-6)))
print(f"arch {arch} on {cutlass._core.device_name()}: D {bad_d} mismatches of {reference.size}, "
      f"amax {bad_amax} of 1, row sums {bad_rows} of {M}")
sys.exit(0 if bad_d == bad_amax == bad_rows == 0 else 1)
