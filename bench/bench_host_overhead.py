"""Host time per call: tilecraft's operation.run(args) beside torch.matmul on a tiny problem,
measured side by side in one process (CUTLASS's own Python interface: 0.8-1.7 ms per call)."""

import statistics
import sys
import time

import torch

import tilecraft as cutlass
from tilecraft import *  # noqa: F401,F403
from common import device_line, print_table

M = N = K = 64
CALLS = 2000


def per_call_us(fn):
    """Median over 7 rounds of the mean host time of CALLS back-to-back calls."""
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    rounds = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        rounds.append((t1 - t0) / CALLS * 1e6)
    return statistics.median(rounds)


def main():
    print(device_line())
    math = MathInstruction([16, 8, 16], cutlass.float16, cutlass.float16, cutlass.float32,
                           cutlass.OpClass.TensorOp, MathOperation.multiply_add)
    tile = TileDescription([64, 64, 32], 3, [2, 2, 1], math)
    t = TensorDescription(cutlass.float16, cutlass.RowMajor, 8)
    op = GemmOperationUniversal(80, tile, t, t, t,
                                LinearCombination(cutlass.float16, 8, cutlass.float32,
                                                  cutlass.float32))
    cutlass.compiler.add_module([op])
    a = torch.randn(M, K, device="cuda", dtype=torch.float16)
    b = torch.randn(K, N, device="cuda", dtype=torch.float16)
    c = torch.randn(M, N, device="cuda", dtype=torch.float16)
    d = torch.empty_like(c)
    d_torch = torch.empty_like(c)
    args = GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K), A=a, B=b,
                         C=c, D=d, output_op=op.epilogue_type(1.0, 0.0))
    op.run(args)
    args.sync()
    torch.testing.assert_close(d.float(), a.float() @ b.float(), rtol=1e-2, atol=1e-2)

    tilecraft_us = per_call_us(lambda: op.run(args))
    torch_us = per_call_us(lambda: torch.matmul(a, b, out=d_torch))
    # Building the arguments is a separate, per-problem cost; show it too.
    t0 = time.perf_counter()
    for _ in range(200):
        GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K), A=a, B=b, C=c,
                      D=d, output_op=op.epilogue_type(1.0, 0.0))
    args_us = (time.perf_counter() - t0) / 200 * 1e6
    print(f"host time per call, {M}x{N}x{K} f16, median of 7 rounds of {CALLS} calls:")
    print_table(["call", "us/call", "ratio to torch.matmul"],
                [["tilecraft operation.run(args)", f"{tilecraft_us:.1f}",
                  f"{tilecraft_us / torch_us:.2f}"],
                 ["torch.matmul(a, b, out=d)", f"{torch_us:.1f}", "1.00"],
                 ["tilecraft GemmArguments(...) (once per problem)", f"{args_us:.1f}",
                  f"{args_us / torch_us:.2f}"]])
    return 0 if tilecraft_us <= torch_us else 1


if __name__ == "__main__":
    sys.exit(main())
