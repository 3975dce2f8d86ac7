"""How well the ranking model orders the kernels it was measured on (files of
``bench/collect_model_data.py``), per family and over all: per problem, the rank correlation of
the model's scores with the measured TFLOP/s (Spearman), the model's first pick's time against the
fastest measured (its regret), and where the fastest stood in the model's order.

  python bench/model_fit.py model-data.jsonl [more.jsonl ...] [--json]

This is the check side of a refit: a change to the model's constants is kept when the problems it
was fitted on and, above all, the ones it was not (other files) both improve. No GPU needed.
"""

import argparse
import json
import math
import statistics
import sys
from collections import defaultdict


def spearman(xs, ys):
    """Rank correlation of two equal-length lists (ties share their mean rank); None below 3."""
    if len(xs) < 3:
        return None

    def ranks(values):
        order = sorted(range(len(values)), key=lambda i: values[i])
        out = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for t in range(i, j + 1):
                out[order[t]] = (i + j) / 2.0
            i = j + 1
        return out

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return num / den if den else None


def problem_fit(line):
    """(spearman, regret, rank of the fastest) of one problem's measured candidates, or None."""
    measured = [c for c in line["candidates"]
                if c["outcome"] == "measured" and c["score"] is not None]
    if len(measured) < 2:
        return None
    fastest = min(measured, key=lambda c: c["median_us"])
    first = min(measured, key=lambda c: c["rank"])
    by_score = sorted(measured, key=lambda c: -c["score"])
    return (spearman([c["score"] for c in measured], [c["tflops"] for c in measured]),
            first["median_us"] / fastest["median_us"], by_score.index(fastest))


def summarize(lines):
    by_family = defaultdict(list)
    for line in lines:
        fit = problem_fit(line)
        if fit is not None:
            by_family[line["family"]].append(fit)
            by_family["all"].append(fit)
    out = {}
    for family, fits in sorted(by_family.items()):
        rhos = [f[0] for f in fits if f[0] is not None]
        regrets = [f[1] for f in fits]
        out[family] = {
            "problems": len(fits),
            "spearman_mean": round(statistics.fmean(rhos), 3) if rhos else None,
            "regret_geomean": round(math.exp(statistics.fmean(math.log(r) for r in regrets)), 3),
            "regret_worst": round(max(regrets), 3),
            "fastest_first": sum(1 for f in fits if f[2] == 0),
        }
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    lines = []
    for path in args.files:
        with open(path) as f:
            lines += [json.loads(text) for text in f if text.strip()]
    summary = summarize(lines)
    if args.json:
        print(json.dumps(summary, indent=1))
        return 0
    print(f"{'family':10} {'problems':>8} {'spearman':>9} {'regret gm':>10} {'worst':>7} "
          f"{'fastest 1st':>12}")
    for family, s in summary.items():
        rho = "-" if s["spearman_mean"] is None else f"{s['spearman_mean']:.3f}"
        print(f"{family:10} {s['problems']:>8} {rho:>9} {s['regret_geomean']:>10.3f} "
              f"{s['regret_worst']:>7.3f} {s['fastest_first']:>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
