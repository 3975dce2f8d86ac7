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
import os
import re
import stat
import statistics
import time

from tilecraft import family_problems, interop

DTYPES = ("bf16", "f16", "tf32", "f32", "f64", "int8", "e4m3", "e4m3-fast")
EPILOGUES = ("none", "bias_gelu")
# Each extent of a problem: what CUTLASS's GemmCoord (int) holds.
MAX_EXTENT = 2**31 - 1
# A problem file is read whole: a regular file of at most this many bytes (tens of thousands of
# problems).
MAX_FILE_BYTES = 1 << 20
MAX_NAME_CHARS = 200

# The errors that end one problem's run without ending the others': tilecraft's refusals and
# failures (ValueError, TypeError, RuntimeError and their kinds UnsupportedError, CompileError,
# CudaError), torch's (out of memory is a RuntimeError) and a host allocation's.
PROBLEM_ERRORS = (ValueError, TypeError, RuntimeError, MemoryError)


def shown(value, limit=60):
    """A value for a message: printable (escapes for control characters and the like) and at most
    about ``limit`` characters, saying how long it was when cut."""
    text = value if isinstance(value, str) else repr(value)
    cut = text[:limit]
    safe = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in cut)
    if len(text) > limit:
        return f"'{safe}...' ({len(text)} characters)"
    return f"'{safe}'" if isinstance(value, str) else safe


def path_text(path):
    """A path for a message: control characters escaped, and a very long one shortened in the
    middle (its file name stays)."""
    text = os.fsdecode(path) if isinstance(path, (bytes, os.PathLike)) else str(path)
    if len(text) > 200:
        text = f"{text[:80]}...{text[-100:]}"
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


class _LongNumber:
    """An integer too long to convert (Python refuses more than a few thousand digits)."""

    def __init__(self, digits):
        self.digits = digits

    def __repr__(self):
        return f"a {self.digits}-digit number"


def _json_int(text):
    return int(text) if len(text) <= 30 else _LongNumber(len(text))


class Problem:
    __slots__ = ("m", "n", "k", "batch", "dtype", "epilogue", "name")

    def __init__(self, m, n, k, batch=1, dtype="bf16", epilogue="none", name=""):
        for label, value in (("M", m), ("N", n), ("K", k), ("batch", batch)):
            if (isinstance(value, bool) or not isinstance(value, int)
                    or not 1 <= value <= MAX_EXTENT):
                raise ValueError(f"problem {label}: expected an integer from 1 to {MAX_EXTENT}, "
                                 f"got {shown(value)}")
        if not isinstance(dtype, str) or dtype not in DTYPES:
            raise ValueError(f"problem dtype: expected one of {list(DTYPES)}, got {shown(dtype)}")
        if not isinstance(epilogue, str) or epilogue not in EPILOGUES:
            raise ValueError(f"problem epilogue: expected one of {list(EPILOGUES)}, got "
                             f"{shown(epilogue)}")
        if (not isinstance(name, str) or len(name) > MAX_NAME_CHARS
                or not all(c.isprintable() for c in name)):
            raise ValueError(f"problem name: expected printable text of at most {MAX_NAME_CHARS} "
                             f"characters, got {shown(name)}")
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


_SHAPE = re.compile(r"(?:(\d+)x)?(\d+)x(\d+)x(\d+)")


def parse_shape(text):
    """``MxNxK`` or ``LxMxNxK`` -> (L, M, N, K)."""
    match = _SHAPE.fullmatch(text.strip().lower()) if isinstance(text, str) else None
    if not match:
        raise ValueError(f"shape: expected MxNxK or LxMxNxK (e.g. 4096x4096x4096), got "
                         f"{shown(text)}")
    extents = []
    for digits in match.groups():
        if digits and len(digits) > 30:
            raise ValueError(f"shape: expected extents from 1 to {MAX_EXTENT}, got a "
                             f"{len(digits)}-digit number")
        extents.append(int(digits) if digits else 1)
    return tuple(extents)


