"""Problem sets, side-by-side timing against cuBLAS (through torch) and the records that
``tilecraft profile``, ``tilecraft tune`` and ``bench/`` write.

A problem is ``MxNxK`` (``LxMxNxK`` for a batch) with a dtype (bf16, f16, tf32, f32 = f32
accuracy, f64, int8, e4m3, e4m3-fast) and an epilogue (``none`` or ``bias_gelu``). A and B are
TN (A row-major (M, K), B column-major (K, N)), as a linear layer's weight is stored. Every
timing is a median over launches each preceded by a write of twice the L2 cache size (cold L2),
on one CUDA stream, with CUDA events.
"""

import json
import math
import re
import statistics
import time

DTYPES = ("bf16", "f16", "tf32", "f32", "f64", "int8", "e4m3", "e4m3-fast")
EPILOGUES = ("none", "bias_gelu")


class Problem:
    __slots__ = ("m", "n", "k", "batch", "dtype", "epilogue", "name")

    def __init__(self, m, n, k, batch=1, dtype="bf16", epilogue="none", name=""):
        for label, value in (("M", m), ("N", n), ("K", k), ("batch", batch)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"problem {label}: expected an integer >= 1, got {value!r}")
        if dtype not in DTYPES:
            raise ValueError(f"problem dtype: expected one of {list(DTYPES)}, got {dtype!r}")
        if epilogue not in EPILOGUES:
            raise ValueError(f"problem epilogue: expected one of {list(EPILOGUES)}, got "
                             f"{epilogue!r}")
        if epilogue != "none" and dtype not in ("bf16", "f16"):
            raise ValueError(f"problem epilogue: {epilogue} is measured for bf16 and f16, got "
                             f"dtype {dtype}")
        self.m, self.n, self.k, self.batch = m, n, k, batch
        self.dtype, self.epilogue, self.name = dtype, epilogue, name

    @property
    def shape_text(self):
        core = f"{self.m}x{self.n}x{self.k}"
        return core if self.batch == 1 else f"{self.batch}x{core}"

    @property
    def label(self):
        tail = "" if self.epilogue == "none" else " +" + self.epilogue
        name = f" {self.name}" if self.name else ""
        return f"{self.dtype} {self.shape_text}{tail}{name}"

    @property
    def flops(self):
        return 2.0 * self.m * self.n * self.k * self.batch

    def __repr__(self):
        return f"Problem({self.label})"


_SHAPE = re.compile(r"^(?:(\d+)x)?(\d+)x(\d+)x(\d+)$")


def parse_shape(text):
    """``MxNxK`` or ``LxMxNxK`` -> (L, M, N, K)."""
    match = _SHAPE.match(text.strip().lower())
    if not match:
        raise ValueError(f"shape: expected MxNxK or LxMxNxK (e.g. 4096x4096x4096), got {text!r}")
    batch, m, n, k = match.groups()
    return int(batch or 1), int(m), int(n), int(k)


def problems_from(shapes=(), dtypes=("bf16",), epilogue="none", file=None):
    """Problems from shape strings times dtypes, and from a file: JSON (a list of objects with
    m, n, k and optional batch, dtype, epilogue, name) or text (one ``MxNxK [dtype] [epilogue]
    [name]`` per line, ``#`` comments)."""
    problems = []
    for shape in shapes:
        batch, m, n, k = parse_shape(shape)
        for dtype in dtypes:
            problems.append(Problem(m, n, k, batch, dtype, epilogue))
    if file is not None:
        with open(file) as f:
            text = f.read()
        if text.lstrip().startswith("["):
            for i, item in enumerate(json.loads(text)):
                if not isinstance(item, dict):
                    raise ValueError(f"{file}[{i}]: expected an object with m, n, k, got {item!r}")
                unknown = set(item) - {"m", "n", "k", "batch", "dtype", "epilogue", "name"}
                if unknown:
                    raise ValueError(f"{file}[{i}]: unknown keys {sorted(unknown)}")
                try:
                    problems.append(Problem(item["m"], item["n"], item["k"], item.get("batch", 1),
                                            item.get("dtype", dtypes[0]),
                                            item.get("epilogue", epilogue), item.get("name", "")))
                except KeyError as missing:
                    raise ValueError(f"{file}[{i}]: missing {missing}") from None
        else:
            for number, line in enumerate(text.splitlines(), 1):
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                fields = line.split()
                try:
                    batch, m, n, k = parse_shape(fields[0])
                    dtype = fields[1] if len(fields) > 1 else dtypes[0]
                    epi = fields[2] if len(fields) > 2 else epilogue
                    problems.append(Problem(m, n, k, batch, dtype, epi, " ".join(fields[3:])))
                except ValueError as error:
                    raise ValueError(f"{file}:{number}: {error}") from None
    if not problems:
        raise ValueError("problems: expected at least one (--shape or --file), got none")
    return problems


