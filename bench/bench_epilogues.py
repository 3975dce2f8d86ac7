"""Custom fused epilogues (issue 15, deliverable 4): five epilogues that models use, each written
as a plain Python function, traced (`tilecraft.epilogue.trace`) and fused into one SM90 bf16 GEMM
kernel (`GemmOperationUniversal(..., visitor=True)`), against (b) cuBLAS + the same epilogue in
torch eager and (c) `torch.compile` (default mode) of the same torch function, in one process on
the same tensors.

  python bench/bench_epilogues.py [--shapes 4096x4096x4096,8192x8192x4096] [--cases a,b]
                                  [--candidates f1,f7,f2,f3,f5] [--out FILE.jsonl] [--no-overlap]
  python bench/bench_epilogues.py --dry-run [--compile-one [CASE]]      # no GPU needed

The five (bf16 A, B and D, f32 accumulation; A = x (M, K) row-major, B = w.t() with w (N, K)
contiguous, D (M, N) row-major; vectors and scalars of reductions are float32):
  bias_gelu_residual  D = gelu(acc + bias[n]) + R          (R full bf16, bias N values)
  swiglu              D = silu(acc) * U                    (U full bf16: the up projection,
                      an INPUT computed by a separate GEMM beforehand; the two halves of SwiGLU
                      as two GEMMs, the gate GEMM's epilogue combining them, since both are laid
                      out like D; the up GEMM is not timed on either side)
  fp8_amax            D = (acc * scale) rounded to float8_e4m3fn (a true fp8 D, 1 byte per
                      element), amax = max |acc * scale|.
  softmax_stats       D = acc (bf16), row_max = D.amax(dim=1), row_sum = D.sum(dim=1) (M float32
                      values each: the row statistics as aux outputs)
  scaled_residual     D = (alpha * acc + beta * C) * s     (C full bf16, s M values bf16)

Each epilogue is compiled on a few of bench/sm90_candidates.py's fused-GEMM tile configurations
(the fastest bf16 tiles found earlier at these sizes; default f1 f7 f2 f3 f5, and f7+fm f5+fm:
those tiles with the graph in fast math, for the epilogues whose activations have fast forms:
gelu and silu here), all kernels in one add_module call; the fused time reported is the best of those candidates measured in this
process, and the line says which (a choice among N configurations, not a tuned kernel).

Timing: bench/sm90_candidates.time_gpu (CUDA events around groups of back-to-back calls queued
behind torch.cuda._sleep, median of >= 10 groups, L2 not flushed, the same for all three sides).
torch eager and torch.compile are timed before and after the candidates, the faster run kept;
torch.compile's compile time is excluded (each function is compiled with dynamic=False and warmed
up on both shapes before anything is timed). Targets (issue 15): fused >= 1.3x eager and >= 1.1x
torch.compile at both shapes; (issue 31) the best fused kernel takes at most 1.05x the time of
its own tile without the epilogue (D = acc in bf16, compiled and timed beside it: "fused /
plain tile").

Numerics: every candidate's outputs (poisoned first) are checked before and after its timing
against the eager result and against the traced function itself run by torch on the float32
accumulator (x.float() @ w.float().t(), TF32 off); a wrong candidate is reported as WRONG and
never counted, and the script exits 1. A JSON line per (epilogue, shape) goes to --out (or
$BENCH_EPILOGUES_OUT), after a header line with the device.
"""

import argparse
import datetime
import json
import math
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_info
import sm90_candidates as sc

try:  # the skip path (no torch, no GPU) must still work: sm90_candidates reports it
    import torch
    import torch.nn.functional as F
except Exception:  # noqa: BLE001
    torch = F = None

SHAPES = [(4096, 4096, 4096), (8192, 8192, 4096)]
DEVICE = "cuda"
EAGER_TARGET, COMPILE_TARGET = 1.3, 1.1
OVERHEAD_TARGET = 1.05   # fused <= 1.05x the same GEMM (tile) without the epilogue
# Ids of sm90_candidates.fused_candidates()["erf"]: 128x256x64 coop 2x1, the same with
# IdentitySwizzle8, 256x128x64 coop 2x1, 128x128x64 ping-pong 2x1, 64x256x64 ping-pong 2x1 (a
# ping-pong kernel runs one warpgroup's epilogue while the other's mainloop runs).
DEFAULT_CANDIDATES = ("f1", "f7", "f2", "f3", "f5", "f7+fm", "f5+fm")
# A candidate id's suffix: the same tile with the graph in fast math (EpilogueGraph.fast_math:
# tanh.approx.f32, __expf, __fdividef), for the epilogues whose activations have fast forms.
FAST = "+fm"
FAST_FORMS = ("tanh", "sigmoid", "silu", "gelu", "gelu_tanh")
TARGET_MS = 100.0
FP8_SCALE = 32.0     # acc is about N(0, 1) (x is scaled by K^-1/2): |acc * 32| stays below 448
BF16_TOLERANCE = 1e-2
FP8_TOLERANCE = 0.13          # one e4m3 ulp (2^-3) of the largest value
# Share of elements whose fp8 rounding may differ: against the float32 function only accumulation
# order moves a value across a rounding midpoint; against eager, its bf16-rounded GEMM output does
# (a few percent: a bf16 rounding step is 1/16 of an e4m3 one; 3% measured on the CPU). A wrong
# rounding (truncation) differs on about half of them.
FP8_MAX_MISMATCH = {"ref": 0.01, "eager": 0.10}
REDUCTION_TOLERANCE = 1e-2


