"""Measurements to fit and check the ranking model on: for each problem of a file (GEMM, grouped
and conv2d lines, as ``tilecraft profile --file`` reads them), the tuner's top ``--candidates``
kernels are compiled (all problems at once), checked against float64 and timed, and each is
written beside the model's estimate of it, one JSON line per problem.

  python bench/collect_model_data.py --file bench/problems/issue29_gemm.txt --candidates 16 \
      --out model-data.jsonl

Each line: problem (label), family, dtype, m, n, k, batch, device, and candidates: a list of
{kernel, rank (the model's order, 0 first), score (the model's TFLOP/s), explain, outcome,
median_us, tflops (measured)}. ``bench/model_fit.py`` reads these files. Without a usable GPU the
script says why and exits 0.
"""

import argparse
import json
import sys

from gpu_skip import skip_reason


def arguments_of(problem):
    from tilecraft import profiling

    if hasattr(problem, "family"):
        return problem.arguments(problem.operands())
    A, B, extra = profiling.operands(problem)
    return profiling.arguments(problem, A, B, extra, profiling.output(problem, A, B))


def collect(problem, candidates):
    import torch

    from tilecraft import api, tuning

    args = arguments_of(problem)
    allow_tf32 = getattr(problem, "dtype", "") != "f32"
    ranked = {k.metadata.kernel_name: (rank, k.metadata.score, k.metadata.score_explain)
              for rank, k in enumerate(api.get_kernels(args))}
    report = tuning.tune(args, max_candidates=candidates, allow_tf32=allow_tf32)
    base = problem.record_base() if hasattr(problem, "family") else {
        "problem": problem.label, "dtype": problem.dtype, "m": problem.m, "n": problem.n,
        "k": problem.k, "batch": problem.batch}
    rows = []
    for c in report["candidates"]:
        rank, score, explain = ranked.get(c["kernel_name"], (None, None, None))
        rows.append({"kernel": c["kernel_name"], "rank": rank, "score": score,
                     "explain": explain, "outcome": c["outcome"], "median_us": c["median_us"],
                     "tflops": c["tflops"]})
    return dict(base, family=getattr(problem, "family", "gemm"),
                device=torch.cuda.get_device_name(), candidates=rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", required=True)
    parser.add_argument("--candidates", type=int, default=16)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    reason = skip_reason()
    if reason:
        print(f"collect_model_data: skipped ({reason})")
        return 0
    from tilecraft import profiling

    problems = profiling.problems_of_file(args.file)
    profiling.precompile(problems, args.candidates, force=True)
    failed = 0
    with open(args.out, "w") as out:
        for i, problem in enumerate(problems, 1):
            print(f"[{i}/{len(problems)}] {problem.label}", file=sys.stderr, flush=True)
            try:
                line = collect(problem, args.candidates)
            except profiling.PROBLEM_ERRORS as error:
                failed += 1
                print(f"    skipped: {str(error).splitlines()[0]}", file=sys.stderr, flush=True)
                continue
            out.write(json.dumps(line) + "\n")
            out.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
