"""Cold compile of one SM90 GEMM, from its description to a loaded module (and, where an SM90 GPU
and torch are present, to a first verified run), in a fresh process on a fresh, empty cache; then
the same for eight different bf16 kernels requested together (as a tuning run does).

  python bench/bench_sm90_compile.py [--kernels 1,8]

The child process imports tilecraft (and torch, and creates its operands and the CUDA context,
when it has a GPU) before the clock starts; the clock runs from constructing the MathInstruction
through compiler.add_module (one nvcc job: the module is not in the new TILECRAFT_CACHE_DIR) to
the end of the first op.run (synchronized). Without an SM90 GPU it stops after add_module. Works
on a machine without a GPU or torch (only nvcc and the CUTLASS headers are needed).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from build_info import commit, cores, nvcc_version

# The kernel: bf16 TN, 128x256x64 tile, cluster 2x1, cooperative, persistent (bench_sm90_gemm k1).
CHILD = r"""
import json, sys, time
t_import = time.perf_counter()
import tilecraft as cutlass
t_import = time.perf_counter() - t_import
M = N = K = 1024
torch = None
gpu = None
try:
    import torch
    if torch.cuda.is_available() and torch.cuda.get_device_capability(0)[0] == 9:
        gpu = torch.cuda.get_device_name(0)
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        d = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        torch.cuda.synchronize()
except Exception as exc:  # no torch, or a torch without a usable CUDA: time add_module only
    print(f"note: no GPU run ({type(exc).__name__}: {exc})", file=sys.stderr)
    gpu = None
t0 = time.perf_counter()
BF = cutlass.bfloat16
math = cutlass.MathInstruction([64, 256, 16], BF, BF, cutlass.float32, cutlass.OpClass.TensorOp,
                               cutlass.MathOperation.multiply_add)
tile = cutlass.TileDescription(
    [128, 256, 64], 0, None, math, cluster_shape=[2, 1, 1],
    kernel_schedule=cutlass.KernelScheduleType.TmaWarpSpecializedCooperative,
    epilogue_schedule=cutlass.EpilogueScheduleType.Auto,
    tile_scheduler=cutlass.TileSchedulerType.Persistent)
def describe(shape, cluster, schedule, n_inst):
    math = cutlass.MathInstruction([64, n_inst, 16], BF, BF, cutlass.float32,
                                   cutlass.OpClass.TensorOp, cutlass.MathOperation.multiply_add)
    tile = cutlass.TileDescription(shape, 0, None, math, cluster_shape=cluster,
                                   kernel_schedule=schedule,
                                   epilogue_schedule=cutlass.EpilogueScheduleType.Auto,
                                   tile_scheduler=cutlass.TileSchedulerType.Persistent)
    return cutlass.GemmOperationUniversal(
        arch=90, tile_description=tile, A=cutlass.TensorDescription(BF, cutlass.RowMajor, 8),
        B=cutlass.TensorDescription(BF, cutlass.ColumnMajor, 8),
        C=cutlass.TensorDescription(BF, cutlass.RowMajor, 8),
        epilogue_functor=cutlass.LinearCombination(BF, 8, cutlass.float32, cutlass.float32),
        swizzling_functor=cutlass.IdentitySwizzle1)
COOP = cutlass.KernelScheduleType.TmaWarpSpecializedCooperative
PING = cutlass.KernelScheduleType.TmaWarpSpecializedPingpong
# The first is the lone kernel; all eight form one tuning-style request.
CONFIGS = [([128, 256, 64], [2, 1, 1], COOP, 256), ([128, 128, 64], [1, 1, 1], COOP, 128),
           ([128, 128, 64], [2, 1, 1], COOP, 128), ([256, 128, 64], [1, 1, 1], COOP, 128),
           ([64, 128, 64], [1, 1, 1], PING, 128), ([64, 256, 64], [1, 1, 1], PING, 256),
           ([128, 256, 64], [1, 1, 1], COOP, 256), ([128, 64, 64], [1, 1, 1], COOP, 64)]