# ------------------------------------------------------------------------------------------------
# The epilogues. The tracer reads these functions' source (it does not run them); torch can run
# them too (on a float32 accumulator they are the reference). The names they call:


def gelu(x):
    return F.gelu(x)


def silu(x):
    return F.silu(x)


def epi_bias_gelu_residual(accum, bias, R):
    D = gelu(accum + bias) + R
    return D


def epi_swiglu(accum, U):
    D = silu(accum) * U
    return D


def epi_fp8_amax(accum, scale):
    y = accum * scale
    D = y.to(torch.float8_e4m3fn)
    amax = y.abs().max()
    return D, amax


def epi_softmax_stats(accum):
    D = accum
    row_max = D.amax(dim=1)
    row_sum = D.sum(dim=1)
    return D, row_max, row_sum


def epi_scaled_residual(accum, alpha, C, beta, s):
    D = (alpha * accum + beta * C) * s
    return D


# The torch functions: cuBLAS (torch.mm / torch.addmm, bf16) + the epilogue, run eagerly and
# compiled. They return the outputs in the order the epilogue function returns them.


def torch_bias_gelu_residual(x, w, bias, R):
    return (F.gelu(torch.addmm(bias, x, w.t())) + R,)


def torch_swiglu(x, w, U):
    return (F.silu(torch.mm(x, w.t())) * U,)


def torch_fp8_amax_bf16(x, w, scale):
    """Context: fp8-rounded values kept in bf16 (2 bytes per element), and amax."""
    y = torch.mm(x, w.t()) * scale
    return y.to(torch.float8_e4m3fn).to(torch.bfloat16), y.abs().amax().float()


def torch_fp8_amax(x, w, scale):
    """The function the fused kernel computes: a true fp8 output (1 byte per element), amax."""
    y = torch.mm(x, w.t()) * scale
    return y.to(torch.float8_e4m3fn), y.abs().amax().float()


def torch_softmax_stats(x, w):
    d = torch.mm(x, w.t())
    return d, d.amax(dim=1).float(), d.sum(dim=1, dtype=torch.float32)


def torch_scaled_residual(x, w, alpha, C, beta, s):
    return (torch.addmm(C, x, w.t(), beta=beta, alpha=alpha) * s,)


class Case:
    """One epilogue: its traced function, its outputs ((name, kind) in return order; kind 'D'
    (M, N) bf16, 'D8' (M, N) float8_e4m3fn, 'row' M float32 values, 'one' one
    float32 value), its inputs and its torch function."""

    def __init__(self, key, title, epi, outputs, make_inputs, torch_fn, torch_text, note="",
                 context_fn=None, context_text=""):
        self.key, self.title, self.epi, self.outputs = key, title, epi, outputs
        self.make_inputs, self.torch_fn, self.torch_text = make_inputs, torch_fn, torch_text
        self.note, self.context_fn, self.context_text = note, context_fn, context_text

    def output_names(self):
        return [name for name, _ in self.outputs]


def _randn(torch, shape, device, scale=1.0):
    return (torch.randn(*shape, device=device, dtype=torch.float32) * scale).to(torch.bfloat16)


def make_cases():
    import torch

    def bias_gelu_inputs(m, n, k, device):
        return {"bias": _randn(torch, (n,), device), "R": _randn(torch, (m, n), device)}

    def swiglu_inputs(m, n, k, device):
        return {"U": _randn(torch, (m, n), device)}

    def fp8_inputs(m, n, k, device):
        return {"scale": FP8_SCALE}

    def no_inputs(m, n, k, device):
        return {}

    def scaled_residual_inputs(m, n, k, device):
        return {"alpha": 1.25, "C": _randn(torch, (m, n), device), "beta": 0.75,
                "s": _randn(torch, (m, 1), device)}

    return [
        Case("bias_gelu_residual", "bias + GELU + residual add: D = gelu(acc + bias[n]) + R",
             epi_bias_gelu_residual, [("D", "D")], bias_gelu_inputs, torch_bias_gelu_residual,
             "F.gelu(torch.addmm(bias, x, w.t())) + R"),
        Case("swiglu", "SwiGLU-style: D = silu(acc) * U",
             epi_swiglu, [("D", "D")], swiglu_inputs, torch_swiglu,
             "F.silu(torch.mm(x, w_gate.t())) * U",
             note=("U (the up projection x @ w_up.t(), M x N bf16) is an INPUT, computed "
                   "beforehand by a separate GEMM and not timed on either side: the two halves "
                   "of SwiGLU as two GEMMs, the gate GEMM's epilogue combining them (both laid "
                   "out like D)")),
        Case("fp8_amax", "fp8 output with amax: D = fp8(acc * scale), amax = max|acc * scale|",
             epi_fp8_amax, [("D", "D8"), ("amax", "one")], fp8_inputs, torch_fp8_amax,
             "y = torch.mm(x, w.t()) * scale; (y.to(float8_e4m3fn), y.abs().amax().float())",
             note="bf16 operands, a true fp8 (e4m3) D written by the kernel's epilogue",
             context_fn=torch_fp8_amax_bf16,
             context_text="(y.to(float8_e4m3fn).to(bfloat16), y.abs().amax().float())"),
        Case("softmax_stats", "softmax statistics as aux outputs: D = acc, row max and row sum",
             epi_softmax_stats, [("D", "D"), ("row_max", "row"), ("row_sum", "row")],
             no_inputs, torch_softmax_stats,
             "d = torch.mm(x, w.t()); (d, d.amax(dim=1).float(), d.sum(dim=1, dtype=float32))",
             note="the kernel reduces the float32 values before D's bf16 rounding; torch "
                  "reduces the bf16 D"),
        Case("scaled_residual", "D = (alpha * acc + beta * C) * s, s one value per row",
             epi_scaled_residual, [("D", "D")], scaled_residual_inputs, torch_scaled_residual,
             "torch.addmm(C, x, w.t(), beta=beta, alpha=alpha) * s"),
    ]


def output_examples(torch, case, m, n, device):
    """Tensors shaped like each output (the tracer reads their shapes and dtypes)."""
    out = {}
    for name, kind in case.outputs:
        if kind in ("D", "D8"):
            dtype = torch.float8_e4m3fn if kind == "D8" else torch.bfloat16
            out[name] = torch.empty(m, n, device=device, dtype=dtype)
        elif kind == "row":
            out[name] = torch.empty(m, device=device, dtype=torch.float32)
        else:
            out[name] = torch.empty(1, device=device, dtype=torch.float32)
    return out


def trace_case(cutlass, torch, case, m, n, k):
    """The case's epilogue graph, traced on meta tensors of an (m, n) accumulator."""
    inputs = case.make_inputs(m, n, k, "meta")
    examples = dict(inputs)
    examples.update(output_examples(torch, case, m, n, "meta"))
    examples["accum"] = torch.empty(m, n, device="meta", dtype=torch.float32)
    graph = cutlass.epilogue.trace(case.epi, **examples)
    # The operands this script passes must be exactly the graph's (D is GemmArguments' D).
    given = set(inputs) | set(case.output_names())
    wanted = set(graph.input_names) | set(graph.scalar_names) | set(graph.output_names)
    if given != wanted or graph.d_output != "D":
        raise RuntimeError(f"{case.key}: the script passes {sorted(given)}, the graph takes "
                           f"{sorted(wanted)} with D output {graph.d_output!r}")
    if list(graph.output_names) != case.output_names():
        raise RuntimeError(f"{case.key}: graph outputs {list(graph.output_names)}, expected "
                           f"{case.output_names()}")
    return graph


def build_operations(cutlass, torch, cases, candidate_ids, m, n, k):
    """{case key: [(candidate id, op)]}: each case's graph on each chosen fused-GEMM candidate
    of sm90_candidates (its tile, cluster, schedule, scheduler, swizzle and A/B/C
    descriptions), visitor=True."""
    templates = dict(sc.fused_candidates()["erf"])
    unknown = [c for c in candidate_ids if c.removesuffix(FAST) not in templates]
    if unknown:
        raise SystemExit(f"--candidates: unknown {unknown}; known: {sorted(templates)}, each "
                         f"also with {FAST} (fast math)")
    out = {}
    for case in cases:
        precise = trace_case(cutlass, torch, case, m, n, k)
        fast = trace_case(cutlass, torch, case, m, n, k)
        fast.fast_math = True
        has_fast_forms = any(f":{name}(" in str(fast) for name in FAST_FORMS)
        ops = []
        for cid in candidate_ids:
            if cid.endswith(FAST) and not has_fast_forms:
                continue  # the same kernel as the precise one
            graph = fast if cid.endswith(FAST) else precise
            t = templates[cid.removesuffix(FAST)]
            C = t.C
            if any(kind == "D8" for _, kind in case.outputs):  # an fp8 D: C describes it
                C = cutlass.TensorDescription(cutlass.float8_e4m3, t.C.layout, 16)
            op = cutlass.GemmOperationUniversal(
                arch=90, tile_description=t.tile_description, A=t.A, B=t.B, C=C,
                epilogue_functor=graph, swizzling_functor=t.swizzling_functor, visitor=True)
            ops.append((cid, op))
        out[case.key] = ops
    return out


def build_plain_operations(cutlass, candidate_ids):
    """{tile id: op}: each candidate's tile with a plain epilogue (D = acc, bf16): "the same GEMM
    without the epilogue" the targets compare each fused kernel with."""
    templates = dict(sc.fused_candidates()["erf"])
    out = {}
    for cid in candidate_ids:
        base = cid.removesuffix(FAST)
        if base in out:
            continue
        t = templates[base]
        out[base] = cutlass.GemmOperationUniversal(
            arch=90, tile_description=t.tile_description, A=t.A, B=t.B, C=t.C,
            epilogue_functor=cutlass.LinearCombination(t.C.element, t.C.alignment,
                                                       cutlass.float32, cutlass.float32),
            swizzling_functor=t.swizzling_functor)
    return out


def time_plain(torch, cutlass, op, x, w, target_ms):
    """The plain kernel's time on x @ w.t() (its D checked against the float32 product first), or
    None where it does not run right."""
    m, k = x.shape
    n = w.shape[0]
    out = torch.full((m, n), float("nan"), device=DEVICE, dtype=torch.bfloat16)
    args = cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(m, n, k), A=x,
                                 B=w.t(), D=out, output_op=op.epilogue_type(1.0, 0.0))
    op.run(args)
    torch.cuda.synchronize()
    want = torch.matmul(x.float(), w.float().t())
    if not sc.max_rel_error(out.float().reshape(-1), want.reshape(-1)) <= BF16_TOLERANCE:
        return None
    return sc.time_gpu(lambda: op.run(args), target_ms=target_ms)


