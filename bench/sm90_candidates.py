"""Shared pieces of the SM90 benchmarks (bench_sm90_gemm.py, bench_sm90_fused.py,
bench_sm90_fp8.py): the fixed candidate kernels, one add_module call for all of them, the GPU
check, timing and result checks.

Every bench script compiles the candidates of all three scripts in ONE add_module call by default
(one parallel wave of nvcc jobs on a 16-core machine, about the time of compiling its own), so
the scripts that run after it find their kernels in the cache. Pass --own-only to a script to
compile only its own candidates (quicker on a machine with few cores).

Timing: CUDA events around groups of back-to-back launches, median over the groups. Before each
group the GPU is held by torch.cuda._sleep long enough for the host to queue the whole group, so
the figure is GPU time (per-launch host time does not leak in, for tilecraft and torch alike).
Inputs are not flushed from L2 between launches, for either side.
"""

import datetime
import math
import os
import statistics
import sys
import time

# ------------------------------------------------------------------------------------------------
# Environment checks (no torch or tilecraft import at module level: the skip path must work on a
# machine that has neither a GPU nor torch).


def skip_reason():
    """None when an SM90 (compute capability 9.x) GPU is usable through torch, else why not."""
    try:
        import torch
    except Exception as exc:  # noqa: BLE001 - any import failure means: nothing to measure with
        return f"torch is not importable ({type(exc).__name__}: {exc})"
    if not torch.cuda.is_available():
        return "no CUDA GPU visible to torch"
    major, minor = torch.cuda.get_device_capability(0)
    if major != 9:
        return (f"GPU 0 ({torch.cuda.get_device_name(0)}) has compute capability {major}.{minor}; "
                f"these SM90 benchmarks need 9.x (Hopper)")
    return None


def skip_if_no_sm90(script):
    """Prints 'skipped: <reason>' and exits 0 when there is nothing to measure on."""
    reason = skip_reason()
    if reason is not None:
        print(f"{script}: skipped: {reason}")
        sys.exit(0)


def header(title):
    """The device / torch / date / commit header (the device line is bench/common.py's). Also
    turns TF32 off so that the f32 references are full f32 GEMMs."""
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False

    from common import device_line

    print(f"# {title}")
    print(device_line())
    print(f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
          f"CUDA (torch) {torch.version.cuda}, cores {os.cpu_count()}, "
          f"TILECRAFT_COMPILE_JOBS={os.environ.get('TILECRAFT_COMPILE_JOBS', 'default')}")
    print("timing: CUDA events, median of >= 10 groups of back-to-back launches queued behind "
          "torch.cuda._sleep (GPU time), L2 not flushed, same for tilecraft and torch"
          + ("" if hasattr(torch.cuda, "_sleep") else
             " [torch.cuda._sleep missing: launches are not pre-queued]"))
    sys.stdout.flush()


# ------------------------------------------------------------------------------------------------
# Candidate kernels. Each entry: (id, operation). Built lazily so that importing this module
# needs no tilecraft.


def _sm90_op(element, inst_k, shape, cluster, schedule, *, scheduler=None, swizzle=None,
             math_operation=None, epilogue=None, out_element=None, out_layout=None):
    import tilecraft as cutlass

    math_operation = math_operation or cutlass.MathOperation.multiply_add
    out_element = out_element or cutlass.bfloat16
    math_inst = cutlass.MathInstruction([64, shape[1], inst_k], element, element, cutlass.float32,
                                        cutlass.OpClass.TensorOp, math_operation)
    tile = cutlass.TileDescription(
        shape, 0, None, math_inst, cluster_shape=cluster, kernel_schedule=schedule,
        epilogue_schedule=cutlass.EpilogueScheduleType.Auto,
        tile_scheduler=scheduler or cutlass.TileSchedulerType.Persistent)
    align_ab = 128 // (8 if element in (cutlass.float8_e4m3, cutlass.float8_e5m2) else 16)
    A = cutlass.TensorDescription(element, cutlass.RowMajor, align_ab)
    B = cutlass.TensorDescription(element, cutlass.ColumnMajor, align_ab)
    C = cutlass.TensorDescription(out_element, out_layout or cutlass.RowMajor, 8)
    if epilogue is None:
        epilogue = cutlass.LinearCombination(out_element, 8, cutlass.float32, cutlass.float32)
    return cutlass.GemmOperationUniversal(arch=90, tile_description=tile, A=A, B=B, C=C,
                                          epilogue_functor=epilogue,
                                          swizzling_functor=swizzle or cutlass.IdentitySwizzle1)