# ---- operands and the two sides -------------------------------------------------------------

def _torch():
    import torch

    return torch


def operands(problem, device="cuda"):
    """Fresh random A, B (and bias, scales) for the problem, TN."""
    torch = _torch()
    g = torch.Generator(device=device)
    g.manual_seed(1234 + problem.m * 7 + problem.n * 13 + problem.k)
    lead = (problem.batch,) if problem.batch > 1 else ()
    dt = problem.dtype

    def rand(*shape, dtype):
        return (torch.rand(*shape, generator=g, device=device, dtype=torch.float32) * 2 - 1).to(dtype)

    if dt in ("bf16", "f16"):
        dtype = torch.bfloat16 if dt == "bf16" else torch.float16
        A = rand(*lead, problem.m, problem.k, dtype=dtype)
        B = rand(*lead, problem.n, problem.k, dtype=dtype).transpose(-1, -2)
    elif dt in ("tf32", "f32", "f64"):
        dtype = torch.float64 if dt == "f64" else torch.float32
        A = rand(*lead, problem.m, problem.k, dtype=dtype)
        B = rand(*lead, problem.n, problem.k, dtype=dtype).transpose(-1, -2)
    elif dt == "int8":
        A = torch.randint(-8, 8, (*lead, problem.m, problem.k), generator=g, device=device,
                          dtype=torch.int8)
        B = torch.randint(-8, 8, (*lead, problem.n, problem.k), generator=g, device=device,
                          dtype=torch.int8).transpose(-1, -2)
    else:
        A = rand(*lead, problem.m, problem.k, dtype=torch.float8_e4m3fn)
        B = rand(*lead, problem.n, problem.k, dtype=torch.float8_e4m3fn).transpose(-1, -2)
    extra = {}
    if problem.epilogue == "bias_gelu":
        extra["bias"] = rand(problem.n, dtype=A.dtype)
    if dt.startswith("e4m3"):
        extra["scale_a"] = torch.tensor([0.5], device=device)
        extra["scale_b"] = torch.tensor([2.0], device=device)
    return A, B, extra


def cublas_call(problem, A, B, extra):
    """The same product through torch (cuBLAS / cuBLASLt), as a function of nothing."""
    torch = _torch()
    dt = problem.dtype
    if problem.epilogue == "bias_gelu":
        bias = extra["bias"]
        return lambda: torch._addmm_activation(bias, A, B, use_gelu=True)
    if dt == "int8":
        if problem.batch > 1:
            return lambda: [torch._int_mm(A[i], B[i]) for i in range(problem.batch)]
        return lambda: torch._int_mm(A, B)
    if dt.startswith("e4m3"):
        fast = dt == "e4m3-fast"
        return lambda: torch._scaled_mm(A, B, scale_a=extra["scale_a"], scale_b=extra["scale_b"],
                                        out_dtype=torch.bfloat16, use_fast_accum=fast)
    if problem.batch > 1:
        return lambda: torch.bmm(A, B)
    return lambda: torch.mm(A, B)


def cublas_context(problem):
    """torch's TF32 switch as the dtype asks (tf32: on; f32: off)."""
    torch = _torch()

    class _Switch:
        def __enter__(self):
            self.saved = torch.backends.cuda.matmul.allow_tf32
            torch.backends.cuda.matmul.allow_tf32 = problem.dtype == "tf32"

        def __exit__(self, *exc):
            torch.backends.cuda.matmul.allow_tf32 = self.saved

    return _Switch()