# ------------------------------------------------------------------------------------------------
# Checks.


def named(case, values):
    """{output name: tensor} of a function's result (one tensor, or a tuple in return order)."""
    if not isinstance(values, (tuple, list)):
        values = (values,)
    if len(values) != len(case.outputs):
        raise RuntimeError(f"{case.key}: {len(values)} results for outputs {case.output_names()}")
    return dict(zip(case.output_names(), values))


def reference(torch, case, x, w, inputs):
    """The epilogue function itself run by torch on the float32 accumulator."""
    acc = torch.matmul(x.float(), w.float().t())
    return named(case, case.epi(acc, **inputs))


def compare(torch, case, outputs, expected):
    """{output: error}: max |out - expected| / max |expected| (inf for NaN / Inf); for fp8-rounded
    outputs also the share of elements whose value differs ('<name>_mismatch')."""
    errors = {}
    for name, kind in case.outputs:
        out = outputs[name].float().reshape(-1)
        ref = expected[name].float().reshape(-1)
        if out.numel() != ref.numel():
            errors[name] = float("inf")
            continue
        errors[name] = sc.max_rel_error(out, ref)
        if kind == "D8":
            ref8 = ref.to(torch.float8_e4m3fn).float()  # a float32 reference rounded like D
            errors[name + "_mismatch"] = (out != ref8).float().mean().item()
    return errors


def wrong_outputs(case, errors, against="ref"):
    """The outputs whose errors are beyond their tolerance (empty: right); against: 'ref' (the
    float32 function) or 'eager'."""
    bad = []
    for name, kind in case.outputs:
        tolerance = {"D": BF16_TOLERANCE, "D8": FP8_TOLERANCE}.get(kind, REDUCTION_TOLERANCE)
        if not errors[name] <= tolerance:
            bad.append(f"{name} err={errors[name]:.2e} > {tolerance}")
        mismatch = errors.get(name + "_mismatch")
        limit = FP8_MAX_MISMATCH[against]
        if mismatch is not None and not mismatch <= limit:
            bad.append(f"{name} fp8 mismatch share={mismatch:.3f} > {limit}")
    return bad


def errors_text(errors):
    return ",".join(f"{k}:{v:.1e}" for k, v in errors.items())


# ------------------------------------------------------------------------------------------------
# Environment.


def driver_version():
    try:
        text = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                              check=False, capture_output=True, text=True,
                              timeout=20).stdout.strip()
        return text.splitlines()[0] if text else "unknown"
    except Exception:  # noqa: BLE001
        return "unknown"


def parse_shapes(text):
    if not text:
        return list(SHAPES)
    return [tuple(int(v) for v in s.lower().split("x")) for s in text.split(",")]


def start_compile(cutlass, ops, overlap):
    """add_module over all ops, in a thread when overlap (it releases the GIL, so torch.compile
    warms up meanwhile). Returns a function that waits and returns (seconds, error or None)."""
    state = {}

    def work():
        t0 = time.perf_counter()
        try:
            cutlass.compiler.add_module(ops)
        except BaseException as exc:  # noqa: BLE001 - one bad kernel must not stop the others
            state["error"] = f"{type(exc).__name__}: {exc}"
        state["seconds"] = time.perf_counter() - t0

    if not overlap:
        work()
        return lambda: (state["seconds"], state.get("error"))
    thread = threading.Thread(target=work, name="tilecraft-add-module", daemon=True)
    thread.start()

    def wait():
        thread.join()
        return state["seconds"], state.get("error")

    return wait


# ------------------------------------------------------------------------------------------------
# The dry run: tracing, descriptions, the torch functions checked on small CPU tensors, optionally
# one kernel compiled. No GPU.