def label(op):
    """Tile, cluster and schedule, plus the swizzle where it is not IdentitySwizzle1."""
    import tilecraft as cutlass

    name = op.tile_description.procedural_name()
    sw = op.swizzling_functor
    if sw != cutlass.IdentitySwizzle1:
        name += "_" + str(sw).split(".")[-1].replace("IdentitySwizzle", "swz")
    if op.tile_description.math_instruction.math_operation == \
            cutlass.MathOperation.multiply_add_fast_accum:
        name += "_fastaccum"
    return name


# The ids of the stream-K kernels in the GEMM candidates (split-K variants run on them).
STREAM_K_ID = "k8"
STREAM_K_IDS = ("k8", "k10", "k14", "k16", "s3", "s4")


def gemm_candidates():
    """bf16 TN GEMMs, bf16 output, LinearCombination: the fixed list of bench_sm90_gemm.py."""
    import tilecraft as cutlass

    BF = cutlass.bfloat16
    K = cutlass.KernelScheduleType
    coop, pp = K.TmaWarpSpecializedCooperative, K.TmaWarpSpecializedPingpong
    specs = [
        ("k1", [128, 256, 64], [2, 1, 1], coop, {}),
        ("k2", [256, 128, 64], [2, 1, 1], coop, {}),
        ("k3", [128, 256, 64], [1, 2, 1], coop, {}),
        ("k4", [128, 128, 64], [1, 1, 1], pp, {}),
        ("k5", [128, 128, 64], [2, 1, 1], pp, {}),
        ("k6", [64, 128, 64], [1, 1, 1], pp, {}),
        ("k7", [64, 256, 64], [1, 1, 1], pp, {}),
        (STREAM_K_ID, [128, 128, 64], [1, 1, 1], coop,
         {"scheduler": cutlass.TileSchedulerType.StreamK}),
        ("k9", [128, 256, 64], [2, 1, 1], coop, {"swizzle": cutlass.IdentitySwizzle8}),
        ("k10", [128, 256, 64], [2, 1, 1], coop, {"scheduler": cutlass.TileSchedulerType.StreamK}),
        ("k11", [64, 32, 128], [1, 1, 1], pp, {}),
        ("k12", [128, 128, 64], [2, 1, 1], coop, {}),
        ("k13", [64, 64, 128], [1, 1, 1], pp, {}),
        ("k14", [128, 64, 64], [1, 1, 1], coop, {"scheduler": cutlass.TileSchedulerType.StreamK}),
        ("k15", [128, 64, 64], [1, 1, 1], coop, {}),
        ("k16", [128, 64, 128], [1, 1, 1], coop, {"scheduler": cutlass.TileSchedulerType.StreamK}),
        ("k17", [256, 128, 64], [2, 1, 1], coop, {"swizzle": cutlass.IdentitySwizzle8}),
    ]
    return [(cid, _sm90_op(BF, 16, shape, cluster, schedule, **kw))
            for cid, shape, cluster, schedule, kw in specs]


def swapped_gemm_candidates():
    """bf16 TN GEMMs with a column-major D, for skinny M: D = A B is computed as
    D^T = B^T A^T (A' = w, B' = A^T, D' = D^T, all three the same memory as the caller's), so
    the few rows of A become the narrow N side of the tile. cuBLAS swaps skinny problems the
    same way."""
    import tilecraft as cutlass

    BF = cutlass.bfloat16
    K = cutlass.KernelScheduleType
    coop, pp = K.TmaWarpSpecializedCooperative, K.TmaWarpSpecializedPingpong
    stream_k = {"scheduler": cutlass.TileSchedulerType.StreamK}
    specs = [
        ("s1", [64, 16, 128], [1, 1, 1], pp, {}),
        ("s2", [64, 32, 128], [1, 1, 1], pp, {}),
        ("s3", [128, 16, 128], [1, 1, 1], coop, stream_k),
        ("s4", [128, 32, 128], [1, 1, 1], coop, stream_k),
    ]
    return [(cid, _sm90_op(BF, 16, shape, cluster, schedule, out_layout=cutlass.ColumnMajor,
                           **kw))
            for cid, shape, cluster, schedule, kw in specs]