def gemm_kwargs(problem, extra):
    kwargs = {}
    if problem.epilogue == "bias_gelu":
        kwargs.update(bias=extra["bias"], activation="gelu_tanh")
    if problem.dtype.startswith("e4m3"):
        kwargs.update(scale_a=extra["scale_a"], scale_b=extra["scale_b"],
                      use_fast_accum=problem.dtype == "e4m3-fast")
    if problem.dtype in ("tf32", "f32"):
        kwargs["allow_tf32"] = problem.dtype == "tf32"
    return kwargs


class Timer:
    """Median device time of a launch on the current stream, each launch after an L2 flush.

    Between the flush and the start event the stream spins for about 0.2 ms (``torch.cuda._sleep``)
    so that the host has queued the launch before the start event fires: the time is the device's
    alone, not the host's dispatch of ``fn`` (torch's ``relu(conv2d(x, w, b))`` spends tens of
    microseconds on the host in three launches, which would otherwise count as device time)."""

    HOST_SLACK_CYCLES = 400_000  # ~0.2 ms at the H100's clocks

    def __init__(self, device="cuda"):
        torch = _torch()
        props = torch.cuda.get_device_properties(device)
        l2 = getattr(props, "L2_cache_size", 50 * 2**20) or 50 * 2**20
        self.flush = torch.empty(2 * l2, dtype=torch.uint8, device=device)
        self.torch = torch

    def median_us(self, fn, repeats=20, warmup=3, max_seconds=2.0):
        torch = self.torch
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        times = []
        deadline = time.perf_counter() + max_seconds
        for _ in range(repeats):
            self.flush.zero_()
            torch.cuda._sleep(self.HOST_SLACK_CYCLES)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) * 1000.0)
            if time.perf_counter() > deadline and len(times) >= 5:
                break
        return statistics.median(times)


def relative_error(got, want):
    """max |got - want| / max |want| in float64, over every element."""
    g, w = got.double(), want.double()
    return float((g - w).abs().max() / w.abs().max().clamp_min(1e-30))


def reference(problem, A, B, extra):
    """The float64 result the problem asks for (fp8 with its scales, bias + tanh GELU)."""
    torch = _torch()
    a, b = A.double(), B.double()
    out = a @ b
    if problem.dtype.startswith("e4m3"):
        out = out * float(extra["scale_a"]) * float(extra["scale_b"])
    if problem.epilogue == "bias_gelu":
        out = torch.nn.functional.gelu(out + extra["bias"].double(), approximate="tanh")
    return out


def profile_problem(problem, top=3, max_candidates=None, max_seconds=None, force=False,
                    repeats=20, timer=None):
    """Tunes the problem (or uses its stored winner), runs and checks the tuned op, and times it
    beside cuBLAS; returns a record (dict)."""
    import tilecraft
    from tilecraft import tuning as tuning_module

    torch = _torch()
    timer = timer or Timer()
    A, B, extra = operands(problem)
    kwargs = gemm_kwargs(problem, extra)
    record = {"problem": problem.label, "dtype": problem.dtype, "epilogue": problem.epilogue,
              "m": problem.m, "n": problem.n, "k": problem.k, "batch": problem.batch,
              "device": torch.cuda.get_device_name()}
    started = time.perf_counter()
    plan = tilecraft.plan_gemm(A, B, tuning="force" if force else "blocking",
                               max_candidates=max_candidates, max_seconds=max_seconds, **kwargs)
    record["plan_seconds"] = round(time.perf_counter() - started, 3)
    state = plan.state
    record["kernel"] = state["kernel_name"]
    record["reason"] = state["reason"]
    ours = lambda: plan._launch(A, B, None, None, extra.get("bias"), None)  # noqa: E731
    with cublas_context(problem):
        theirs = cublas_call(problem, A, B, extra)
        want = reference(problem, A, B, extra)
        got = ours()
        torch.cuda.synchronize()
        record["error"] = relative_error(got, want)
        base = theirs()
        if isinstance(base, list):
            base = torch.stack(base)
        record["cublas_error"] = relative_error(base, want)
        # Alternate the two sides so that clocks and heat treat them alike.
        ours_us, theirs_us = [], []
        for _ in range(2):
            ours_us.append(timer.median_us(ours, repeats))
            theirs_us.append(timer.median_us(theirs, repeats))
    record["tilecraft_us"] = min(ours_us)
    record["cublas_us"] = min(theirs_us)
    record["tilecraft_tflops"] = problem.flops / record["tilecraft_us"] / 1e6
    record["cublas_tflops"] = problem.flops / record["cublas_us"] / 1e6
    record["ratio"] = record["cublas_us"] / record["tilecraft_us"]
    # The tuner's own measurements of the candidates it tried (the same cold-L2 median).
    args = arguments(problem, A, B, extra, got)
    tuned = tuning_module.find_tuned(args, allow_tf32=problem.dtype != "f32")
    candidates = []
    if tuned:
        measured = [c for c in tuned["candidates"] if c["outcome"] == "ok"]
        measured.sort(key=lambda c: c["median_us"])
        for c in measured[:top]:
            candidates.append({"kernel": c["kernel_name"], "us": c["median_us"],
                               "tflops": c["tflops"]})
        record["skipped"] = [{"kernel": c["kernel_name"], "outcome": c["outcome"],
                              "reason": c["reason"]}
                             for c in tuned["candidates"] if c["outcome"] != "ok"]
        record["clocks"] = tuned["clocks"]
    record["candidates"] = candidates
    return record


