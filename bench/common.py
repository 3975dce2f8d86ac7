"""Shared benchmark helpers: CUDA-event timing, medians, table printing, the results log."""

import os
import statistics
import subprocess

import torch


def time_cuda(fn, warmup=3, repeats=10, inner=1):
    """Median milliseconds per call of fn over `repeats` timed groups of `inner` back-to-back
    calls (CUDA events around each group, so per-launch host time hides behind the GPU)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / inner)
    return statistics.median(times)


def tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12


def device_line():
    props = torch.cuda.get_device_properties(0)
    commit = os.environ.get("TILECRAFT_COMMIT") or subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    commit = commit or "unknown"
    return (f"device: {props.name} ({props.multi_processor_count} SMs), torch {torch.__version__}, "
            f"commit {commit}")


def print_table(headers, rows):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    print(line(headers))
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print(line(row))