def fused_candidates():
    """bf16 GEMM + per-column (N) bf16 bias + GELU, bf16 output: bench_sm90_fused.py.
    Returns {"erf": [(id, op)], "tanh": [(id, op)]}: GELU with erf (torch's default) and its
    tanh approximation (torch's approximate='tanh')."""
    import tilecraft as cutlass

    BF = cutlass.bfloat16
    K = cutlass.KernelScheduleType
    coop, pp = K.TmaWarpSpecializedCooperative, K.TmaWarpSpecializedPingpong

    def epilogue(activation):
        return cutlass.LinearCombinationGeneric(activation, BF, 8, cutlass.float32,
                                                cutlass.float32, bias="column", element_bias=BF)

    swz8 = cutlass.IdentitySwizzle8
    specs = [
        ("1", [128, 256, 64], [2, 1, 1], coop, None),
        ("2", [256, 128, 64], [2, 1, 1], coop, None),
        ("3", [128, 128, 64], [2, 1, 1], pp, None),
        ("4", [128, 256, 64], [1, 2, 1], coop, None),
        ("5", [64, 256, 64], [2, 1, 1], pp, None),
        ("6", [256, 128, 64], [2, 1, 1], coop, swz8),
        ("7", [128, 256, 64], [2, 1, 1], coop, swz8),
    ]
    out = {}
    for form, prefix, activation in (("erf", "f", cutlass.gelu), ("tanh", "t", cutlass.gelu_tanh)):
        out[form] = [(prefix + cid, _sm90_op(BF, 16, shape, cluster, schedule, swizzle=swizzle,
                                             epilogue=epilogue(activation)))
                     for cid, shape, cluster, schedule, swizzle in specs]
    return out


def fp8_candidates():
    """e4m3 x e4m3 -> f32 accumulate, bf16 output, per-tensor scales: bench_sm90_fp8.py.
    Returns {"default": [(id, op)], "fast_accum": [(id, op)]}."""
    import tilecraft as cutlass

    E4 = cutlass.float8_e4m3
    K = cutlass.KernelScheduleType
    coop, pp = K.TmaWarpSpecializedCooperative, K.TmaWarpSpecializedPingpong
    # Without fast accumulation the mainloop keeps a second set of accumulators (it promotes
    # partial sums to f32 every few MMAs), so tiles whose accumulators fill the registers spill.
    specs = [
        ("1", [128, 256, 128], [2, 1, 1], coop, None),
        ("2", [128, 128, 128], [2, 1, 1], pp, None),
        ("3", [128, 128, 128], [1, 2, 1], coop, None),
        ("4", [128, 128, 128], [2, 1, 1], coop, None),
        ("5", [256, 128, 128], [2, 1, 1], coop, None),
    ]
    # With fast accumulation nothing spills, so larger per-warpgroup tiles are worth a try.
    fast_only = [
        ("6", [128, 256, 128], [1, 2, 1], coop, None),
        ("7", [64, 256, 128], [2, 1, 1], pp, None),
        ("8", [128, 256, 128], [2, 1, 1], coop, cutlass.IdentitySwizzle8),
    ]
    out = {}
    for mode, prefix, math_op, extra in (
            ("default", "p", cutlass.MathOperation.multiply_add, []),
            ("fast_accum", "q", cutlass.MathOperation.multiply_add_fast_accum, fast_only)):
        out[mode] = [(prefix + cid, _sm90_op(
            E4, 32, shape, cluster, schedule, math_operation=math_op, swizzle=swizzle,
            epilogue=cutlass.LinearCombination(cutlass.bfloat16, 8, cutlass.float32,
                                               cutlass.float32, scales=True)))
            for cid, shape, cluster, schedule, swizzle in specs + extra]
    return out


def build_candidates(builder, what):
    """Calls a *_candidates() builder; a description the library rejects is reported, not fatal."""
    try:
        return builder(), None
    except Exception as exc:  # noqa: BLE001
        message = f"{type(exc).__name__}: {exc}"
        print(f"ERROR describing the {what} candidates: {message}")
        return None, message


def all_candidate_ops():
    """Every candidate of the three SM90 bench scripts (for the one shared add_module call)."""
    ops = []
    for builder, what in ((gemm_candidates, "GEMM"), (swapped_gemm_candidates, "swapped GEMM"),
                          (fused_candidates, "fused"), (fp8_candidates, "fp8")):
        built, _ = build_candidates(builder, what)
        if built is None:
            continue
        if isinstance(built, dict):
            for entries in built.values():
                ops += [op for _, op in entries]
        else:
            ops += [op for _, op in built]
    return ops


