"""Grouped GEMM (mixture-of-experts layers) beside torch._grouped_mm and a loop of torch.mm per
group (cuBLAS), in the same process on the same tensors.

  python bench/bench_grouped.py [--set moe|many|shapes ...] [--candidates 4] [--json FILE]

Each problem is torch._grouped_mm's: x (T, K) row-major bf16 tokens sorted by expert, w
(G, N, K) contiguous and w_t = w.transpose(-2, -1) (per expert a column-major K x N matrix),
offs int32 cumulative END rows per expert on the device, out (T, N) bf16 with f32 accumulation.

Sets (``--set``, repeat for several; default all):
  moe     8 experts, K = N = 4096, tokens per expert 128, 512, 1024, 2048, 256, 768, 1536, 3072
  many    64 and 128 experts with small groups (0..64 tokens each, about one in eight empty) at
          K = N = 1024, 4096 and 8192 (the decoding regime: the per-group loop is launch bound)
  shapes  other MoE layers with random routing: 16 experts K=2048 N=7168 and 32 experts K=7168
          N=2048 (DeepSeek-style up / down projections), 8 experts K=4096 N=14336 and K=14336
          N=4096 (Mixtral-style)

tilecraft: ``api.GroupedGemmArguments`` made once per problem (MoE form, the same tensors),
``api.get_kernels`` ranks the grouped kernels, the top ``--candidates`` of every problem are
compiled together (one ``api.compile_kernels``), each is checked and timed; the table gives the
first-ranked and the fastest, in TFLOP/s, and the ratios (their time / our time: above 1 is
faster) against torch._grouped_mm and against the loop. Every output (ours and torch's) is
checked against an f32 reference (max |out - ref| / max |ref| <= 1e-2); a wrong result is
reported and never timed. Timing: ``tilecraft.profiling.Timer`` (median of launches, each after
a write of twice the L2 size; the two sides measured alternately, twice, the faster kept).
Without a usable GPU the script says why and exits 0.
"""

import argparse
import itertools
import json
import os
import random
import sys
import time

SETS = ("moe", "many", "shapes")
MOE_TOKENS = (128, 512, 1024, 2048, 256, 768, 1536, 3072)
TOLERANCE = 1e-2


def skip_reason():
    """None when a CUDA GPU is usable through torch and tilecraft, else why not."""
    try:
        import torch
    except Exception as error:  # noqa: BLE001 - any import failure is a reason to skip
        return f"torch is not importable ({type(error).__name__}: {error})"
    try:
        import tilecraft
    except Exception as error:  # noqa: BLE001
        return f"tilecraft is not importable ({type(error).__name__}: {error})"
    reason = tilecraft._core.cuda_device_available()
    if reason is not None:
        return reason
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    major, minor = torch.cuda.get_device_capability()
    if major < 8:
        return f"GPU 0 has compute capability {major}.{minor}; grouped kernels need 8.0 or newer"
    return None


class Problem:
    """One grouped problem: G experts, tokens[g] rows each, (tokens, K) x (K, N)."""

    def __init__(self, set_name, name, tokens, k, n, dtype="bf16"):
        self.set, self.name, self.tokens, self.k, self.n = set_name, name, list(tokens), k, n
        self.dtype = dtype

    @property
    def groups(self):
        return len(self.tokens)

    @property
    def rows(self):
        return sum(self.tokens)

    @property
    def flops(self):
        return 2.0 * self.rows * self.n * self.k

    @property
    def label(self):
        empty = sum(1 for t in self.tokens if t == 0)
        tail = f", {empty} empty" if empty else ""
        return (f"{self.name}: {self.groups}x K={self.k} N={self.n}, {self.rows} tokens "
                f"({min(self.tokens)}..{max(self.tokens)}{tail}) {self.dtype}")


def routed_tokens(rng, experts, mean):
    """Tokens per expert of a random, unevenly loaded routing (about ``mean`` on average)."""
    weights = [rng.gammavariate(2.0, 1.0) for _ in range(experts)]
    total = experts * mean
    scale = total / sum(weights)
    return [max(0, round(w * scale)) for w in weights]


def problems_of(sets, dtype, seed):
    rng = random.Random(seed)
    out = []
    if "moe" in sets:
        out.append(Problem("moe", "moe8", MOE_TOKENS, 4096, 4096, dtype))
    if "many" in sets:
        for experts in (64, 128):
            for size in (1024, 4096, 8192):
                tokens = [0 if rng.random() < 0.125 else rng.randint(1, 64)
                          for _ in range(experts)]
                out.append(Problem("many", f"many{experts}", tokens, size, size, dtype))
    if "shapes" in sets:
        for name, experts, k, n, mean in (("ds-up", 16, 2048, 7168, 1024),
                                          ("ds-down", 32, 7168, 2048, 512),
                                          ("mixtral-w1", 8, 4096, 14336, 2048),
                                          ("mixtral-w2", 8, 14336, 4096, 2048)):
            out.append(Problem("shapes", name, routed_tokens(rng, experts, mean), k, n, dtype))
    return out