def problems_of_shapes(shapes, dtypes=("bf16",), epilogue="none"):
    """One problem per shape string (``MxNxK`` or ``LxMxNxK``) and dtype."""
    problems = []
    for shape in shapes:
        batch, m, n, k = parse_shape(shape)
        for dtype in dtypes:
            problems.append(Problem(m, n, k, batch, dtype, epilogue))
    return problems


def _kind_of(mode):
    for test, kind in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a fifo"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a regular file"


def read_problem_file(path):
    """The text of a problem file: a regular file of at most MAX_FILE_BYTES of UTF-8 text without
    NUL. It is opened without blocking and checked before it is read: a folder, fifo or device is
    refused, never read. ValueError names the file and what is wrong."""
    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise ValueError(f"expected the path of a problem file, got {shown(path)}")
    name = path_text(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError) as error:  # ValueError: a path with NUL
        raise ValueError(f"{name}: cannot open it: {getattr(error, 'strerror', None) or error}") \
            from None
    chunks, total = [], 0
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{name}: expected a regular file, got {_kind_of(info.st_mode)}")
        if info.st_size > MAX_FILE_BYTES:
            raise ValueError(f"{name}: expected a file of at most {MAX_FILE_BYTES} bytes (1 MiB), "
                             f"got {info.st_size} bytes")
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError as error:
                raise ValueError(f"{name}: cannot read it: {error.strerror}") from None
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_FILE_BYTES:  # a file that says it is small and is not (/proc)
                raise ValueError(f"{name}: expected a file of at most {MAX_FILE_BYTES} bytes "
                                 f"(1 MiB), got more")
            chunks.append(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ValueError(f"{name}:{line}: expected UTF-8 text, got the byte "
                         f"0x{data[error.start]:02x} (offset {error.start})") from None
    if "\0" in text:
        line = text.count("\n", 0, text.index("\0")) + 1
        raise ValueError(f"{name}:{line}: expected text, got a NUL byte")
    return text


def problems_of_file(path, dtype="bf16", epilogue="none"):
    """Problems from a file: JSON (a list of objects with m, n, k and optional batch, dtype,
    epilogue, name) or text (one ``MxNxK [dtype] [epilogue] [name]`` per line, ``#`` comments;
    grouped GEMM and convolution lines as ``family_problems`` says).
    ``dtype`` and ``epilogue`` are the defaults of problems that do not say. ValueError names the
    file, the line or item, and what is wrong."""
    text = read_problem_file(path)
    name = path_text(path)
    problems = []
    if text.lstrip()[:1] in ("[", "{"):
        try:
            items = json.loads(text, parse_int=_json_int)
        except RecursionError:
            raise ValueError(f"{name}: expected JSON nested at most a few hundred levels deep, "
                             f"got deeper") from None
        except ValueError as error:
            raise ValueError(f"{name}: expected JSON (a list of problems), got an error: "
                             f"{error}") from None
        if not isinstance(items, list):
            raise ValueError(f"{name}: expected a JSON list of problems, got an object")
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                raise ValueError(f"{name}[{i}]: expected an object with m, n, k, got "
                                 f"{shown(item)}")
            unknown = set(item) - {"m", "n", "k", "batch", "dtype", "epilogue", "name"}
            if unknown:
                raise ValueError(f"{name}[{i}]: unknown keys {shown(sorted(unknown))}")
            try:
                problems.append(Problem(item["m"], item["n"], item["k"], item.get("batch", 1),
                                        item.get("dtype", dtype), item.get("epilogue", epilogue),
                                        item.get("name", "")))
            except KeyError as missing:
                raise ValueError(f"{name}[{i}]: missing {missing}") from None
            except ValueError as error:
                raise ValueError(f"{name}[{i}]: {error}") from None
    else:
        for number, line in enumerate(text.splitlines(), 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            try:
                family = family_problems.parse_line(fields)
                if family is not None:
                    problems.append(family)
                    continue
                batch, m, n, k = parse_shape(fields[0])
                problem_dtype = fields[1] if len(fields) > 1 else dtype
                epi = fields[2] if len(fields) > 2 else epilogue
                problems.append(Problem(m, n, k, batch, problem_dtype, epi, " ".join(fields[3:])))
            except ValueError as error:
                raise ValueError(f"{name}:{number}: {error}") from None
    return problems


def problems_from(shapes=(), dtypes=("bf16",), epilogue="none", file=None):
    """Problems from shape strings times dtypes (see problems_of_shapes), and from a file (see
    problems_of_file; its problems default to the first dtype)."""
    problems = problems_of_shapes(shapes, dtypes, epilogue)
    if file is not None:
        problems += problems_of_file(file, dtypes[0], epilogue)
    if not problems:
        raise ValueError("problems: expected at least one (--shape or --file), got none")
    return problems


# ---- operands and the two sides -------------------------------------------------------------


def operands(problem, device="cuda"):
    """Fresh random A, B (and bias, scales) for the problem, TN."""
    torch = interop.torch()
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
    torch = interop.torch()
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
    torch = interop.torch()

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
        torch = interop.torch()
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
    torch = interop.torch()
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

    torch = interop.torch()
    timer = timer or Timer()
    A, B, extra = operands(problem)
    require_supported(problem, A, B, extra)
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
        measured = [c for c in tuned["candidates"] if c["outcome"] == "measured"]
        measured.sort(key=lambda c: c["median_us"])
        for c in measured[:top]:
            candidates.append({"kernel": c["kernel_name"], "us": c["median_us"],
                               "tflops": c["tflops"]})
        record["skipped"] = [{"kernel": c["kernel_name"], "outcome": c["outcome"],
                              "reason": c["reason"]}
                             for c in tuned["candidates"] if c["outcome"] != "measured"]
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
    torch = interop.torch()
    dtype = {"int8": torch.int32, "e4m3": torch.bfloat16, "e4m3-fast": torch.bfloat16}.get(
        problem.dtype, A.dtype)
    lead = (problem.batch,) if problem.batch > 1 else ()
    return torch.empty(*lead, problem.m, problem.n, dtype=dtype, device=A.device)


def unsupported_reason(args, allow_tf32=True, cc=None, what="these arguments"):
    """Why no kernel can tune ``args`` (tilecraft.api GemmArguments) on compute capability ``cc``
    (default: that of the tensors' device), or None when some kernel can. Asks only the kernel
    spaces' rules: nothing compiles or runs."""
    from tilecraft import _core

    capability, names = _core.tune.candidates(args, 1, bool(allow_tf32), cc)
    if names:
        return None
    # Alignment is what odd extents take away (int8 1023x1023x1023: rows of 1023 elements).
    a, b, out = args._native.alignments
    return (f"no kernel supports {what}{'' if allow_tf32 else ' without tf32'} on compute "
            f"capability {capability} (A, B and out aligned to {a}, {b} and {out} elements)")


def require_supported(problem, A, B, extra, cc=None):
    """Raises tilecraft.UnsupportedError, naming the problem, when no kernel can tune it (before
    anything compiles or runs)."""
    import tilecraft

    args = arguments(problem, A, B, extra, output(problem, A, B))
    what = f"{problem.dtype} {problem.shape_text}" + (
        "" if problem.epilogue == "none" else f" +{problem.epilogue}")
    reason = unsupported_reason(args, problem.dtype != "f32", cc, what)
    if reason is not None:
        raise tilecraft.UnsupportedError(reason)


def tune_problem(problem, max_candidates=None, max_seconds=None, force=False):
    """Tunes the problem now (or finds its stored winner unless ``force``); returns a row (dict):
    problem, kernel, reason. Raises the problem's error (one of PROBLEM_ERRORS) when it cannot be
    tuned: no kernel supports it, every candidate failed, no memory for its operands, ..."""
    import tilecraft

    A, B, extra = operands(problem)
    require_supported(problem, A, B, extra)
    plan = tilecraft.plan_gemm(A, B, tuning="force" if force else "blocking",
                               max_candidates=max_candidates, max_seconds=max_seconds,
                               **gemm_kwargs(problem, extra))
    state = plan.state
    return {"problem": problem.label, "kernel": state["kernel_name"], "reason": state["reason"]}


def precompile(problems, max_candidates=None, force=False):
    """Compiles the tuning candidates of all problems at once (every compile job busy), one
    kernel per module as the tuner does, so that tuning them after only runs and times.
    Problems with a stored winner are left out unless ``force``. Only a head start: a problem
    that cannot be prepared (no memory for its operands, no kernel, ...) is left for its own
    tuning to report, and the others still compile."""
    from tilecraft import _core, tuning

    for allow_tf32 in (True, False):
        group = [p for p in problems if (p.dtype != "f32") == allow_tf32]
        args = []
        for problem in group:
            try:
                if getattr(problem, "gemm_route", False):
                    continue  # tilecraft.conv2d runs it as a GEMM: tuned by its plan
                if hasattr(problem, "family"):  # grouped GEMM, convolution
                    made = problem.arguments(problem.operands())
                else:
                    A, B, extra = operands(problem)
                    made = arguments(problem, A, B, extra, output(problem, A, B))
                if force or tuning.find_tuned(made, allow_tf32) is None:
                    args.append(made)
            except PROBLEM_ERRORS:
                continue
        if not args:
            continue
        try:
            _core.tune.precompile(args, max_candidates, allow_tf32)
        except PROBLEM_ERRORS:
            # One problem's arguments spoil the batch: the others one by one.
            for made in args:
                try:
                    _core.tune.precompile([made], max_candidates, allow_tf32)
                except PROBLEM_ERRORS:
                    continue


def plan_accumulator(problem):
    from tilecraft import DataType

    return {"f64": DataType.f64, "int8": DataType.s32}.get(problem.dtype, DataType.f32)


def open_output(path, mode="w"):
    """A file object for writing ``path``, which must be nothing yet or a regular file (replaced):
    a link, fifo, device or folder there is refused with ValueError naming it, never followed,
    waited on or written."""
    flags = (os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY
             | getattr(os, "O_CLOEXEC", 0))
    check_output(path)
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as error:
        raise ValueError(f"{path_text(path)}: cannot write it: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{path_text(path)}: expected a regular file to write, got "
                             f"{_kind_of(info.st_mode)}")
        os.set_blocking(fd, True)
        return os.fdopen(fd, mode, **({"newline": ""} if "b" not in mode else {}))
    except BaseException:
        os.close(fd)
        raise


def check_output(path):
    """Raises ValueError naming ``path`` unless it is nothing yet or a regular file."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as error:
        raise ValueError(f"{path_text(path)}: cannot look at it: {error.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise ValueError(f"{path_text(path)}: expected a regular file to write (or nothing), got "
                         f"a symbolic link")
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path_text(path)}: expected a regular file to write (or nothing), got "
                         f"{_kind_of(info.st_mode)}")


def write_csv(records, path):
    import csv

    fields = ["problem", "dtype", "epilogue", "batch", "m", "n", "k", "kernel", "tilecraft_us",
              "cublas_us", "tilecraft_tflops", "cublas_tflops", "ratio", "error", "cublas_error",
              "reason", "device", "baseline", "baseline_alone_us", "ratio_alone", "first_kernel",
              "first_us", "first_ratio", "failed"]
    with open_output(path) as f:
        writer = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        for r in records:
            writer.writerow(r)


def write_json(records, path):
    with open_output(path) as f:
        json.dump(records, f, indent=1)


def write_chart(records, path, title=None):
    """Draws the records' ratios into the PNG ``path`` with matplotlib. Raises
    tilecraft._chart.ChartsUnavailable (saying how to get charts) when matplotlib is missing,
    before ``path`` is touched."""
    from tilecraft._chart import bar_chart

    device = next((r["device"] for r in records if r.get("device")), "")
    baselines = sorted({r.get("baseline") or "cuBLAS (torch)" for r in records})
    rows = [(r["problem"], r.get("ratio", math.nan)) for r in records]
    data = bar_chart(rows, title or f"tilecraft against {', '.join(baselines)}, {device}",
                     "bar: the baseline's time / tilecraft's (line at 1.0; longer is faster)")
    with open_output(path, "wb") as f:
        f.write(data)


def geometric_mean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan
