"""Serving latency of a new process with a warm cache: from ``import tilecraft`` to the first
``tilecraft.gemm`` result (synchronized), for a problem whose kernel (tuning off) or tuned winner
(tuning auto, stored) a first process compiled into the same cache. torch and the CUDA context are
up before the import, as in any program that already holds its tensors.

  python bench/bench_first_call.py [--repeats 5]

Prints, per mode, the median over new processes of: the import, the first call, the plan's own
account of it (``rank_ms``: listing and ranking the kernels; ``ready_ms``: finding and loading
the serving kernel's module), the plan's making as a whole (``plan_ms``), the first launch
(``launch_ms``: the module's kernel loaded onto the GPU) and the wait for its result
(``sync_ms``), and a second call of the same problem. Without a usable GPU it says
why and exits 0.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from gpu_skip import skip_reason

CHILD = r"""
import json, sys, time
import torch
mode = sys.argv[1]
a = torch.rand(1536, 1024, device="cuda", dtype=torch.bfloat16)
b = torch.rand(1024, 2048, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
t0 = time.perf_counter()
import tilecraft
t1 = time.perf_counter()
state = tilecraft.plan_gemm(a, b, tuning=mode, max_candidates=2).state
t_plan = time.perf_counter()
out = tilecraft.gemm(a, b, tuning=mode, max_candidates=2)
t_launch = time.perf_counter()
torch.cuda.synchronize()
t2 = time.perf_counter()
tilecraft.gemm(a, b, tuning=mode, max_candidates=2)
torch.cuda.synchronize()
t3 = time.perf_counter()
error = float((out.double() - a.double() @ b.double()).abs().max())
print(json.dumps({"import_ms": (t1 - t0) * 1e3, "first_ms": (t2 - t1) * 1e3,
                  "plan_ms": (t_plan - t1) * 1e3, "launch_ms": (t_launch - t_plan) * 1e3,
                  "sync_ms": (t2 - t_launch) * 1e3,
                  "second_ms": (t3 - t2) * 1e3, "rank_ms": state["rank_ms"],
                  "ready_ms": state["ready_ms"], "error": error, "reason": state["reason"]}))
"""


def child(mode, env):
    result = subprocess.run([sys.executable, "-c", CHILD, mode], env=env, capture_output=True,
                            text=True, timeout=900)
    if result.returncode != 0:
        raise SystemExit(f"child ({mode}) failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    reason = skip_reason()
    if reason:
        print(f"bench_first_call: skipped ({reason})")
        return 0
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, TILECRAFT_CACHE_DIR=cache,
                   TILECRAFT_SIGNING_KEY_FILE=os.path.join(cache, "key"))
        for mode, first in (("off", "off"), ("auto", "blocking")):
            child(first, env)  # compiles (and for auto, tunes and stores the winner)
            runs = [child(mode, env) for _ in range(args.repeats)]
            summary = {key: round(statistics.median(r[key] for r in runs), 2)
                       for key in ("import_ms", "first_ms", "plan_ms", "rank_ms", "ready_ms",
                                   "launch_ms", "sync_ms", "second_ms")}
            summary["reason"] = runs[-1]["reason"]
            summary["max_error"] = max(r["error"] for r in runs)
            print(f"tuning={mode}: {json.dumps(summary)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