def operands(problem, seed):
    """x (T, K), w_t (G, K, N) column-major per expert, offs int32 on the device, out (T, N)."""
    import torch

    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[problem.dtype]
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    # Drawn in the operand type directly: no float32 copy of a 16 GiB weight.
    x = torch.empty(problem.rows, problem.k, dtype=dtype, device="cuda").uniform_(-1, 1,
                                                                                 generator=g)
    w = torch.empty(problem.groups, problem.n, problem.k, dtype=dtype,
                    device="cuda").uniform_(-1, 1, generator=g)
    offs = torch.tensor(list(itertools.accumulate(problem.tokens)), dtype=torch.int32,
                        device="cuda")
    out = torch.empty(problem.rows, problem.n, dtype=dtype, device="cuda")
    return x, w.transpose(-2, -1), offs, out


def bounds(problem):
    ends = list(itertools.accumulate(problem.tokens))
    return list(zip([0] + ends[:-1], ends))


def relative_error(problem, x, w_t, got):
    """max |got - ref| / max |ref| over every group's rows, ref in f32 (TF32 off)."""
    import torch

    worst, scale = 0.0, 0.0
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        for g, (s, e) in enumerate(bounds(problem)):
            if e == s:
                continue
            ref = x[s:e].float() @ w_t[g].float()
            worst = max(worst, float((got[s:e].float() - ref).abs().max()))
            scale = max(scale, float(ref.abs().max()))
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
    if torch.isnan(got.float()).any():
        return float("inf")
    return worst / max(scale, 1e-30)


def loop_call(problem, x, w_t, out):
    """torch.mm per non-empty group, each writing its rows of ``out`` (cuBLAS)."""
    import torch

    pieces = [(x[s:e], w_t[g], out[s:e]) for g, (s, e) in enumerate(bounds(problem)) if e > s]

    def run():
        for a, b, o in pieces:
            torch.mm(a, b, out=o)
    return run


def timed_pair(timer, ours, theirs, repeats):
    """(ours_us, theirs_us): measured alternately, twice each, the faster of each kept."""
    a, b = [], []
    for _ in range(2):
        a.append(timer.median_us(ours, repeats))
        b.append(timer.median_us(theirs, repeats))
    return min(a), min(b)


def measure(problem, operands_, kernels, args, timer, repeats):
    """Checks and times the candidate kernels, then the best of them alternately with
    torch._grouped_mm and with the loop of torch.mm; returns the record."""
    import torch

    x, w_t, offs, out = operands_
    record = {"set": problem.set, "problem": problem.label, "groups": problem.groups,
              "tokens": problem.tokens, "k": problem.k, "n": problem.n, "dtype": problem.dtype,
              "flops": problem.flops}

    candidates = []
    for rank, kernel in enumerate(kernels):
        entry = {"rank": rank, "kernel": kernel.metadata.kernel_name,
                 "score": kernel.metadata.score}
        candidates.append(entry)
        status = kernel.supports(args)
        if not status:
            entry["skipped"] = f"unsupported: {status.error}"
            continue
        try:
            artifact = kernel.compile(args)
        except Exception as error:  # noqa: BLE001 - a kernel that fails to build is reported
            entry["skipped"] = f"compile failed: {str(error).splitlines()[0]}"
            continue
        out.fill_(float("nan"))
        kernel.run(args, artifact)
        torch.cuda.synchronize()
        entry["error"] = relative_error(problem, x, w_t, out)
        if not entry["error"] <= TOLERANCE:
            entry["skipped"] = f"WRONG RESULT: relative error {entry['error']:.3g}"
            continue
        entry["run"] = lambda k=kernel, a=artifact: k.run(args, a, assume_supported_args=True)
        entry["us"] = timer.median_us(entry["run"], repeats)
    record["candidates"] = candidates
    timed = [c for c in candidates if "us" in c]

    baselines = {"loop": loop_call(problem, x, w_t, out)}
    out.fill_(float("nan"))
    baselines["loop"]()
    torch.cuda.synchronize()
    record["loop_error"] = relative_error(problem, x, w_t, out)
    if not hasattr(torch, "_grouped_mm"):
        record["grouped_mm_unavailable"] = f"torch {torch.__version__} has no _grouped_mm"
    else:
        try:
            theirs = torch._grouped_mm(x, w_t, offs=offs)
            torch.cuda.synchronize()
            record["grouped_mm_error"] = relative_error(problem, x, w_t, theirs)
            del theirs
            baselines["grouped_mm"] = lambda: torch._grouped_mm(x, w_t, offs=offs)
        except (RuntimeError, TypeError) as error:
            record["grouped_mm_unavailable"] = str(error).splitlines()[0]

    best = min(timed, key=lambda c: c["us"]) if timed else None
    for side, call in baselines.items():
        if best is None:
            record[f"{side}_us"] = timer.median_us(call, repeats)
            continue
        ours_us, theirs_us = timed_pair(timer, best["run"], call, repeats)
        best["us"] = min(best["us"], ours_us)
        record[f"{side}_us"] = theirs_us
    for side in baselines:
        record[f"{side}_tflops"] = problem.flops / record[f"{side}_us"] / 1e6
    for c in timed:
        c["tflops"] = problem.flops / c["us"] / 1e6
        del c["run"]
    if best is not None:
        record["best"] = best
        record["first"] = candidates[0] if "us" in candidates[0] else None
        for side in baselines:
            record[f"best_vs_{side}"] = record[f"{side}_us"] / best["us"]
            if record["first"] is not None:
                record[f"first_vs_{side}"] = record[f"{side}_us"] / record["first"]["us"]
    return record


