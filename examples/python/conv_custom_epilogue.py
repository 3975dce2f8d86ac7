"""A convolution with a custom epilogue: seed 002's Conv2dOperation with a traced epilogue
function in place of the epilogue functor, on tilecraft's persistent SM90 convolution. One kernel
computes the convolution, adds a bias per output channel, applies relu, adds a residual and sums
each output channel (batch-norm style statistics):

    z = accum + bias;  D = relu(z) + residual;  channel_sum = D summed per output channel

The function sees the implicit GEMM's (M, N) output: M = N*P*Q output positions, N = K output
channels. numpy operands are staged to the GPU; ``output_op.sync()`` copies every output back;
then every element is checked against a float64 reference.

    python examples/python/conv_custom_epilogue.py

Without a GPU the kernel is still compiled (and cached), and the script says there is nothing to
run it on; on a GPU that is not compute capability 9.0 it says the kernel needs one.
"""

import sys

import numpy as np

import tilecraft as cutlass
from tilecraft import Conv2dArguments, Conv2dOperation, MathInstruction, MathOperation, \
    TensorDescription, TileDescription

N, H, W, C, K = 2, 14, 14, 64, 128   # 3x3 filter, padding 1, stride 1: P = H, Q = W


def relu(x):  # the name the tracer reads
    return np.maximum(x, 0)


def epilogue(accum, bias, residual):
    z = accum + bias
    D = relu(z) + residual
    channel_sum = D.sum(dim=0)
    return D, channel_sum


M = N * H * W
graph = cutlass.epilogue.trace(
    epilogue, accum=np.empty((M, K), np.float32), bias=np.empty((K,), np.float32),
    residual=np.empty((M, K), np.float16), D=np.empty((M, K), np.float16),
    channel_sum=np.empty((K,), np.float32))
print("epilogue graph:", graph)

math_inst = MathInstruction([64, 128, 16], cutlass.float16, cutlass.float16, cutlass.float32,
                            cutlass.OpClass.TensorOp, MathOperation.multiply_add)
tile_description = TileDescription(
    [128, 128, 64], 0, None, math_inst, cluster_shape=[1, 1, 1],
    kernel_schedule=cutlass.KernelScheduleType.TmaWarpSpecializedCooperative,
    tile_scheduler=cutlass.TileSchedulerType.Persistent)
nhwc = TensorDescription(cutlass.float16, cutlass.TensorNHWC, 8)
operation = Conv2dOperation(cutlass.conv.Operator.fprop, cutlass.conv.IteratorAlgorithm.optimized,
                            90, tile_description, nhwc, nhwc, nhwc,
                            cutlass.conv.StrideSupport.Strided, graph, cutlass.IdentitySwizzle1)
print("operation:", operation.procedural_name())

cutlass.compiler.add_module([operation])
print("compiled; cache:", cutlass.compiler.cache_dir())
reason = cutlass._core.cuda_device_available()
if reason is not None:
    print(f"no GPU here ({reason}): the kernel is compiled and cached, but there is nothing to "
          "run it on.")
    sys.exit(0)
if cutlass._core.device_compute_capability() != 90:
    print(f"{cutlass._core.device_name()} is not compute capability 9.0: the persistent SM90 "
          "kernel is compiled, but it runs on Hopper (sm_90a) only.")
    sys.exit(0)

# ---- Operands: small integers, so that every output is exact ------------------------------------
rng = np.random.default_rng()
x = rng.integers(-1, 2, size=(N, H, W, C)).astype(np.float16)
w = rng.integers(-1, 2, size=(K, 3, 3, C)).astype(np.float16)
bias = rng.integers(-4, 5, size=(K,)).astype(np.float32)
residual = rng.integers(-4, 5, size=(N, H, W, K)).astype(np.float16)
y = np.full((N, H, W, K), np.nan, dtype=np.float16)        # poisoned: unwritten shows
channel_sum = np.full((K,), np.nan, dtype=np.float32)

problem_size = cutlass.conv.Conv2dProblemSize(
    cutlass.Tensor4DCoord(N, H, W, C), cutlass.Tensor4DCoord(K, 3, 3, C),
    cutlass.Tensor4DCoord(1, 1, 1, 1), cutlass.MatrixCoord(1, 1), cutlass.MatrixCoord(1, 1),
    cutlass.conv.Mode.cross_correlation, 1, 1)
output_op = operation.epilogue_type(bias=bias, residual=residual, channel_sum=channel_sum)
arguments = Conv2dArguments(operation, problem_size, x, w, None, y, output_op)
operation.run(arguments)
output_op.sync()

# ---- Every element against float64 -------------------------------------------------------------
padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
accum = np.zeros((N, H, W, K))
for r in range(3):
    for s in range(3):
        accum += np.einsum("nhwc,kc->nhwk", padded[:, r:r + H, s:s + W, :],
                           w[:, r, s, :].astype(np.float64))
reference = np.maximum(accum + bias, 0) + residual.astype(np.float64)
bad_d = int(np.count_nonzero(~(y.astype(np.float64) == reference)))   # NaN never equals
bad_sums = int(np.count_nonzero(~(channel_sum == reference.reshape(M, K).sum(axis=0))))
print(f"arch 90 on {cutlass._core.device_name()}: D {bad_d} mismatches of {reference.size}, "
      f"channel sums {bad_sums} of {K}")
sys.exit(0 if bad_d == bad_sums == 0 else 1)