def dry_run(options, cases, candidate_ids, shapes):
    import tilecraft as cutlass
    import torch

    m, n, k = shapes[0]
    by_case = build_operations(cutlass, torch, cases, candidate_ids, m, n, k)
    for case in cases:
        print(f"{case.key}: {case.title}")
        if case.note:
            print(f"  note: {case.note}")
        print(f"  torch: {case.torch_text}")
        graph = by_case[case.key][0][1]._graph
        print(f"  graph {graph.key}: {graph}")
        for cid, op in by_case[case.key]:
            print(f"  candidate {cid}: {sc.label(op)} {op.procedural_name()}")
        # epilogue_type takes the operands by name, as the timed runs pass them (CPU tensors here).
        ins = case.make_inputs(64, 48, 32, "cpu")
        outs = output_examples(torch, case, 64, 48, "cpu")
        by_case[case.key][0][1].epilogue_type(**ins, **{k_: v for k_, v in outs.items()
                                                        if k_ != "D"})
    # The torch functions and the checks, on the CPU at a small size: eager against the traced
    # function run by torch on the float32 accumulator.
    torch.manual_seed(0)
    problems = []
    for case in cases:
        sm, sn, sk = 128, 96, 256
        x = _randn(torch, (sm, sk), "cpu", sk ** -0.5)
        w = _randn(torch, (sn, sk), "cpu")
        ins = case.make_inputs(sm, sn, sk, "cpu")
        ref = reference(torch, case, x, w, ins)
        eager = named(case, case.torch_fn(x, w, **ins))
        errors = compare(torch, case, eager, ref)
        bad = wrong_outputs(case, errors, "eager")  # eager rounds the GEMM to bf16 first
        if case.context_fn is not None:
            context = named(case, case.context_fn(x, w, **ins))
            errors.update({f"context_{k_}": v for k_, v in
                           compare(torch, case, context, ref).items()})
        print(f"cpu check {case.key} {sm}x{sn}x{sk}: torch eager vs the traced function on f32: "
              f"{errors_text(errors)}" + (f" BAD {bad}" if bad else ""))
        if bad:
            problems.append(case.key)
    if options.compile_one is not None:
        keys = [c for c in options.compile_one.split(",") if c] or [cases[0].key]
        unknown = [key for key in keys if key not in by_case]
        if unknown:
            raise SystemExit(f"--compile-one: {unknown} not among the cases {sorted(by_case)}")
        ops = []
        for key in keys:
            cid, op = by_case[key][0]
            print(f"compile-one: {key} candidate {cid} {op.procedural_name()}")
            ops.append(op)
        sys.stdout.flush()
        t0 = time.perf_counter()
        cutlass.compiler.add_module(ops)
        print(f"compile-one: {len(ops)} kernel(s) compiled in {time.perf_counter() - t0:.1f} s, "
              f"is_compiled={[op.is_compiled() for op in ops]}")
        if not all(op.is_compiled() for op in ops):
            problems.append("compile-one")
    total = sum(len(v) for v in by_case.values())
    print(f"dry run: {len(cases)} epilogues, {total} operations described"
          + (f"; PROBLEMS: {problems}" if problems else ""))
    return 1 if problems else 0


