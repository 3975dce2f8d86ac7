"""How well today's ranking orders candidates that were measured: for each problem of a file of
measured candidates (bench/data/issue29-candidates-h100.json), the candidates are put in the order
get_kernels lists them now (fake CUDA tensors, compute capability 9.0, no GPU needed), and the
first one's measured TFLOP/s is divided by the fastest's. Prints each problem and the geometric
mean per family (GEMM, grouped GEMM and convolution problems; batched GEMMs and 1x1 convolutions
run as GEMMs are skipped, saying so).

  python bench/model_check.py [bench/data/issue29-candidates-h100.json]
"""

import itertools
import json
import math
import os
import re
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))  # fakecuda: CUDA-like views, no GPU

from fakecuda import T  # noqa: E402
import tilecraft  # noqa: E402
from tilecraft import api  # noqa: E402
from tilecraft.api.arguments import (Conv2dArguments, EpilogueArguments,  # noqa: E402
                                     GemmArguments, GroupedGemmArguments)
from tilecraft.family_problems import GroupedProblem  # noqa: E402

GEMM = re.compile(r"(\w+) (?:(\d+)x)?(\d+)x(\d+)x(\d+)(?: (\S+))?$")
CONV = re.compile(r"conv2d (\w+) f16 n(\d+) c(\d+) (\d+)x(\d+) k(\d+) (\d+)x(\d+)/(\d+)"
                  r"( \+bias_relu)?(?: (\S+))?$")
GROUPED = re.compile(r"grouped (\w+) (\d+)x K=(\d+) N=(\d+) (\d+) tokens (\w+)(?: (\S+))?$")
NAMES = {"bf16": "bfloat16", "f16": "float16"}


def gemm_arguments(label):
    m = GEMM.match(label)
    if not m or m.group(2):
        return None  # batched problems: not rebuilt here
    dtype, (M, N, K) = m.group(1), map(int, m.group(3, 4, 5))
    # B column-major, as tilecraft profile makes its operands (the kernels' "tnt" layouts).
    if dtype in NAMES:
        return GemmArguments(T(M, K, dtype=NAMES[dtype]),
                             T(K, N, dtype=NAMES[dtype], strides=(1, K)),
                             T(M, N, dtype=NAMES[dtype]), tilecraft.DataType.f32)
    if dtype == "e4m3":
        scale = T(1, dtype="float32")
        return GemmArguments(T(M, K, dtype="e4m3"), T(K, N, dtype="e4m3", strides=(1, K)),
                             T(M, N, dtype="bfloat16"), tilecraft.DataType.f32,
                             EpilogueArguments(scale_a=scale, scale_b=scale))
    return None


def grouped_arguments(label):
    """The stacked (mixture-of-experts) form with the profile's routing, offsets on the host."""
    m = GROUPED.match(label)
    if not m:
        return None
    dtype, routing = m.group(1), m.group(6)
    groups, k, n, tokens = map(int, m.group(2, 3, 4, 5))
    rows = GroupedProblem(dtype, groups, tokens, n, k, routing).rows_per_group
    offsets = np.array(list(itertools.accumulate(rows)), dtype=np.int32)
    operand = "e4m3" if dtype == "e4m3" else NAMES[dtype]
    scales = dict(scale_a=0.5, scale_b=0.5) if dtype == "e4m3" else {}
    return GroupedGemmArguments(T(tokens, k, dtype=operand),
                                T(groups, k, n, dtype=operand, strides=(n * k, 1, k)),
                                T(tokens, n, dtype="bfloat16" if dtype == "e4m3" else operand),
                                tilecraft.float32, offsets=offsets, **scales)


def channels_last(n, c, h, w):
    return T(n, c, h, w, dtype="float16", strides=(h * w * c, 1, w * c, c))


def conv_arguments(label):
    m = CONV.match(label)
    if not m:
        return None
    kind = m.group(1)
    n, c, h, w, k, r, s, stride = map(int, m.group(2, 3, 4, 5, 6, 7, 8, 9))
    if kind == "fprop" and r == s == stride == 1:
        return None  # run as a GEMM by tilecraft.conv2d
    pad = r // 2
    p, q = (h + 2 * pad - r) // stride + 1, (w + 2 * pad - s) // stride + 1
    x, wt, y = channels_last(n, c, h, w), channels_last(k, c, r, s), channels_last(n, k, p, q)
    geometry = dict(stride=stride, padding=pad)
    if kind == "fprop":
        epilogue = (EpilogueArguments(bias=T(k, dtype="float16"), activation="relu")
                    if m.group(10) else None)
        return Conv2dArguments(x, wt, y, tilecraft.float32, epilogue=epilogue, **geometry)
    if kind == "dgrad":
        return Conv2dArguments(y, wt, x, tilecraft.float32, kind="dgrad", **geometry)
    return Conv2dArguments(y, x, wt, tilecraft.float32, kind="wgrad", **geometry)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        ROOT, "bench", "data", "issue29-candidates-h100.json")
    with open(path) as f:
        problems = json.load(f)["problems"]
    by_family = {}
    for problem in problems:
        label = problem["problem"]
        build = {"gemm": gemm_arguments, "grouped": grouped_arguments,
                 "conv": conv_arguments}.get(problem["family"])
        args = build(label) if build else None
        if args is None:
            print(f"skipped  {label}: not rebuilt as arguments here")
            continue
        order = {k.metadata.kernel_name: i for i, k in enumerate(api.get_kernels(args, cc=90))}
        measured = {c["kernel"]: c["tflops"] for c in problem["candidates"] if c["kernel"] in order}
        if len(measured) < 2:
            print(f"skipped  {label}: fewer than two measured candidates are listed now")
            continue
        first = min(measured, key=order.get)
        ratio = measured[first] / max(measured.values())
        by_family.setdefault(problem["family"], []).append(ratio)
        print(f"{ratio:.3f}    {label}: first {first}")
    for family, ratios in by_family.items():
        mean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"{family}: {len(ratios)} problems, the first's speed over the fastest's: geometric "
              f"mean {mean:.3f}, lowest {min(ratios):.3f}, the first the fastest in "
              f"{sum(r == 1.0 for r in ratios)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
