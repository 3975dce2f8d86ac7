"""SM90 (CUTLASS 3.x TMA/wgmma) bf16 TN GEMMs beside cuBLAS (torch.matmul) in the same process on
the same tensors: for each shape the best of a fixed candidate list (bench/sm90_candidates.py),
plus split-K / stream-K variants of the stream-K kernel where the tiles do not fill the GPU.

  python bench/bench_sm90_gemm.py [--shapes 8192x8192x8192,...] [--own-only]

Shapes are M x N x K: A (M, K) row-major, B = w.t() with w (N, K) contiguous (column-major K x N),
D (M, N) row-major bf16, f32 accumulation. Every measured kernel is checked against an f32
reference before and after its timing (max |D - ref| / max |ref| <= 1e-2); a wrong result is
reported and never counted. cuBLAS is timed before and after the candidates; the faster of the two
is used. Targets (the SM90 issue): geometric mean of ratios >= 0.97, no shape below 0.85.
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sm90_candidates as sc  # noqa: E402

SHAPES = [
    (8192, 8192, 8192), (4096, 4096, 4096), (2048, 2048, 2048), (8192, 28672, 4096),
    (4096, 14336, 4096), (128, 8192, 8192), (16, 4096, 4096), (1000, 1000, 1000),
    (3000, 5000, 7000), (512, 512, 16384),
]
SPLITS = (2, 4, 8, 16)
TOLERANCE = 1e-2
TARGET_MS = 80.0  # measured GPU time per (kernel, shape): >= 10 groups, median
GEOMEAN_TARGET, MIN_TARGET = 0.97, 0.85


def shape_text(m, n, k):
    return f"{m}x{n}x{k}"


def variants(candidates, swapped, m, n, k, sm_count):
    """(id, op, split_k_slices, deterministic, swapped) to measure for this shape: every
    candidate at split 1; for skinny M (M <= 256 and N >= 4 M) the swapped candidates, which
    compute D^T = B^T A^T; and the stream-K kernels at serial split-K 2..16, deterministic and
    not, where 128x128 tiles do not fill the GPU."""
    pool = [(cid, op, False) for cid, op in candidates]
    if m <= 256 and n >= 4 * m:
        pool += [(cid, op, True) for cid, op in swapped]
    out = [(cid, op, 1, True, swap) for cid, op, swap in pool]
    tiles = math.ceil(m / 128) * math.ceil(n / 128)
    if tiles < sm_count:
        for cid, op, swap in pool:
            if cid not in sc.STREAM_K_IDS:
                continue
            out.append((f"{cid}/nd", op, 1, False, swap))
            for split in SPLITS:
                if k // split >= 128:
                    out.append((f"{cid}/split{split}", op, split, True, swap))
                    out.append((f"{cid}/split{split}nd", op, split, False, swap))
    return out


def make_arguments(cutlass, op, a, b, d, m, n, k, split, deterministic, swapped,
                   launch_with_pdl=True):
    """D = A B; swapped: the column-major-D kernel computes D^T = B^T A^T on the same memory."""
    if swapped:
        problem, a, b, d = cutlass.gemm.GemmCoord(n, m, k), b.t(), a.t(), d.t()
    else:
        problem = cutlass.gemm.GemmCoord(m, n, k)
    return cutlass.GemmArguments(operation=op, problem_size=problem, A=a, B=b, C=None, D=d,
                                 output_op=op.epilogue_type(1.0, 0.0), split_k_slices=split,
                                 deterministic=deterministic, launch_with_pdl=launch_with_pdl)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default=None,
                        help="comma-separated MxNxK list (default: the issue's 10 shapes)")
    parser.add_argument("--own-only", action="store_true",
                        help="compile only this script's candidates, not all SM90 bench kernels")
    options = parser.parse_args()
    sc.skip_if_no_sm90("bench_sm90_gemm")

    import torch

    import tilecraft as cutlass

    shapes = SHAPES if options.shapes is None else [
        tuple(int(v) for v in s.lower().split("x")) for s in options.shapes.split(",")]
    sc.header("SM90 bf16 TN GEMM: best of a fixed candidate list vs cuBLAS (torch.matmul)")
    candidates, describe_error = sc.build_candidates(sc.gemm_candidates, "GEMM")
    if candidates is None:
        print(f"RESULT: no candidates could be described ({describe_error})")
        return 1
    swapped, describe_error = sc.build_candidates(sc.swapped_gemm_candidates, "swapped GEMM")
    swapped = swapped or []
    for cid, op in candidates:
        print(f"candidate {cid}: {sc.label(op)}")
    for cid, op in swapped:
        print(f"candidate {cid}: {sc.label(op)}, column-major D, run swapped (D^T = B^T A^T) "
              f"where M <= 256 and N >= 4 M")
    print("variants: <id>/nd = deterministic=False (partial sums reduced in any order); "
          "tried on the stream-K kernels where 128x128 tiles < SMs")
    print(f"variants: <stream-K kernel>/splitS = a stream-K kernel with split_k_slices=S "
          f"(serial split-K), tried for S in {SPLITS} where 128x128 tiles < SMs")
    print(f"shapes: {len(shapes)} (M x N x K)")
    failed = sc.compile_ops([op for _, op in candidates + swapped], options.own_only)
    compiled = [(cid, op) for cid, op in candidates if op.procedural_name() not in failed]
    compiled_swapped = [(cid, op) for cid, op in swapped if op.procedural_name() not in failed]
    sm_count = torch.cuda.get_device_properties(0).multi_processor_count

    torch.manual_seed(0)
    sc.gpu_warmup()
    rows, ratios, problems = [], [], []
    for m, n, k in shapes:
        name = shape_text(m, n, k)
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        b = w.t()
        ref = torch.matmul(a.float(), w.float().t())
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        cublas = lambda: torch.matmul(a, b, out=out)  # noqa: E731
        cublas_ms = [sc.time_gpu(cublas, target_ms=TARGET_MS)]
        cublas_err = sc.max_rel_error(out, ref)

        results = {}  # variant id -> (ms, label, err)
        notes = []
        setups = {}
        for vid, op, split, deterministic, swap in variants(compiled, compiled_swapped, m, n, k,
                                                           sm_count):
            try:
                args = make_arguments(cutlass, op, a, b, d, m, n, k, split, deterministic, swap)
                d.fill_(float("nan"))
                op.run(args)
                torch.cuda.synchronize()
                err = sc.max_rel_error(d, ref)
                if not err <= TOLERANCE:
                    notes.append(f"WRONG {vid} err={err:.2e}")
                    continue
                ms = sc.time_gpu(lambda: op.run(args), target_ms=TARGET_MS)
                err_after = sc.max_rel_error(d, ref)
                if not err_after <= TOLERANCE:
                    notes.append(f"WRONG-after-timing {vid} err={err_after:.2e}")
                    continue
                results[vid] = (ms, sc.label(op) + (f"+split{split}" if split > 1 else "")
                                + ("" if deterministic else "+nondeterministic")
                                + ("+swapAB" if swap else ""), max(err, err_after))
                setups[vid] = (op, split, deterministic, swap)
            except Exception as exc:  # noqa: BLE001 - report, go on with the others
                notes.append(f"ERROR {vid}: {type(exc).__name__}: {exc}")
            finally:
                args = None
        cublas_ms.append(sc.time_gpu(cublas, target_ms=TARGET_MS))
        c_ms = min(cublas_ms)
        c_tf = sc.tflops(m, n, k, c_ms)
        if results:
            best_id = min(results, key=lambda v: results[v][0])
            b_ms, b_label, b_err = results[best_id]
            b_tf = sc.tflops(m, n, k, b_ms)
            ratio = b_tf / c_tf
            ratios.append((ratio, name))
            flag = "" if ratio >= MIN_TARGET else f" BELOW-{MIN_TARGET}"
            op, split, deterministic, swap = setups[best_id]
            plain = make_arguments(cutlass, op, a, b, d, m, n, k, split, deterministic, swap,
                                   launch_with_pdl=False)
            plain_tf = sc.tflops(m, n, k, sc.time_gpu(lambda: op.run(plain), target_ms=TARGET_MS))
            plain = None
            plain_err = sc.max_rel_error(d, ref)
            flag += f" best_without_pdl_tflops={plain_tf:.1f}" + (
                "" if plain_err <= TOLERANCE else f" WRONG-without-pdl err={plain_err:.2e}")
            print(f"shape={name} cublas_tflops={c_tf:.1f} best={best_id}:{b_label} "
                  f"tilecraft_tflops={b_tf:.1f} ratio={ratio:.3f}{flag} err={b_err:.1e} "
                  f"cublas_err={cublas_err:.1e}")
            rows.append([name, f"{c_tf:.0f}", b_label, f"{b_tf:.0f}", f"{ratio:.2f}"])
        else:
            problems.append(name)
            print(f"shape={name} cublas_tflops={c_tf:.1f} best=NONE (no candidate ran correctly) "
                  f"ratio=nan")
            rows.append([name, f"{c_tf:.0f}", "none", "-", "-"])
        all_tf = " ".join(f"{vid}={sc.tflops(m, n, k, r[0]):.0f}" for vid, r in results.items())
        print(f"  all TFLOP/s: {all_tf}  (cuBLAS runs: "
              f"{' '.join(f'{sc.tflops(m, n, k, t):.0f}' for t in cublas_ms)})")
        for note in notes:
            print(f"  {note}")
        sys.stdout.flush()
        a = w = b = ref = out = d = None  # free this shape's tensors before the next
        torch.cuda.empty_cache()

    print()
    from common import print_table

    print_table(["shape (MxNxK)", "cuBLAS TFLOP/s", "best tilecraft kernel", "tilecraft TFLOP/s",
                 "ratio"], rows)
    print()
    if ratios:
        gm = sc.geomean([r for r, _ in ratios])
        worst, worst_shape = min(ratios)
        complete = not problems  # a shape without a correct kernel fails both targets
        print(f"SUMMARY shapes={len(shapes)} measured={len(ratios)} geomean_ratio={gm:.3f} "
              f"(target >= {GEOMEAN_TARGET}: {sc.verdict(complete and gm >= GEOMEAN_TARGET)}) "
              f"min_ratio={worst:.3f} at {worst_shape} "
              f"(target >= {MIN_TARGET}: {sc.verdict(complete and worst >= MIN_TARGET)})")
    if problems or failed:
        print(f"SUMMARY problems: shapes without a correct tilecraft kernel: {problems or 'none'}; "
              f"kernels that did not compile: {len(failed)}")
        for name, error in failed.items():
            print(f"  not compiled: {name}: {error}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