# ------------------------------------------------------------------------------------------------
# The measurements.


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shapes", default=None, help="comma-separated MxNxK (default: "
                        + ",".join("x".join(map(str, s)) for s in SHAPES) + ")")
    parser.add_argument("--cases", default=None,
                        help="comma-separated epilogue keys (default: all)")
    parser.add_argument("--candidates", default=",".join(DEFAULT_CANDIDATES),
                        help="ids of sm90_candidates.fused_candidates()['erf'] to compile per "
                             "epilogue")
    parser.add_argument("--out", default=os.environ.get("BENCH_EPILOGUES_OUT"),
                        help="JSON lines output (default: $BENCH_EPILOGUES_OUT; none without)")
    parser.add_argument("--no-overlap", action="store_true",
                        help="compile the tilecraft kernels before warming up torch.compile "
                             "instead of at the same time")
    parser.add_argument("--target-ms", type=float, default=TARGET_MS,
                        help="measured GPU time per timing (>= 10 groups, median)")
    parser.add_argument("--dry-run", action="store_true",
                        help="trace, describe and check the torch functions on the CPU; no GPU")
    parser.add_argument("--compile-one", nargs="?", const="", default=None, metavar="CASE",
                        help="with --dry-run: compile the first candidate of CASE (a comma-"
                             "separated list compiles one per case; default: the first epilogue)")
    options = parser.parse_args()

    shapes = parse_shapes(options.shapes)
    candidate_ids = [c.strip() for c in options.candidates.split(",") if c.strip()]
    if not options.dry_run:
        sc.skip_if_no_sm90("bench_epilogues")

    import tilecraft as cutlass
    import torch

    cases = make_cases()
    if options.cases:
        wanted = [c.strip() for c in options.cases.split(",") if c.strip()]
        known = {c.key: c for c in cases}
        unknown = [c for c in wanted if c not in known]
        if unknown:
            raise SystemExit(f"--cases: unknown {unknown}; known: {sorted(known)}")
        cases = [known[c] for c in wanted]
    if options.dry_run:
        return dry_run(options, cases, candidate_ids, shapes)
    if options.compile_one is not None:
        raise SystemExit("--compile-one goes with --dry-run")

    sc.header("Custom fused epilogues (issue 15): one SM90 bf16 GEMM kernel with the traced "
              "epilogue vs cuBLAS + torch eager and vs torch.compile")
    commit = build_info.commit()
    props = torch.cuda.get_device_properties(0)
    driver = driver_version()
    print(f"driver: {driver}, CUDA (torch) {torch.version.cuda}, torch {torch.__version__}, "
          f"commit {commit}")
    print(f"targets: fused >= {EAGER_TARGET}x cuBLAS + torch eager and >= {COMPILE_TARGET}x "
          f"torch.compile (default mode, dynamic=False, compile time excluded) at each shape")
    print(f"fused: the best of {len(candidate_ids)} tile configurations per epilogue "
          f"({', '.join(candidate_ids)} of bench/sm90_candidates.py's fused candidates), all "
          f"measured in this process")
    out_file = None
    if options.out:
        os.makedirs(os.path.dirname(os.path.abspath(options.out)), exist_ok=True)
        out_file = open(options.out, "w")  # noqa: SIM115 - kept open, line by line
        out_file.write(_json({
            "record": "header", "bench": "bench_epilogues", "device": props.name,
            "sms": props.multi_processor_count, "driver": driver, "torch": torch.__version__,
            "cuda": torch.version.cuda, "commit": commit,
            "date": f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC",
            "candidates": candidate_ids, "targets": {"eager": EAGER_TARGET,
                                                     "compile": COMPILE_TARGET}}) + "\n")
        out_file.flush()

    m0, n0, k0 = shapes[0]
    by_case = build_operations(cutlass, torch, cases, candidate_ids, m0, n0, k0)
    for case in cases:
        for cid, op in by_case[case.key]:
            print(f"candidate {case.key}/{cid}: {sc.label(op)} {op.procedural_name()}")
    plain = build_plain_operations(cutlass, candidate_ids)
    all_ops = [op for ops in by_case.values() for _, op in ops] + list(plain.values())
    wait_compile = start_compile(cutlass, all_ops, overlap=not options.no_overlap)

    # torch.compile: one compiled function per torch function, warmed up on every shape (while
    # the tilecraft kernels compile, unless --no-overlap).
    torch.manual_seed(0)
    compiled, compile_seconds, compile_errors = {}, {}, {}
    for case in cases:
        for label_, fn in ((case.key, case.torch_fn), (case.key + "/context", case.context_fn)):
            if fn is None:
                continue
            compiled[label_] = torch.compile(fn, dynamic=False)
            for m, n, k in shapes:
                x = _randn(torch, (m, k), DEVICE, k ** -0.5)
                w = _randn(torch, (n, k), DEVICE)
                ins = case.make_inputs(m, n, k, DEVICE)
                t0 = time.perf_counter()
                try:
                    for _ in range(3):
                        compiled[label_](x, w, **ins)
                    torch.cuda.synchronize()
                except Exception as exc:  # noqa: BLE001 - reported, the case goes on without it
                    compile_errors[label_] = f"{type(exc).__name__}: {exc}"
                    print(f"torch.compile FAILED for {label_}: {compile_errors[label_]}")
                    break
                compile_seconds[(label_, (m, n, k))] = time.perf_counter() - t0
                x = w = ins = None
    print("torch.compile warm-up (compile + 3 calls) s: " + " ".join(
        f"{lbl}@{'x'.join(map(str, s))}={v:.1f}" for (lbl, s), v in compile_seconds.items()))
    seconds, error = wait_compile()
    print(f"compile: add_module of {len(all_ops)} kernels took {seconds:.1f} s"
          + (" (overlapped with the torch.compile warm-up)" if not options.no_overlap else ""))
    if error:
        print(f"compile: add_module raised (other kernels were still built): {error}")
    failed = {op.procedural_name() for op in all_ops if not op.is_compiled()}
    for name in sorted(failed):
        print(f"compile: NOT compiled, left out of the measurements: {name}")
    torch.cuda.empty_cache()
    sys.stdout.flush()

    sc.gpu_warmup()
    rows, problems, records = [], [], []
    for case in cases:
        print()
        print(f"## {case.key}: {case.title}")
        print(f"   torch (eager and compiled): {case.torch_text}")
        if case.note:
            print(f"   note: {case.note}")
        candidates = [(cid, op) for cid, op in by_case[case.key]
                      if op.procedural_name() not in failed]
        plain_ok = {c: op for c, op in plain.items() if op.procedural_name() not in failed}
        for m, n, k in shapes:
            record = measure(torch, cutlass, case, candidates, compiled, compile_errors,
                             (m, n, k), options.target_ms, plain_ok)
            record.update({"record": "result", "device": props.name, "commit": commit,
                           "candidates_configured": len(by_case[case.key]),
                           "candidates_compiled": len(candidates),
                           "torch_compile_warmup_s": compile_seconds.get((case.key, (m, n, k)))})
            records.append(record)
            if out_file is not None:
                out_file.write(_json(record) + "\n")
                out_file.flush()
            if record["problem"]:
                problems.append(f"{case.key}@{record['shape']}: {record['problem']}")
            rows.append([case.key, record["shape"], f"{record['eager_ms']:.3f}",
                         _ms(record["compile_ms"]), _ms(record["fused_ms"]),
                         record["best_label"] or "none",
                         _x(record["speedup_vs_eager"]), _x(record["speedup_vs_compile"]),
                         _x(record["fused_vs_plain"]), "yes" if record["met"] else "no"])
            torch.cuda.empty_cache()

    print()
    from common import print_table

    print_table(["epilogue", "shape (MxNxK)", "eager ms", "compile ms", "fused ms",
                 "best fused kernel", "vs eager", "vs compile", "fused / plain tile",
                 "targets met"], rows)
    met = sum(1 for r in records if r["met"])
    overhead_met = sum(1 for r in records if r["met_overhead"])
    print(f"SUMMARY epilogues={len(cases)} shapes={len(shapes)} measured={len(records)} "
          f"targets_met={met}/{len(records)} (>= {EAGER_TARGET}x eager and >= {COMPILE_TARGET}x "
          f"torch.compile each) overhead_met={overhead_met}/{len(records)} (fused <= "
          f"{OVERHEAD_TARGET}x the same tile without the epilogue)")
    if failed:
        print(f"SUMMARY kernels not compiled: {len(failed)} of {len(all_ops)}")
    if problems:
        print("SUMMARY PROBLEMS (wrong or missing fused results):")
        for p in problems:
            print(f"  {p}")
    if out_file is not None:
        out_file.write(_json({"record": "summary", "measured": len(records),
                                   "targets_met": met, "problems": problems,
                                   "not_compiled": sorted(failed)}) + "\n")
        out_file.close()
    return 1 if problems else 0


def _json(value):
    """JSON text with non-finite floats as strings ('inf', 'nan'): strict JSON readers accept it."""
    def clean(v):
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        if isinstance(v, dict):
            return {str(k): clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        return v
    return json.dumps(clean(value), allow_nan=False)


def _ms(v):
    return "-" if v is None else f"{v:.3f}"


def _x(v):
    return "-" if v is None else f"{v:.2f}"


def measure(torch, cutlass, case, candidates, compiled, compile_errors, shape, target_ms,
            plain=None):
    """One epilogue at one shape: eager, torch.compile, every candidate, and the best one's tile
    without the epilogue (``plain``: {tile id: op}); returns the record."""
    m, n, k = shape
    name = f"{m}x{n}x{k}"
    x = _randn(torch, (m, k), DEVICE, k ** -0.5)
    w = _randn(torch, (n, k), DEVICE)
    ins = case.make_inputs(m, n, k, DEVICE)
    ref = reference(torch, case, x, w, ins)

    eager_fn = lambda: case.torch_fn(x, w, **ins)
    eager_out = named(case, eager_fn())
    torch.cuda.synchronize()
    eager_err = compare(torch, case, eager_out, ref)
    eager_ms = [sc.time_gpu(eager_fn, target_ms=target_ms)]

    comp = compiled.get(case.key) if case.key not in compile_errors else None
    comp_fn = (lambda: comp(x, w, **ins)) if comp is not None else None
    comp_err, comp_ms = None, []
    if comp_fn is not None:
        comp_out = named(case, comp_fn())
        torch.cuda.synchronize()
        comp_err = compare(torch, case, comp_out, eager_out)
        comp_out = None
        comp_ms.append(sc.time_gpu(comp_fn, target_ms=target_ms))

    mm_out = torch.empty(m, n, device=DEVICE, dtype=torch.bfloat16)
    mm_ms = sc.time_gpu(lambda: torch.mm(x, w.t(), out=mm_out), target_ms=target_ms)
    mm_out = None

    # The fused kernel's outputs: D is GemmArguments' D, the others go by name in output_op.
    outputs = output_examples(torch, case, m, n, DEVICE)
    extra = {k_: v for k_, v in outputs.items() if k_ != "D"}
    results, notes, wrong = {}, [], []
    for cid, op in candidates:
        args = None
        try:
            args = cutlass.GemmArguments(
                operation=op, problem_size=cutlass.gemm.GemmCoord(m, n, k), A=x, B=w.t(),
                D=outputs["D"], output_op=op.epilogue_type(**ins, **extra))
            for t in outputs.values():
                t.fill_(float("nan"))
            op.run(args)
            torch.cuda.synchronize()
            err_ref = compare(torch, case, outputs, ref)
            err_eager = compare(torch, case, outputs, eager_out)
            bad = [f"vs f32 function: {b}" for b in wrong_outputs(case, err_ref)] + \
                [f"vs eager: {b}" for b in wrong_outputs(case, err_eager, "eager")]
            if bad:
                wrong.append(f"WRONG {cid}: {'; '.join(bad)}")
                continue
            ms = sc.time_gpu(lambda op=op, args=args: op.run(args), target_ms=target_ms)
            torch.cuda.synchronize()
            after = compare(torch, case, outputs, ref)
            bad = wrong_outputs(case, after)
            if bad:
                wrong.append(f"WRONG-after-timing {cid}: {'; '.join(bad)}")
                continue
            results[cid] = (ms, sc.label(op), err_ref, err_eager)
        except Exception as exc:  # noqa: BLE001 - report, go on with the others
            notes.append(f"ERROR {cid}: {type(exc).__name__}: {exc}")
        finally:
            args = None

    eager_ms.append(sc.time_gpu(eager_fn, target_ms=target_ms))
    if comp_fn is not None:
        comp_ms.append(sc.time_gpu(comp_fn, target_ms=target_ms))
    context = {}
    if case.context_fn is not None:
        context_fn = lambda: case.context_fn(x, w, **ins)
        context["eager_ms"] = sc.time_gpu(context_fn, target_ms=target_ms)
        context_comp = compiled.get(case.key + "/context")
        if context_comp is not None and case.key + "/context" not in compile_errors:
            context["compile_ms"] = sc.time_gpu(lambda: context_comp(x, w, **ins),
                                                target_ms=target_ms)
    e_ms = min(eager_ms)
    c_ms = min(comp_ms) if comp_ms else None

    record = {"case": case.key, "title": case.title, "shape": name, "m": m, "n": n, "k": k,
              "torch": case.torch_text, "note": case.note, "eager_ms": e_ms,
              "eager_runs_ms": eager_ms, "compile_ms": c_ms, "compile_runs_ms": comp_ms,
              "compile_error": compile_errors.get(case.key), "cublas_mm_ms": mm_ms,
              "eager_err_vs_ref": eager_err, "compile_err_vs_eager": comp_err,
              "candidates_ms": {c: r[0] for c, r in results.items()},
              "wrong": wrong, "errors": notes, "fused_ms": None, "best": None,
              "best_label": None, "speedup_vs_eager": None, "speedup_vs_compile": None,
              "met_eager": False, "met_compile": False, "met": False, "problem": None,
              "plain_same_tile_ms": None, "fused_vs_plain": None, "met_overhead": False,
              "targets": {"eager": EAGER_TARGET, "compile": COMPILE_TARGET,
                          "overhead": OVERHEAD_TARGET}}
    if results:
        best = min(results, key=lambda c: results[c][0])
        f_ms, f_label, f_err_ref, f_err_eager = results[best]
        vs_eager = e_ms / f_ms
        vs_comp = c_ms / f_ms if c_ms else None
        record.update({"fused_ms": f_ms, "best": best, "best_label": f_label,
                       "fused_err_vs_ref": f_err_ref, "fused_err_vs_eager": f_err_eager,
                       "speedup_vs_eager": vs_eager, "speedup_vs_compile": vs_comp,
                       "met_eager": vs_eager >= EAGER_TARGET,
                       "met_compile": vs_comp is not None and vs_comp >= COMPILE_TARGET})
        record["met"] = record["met_eager"] and record["met_compile"]
        comp_text = (f"compile_ms={c_ms:.4f} vs_compile={vs_comp:.3f} (target >= {COMPILE_TARGET}: "
                     f"{sc.verdict(record['met_compile'])})" if c_ms else
                     f"compile_ms=none ({compile_errors.get(case.key, 'not run')}) vs_compile=nan "
                     f"(target >= {COMPILE_TARGET}: FAIL)")
        print(f"{case.key} shape={name} fused_ms={f_ms:.4f} best={best}:{f_label} (best of "
              f"{len(results)} measured of {len(candidates)} compiled) eager_ms={e_ms:.4f} "
              f"vs_eager={vs_eager:.3f} (target >= {EAGER_TARGET}: "
              f"{sc.verdict(record['met_eager'])}) {comp_text} cublas_mm_ms={mm_ms:.4f} "
              f"fused_tflops={sc.tflops(m, n, k, f_ms):.0f}")
        plain_op = (plain or {}).get(best.removesuffix(FAST))
        plain_ms = time_plain(torch, cutlass, plain_op, x, w, target_ms) if plain_op else None
        if plain_ms:
            record.update({"plain_same_tile_ms": plain_ms, "fused_vs_plain": f_ms / plain_ms,
                           "met_overhead": f_ms / plain_ms <= OVERHEAD_TARGET})
            print(f"  the same tile without the epilogue ({best.removesuffix(FAST)}, D = acc in "
                  f"bf16): {plain_ms:.4f} ms; fused / plain = {f_ms / plain_ms:.3f} (target <= "
                  f"{OVERHEAD_TARGET}: {sc.verdict(record['met_overhead'])})")
        else:
            print(f"  the same tile without the epilogue: "
                  f"{'not built' if plain_op is None else 'WRONG or not run'}")
        print(f"  errors: fused vs eager {errors_text(f_err_eager)}; fused vs f32 function "
              f"{errors_text(f_err_ref)}; eager vs f32 function {errors_text(eager_err)}"
              + (f"; torch.compile vs eager {errors_text(comp_err)}" if comp_err else ""))
        if case.key == "swiglu":
            # Context: with the up GEMM (cuBLAS, the same on every side) counted too.
            e2e_eager = (e_ms + mm_ms) / (f_ms + mm_ms)
            e2e_comp = (c_ms + mm_ms) / (f_ms + mm_ms) if c_ms else None
            record["context"] = {"up_gemm_ms": mm_ms, "with_up_gemm_vs_eager": e2e_eager,
                                 "with_up_gemm_vs_compile": e2e_comp}
            print(f"  context: U is an input; counting its GEMM (cuBLAS {mm_ms:.4f} ms) on every "
                  f"side: vs eager {e2e_eager:.3f}, vs compile "
                  + (f"{e2e_comp:.3f}" if e2e_comp else "nan") + " (not the targets' figure)")
        if context:
            context.update({"torch": case.context_text,
                            "vs_eager": context["eager_ms"] / f_ms,
                            "vs_compile": (context["compile_ms"] / f_ms
                                           if "compile_ms" in context else None)})
            record["context"] = context
            print(f"  context: torch writing a true fp8 D {case.context_text}: eager "
                  f"{context['eager_ms']:.4f} ms (fused vs it {context['vs_eager']:.3f}), "
                  f"compile " + (f"{context['compile_ms']:.4f} ms (fused vs it "
                                 f"{context['vs_compile']:.3f})" if context["vs_compile"]
                                 else "not run") + " (not the targets' figure: not the same "
                  "function)")
    else:
        record["problem"] = "no candidate ran correctly" + (f" ({wrong[0]})" if wrong else "")
        print(f"{case.key} shape={name} fused=NONE (no candidate ran correctly) "
              f"eager_ms={e_ms:.4f} compile_ms={_ms(c_ms)} targets: FAIL")
    if wrong:
        record["problem"] = record["problem"] or f"{len(wrong)} candidate(s) WRONG"
    print("  all fused ms: " + " ".join(f"{c}={r[0]:.4f}" for c, r in results.items())
          + f"  (eager runs {' '.join(f'{t:.4f}' for t in eager_ms)}; compile runs "
          f"{' '.join(f'{t:.4f}' for t in comp_ms) or 'none'})")
    for line in wrong + notes:
        print(f"  {line}")
    sys.stdout.flush()
    return record


if __name__ == "__main__":
    sys.exit(main())
