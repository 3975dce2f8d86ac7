"""Cold compile of each convolution kernel issue 31 added, one kernel per fresh process on a fresh,
empty cache: from its description through compiler.add_module to the loaded module (one nvcc job;
its host and device halves run side by side). The issue's target is 20 s each on the GPU machine.

  python bench/bench_conv_compile.py [--kernels KEY,...]

Works without a GPU or torch (nvcc and the CUTLASS headers are enough). Keys: persistent_fprop
(SM90 cooperative f16 128x128x64), persistent_fprop_pp_bias_relu (SM90 ping-pong bf16 64x128x64,
bias + relu), persistent_wgrad_streamk (SM90 cooperative f16 128x64x64 on the stream-K
scheduler), persistent_dgrad_pp (SM90 ping-pong f16 64x64x64), persistent_fprop_graph (the
cooperative fprop with a custom epilogue: bias, relu, a residual read as the source C, per-channel
sums), direct_depthwise (CUDA cores, f16,
64 pixels x 64 channels), single_group_n32 (SM80 tensor ops, f16 128x32x32, one group of 32 per
tile); for comparison, baseline_convuniversal_fprop (CUTLASS's own SM90 ConvUniversal, f16
128x128x64, not a kernel of the issue).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from build_info import commit, cores, nvcc_version

CHILD = r"""
import json, sys, time
import tilecraft as cutlass
key = sys.argv[1]
t0 = time.perf_counter()
F16, BF16, F32 = cutlass.float16, cutlass.bfloat16, cutlass.float32
NHWC = cutlass.TensorNHWC
Op, Alg, Stride = cutlass.conv.Operator, cutlass.conv.IteratorAlgorithm, cutlass.conv.StrideSupport
COOP = cutlass.KernelScheduleType.TmaWarpSpecializedCooperative
PP = cutlass.KernelScheduleType.TmaWarpSpecializedPingpong


def sm90(kind, el, tile, schedule, scheduler="Persistent", bias=False, activation=None):
    math = cutlass.MathInstruction([64, tile[1], 16], el, el, F32, cutlass.OpClass.TensorOp,
                                   cutlass.MathOperation.multiply_add)
    t = cutlass.TileDescription(list(tile), 0, None, math, kernel_schedule=schedule,
                                tile_scheduler=getattr(cutlass.TileSchedulerType, scheduler))
    fusions = {"bias": "column", "element_bias": el} if bias else {}
    epilogue = (cutlass.LinearCombinationGeneric(getattr(cutlass, activation)(F32), el, 8, F32,
                                                 F32, **fusions)
                if activation else cutlass.LinearCombination(el, 8, F32, F32, **fusions))
    stride = Stride.Unity if kind == Op.dgrad else Stride.Strided
    return cutlass.Conv2dOperation(kind, Alg.optimized, 90, t, cutlass.TensorDescription(el, NHWC, 8),
                                   cutlass.TensorDescription(el, NHWC, 8),
                                   cutlass.TensorDescription(el, NHWC, 8), stride, epilogue,
                                   cutlass.IdentitySwizzle1)


# The cooperative fprop with a custom epilogue, built node by node (the child runs from -c,
# where the tracer cannot read a function's source): D = relu(acc + bias) + residual, and D's
# sum per output channel.
def graph_fprop():
    core = cutlass._core
    g = core.EpilogueGraph()
    acc = g.accumulator()
    bias = g.tensor("bias", cutlass.DataType.f32, core.Broadcast.column)
    residual = g.tensor("residual", cutlass.DataType.f16, core.Broadcast.full)
    z = g.binary(core.BinaryOp.add, acc, bias)
    y = g.activation(core.Activation.relu, z)
    d = g.binary(core.BinaryOp.add, y, residual)
    g.store(d, "D", cutlass.DataType.f16)
    g.reduce(d, core.ReduceOp.sum, core.ReduceAxis.column, "channel_sum", cutlass.DataType.f32)
    op = sm90(Op.fprop, F16, (128, 128, 64), COOP)
    return cutlass.Conv2dOperation(Op.fprop, Alg.optimized, 90, op.tile_description, op.A, op.B,
                                   op.C, Stride.Strided, g, cutlass.IdentitySwizzle1)


