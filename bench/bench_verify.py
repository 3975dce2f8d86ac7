"""The cost of verify mode: each one-call op timed with ``verify=False`` and ``verify=True``
(tuning off: the ranked first pick; the kernel, then the float32 reference by torch, the magnitude bound and the element-wise
comparison, which synchronizes), wall time per call over repeated calls, in the same process.

  python bench/bench_verify.py [--repeats 20] [--limit N]

Prints one JSON line per problem: the op, its shape, milliseconds per call without and with the
check, and their ratio. Without a usable GPU it says why and exits 0.
"""

import argparse
import json
import os
import time

from gpu_skip import skip_reason


def per_call_ms(run, repeats, torch):
    run()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        run()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3 / repeats


def problems(torch, tilecraft):
    """(name, shape text, call(verify)) of each measured problem: bf16 GEMMs of three sizes, one
    with bias and gelu, a convolution and a stacked grouped GEMM."""
    def tensor(*shape, dtype=torch.bfloat16):
        return torch.randn(shape, device="cuda", dtype=torch.float32).to(dtype)

    for m, n, k in ((1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 1024)):
        A, B = tensor(m, k), tensor(k, n)
        yield "gemm", f"{m}x{n}x{k}", lambda v, A=A, B=B: tilecraft.gemm(A, B, verify=v)
    A, B, bias = tensor(4096, 4096), tensor(4096, 4096), tensor(4096)
    yield "gemm bias+gelu", "4096x4096x4096", lambda v: tilecraft.gemm(
        A, B, bias=bias, activation="gelu", verify=v)
    x = tensor(32, 256, 56, 56, dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    w = tensor(256, 256, 3, 3, dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    yield "conv2d", "n32 c256 56x56 k256 3x3", lambda v: tilecraft.conv2d(x, w, padding=1,
                                                                          verify=v)
    tokens, experts = 8192, 8
    offsets = torch.arange(1, experts + 1, device="cuda", dtype=torch.int32) * (tokens // experts)
    X, W = tensor(tokens, 2048), tensor(experts, 2048, 2048)
    yield "grouped", f"{experts} experts x {tokens // experts} tokens, 2048x2048", \
        lambda v: tilecraft.grouped_gemm(X, W.transpose(-2, -1), offsets, verify=v)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--limit", type=int,
                        default=int(os.environ["BENCH_VERIFY_LIMIT"])
                        if os.environ.get("BENCH_VERIFY_LIMIT") else None,
                        help="measure only the first LIMIT problems (each compiles its kernel; "
                             "default BENCH_VERIFY_LIMIT, else all)")
    args = parser.parse_args()
    reason = skip_reason()
    if reason:
        print(f"bench_verify: skipped: {reason}")
        return 0
    os.environ.setdefault("TILECRAFT_TUNING", "off")  # the ranked first pick: no tuning beside
    import torch

    import tilecraft

    torch.backends.cuda.matmul.allow_tf32 = False
    for index, (name, shape, call) in enumerate(problems(torch, tilecraft)):
        if args.limit is not None and index >= args.limit:
            break
        plain = per_call_ms(lambda: call(False), args.repeats, torch)
        checked = per_call_ms(lambda: call(True), args.repeats, torch)
        print(json.dumps({"op": name, "shape": shape, "ms": round(plain, 4),
                          "verify_ms": round(checked, 4), "ratio": round(checked / plain, 2)}),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