ops = [describe(*config) for config in CONFIGS[:int(sys.argv[1])]]
op = ops[0]
cutlass.compiler.add_module(ops)
t_compiled = time.perf_counter()
out = {"kernel": op.procedural_name(), "kernels": len(ops), "import_s": t_import,
       "describe_to_loaded_s": t_compiled - t0, "gpu": gpu}
if gpu is not None:
    args = cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K),
                                 A=a, B=w.t(), C=None, D=d, output_op=op.epilogue_type(1.0, 0.0))
    op.run(args)
    torch.cuda.synchronize()
    t_run = time.perf_counter()
    ref = a.float() @ w.float().t()
    out["describe_to_first_run_s"] = t_run - t0
    out["max_rel_err"] = ((d.float() - ref).abs().max() / ref.abs().max()).item()
print("CHILD-RESULT " + json.dumps(out))
"""


def main():
    counts = [1, 8]
    if "--kernels" in sys.argv:
        counts = [int(c) for c in sys.argv[sys.argv.index("--kernels") + 1].split(",")]
    status = 0
    seconds = {}
    for count in counts:
        status |= measure(count, seconds)
    if 1 in seconds and 8 in seconds:
        print(f"RESULT eight_kernels_over_one={seconds[8] / seconds[1]:.2f} "
              f"(8 kernels together {seconds[8]:.1f} s, one {seconds[1]:.1f} s)")
    return status


def measure(count, seconds):
    total, usable = cores()
    print(f"# SM90 cold compile: {count} GEMM(s) from description to loaded module (and first run)")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, commit {commit()}, "
          f"python {sys.version.split()[0]}, nvcc: {nvcc_version()}")
    print(f"cores: {total} (usable by this process: {usable}), "
          f"TILECRAFT_COMPILE_JOBS={os.environ.get('TILECRAFT_COMPILE_JOBS', 'default')}")
    cache = tempfile.mkdtemp(prefix="tilecraft-cold-")
    env = dict(os.environ, TILECRAFT_CACHE_DIR=cache)
    env.pop("TILECRAFT_QUIET", None)
    t0 = time.perf_counter()
    try:
        child = subprocess.run([sys.executable, "-c", CHILD, str(count)], env=env,
                               capture_output=True,
                               text=True, timeout=1800)
    finally:
        wall = time.perf_counter() - t0
        shutil.rmtree(cache, ignore_errors=True)
    compiles = [line for line in child.stderr.splitlines() if "] compiled " in line]
    result = None
    for line in child.stdout.splitlines():
        if line.startswith("CHILD-RESULT "):
            result = json.loads(line[len("CHILD-RESULT "):])
    if child.returncode != 0 or result is None:
        print(f"RESULT: FAILED (child exit {child.returncode}, {wall:.1f} s)")
        print(child.stdout[-3000:])
        print(child.stderr[-5000:])
        return 1
    print(f"kernel: {result['kernel']}")
    print(f"module builds seen in the child's progress output: {len(compiles)}"
          + "".join(f"\n  {line.strip()}" for line in compiles))
    seconds[count] = result["describe_to_loaded_s"]
    line = (f"RESULT kernels={count} cold_compile_s={result['describe_to_loaded_s']:.1f} "
            f"(description -> add_module -> module loaded) cores={total} usable_cores={usable}")
    if result["gpu"] is not None:
        err = result["max_rel_err"]
        ok = err <= 1e-2
        line += (f" first_run_s={result['describe_to_first_run_s']:.1f} "
                 f"(description -> first verified run on {result['gpu']}, max rel err {err:.1e}"
                 f"{'' if ok else ' WRONG'})")
    else:
        line += " first_run_s=n/a (no SM90 GPU / torch in this process: add_module only)"
    line += f" child_wall_s={wall:.1f} import_tilecraft_s={result['import_s']:.2f}"
    print(line)
    if not compiles:
        print("WARNING: no compile on a fresh cache; the figure is not a cold compile")
    if result["gpu"] is not None and not result["max_rel_err"] <= 1e-2:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