def compile_ops(own_ops, own_only):
    """One add_module call over the candidates (all scripts' unless own_only). Returns
    {procedural_name: error text} for this script's kernels that did not compile."""
    import tilecraft as cutlass

    ops = list(own_ops)
    if not own_only:
        names = {op.procedural_name() for op in ops}
        ops += [op for op in all_candidate_ops() if op.procedural_name() not in names]
    t0 = time.perf_counter()
    error = None
    try:
        cutlass.compiler.add_module(ops)
    except Exception as exc:  # noqa: BLE001 - one bad kernel must not stop the others
        error = f"{type(exc).__name__}: {exc}"
    elapsed = time.perf_counter() - t0
    scope = "this script's" if own_only else "all SM90 bench"
    print(f"compile: add_module of {len(ops)} kernels ({scope} candidates) took {elapsed:.1f} s")
    failed = {}
    if error is not None:
        print(f"compile: add_module raised (other kernels were still built): {error}")
    for op in own_ops:
        if not op.is_compiled():
            name = op.procedural_name()
            if error is None:
                why = "add_module raised no error, yet the kernel is not loaded"
            elif name in error:
                why = error
            else:
                why = ("add_module reports only its first failure (quoted above), which is "
                       "another kernel's")
            failed[name] = why
            print(f"compile: NOT compiled, left out of the measurements: {name}")
    sys.stdout.flush()
    return failed


# ------------------------------------------------------------------------------------------------
# Timing and checks.

# At least the SM clock of an H100 / H200 (1.98 GHz boost) in cycles per microsecond, so that a
# torch.cuda._sleep lasts at least as long as asked.
_CYCLES_PER_US = 2000


def time_gpu(fn, target_ms=40.0, min_reps=10, max_reps=60, group_ms=0.3):
    """Median milliseconds of GPU time per call of fn: groups of `inner` back-to-back calls
    (inner chosen so a group lasts >= group_ms), between CUDA events, each group queued behind a
    torch.cuda._sleep that outlasts the host's enqueueing of the group. A group whose enqueueing
    took longer than the sleep (so the GPU may have waited for the host) is discarded and the
    sleep widened. Repeats: enough for about target_ms of measured time, within [min, max]."""
    import torch

    sleep = getattr(torch.cuda, "_sleep", None)
    fn()
    fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    h0 = time.perf_counter()
    start.record()
    for _ in range(3):
        fn()
    end.record()
    host_us = (time.perf_counter() - h0) / 3 * 1e6
    end.synchronize()
    estimate_ms = max(start.elapsed_time(end) / 3, 1e-4)
    inner = min(200, max(1, math.ceil(group_ms / estimate_ms)))
    reps = min(max_reps, max(min_reps, round(target_ms / (inner * estimate_ms))))
    sleep_us = 1.5 * host_us * inner + 50.0
    times = []
    attempts = 0
    while len(times) < reps and attempts < 3 * reps:
        attempts += 1
        torch.cuda.synchronize()
        if sleep is not None:
            sleep(int(sleep_us * _CYCLES_PER_US))
        h0 = time.perf_counter()
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        enqueue_us = (time.perf_counter() - h0) * 1e6
        end.synchronize()
        if sleep is not None and enqueue_us > sleep_us:
            sleep_us = 2.0 * enqueue_us
            continue
        times.append(start.elapsed_time(end) / inner)
    if not times:
        raise RuntimeError("timing: the host never got ahead of the GPU")
    return statistics.median(times)


def tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


def max_rel_error(out, ref):
    """max |out - ref| / max |ref| (inf when out holds NaN/Inf)."""
    import torch

    out = out.float()
    if not bool(torch.isfinite(out).all()):
        return float("inf")
    diff = (out - ref).abs().max().item()
    scale = ref.abs().max().item()
    err = diff / scale if scale > 0 else diff
    return err if math.isfinite(err) else float("inf")


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def verdict(ok):
    return "PASS" if ok else "FAIL"


def gpu_warmup(seconds=0.5):
    """Brings the GPU to its working clocks before the first measurement."""
    import torch

    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(a)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(10):
            torch.matmul(a, a, out=out)
        torch.cuda.synchronize()
    del a, out


def main():
    """`python bench/sm90_candidates.py`: lists (and with --compile, compiles) the candidates."""
    ops = all_candidate_ops()
    for op in ops:
        print(f"{label(op):40s} {op.procedural_name()}")
    if "--compile" in sys.argv:
        compile_ops(ops, own_only=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
