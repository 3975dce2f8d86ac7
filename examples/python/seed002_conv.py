"""Seed 002's convolution ("Conv2d Operation", "Conv2d Arguments"), spelled as the seed spells
it with its imports changed to tilecraft: describe an fprop kernel from a math instruction, a
tile, three TensorNHWC operand descriptions and an epilogue; Conv2dOperation; compiler.add_module;
cutlass.conv.Conv2dProblemSize with Tensor4DCoord and MatrixCoord; Conv2dArguments with torch
tensors (as PyCUTLASS's conv tests pass them: flat, in NHWC order); run; sync; then every element
against torch's convolution in float64.

    python examples/python/seed002_conv.py

Without a GPU the kernel is still compiled (and cached), and the script says there is nothing to
run it on.
"""

import sys

try:  # as PyCUTLASS's conv example does, torch is imported before anything is compiled
    import torch
except ImportError:  # without torch the kernel is still compiled, and nothing runs
    torch = None

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

A = TensorDescription(cutlass.float16, cutlass.TensorNHWC, 8)
B = TensorDescription(cutlass.float16, cutlass.TensorNHWC, 8)
C = TensorDescription(cutlass.float32, cutlass.TensorNHWC, 4)

epilogue_functor = LinearCombination(cutlass.float32, 4, cutlass.float32, cutlass.float32)

operation = Conv2dOperation(
    conv_kind=cutlass.conv.Operator.fprop,
    iterator_algorithm=cutlass.conv.IteratorAlgorithm.optimized,
    arch=80, tile_description=tile_description, A=A, B=B, C=C,
    stride_support=StrideSupport.Strided,
    epilogue_functor=epilogue_functor,
    swizzling_functor=cutlass.IdentitySwizzle1
)
print("operation:", operation.procedural_name())

# ---- Code emission and compilation ----------------------------------------------------------
pycutlass.compiler.add_module([operation,])
print("compiled; cache:", cutlass.compiler.cache_dir())

reason = cutlass._core.cuda_device_available()
if reason is None and torch is None:
    reason = "torch is not installed"
if reason is not None:
    print(f"no GPU here ({reason}): the convolution kernel is compiled and cached, but there is "
          "nothing to run it on.")
    sys.exit(0)

pycutlass.get_memory_pool(2**8, 2**32)

# ---- Problem size: N, H, W, C input; K, R, S, C filter; padding (top, bottom, left, right) -----
problem_size = cutlass.conv.Conv2dProblemSize(
    cutlass.Tensor4DCoord(4, 23, 17, 40),
    cutlass.Tensor4DCoord(72, 3, 3, 40),
    cutlass.Tensor4DCoord(1, 2, 0, 1),
    cutlass.MatrixCoord(2, 1),
    cutlass.MatrixCoord(1, 2),
    cutlass.conv.Mode.cross_correlation,
    1, 1
)
N, H, W, C_, K, R, S = 4, 23, 17, 40, 72, 3, 3
P, Q = problem_size.P, problem_size.Q

# Flat tensors in NHWC (activation), KRSC (filter) and NPQK (output) order, as PyCUTLASS's tests.
tensor_A = torch.ceil(torch.empty(N * H * W * C_, device="cuda").uniform_(-4.5, 3.5)).half()
tensor_B = torch.ceil(torch.empty(K * R * S * C_, device="cuda").uniform_(-4.5, 3.5)).half()
tensor_C = torch.ceil(torch.empty(N * P * Q * K, device="cuda").uniform_(-4.5, 3.5))
tensor_D = torch.full_like(tensor_C, float("nan"))  # poisoned: unwritten shows

alpha = 1.0
beta = 0.5
output_op = operation.epilogue_type(*([alpha, beta]))

arguments = Conv2dArguments(
    operation, problem_size, tensor_A, tensor_B, tensor_C, tensor_D,
    output_op, cutlass.conv.SplitKMode.Serial, 1
)

# ---- Kernel launching and sync ----------------------------------------------------------------
operation.run(arguments)

arguments.sync()

# ---- Check every element against torch in float64 ----------------------------------------------
x = tensor_A.view(N, H, W, C_).permute(0, 3, 1, 2).double()
w = tensor_B.view(K, R, S, C_).permute(0, 3, 1, 2).double()
x = torch.nn.functional.pad(x, (0, 1, 1, 2))  # left, right, top, bottom
y = torch.nn.functional.conv2d(x, w, stride=(2, 1), dilation=(1, 2)).permute(0, 2, 3, 1)
reference = alpha * y + beta * tensor_C.view(N, P, Q, K).double()
result = tensor_D.view(N, P, Q, K).double()
mismatches = int((~(result == reference)).sum())  # NaN never equals
print(f"conv2d fprop {problem_size} on {cutlass._core.device_name()}: {mismatches} mismatches "
      f"of {reference.numel()} elements against torch (float64)")
sys.exit(0 if mismatches == 0 else 1)
