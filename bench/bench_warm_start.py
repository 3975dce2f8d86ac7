"""Process start-up with a warm cache, and racing processes on a cold one.

1. A first process compiles a kernel into a fresh cache.
2. A second process running the same operation must compile nothing and reach its first launch
   within 100 ms of `import tilecraft` (torch and the CUDA context are up before the import, as in
   any program that already holds its tensors).
3. Four processes started together on a new kernel and a fresh cache compile it once.
"""

import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import sys, time
import torch
a = torch.randint(-3, 4, (256, 128), device="cuda", dtype=torch.float16)
b = torch.randint(-3, 4, (128, 192), device="cuda", dtype=torch.float16)
d = torch.full((256, 192), float("nan"), device="cuda", dtype=torch.float16)
torch.cuda.synchronize()
t0 = time.perf_counter()
import tilecraft as cutlass
from tilecraft import *
stages = int(sys.argv[1])
math = MathInstruction([16, 8, 16], cutlass.float16, cutlass.float16, cutlass.float32,
                       cutlass.OpClass.TensorOp, MathOperation.multiply_add)
tile = TileDescription([64, 64, 32], stages, [2, 2, 1], math)
t = TensorDescription(cutlass.float16, cutlass.RowMajor, 8)
op = GemmOperationUniversal(80, tile, t, t, t,
                            LinearCombination(cutlass.float16, 8, cutlass.float32, cutlass.float32))
cutlass.compiler.add_module([op])
args = GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(256, 192, 128), A=a, B=b,
                     C=d, D=d, output_op=op.epilogue_type(1.0, 0.0))
op.run(args)
t1 = time.perf_counter()
args.sync()
assert torch.equal(d, (a.float() @ b.float()).half()), "wrong result"
print(f"first_launch_ms={(t1 - t0) * 1e3:.1f}")
"""


def run_child(stages, cache, background=False):
    env = dict(os.environ, TILECRAFT_CACHE_DIR=cache)
    cmd = [sys.executable, "-c", CHILD, str(stages)]
    if background:
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    return subprocess.run(cmd, env=env, capture_output=True, text=True)


def compiles(stderr):
    return sum(1 for line in stderr.splitlines() if "] compiled " in line)


def main():
    ok = True
    cache = tempfile.mkdtemp(prefix="tilecraft-warm-")
    t0 = time.perf_counter()
    first = run_child(3, cache)
    print(f"1. cold process: {compiles(first.stderr)} compile(s), {time.perf_counter() - t0:.1f} s "
          f"wall; {first.stdout.strip()}")
    ok &= first.returncode == 0
    times = []
    for _ in range(3):
        second = run_child(3, cache)
        ok &= second.returncode == 0 and compiles(second.stderr) == 0
        times.append(float(second.stdout.split("first_launch_ms=")[1]))
    best = min(times)
    print(f"2. warm processes: 0 compiles expected, got {compiles(second.stderr)}; import -> first "
          f"launch {', '.join(f'{t:.1f}' for t in times)} ms (target < 100 ms)")
    ok &= best < 100

    race_cache = tempfile.mkdtemp(prefix="tilecraft-race-")
    procs = [run_child(4, race_cache, background=True) for _ in range(4)]
    results = [p.communicate() for p in procs]
    total = sum(compiles(err) for _, err in results)
    print(f"3. four racing processes on a cold cache: {total} compile(s) (expected 1); exit codes "
          f"{[p.returncode for p in procs]}")
    ok &= total == 1 and all(p.returncode == 0 for p in procs)
    if not ok:
        for out, err in results:
            print(out, err[-2000:])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
