"""The tuned one-call op against cuBLAS (through torch) in the same process, issue 12's suite.

Sets (``--set``, repeat for several; default all):
  gemm   the GEMM suite of HOPPER-NOTES (10 shapes) for each ``--dtype``
  llm    attention (fused QKV, O) and MLP (fused gate+up, down) projections of Llama-2-7B and
         Llama-3-8B at batch x sequence 1, 16, 128 and 4096, for each ``--dtype``
  fp8    e4m3 with per-tensor scales at 4096^3, 8192^3 and 4096x11008x4096, in both accumulation
         modes: the untuned first pick and the tuned op against torch._scaled_mm
  fused  bf16 GEMM + bias + GELU(tanh) at 2048x8192x2048, 4096x11008x4096, 8192^3 against
         torch._addmm_activation (cuBLASLt's fused epilogue) and gelu(addmm)
  host   host time per call at 128^3: a plan, Kernel.run, tilecraft.gemm and torch.mm
  family first call of a new shape served by a kernel compiled for its family
Records go to ``--out`` (suite.json, suite.csv, suite.png) and a table to stdout.
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch

import tilecraft
from tilecraft import profiling
from tilecraft._chart import ChartsUnavailable

from common import device_line

GEMM_SUITE = [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (8192, 28672, 4096),
              (4096, 14336, 4096), (128, 8192, 8192), (16, 4096, 4096), (1000, 1000, 1000),
              (3000, 5000, 7000), (512, 512, 16384)]
# (model, projection, N, K): y = x W^T with W (N, K).
LLM_PROJECTIONS = [
    ("llama2-7b", "qkv", 12288, 4096), ("llama2-7b", "o", 4096, 4096),
    ("llama2-7b", "gate_up", 22016, 4096), ("llama2-7b", "down", 4096, 11008),
    ("llama3-8b", "qkv", 6144, 4096), ("llama3-8b", "o", 4096, 4096),
    ("llama3-8b", "gate_up", 28672, 4096), ("llama3-8b", "down", 4096, 14336),
]
TOKENS = (1, 16, 128, 4096)


def suite_problems(sets, dtypes):
    problems = []
    if "gemm" in sets:
        for dtype in dtypes:
            problems += [profiling.Problem(m, n, k, 1, dtype, name="suite") for m, n, k in GEMM_SUITE]
    if "llm" in sets:
        for dtype in dtypes:
            for model, projection, n, k in LLM_PROJECTIONS:
                for tokens in TOKENS:
                    problems.append(profiling.Problem(tokens, n, k, 1, dtype,
                                                      name=f"{model}.{projection}"))
    return problems


def run_profiles(problems, args, timer, records):
    profiling.precompile(problems, args.max_candidates, args.force)
    for i, problem in enumerate(problems, 1):
        try:
            r = profiling.profile_problem(problem, 3, args.max_candidates, args.max_seconds,
                                          args.force, args.repeats, timer)
        except Exception as error:  # noqa: BLE001 - a failed problem is reported, not hidden
            r = {"problem": problem.label, "dtype": problem.dtype, "error_text": str(error),
                 "ratio": float("nan")}
            print(f"[{i}/{len(problems)}] {problem.label}: FAILED: {error}", flush=True)
            records.append(r)
            continue
        records.append(r)
        print(f"[{i}/{len(problems)}] {problem.label}: tilecraft {r['tilecraft_tflops']:.1f} "
              f"cuBLAS {r['cublas_tflops']:.1f} TFLOP/s ratio {r['ratio']:.3f} "
              f"err {r['error']:.1e}/{r['cublas_error']:.1e} {r['kernel']}", flush=True)


def fp8_set(args, timer, records):
    shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096)]
    problems = [profiling.Problem(m, n, k, 1, dtype, name="fp8")
                for dtype in ("e4m3", "e4m3-fast") for m, n, k in shapes]
    profiling.precompile(problems, 1)  # the first picks, for the untuned figures
    for problem in problems:
        A, B, extra = profiling.operands(problem)
        kwargs = profiling.gemm_kwargs(problem, extra)
        plan = tilecraft.plan_gemm(A, B, tuning="off", **kwargs)
        theirs = profiling.cublas_call(problem, A, B, extra)
        ours_us = timer.median_us(lambda: plan._launch(A, B, None, None, None, None), args.repeats)
        theirs_us = timer.median_us(theirs, args.repeats)
        r = {"problem": problem.label + " untuned", "dtype": problem.dtype,
             "kernel": plan.kernel_name, "tilecraft_us": ours_us, "cublas_us": theirs_us,
             "ratio": theirs_us / ours_us,
             "tilecraft_tflops": problem.flops / ours_us / 1e6,
             "cublas_tflops": problem.flops / theirs_us / 1e6}
        records.append(r)
        print(f"{r['problem']}: first pick {r['tilecraft_tflops']:.0f} vs _scaled_mm "
              f"{r['cublas_tflops']:.0f} TFLOP/s ratio {r['ratio']:.3f} {plan.kernel_name}",
              flush=True)
    run_profiles(problems, args, timer, records)


def fused_set(args, timer, records):
    shapes = [(2048, 8192, 2048), (4096, 11008, 4096), (8192, 8192, 8192)]
    problems = [profiling.Problem(m, n, k, 1, "bf16", "bias_gelu", name="fused")
                for m, n, k in shapes]
    start = len(records)
    run_profiles(problems, args, timer, records)
    for problem, r in zip(problems, records[start:]):
        if "tilecraft_us" not in r:
            continue
        A, B, extra = profiling.operands(problem)
        bias = extra["bias"]
        unfused = lambda: torch.nn.functional.gelu(torch.addmm(bias, A, B), approximate="tanh")  # noqa
        r["unfused_us"] = timer.median_us(unfused, args.repeats)
        r["ratio_vs_unfused"] = r["unfused_us"] / r["tilecraft_us"]
        print(f"{problem.label}: vs _addmm_activation {r['ratio']:.3f}, vs gelu(addmm) "
              f"{r['ratio_vs_unfused']:.3f}", flush=True)


def host_set(args, records):
    """Wall time per call of back-to-back launches of a 128^3 bf16 GEMM (host bound)."""
    A = torch.randn(128, 128, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(128, 128, device="cuda", dtype=torch.bfloat16).t()
    out = torch.empty(128, 128, device="cuda", dtype=torch.bfloat16)
    plan = tilecraft.plan_gemm(A, B, out, tuning="blocking", max_candidates=2)
    from tilecraft.api import get_kernels
    from tilecraft.api.arguments import GemmArguments

    gemm_args = GemmArguments(A, B, out, tilecraft.DataType.f32)
    kernel = next(k for k in get_kernels(gemm_args) if k.metadata.kernel_name == plan.kernel_name)
    compiled = kernel.compile(gemm_args)
    calls = {
        "torch.mm": lambda: torch.mm(A, B, out=out),
        "tilecraft.gemm": lambda: tilecraft.gemm(A, B, out),
        "plan(A, B, out)": lambda: plan(A, B, out),
        "Kernel.run(same args)": lambda: kernel.run(gemm_args, compiled),
    }
    rows = {}
    for _ in range(3):  # interleaved rounds; the best round of each
        for name, fn in calls.items():
            for _ in range(200):
                fn()
            torch.cuda.synchronize()
            n = 3000
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            torch.cuda.synchronize()
            us = (time.perf_counter() - t0) / n * 1e6
            rows[name] = min(rows.get(name, us), us)
    base = rows["torch.mm"]
    for name, us in rows.items():
        records.append({"problem": f"host per call 128^3 bf16: {name}", "host_us": us,
                        "ratio_to_torch": us / base})
        print(f"host per call, 128^3 bf16, {name}: {us:.1f} us ({us / base:.2f}x torch.mm)")


def family_set(args, records):
    """A new shape whose family has compiled kernels: time to the first result."""
    seed = profiling.Problem(1024, 1024, 1024, 1, "bf16")
    A, B, _ = profiling.operands(seed)
    tilecraft.plan_gemm(A, B, tuning="blocking", max_candidates=2)
    new = profiling.Problem(2816, 3328, 1792, 1, "bf16")
    A, B, _ = profiling.operands(new)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    plan = tilecraft.plan_gemm(A, B, tuning="auto", max_candidates=4)
    out = plan(A, B)
    torch.cuda.synchronize()
    first_ms = (time.perf_counter() - t0) * 1e3
    state = plan.state
    t1 = time.perf_counter()
    plan.wait_for_tuning(600)
    tuned_s = time.perf_counter() - t1
    plan(A, B)
    after = plan.state
    want = A.double() @ B.double()
    ok = bool(((out.double() - want).abs() <= 2e-2 * want.abs().max()).all())
    records.append({"problem": "family: new shape 2816x3328x1792 bf16", "first_result_ms": first_ms,
                    "first_kernel": state["kernel_name"], "first_reason": state["reason"],
                    "background_tuning_s": tuned_s, "after_kernel": after["kernel_name"],
                    "after_tuned": after["tuned"], "correct": ok})
    print(f"family: first result in {first_ms:.1f} ms ({state['reason']}); background tuning "
          f"{tuned_s:.1f} s more; then {after['kernel_name']} (tuned={after['tuned']}); "
          f"correct={ok}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append",
                        choices=("gemm", "llm", "fp8", "fused", "host", "family"))
    parser.add_argument("--dtype", action="append", choices=profiling.DTYPES)
    parser.add_argument("--max-candidates", type=int, default=4)
    parser.add_argument("--max-seconds", type=float, default=None)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    args = parser.parse_args()
    sets = args.set or ["gemm", "llm", "fp8", "fused", "host", "family"]
    dtypes = args.dtype or ["bf16", "f16", "tf32", "f32", "f64", "int8", "e4m3"]
    os.makedirs(args.out, exist_ok=True)
    print(device_line(), flush=True)
    timer = profiling.Timer()
    records = []
    problems = suite_problems(sets, dtypes)
    if problems:
        run_profiles(problems, args, timer, records)
    if "fp8" in sets:
        fp8_set(args, timer, records)
    if "fused" in sets:
        fused_set(args, timer, records)
    if "host" in sets:
        host_set(args, records)
    if "family" in sets:
        family_set(args, records)
    tag = "-".join(sets) + ("-" + "-".join(args.dtype) if args.dtype else "")
    stem = os.path.join(args.out, f"suite-{tag}")
    with open(stem + ".json", "w") as f:
        json.dump({"device": device_line(), "records": records}, f, indent=1)
    ratios = [r for r in records if "tilecraft_us" in r]
    if ratios:
        profiling.write_csv(ratios, stem + ".csv")
        try:
            profiling.write_chart(ratios, stem + ".png")
        except ChartsUnavailable as error:
            print(f"no chart: {error}")
    by_dtype = {}
    for r in ratios:
        if "untuned" in r["problem"] or r.get("epilogue", "none") != "none":
            continue
        by_dtype.setdefault(r["dtype"], []).append(r["ratio"])
    for dtype, values in by_dtype.items():
        print(f"{dtype}: geometric mean {profiling.geometric_mean(values):.3f}, min "
              f"{min(values):.3f} over {len(values)} problems")
    print(f"wrote {stem}.json")


if __name__ == "__main__":
    sys.exit(main())