def arguments(problem, A, B, extra, out):
    """The tilecraft.api GemmArguments of the problem on these operands."""
    from tilecraft.api.arguments import EpilogueArguments, GemmArguments

    epilogue = EpilogueArguments(bias=extra.get("bias"),
                                 activation="gelu_tanh" if extra.get("bias") is not None else None,
                                 scale_a=extra.get("scale_a"), scale_b=extra.get("scale_b"))
    return GemmArguments(A, B, out, plan_accumulator(problem), epilogue,
                         problem.dtype == "e4m3-fast")


def output(problem, A, B):
    torch = _torch()
    dtype = {"int8": torch.int32, "e4m3": torch.bfloat16, "e4m3-fast": torch.bfloat16}.get(
        problem.dtype, A.dtype)
    lead = (problem.batch,) if problem.batch > 1 else ()
    return torch.empty(*lead, problem.m, problem.n, dtype=dtype, device=A.device)


def precompile(problems, max_candidates=None, force=False):
    """Compiles the tuning candidates of all problems at once (every compile job busy), one
    kernel per module as the tuner does, so that tuning them after only runs and times.
    Problems with a stored winner are left out unless ``force``."""
    from tilecraft import _core, tuning

    for allow_tf32 in (True, False):
        group = [p for p in problems if (p.dtype != "f32") == allow_tf32]
        if not group:
            continue
        args = []
        for problem in group:
            A, B, extra = operands(problem)
            made = arguments(problem, A, B, extra, output(problem, A, B))
            if force or tuning.find_tuned(made, allow_tf32) is None:
                args.append(made)
        if args:
            _core.tune.precompile(args, max_candidates, allow_tf32)


def plan_accumulator(problem):
    from tilecraft import DataType

    return {"f64": DataType.f64, "int8": DataType.s32}.get(problem.dtype, DataType.f32)


def write_csv(records, path):
    import csv

    fields = ["problem", "dtype", "epilogue", "batch", "m", "n", "k", "kernel", "tilecraft_us",
              "cublas_us", "tilecraft_tflops", "cublas_tflops", "ratio", "error", "cublas_error",
              "reason", "device"]
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for r in records:
            writer.writerow(r)


def write_json(records, path):
    with open(path, "w") as f:
        json.dump(records, f, indent=1)


def write_chart(records, path, title=None):
    from tilecraft._chart import bar_chart

    device = records[0].get("device", "") if records else ""
    rows = [(r["problem"], r.get("ratio", math.nan)) for r in records]
    bar_chart(rows, title or f"TILECRAFT / CUBLAS (TORCH), {device}",
              "BAR: CUBLAS TIME / TILECRAFT TIME (LINE AT 1.0, HIGHER IS FASTER)", path)


def geometric_mean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan
