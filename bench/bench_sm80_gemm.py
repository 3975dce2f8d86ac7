"""SM80-style (CUTLASS 2.x) tilecraft kernels beside cuBLAS (through torch) at 4096^3 and 8192^3,
same process, same data: f16, bf16, tf32, 3xTF32, f64, int8. The baseline for the Hopper work.

  python bench/bench_sm80_gemm.py [--sizes 4096,8192] [--dtypes f16,bf16,...]
"""

import argparse
import sys
import time

import torch

import tilecraft as cutlass
from tilecraft import *  # noqa: F401,F403
from common import device_line, print_table, tflops, time_cuda

F16, BF16, F32, F64 = cutlass.float16, cutlass.bfloat16, cutlass.float32, cutlass.float64
S8, S32 = cutlass.int8, cutlass.int32
TC = cutlass.OpClass.TensorOp
MO = MathOperation

# (label, operand type, accumulator, instruction, math op, torch dtype, [(tile, stages, warps)], align)
FAMILIES = {
    "f16": (F16, F32, [16, 8, 16], MO.multiply_add, torch.float16,
            [([128, 256, 64], 3, [2, 4, 1]), ([256, 128, 64], 3, [4, 2, 1]),
             ([128, 128, 64], 4, [2, 2, 1]), ([128, 256, 32], 4, [2, 4, 1])], 8),
    "bf16": (BF16, F32, [16, 8, 16], MO.multiply_add, torch.bfloat16,
             [([128, 256, 64], 3, [2, 4, 1]), ([256, 128, 64], 3, [4, 2, 1]),
              ([128, 128, 64], 4, [2, 2, 1]), ([128, 256, 32], 4, [2, 4, 1])], 8),
    "tf32": (cutlass.tfloat32, F32, [16, 8, 8], MO.multiply_add, torch.float32,
             [([128, 256, 32], 3, [2, 4, 1]), ([256, 128, 32], 3, [4, 2, 1]),
              ([128, 128, 32], 4, [2, 2, 1])], 4),
    "3xtf32": (F32, F32, [16, 8, 8], MO.multiply_add_fast_f32, torch.float32,
               [([128, 128, 32], 3, [2, 2, 1]), ([128, 256, 32], 3, [2, 4, 1])], 4),
    "f64": (F64, F64, [8, 8, 4], MO.multiply_add, torch.float64,
            [([128, 128, 16], 3, [2, 2, 1]), ([64, 64, 16], 4, [2, 2, 1])], 1),
    "int8": (S8, S32, [16, 8, 32], MO.multiply_add_saturate, torch.int8,
             [([128, 256, 64], 3, [2, 4, 1]), ([256, 128, 64], 3, [4, 2, 1]),
              ([128, 256, 128], 3, [2, 4, 1])], 16),
}


def make_ops(name):
    elem, acc, inst, math_op, _, tiles, align = FAMILIES[name]
    math = MathInstruction(inst, elem, elem, acc, TC, math_op)
    a = TensorDescription(elem, cutlass.RowMajor, align)
    b = TensorDescription(elem, cutlass.ColumnMajor, align)  # TN, as cuBLAS likes it
    if name == "int8":
        c = TensorDescription(S8, cutlass.RowMajor, 16)
        epilogue = LinearCombinationClamp(S8, 16, S32, F32)
    else:
        out = F32 if elem == cutlass.tfloat32 else elem
        c = TensorDescription(out, cutlass.RowMajor, align)
        epilogue = LinearCombination(out, align, acc, acc)
    ops = []
    for shape, stages, warps in tiles:
        tile = TileDescription(shape, stages, warps, math)
        ops.append(GemmOperationUniversal(80, tile, a, b, c, epilogue,
                                          swizzling_functor=cutlass.IdentitySwizzle8))
    return ops


def torch_fn(name, a, b_nk, out):
    """cuBLAS through torch on the same data (B stored N x K, used as its transpose)."""
    if name == "int8":
        return lambda: torch._int_mm(a, b_nk.t())
    if name in ("tf32", "3xtf32"):
        return lambda: torch.matmul(a, b_nk.t(), out=out)
    return lambda: torch.matmul(a, b_nk.t(), out=out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="4096,8192")
    parser.add_argument("--dtypes", default=",".join(FAMILIES))
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    names = options.dtypes.split(",")
    print(device_line())
    all_ops = {name: make_ops(name) for name in names}
    t0 = time.perf_counter()
    cutlass.compiler.add_module([op for ops in all_ops.values() for op in ops])
    print(f"compiled {sum(map(len, all_ops.values()))} kernels in {time.perf_counter() - t0:.1f} s")

    rows = []
    for name in names:
        torch_dtype = FAMILIES[name][4]
        for size in sizes:
            m = n = k = size
            if name == "int8":
                a = torch.randint(-4, 4, (m, k), device="cuda", dtype=torch.int8)
                b_nk = torch.randint(-4, 4, (n, k), device="cuda", dtype=torch.int8)
            else:
                a = torch.randn(m, k, device="cuda", dtype=torch_dtype)
                b_nk = torch.randn(n, k, device="cuda", dtype=torch_dtype)
            out_dtype = torch.int8 if name == "int8" else torch_dtype
            d = torch.empty(m, n, device="cuda", dtype=out_dtype)
            ref_out = torch.empty(m, n, device="cuda", dtype=torch_dtype)
            torch.backends.cuda.matmul.allow_tf32 = name == "tf32"
            inner = 1 if size >= 8192 else 5
            best = None
            for op in all_ops[name]:
                args = GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(m, n, k),
                                     A=a, B=b_nk.t(), C=d, D=d,
                                     output_op=op.epilogue_type(1.0, 0.0))
                ms = time_cuda(lambda: op.run(args), repeats=7, inner=inner)
                label = op.tile_description.procedural_name()
                if best is None or ms < best[1]:
                    best = (label, ms)
            torch_ms = time_cuda(torch_fn(name, a, b_nk, ref_out), repeats=7, inner=inner)
            ours, theirs = tflops(m, n, k, best[1]), tflops(m, n, k, torch_ms)
            rows.append([name, f"{size}^3", best[0], f"{ours:.0f}", f"{theirs:.0f}",
                         f"{ours / theirs:.2f}"])
            print(rows[-1], flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    print()
    print_table(["dtype", "size", "best tilecraft tile", "tilecraft TFLOP/s",
                 "cuBLAS (torch) TFLOP/s", "ratio"], rows)
    print("(3xtf32 is compared with torch's full-precision f32 GEMM; int8 with torch._int_mm, "
          "which returns int32 while ours writes clamped int8)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