def fmt(value, digits=1):
    if value is None:
        return "-"
    return f"{value:.{digits}f}"


def print_table(records):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import print_table as table

    headers = ["problem", "first TF/s", "best TF/s", "_grouped_mm TF/s", "loop TF/s",
               "best/_grouped_mm", "best/loop", "first/_grouped_mm", "best kernel"]
    rows = []
    for r in records:
        best, first = r.get("best"), r.get("first")
        rows.append([r["problem"], fmt(first and first["tflops"]), fmt(best and best["tflops"]),
                     fmt(r.get("grouped_mm_tflops")), fmt(r.get("loop_tflops")),
                     fmt(r.get("best_vs_grouped_mm"), 3), fmt(r.get("best_vs_loop"), 3),
                     fmt(r.get("first_vs_grouped_mm"), 3),
                     (best["kernel"] + ("" if best["rank"] == 0 else f" (#{best['rank']})"))
                     if best else "none ran"])
    table(headers, rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", action="append", choices=SETS)
    parser.add_argument("--dtype", default="bf16", choices=("bf16", "f16"))
    parser.add_argument("--candidates", type=int, default=4,
                        help="ranked kernels compiled and timed per problem (default 4)")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1234, help="routing and data seed")
    parser.add_argument("--json", default=None, help="also write every measurement here")
    options = parser.parse_args()
    if options.candidates < 1:
        parser.error("--candidates: expected an integer >= 1")
    reason = skip_reason()
    if reason is not None:
        print(f"bench_grouped: skipped: {reason}")
        return 0

    import torch

    from tilecraft import api, profiling

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from common import device_line

    print(device_line(), flush=True)
    sets = options.set or list(SETS)
    problems = problems_of(sets, options.dtype, options.seed)

    # Ranked once per problem, its tensors freed at once (the largest sets hold tens of GiB);
    # the top candidates of every problem compiled together; each problem's tensors drawn again
    # (the same seed: the same values) when it is measured.
    def arguments_of(i, problem):
        operands_ = operands(problem, options.seed + i)
        x, w_t, offs, out = operands_
        return operands_, api.GroupedGemmArguments(x, w_t, out, accumulator_type=torch.float32,
                                                   offsets=offs)

    prepared = []
    unique = {}
    for i, problem in enumerate(problems):
        operands_, args = arguments_of(i, problem)
        ranked = api.get_kernels(args)
        picks = ranked[:options.candidates]
        for kernel in picks:
            unique.setdefault(kernel.metadata.kernel_name, kernel)
        del operands_, args
        torch.cuda.empty_cache()
        prepared.append(picks)
        print(f"{problem.label}: {len(ranked)} kernels ranked; first "
              f"{picks[0].metadata.kernel_name if picks else 'NONE'}", flush=True)
    start = time.perf_counter()
    try:
        api.compile_kernels(list(unique.values()))
    except Exception as error:  # noqa: BLE001 - the failing candidates are reported one by one
        print(f"compile_kernels: {str(error).splitlines()[0]}", flush=True)
    print(f"compiled {len(unique)} candidate kernels in {time.perf_counter() - start:.1f} s",
          flush=True)

    timer = profiling.Timer()
    records = []
    for i, problem in enumerate(problems):
        picks = prepared[i]
        operands_, args = arguments_of(i, problem)
        r = measure(problem, operands_, picks, args, timer, options.repeats)
        del operands_, args
        torch.cuda.empty_cache()
        records.append(r)
        best = r.get("best")
        print(f"{problem.label}: best {fmt(best and best['tflops'])} TFLOP/s "
              f"({best['kernel'] if best else 'none ran'}), _grouped_mm "
              f"{fmt(r.get('grouped_mm_tflops'))}, loop {fmt(r.get('loop_tflops'))}"
              + "".join(f"; rank {c['rank']} {c['skipped']}" for c in r["candidates"]
                        if "skipped" in c), flush=True)
    print()
    print_table(records)
    if options.json:
        with open(options.json, "w") as f:
            json.dump({"device": device_line(), "sets": sets, "records": records}, f, indent=1)
        print(f"wrote {options.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
