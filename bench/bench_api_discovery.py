"""Discovery speed of tilecraft.api (seed 003): get_kernels() listing every kernel, and
get_kernels(args) ranking the kernels that support an ordinary GEMM, for the GEMM suite's shapes
(bf16, A row-major, B = w.t() column-major, bf16 out). Prints the top-ranked kernel per shape
with the model's estimate. Targets (issue 4): >= 10,000 SM90 kernels listed in under 1 s;
get_kernels(args) under 20 ms.

  python bench/bench_api_discovery.py
"""

import statistics
import sys
import time

SHAPES = [
    (8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (8192, 28672, 4096),
    (4096, 14336, 4096), (128, 8192, 8192), (16, 4096, 4096), (1000, 1000, 1000),
    (3000, 5000, 7000), (512, 512, 16384),
]


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return result, statistics.median(times), max(times)


def main():
    try:
        import torch
    except Exception as exc:  # noqa: BLE001
        print(f"bench_api_discovery: skipped: torch is not importable ({exc})")
        return 0
    if not torch.cuda.is_available():
        print("bench_api_discovery: skipped: no CUDA GPU visible to torch (GemmArguments take "
              "CUDA tensors)")
        return 0
    import tilecraft.api as cutlass_api

    major, minor = torch.cuda.get_device_capability(0)
    print(f"# tilecraft.api discovery on {torch.cuda.get_device_name(0)} (cc {major}{minor})")
    t0 = time.perf_counter()
    first = cutlass_api.get_kernels()
    cold = time.perf_counter() - t0
    everything, warm, worst = timed(cutlass_api.get_kernels, 5)
    sm90 = sum(1 for k in everything if k._native.metadata.min_cc == 90)
    print(f"get_kernels(): {len(first)} kernels ({sm90} SM90) first call {cold * 1e3:.1f} ms "
          f"(builds the spaces), then median {warm * 1e3:.1f} ms, max {worst * 1e3:.1f} ms "
          f"(target: >= 10000 SM90 in < 1000 ms: "
          f"{'PASS' if sm90 >= 10000 and cold < 1.0 else 'FAIL'})")
    slowest = 0.0
    for m, n, k in SHAPES:
        A = torch.empty(m, k, device="cuda", dtype=torch.bfloat16)
        B = torch.empty(n, k, device="cuda", dtype=torch.bfloat16).t()
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        args = cutlass_api.arguments.GemmArguments(A=A, B=B, out=out,
                                                   accumulator_type=torch.float32)
        ranked, median, worst = timed(lambda: cutlass_api.get_kernels(args), 20)
        slowest = max(slowest, median)
        top = ranked[0].metadata
        print(f"shape={m}x{n}x{k} kernels={len(ranked)} get_kernels_ms={median * 1e3:.2f} "
              f"(max {worst * 1e3:.2f}) top={top.kernel_name} est_tflops={top.score:.0f} "
              f"[{top.score_explain}]")
        A = B = out = args = None
    print(f"SUMMARY get_kernels(args) slowest median {slowest * 1e3:.2f} ms (target < 20 ms: "
          f"{'PASS' if slowest < 0.020 else 'FAIL'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