def sm80(algorithm, tile, warps, stages, op_class, inst, align_b, group_mode, acc=F32):
    math = cutlass.MathInstruction(list(inst), F16, F16, acc, op_class,
                                   cutlass.MathOperation.multiply_add)
    t = cutlass.TileDescription(list(tile), stages, list(warps), math)
    return cutlass.Conv2dOperation(Op.fprop, algorithm, 80, t, cutlass.TensorDescription(F16, NHWC, 8),
                                   cutlass.TensorDescription(F16, NHWC, align_b),
                                   cutlass.TensorDescription(F16, NHWC, 8), Stride.Strided,
                                   cutlass.LinearCombination(F16, 8, F32, F32),
                                   cutlass.IdentitySwizzle1, group_mode=group_mode)


MAKE = {
    "persistent_fprop": lambda: sm90(Op.fprop, F16, (128, 128, 64), COOP),
    "persistent_fprop_pp_bias_relu": lambda: sm90(Op.fprop, BF16, (64, 128, 64), PP, bias=True,
                                                  activation="relu"),
    "persistent_wgrad_streamk": lambda: sm90(Op.wgrad, F16, (128, 64, 64), COOP, "StreamK"),
    "persistent_dgrad_pp": lambda: sm90(Op.dgrad, F16, (64, 64, 64), PP),
    "persistent_fprop_graph": graph_fprop,
    "baseline_convuniversal_fprop": lambda: sm90(
        Op.fprop, F16, (128, 128, 64), cutlass.KernelScheduleType.TmaWarpSpecialized),
    "direct_depthwise": lambda: sm80(Alg.direct, (64, 64, 1), (8, 1, 1), 2, cutlass.OpClass.Simt,
                                     (1, 1, 1), 1, cutlass.conv.GroupMode.Depthwise),
    "single_group_n32": lambda: sm80(Alg.optimized, (128, 32, 32), (4, 1, 1), 5,
                                     cutlass.OpClass.TensorOp, (16, 8, 16), 8,
                                     cutlass.conv.GroupMode.SingleGroup),
}
op = MAKE[key]()
cutlass.compiler.add_module([op])
print("CHILD-RESULT " + json.dumps({"kernel": op.procedural_name(),
                                    "seconds": time.perf_counter() - t0}))
"""

KEYS = ["persistent_fprop", "persistent_fprop_pp_bias_relu", "persistent_wgrad_streamk",
        "persistent_dgrad_pp", "persistent_fprop_graph", "direct_depthwise", "single_group_n32",
        "baseline_convuniversal_fprop"]
TARGET_S = 20.0


def measure(key):
    """(seconds, kernel name), or (None, why) when the child failed."""
    cache = tempfile.mkdtemp(prefix="tilecraft-cold-")
    env = dict(os.environ, TILECRAFT_CACHE_DIR=cache)
    try:
        child = subprocess.run([sys.executable, "-c", CHILD, key], env=env, capture_output=True,
                               text=True, timeout=1800)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    for line in child.stdout.splitlines():
        if line.startswith("CHILD-RESULT "):
            result = json.loads(line[len("CHILD-RESULT "):])
            return result["seconds"], result["kernel"]
    return None, f"child exit {child.returncode}: {child.stderr[-3000:]}"


def main():
    keys = KEYS
    if "--kernels" in sys.argv:
        keys = sys.argv[sys.argv.index("--kernels") + 1].split(",")
        unknown = [k for k in keys if k not in KEYS]
        if unknown:
            print(f"--kernels: expected keys among {', '.join(KEYS)}; got {', '.join(unknown)}")
            return 2
    total, usable = cores()
    print("# Cold compile of issue 31's convolution kernels, one per fresh process and cache")
    print(f"date: {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, commit {commit()}, "
          f"python {sys.version.split()[0]}, nvcc: {nvcc_version()}")
    print(f"cores: {total} (usable: {usable}), "
          f"TILECRAFT_COMPILE_JOBS={os.environ.get('TILECRAFT_COMPILE_JOBS', 'default')}")
    status = 0
    for key in keys:
        seconds, text = measure(key)
        if seconds is None:
            print(f"RESULT {key}: FAILED ({text})")
            status = 1
            continue
        verdict = ("a baseline, no target" if key.startswith("baseline_") else
                   f"{'within' if seconds <= TARGET_S else 'OVER'} the {TARGET_S:.0f} s target")
        print(f"RESULT {key}: {seconds:.1f} s cold ({verdict}) {text}")
    return status


if __name__ == "__main__":
    sys.exit(main())
