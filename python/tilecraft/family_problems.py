"""Grouped GEMM and convolution problems for ``tilecraft profile`` and ``tilecraft tune``: the
same tuner as GEMMs, timed beside torch (``torch._grouped_mm``; cuDNN through
``torch.nn.functional.conv2d``) in the same process.

A problem file's line (``#`` comments) is a GEMM (see ``profiling.problems_of_file``) or one of::

    grouped DTYPE groups=G tokens=T n=N k=K [routing=R] [NAME...]
    conv2d KIND DTYPE n=N c=C h=H w=W k=K r=R s=S [stride=1] [pad=0] [dilation=1]
                     [epilogue=none|bias_relu] [NAME...]

grouped: a mixture-of-experts layer as ``torch._grouped_mm`` takes it: x (T, K) tokens sorted by
expert, w (G, N, K) contiguous used as ``w.transpose(-2, -1)``, int32 end offsets; bf16, f16, or
e4m3 (bf16 out, per-tensor scales 0.5 and 2, with f32 promotion; beside
``torch._scaled_grouped_mm`` with the same scales row- and column-wise).
``routing``: ``balanced`` (T / G each), ``random`` (the default: gamma-distributed loads, as a
router's) or ``skewed`` (Zipf-like, a few experts take most tokens), drawn from a seed of the line.
conv2d: KIND fprop, dgrad or wgrad on channels-last f16 or bf16 tensors; ``stride``, ``pad``,
``dilation`` one int each (rows and columns alike); epilogue ``bias_relu`` (fprop only) adds a
bias per channel and a ReLU. A 1x1, unit-stride, unpadded fprop is what ``tilecraft.conv2d`` runs
as a GEMM on the same memory: it is tuned and timed that way (its plan's candidates).
"""

import itertools
import random
import time

from tilecraft import interop

MAX_EXTENT = 2**31 - 1
GROUPED_DTYPES = ("bf16", "f16", "e4m3")
# fp8 grouped problems: per-tensor scales of ours, the same values row- and column-wise of torch's.
FP8_SCALES = (0.5, 2.0)
CONV_DTYPES = ("f16", "bf16")
CONV_KINDS = ("fprop", "dgrad", "wgrad")
ROUTINGS = ("random", "balanced", "skewed")


def _fields(tokens, allowed, required):
    """key=value fields of a line -> dict of ints (and the rest of the line as the name)."""
    values, name = {}, []
    for token in tokens:
        key, eq, value = token.partition("=")
        if not eq:
            name.append(token)
            continue
        if key not in allowed:
            raise ValueError(f"unknown field {key!r}: expected one of {sorted(allowed)}")
        values[key] = value
    missing = [k for k in required if k not in values]
    if missing:
        raise ValueError(f"missing {', '.join(missing)} (e.g. " +
                         " ".join(f"{k}=..." for k in required) + ")")
    return values, " ".join(name)


def _int(key, text, low=1, high=MAX_EXTENT):
    if not text.isdigit() or len(text) > 12 or not low <= int(text) <= high:
        raise ValueError(f"{key}: expected an integer from {low} to {high}, got {text!r}")
    return int(text)


class GroupedProblem:
    family = "grouped"

    def __init__(self, dtype, groups, tokens, n, k, routing="random", name=""):
        if dtype not in GROUPED_DTYPES:
            raise ValueError(f"grouped dtype: expected one of {list(GROUPED_DTYPES)}, got "
                             f"{dtype!r}")
        if routing not in ROUTINGS:
            raise ValueError(f"routing: expected one of {list(ROUTINGS)}, got {routing!r}")
        self.dtype, self.groups, self.tokens, self.n, self.k = dtype, groups, tokens, n, k
        self.routing, self.name, self.epilogue = routing, name, "none"
        self.rows_per_group = self._route()

    def _route(self):
        rng = random.Random(f"{self.groups}/{self.tokens}/{self.n}/{self.k}/{self.routing}")
        if self.routing == "balanced":
            weights = [1.0] * self.groups
        elif self.routing == "skewed":
            weights = [1.0 / (i + 1) ** 1.2 for i in range(self.groups)]
            rng.shuffle(weights)
        else:
            weights = [rng.gammavariate(2.0, 1.0) for _ in range(self.groups)]
        total = sum(weights)
        rows = [int(self.tokens * w / total) for w in weights]
        for i in range(self.tokens - sum(rows)):  # the rounding's remainder, one row each
            rows[i % self.groups] += 1
        return rows

    @property
    def label(self):
        name = f" {self.name}" if self.name else ""
        return (f"grouped {self.dtype} {self.groups}x K={self.k} N={self.n} {self.tokens} tokens "
                f"{self.routing}{name}")

    @property
    def flops(self):
        return 2.0 * self.tokens * self.n * self.k

    @property
    def fp8(self):
        return self.dtype == "e4m3"

    def record_base(self):
        return {"problem": self.label, "dtype": self.dtype, "epilogue": "none",
                "m": self.tokens, "n": self.n, "k": self.k, "batch": self.groups,
                "baseline": "torch._scaled_grouped_mm" if self.fp8 else "torch._grouped_mm"}

    def operands(self):
        torch = interop.torch()
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16}.get(self.dtype, torch.bfloat16)
        g = torch.Generator(device="cuda")
        g.manual_seed(7)
        x = torch.empty(self.tokens, self.k, dtype=dtype, device="cuda").uniform_(-1, 1,
                                                                                 generator=g)
        w = torch.empty(self.groups, self.n, self.k, dtype=dtype,
                        device="cuda").uniform_(-1, 1, generator=g)
        if self.fp8:  # drawn in bf16, then rounded to e4m3 (outputs stay bf16)
            x, w = x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
        offs = torch.tensor(list(itertools.accumulate(self.rows_per_group)), dtype=torch.int32,
                            device="cuda")
        out = torch.empty(self.tokens, self.n, dtype=dtype, device="cuda")
        return {"x": x, "w_t": w.transpose(-2, -1), "offs": offs, "out": out}

    def arguments(self, o):
        from tilecraft.api.arguments import GroupedGemmArguments

        torch = interop.torch()
        scales = dict(zip(("scale_a", "scale_b"), FP8_SCALES)) if self.fp8 else {}
        return GroupedGemmArguments(o["x"], o["w_t"], o["out"], torch.float32, offsets=o["offs"],
                                    **scales)

    def one_call(self, o, tuning):
        import tilecraft

        if self.fp8:  # the scales are the arguments' own: the api's one call takes them
            args = self.arguments(o)
            return tilecraft._core.api.grouped_gemm(args, 0, tuning)
        tilecraft.grouped_gemm(o["x"], o["w_t"], offsets=o["offs"], out=o["out"], tuning=tuning)
        return tilecraft.grouped_ops.last_grouped_pick()

    def theirs(self, o):
        torch = interop.torch()
        if self.fp8:
            if not hasattr(torch, "_scaled_grouped_mm"):
                raise RuntimeError(f"torch {torch.__version__} has no _scaled_grouped_mm to "
                                   f"compare with")
            scale_a = torch.full((self.tokens,), FP8_SCALES[0], device="cuda")
            scale_b = torch.full((self.groups, self.n), FP8_SCALES[1], device="cuda")
            return lambda: torch._scaled_grouped_mm(o["x"], o["w_t"], scale_a, scale_b,
                                                    offs=o["offs"], out_dtype=torch.bfloat16)
        if not hasattr(torch, "_grouped_mm"):
            raise RuntimeError(f"torch {torch.__version__} has no _grouped_mm to compare with")
        return lambda: torch._grouped_mm(o["x"], o["w_t"], offs=o["offs"])

    def reference(self, o):
        torch = interop.torch()
        want = torch.empty(self.tokens, self.n, dtype=torch.float64, device="cuda")
        scale = FP8_SCALES[0] * FP8_SCALES[1] if self.fp8 else 1.0
        start = 0
        for g, end in enumerate(itertools.accumulate(self.rows_per_group)):
            want[start:end] = (o["x"][start:end].double() @ o["w_t"][g].double()) * scale
            start = end
        return want


def _conv_out_extent(size, taps, stride, pad, dilation):
    return (size + 2 * pad - dilation * (taps - 1) - 1) // stride + 1


class ConvProblem:
    family = "conv2d"

    def __init__(self, kind, dtype, n, c, h, w, k, r, s, stride=1, pad=0, dilation=1,
                 epilogue="none", name=""):
        if kind not in CONV_KINDS:
            raise ValueError(f"conv2d kind: expected one of {list(CONV_KINDS)}, got {kind!r}")
        if dtype not in CONV_DTYPES:
            raise ValueError(f"conv2d dtype: expected one of {list(CONV_DTYPES)}, got {dtype!r}")
        if epilogue not in ("none", "bias_relu"):
            raise ValueError(f"epilogue: expected 'none' or 'bias_relu', got {epilogue!r}")
        if epilogue != "none" and kind != "fprop":
            raise ValueError(f"epilogue: bias_relu is an fprop epilogue, got kind {kind}")
        self.kind, self.dtype, self.n, self.c, self.h, self.w = kind, dtype, n, c, h, w
        self.k, self.r, self.s = k, r, s
        self.stride, self.pad, self.dilation = stride, pad, dilation
        self.epilogue, self.name = epilogue, name
        self.p = _conv_out_extent(h, r, stride, pad, dilation)
        self.q = _conv_out_extent(w, s, stride, pad, dilation)
        if self.p < 1 or self.q < 1:
            raise ValueError(f"conv2d: the filter ({r}x{s}, dilation {dilation}) is larger than "
                             f"the padded image ({h}x{w}, pad {pad})")

    @property
    def label(self):
        tail = "" if self.epilogue == "none" else " +" + self.epilogue
        name = f" {self.name}" if self.name else ""
        return (f"conv2d {self.kind} {self.dtype} n{self.n} c{self.c} {self.h}x{self.w} "
                f"k{self.k} {self.r}x{self.s}/{self.stride}{tail}{name}")

    @property
    def flops(self):
        return 2.0 * self.n * self.p * self.q * self.k * self.c * self.r * self.s

    @property
    def gemm_route(self):
        """A 1x1, unit-stride, unpadded fprop: ``tilecraft.conv2d`` runs it as a tuned GEMM."""
        return (self.kind == "fprop" and self.r == 1 and self.s == 1 and self.stride == 1
                and self.pad == 0)

    def op_call(self, o, tuning):
        """``tilecraft.conv2d`` on the problem's tensors, as a user calls it."""
        import tilecraft

        kwargs = dict(stride=self.stride, padding=self.pad, dilation=self.dilation,
                      out=o["out"], tuning=tuning)
        if self.epilogue == "bias_relu":
            kwargs.update(bias=o["bias"], activation="relu")
        return lambda: tilecraft.conv2d(o["x"], o["w"], **kwargs)

    def record_base(self):
        m, n, k = {"fprop": (self.n * self.p * self.q, self.k, self.c * self.r * self.s),
                   "dgrad": (self.n * self.h * self.w, self.c, self.k * self.r * self.s),
                   "wgrad": (self.k, self.c * self.r * self.s, self.n * self.p * self.q)}[self.kind]
        return {"problem": self.label, "dtype": self.dtype, "epilogue": self.epilogue,
                "m": m, "n": n, "k": k, "batch": 1, "baseline": "cuDNN (torch)"}

    def operands(self):
        torch = interop.torch()
        dtype = torch.float16 if self.dtype == "f16" else torch.bfloat16
        g = torch.Generator(device="cuda")
        g.manual_seed(11)
        cl = torch.channels_last

        def rand(*shape):
            return (torch.rand(*shape, generator=g, device="cuda") * 2 - 1).to(dtype).contiguous(
                memory_format=cl)

        o = {"x": rand(self.n, self.c, self.h, self.w), "w": rand(self.k, self.c, self.r, self.s),
             "dy": rand(self.n, self.k, self.p, self.q)}
        if self.epilogue == "bias_relu":
            o["bias"] = (torch.rand(self.k, generator=g, device="cuda") * 2 - 1).to(dtype)
        shape = {"fprop": (self.n, self.k, self.p, self.q), "dgrad": (self.n, self.c, self.h, self.w),
                 "wgrad": (self.k, self.c, self.r, self.s)}[self.kind]
        o["out"] = torch.empty(shape, dtype=dtype, device="cuda").contiguous(memory_format=cl)
        return o

    def _ab(self, o):
        return {"fprop": (o["x"], o["w"]), "dgrad": (o["dy"], o["w"]),
                "wgrad": (o["dy"], o["x"])}[self.kind]

    def arguments(self, o):
        from tilecraft.api.arguments import Conv2dArguments, EpilogueArguments

        torch = interop.torch()
        a, b = self._ab(o)
        epilogue = (EpilogueArguments(bias=o["bias"], activation="relu")
                    if self.epilogue == "bias_relu" else None)
        return Conv2dArguments(a, b, o["out"], torch.float32, kind=self.kind, stride=self.stride,
                               padding=self.pad, dilation=self.dilation, epilogue=epilogue)

    def one_call(self, o, tuning):
        import tilecraft

        args = self.arguments(o)
        name, reason = tilecraft._core.api.conv2d(args._native, 0, tuning)
        return name, reason

    def theirs(self, o):
        torch = interop.torch()
        F = torch.nn.functional
        torch.backends.cudnn.benchmark = True
        geometry = dict(stride=self.stride, padding=self.pad, dilation=self.dilation)
        if self.kind == "fprop":
            if self.epilogue == "bias_relu":
                return lambda: F.relu(F.conv2d(o["x"], o["w"], o["bias"], **geometry))
            return lambda: F.conv2d(o["x"], o["w"], **geometry)
        grad = torch.nn.grad
        if self.kind == "dgrad":
            return lambda: grad.conv2d_input(o["x"].shape, o["w"], o["dy"], **geometry)
        return lambda: grad.conv2d_weight(o["x"], o["w"].shape, o["dy"], **geometry)

    def theirs_alone(self, o):
        """cuDNN's convolution alone (no bias, no ReLU), for fprop with an epilogue: what the
        convolution costs torch before the two extra launches; None otherwise."""
        if self.kind != "fprop" or self.epilogue == "none":
            return None
        F = interop.torch().nn.functional
        geometry = dict(stride=self.stride, padding=self.pad, dilation=self.dilation)
        return lambda: F.conv2d(o["x"], o["w"], **geometry)

    def reference(self, o):
        torch = interop.torch()
        F = torch.nn.functional
        geometry = dict(stride=self.stride, padding=self.pad, dilation=self.dilation)
        x, w, dy = o["x"].double(), o["w"].double(), o["dy"].double()
        if self.kind == "fprop":
            y = F.conv2d(x, w, o["bias"].double() if "bias" in o else None, **geometry)
            return F.relu(y) if self.epilogue == "bias_relu" else y
        if self.kind == "dgrad":
            return torch.nn.grad.conv2d_input(x.shape, w, dy, **geometry)
        return torch.nn.grad.conv2d_weight(x, w.shape, dy, **geometry)


def parse_line(fields):
    """A grouped or conv2d problem from a line's fields (the first names the family), or None
    when the line is a GEMM's. ValueError says what is wrong."""
    if fields[0] == "grouped":
        if len(fields) < 2:
            raise ValueError("grouped: expected a dtype and groups=, tokens=, n=, k=")
        values, name = _fields(fields[2:], {"groups", "tokens", "n", "k", "routing"},
                               ("groups", "tokens", "n", "k"))
        return GroupedProblem(fields[1], _int("groups", values["groups"], 1, 4096),
                              _int("tokens", values["tokens"]), _int("n", values["n"]),
                              _int("k", values["k"]), values.get("routing", "random"), name)
    if fields[0] == "conv2d":
        if len(fields) < 3:
            raise ValueError("conv2d: expected a kind, a dtype and n=, c=, h=, w=, k=, r=, s=")
        values, name = _fields(fields[3:], {"n", "c", "h", "w", "k", "r", "s", "stride", "pad",
                                            "dilation", "epilogue"},
                               ("n", "c", "h", "w", "k", "r", "s"))
        ints = {key: _int(key, values[key]) for key in ("n", "c", "h", "w", "k", "r", "s")}
        return ConvProblem(fields[1], fields[2], **ints,
                           stride=_int("stride", values.get("stride", "1")),
                           pad=_int("pad", values.get("pad", "0"), 0),
                           dilation=_int("dilation", values.get("dilation", "1")),
                           epilogue=values.get("epilogue", "none"), name=name)
    return None


def _served_kernel(problem, args, winner):
    from tilecraft import api

    for kernel in api.get_kernels(args):
        if kernel.metadata.kernel_name == winner:
            return kernel
    raise RuntimeError(f"{problem.label}: the tuned winner {winner} is not among the kernels "
                       f"get_kernels lists for it")


def relative_error(got, want):
    g, w = got.double(), want.double()
    return float((g - w).abs().max() / w.abs().max().clamp_min(1e-30))


def tune_problem(problem, max_candidates=None, max_seconds=None, force=False):
    """Tunes the problem now (unless a winner is stored and not ``force``), then runs its one-call
    op, which serves the stored winner; a row (dict): problem, kernel, reason."""
    from tilecraft import tuning

    o = problem.operands()
    if getattr(problem, "gemm_route", False):  # tilecraft.conv2d's GEMM, tuned by its plan
        import tilecraft

        problem.op_call(o, "force" if force else "blocking")()
        name, reason = tilecraft.conv_ops.last_conv_pick()
        return {"problem": problem.label, "kernel": name, "reason": reason}
    args = problem.arguments(o)
    if force or tuning.find_tuned(args) is None:
        tuning.tune(args, max_candidates, max_seconds)
    name, reason = problem.one_call(o, "blocking")
    return {"problem": problem.label, "kernel": name, "reason": reason}


def profile_problem(problem, top, max_candidates, max_seconds, force, repeats, timer):
    """Tunes the problem (or uses its stored winner), checks the served kernel against float64
    and times it beside torch's op with ``timer`` (a profiling.Timer); returns a record (dict,
    as profiling.profile_problem's)."""
    from tilecraft import tuning

    torch = interop.torch()
    o = problem.operands()
    record = problem.record_base()
    record["device"] = torch.cuda.get_device_name()
    args = problem.arguments(o)
    started = time.perf_counter()
    first_run = None
    if getattr(problem, "gemm_route", False):
        # What tilecraft.conv2d runs: the GEMM on the same memory, tuned as GEMMs are (its
        # candidates as TILECRAFT_TUNING_CANDIDATES says).
        import tilecraft

        problem.op_call(o, "force" if force else "blocking")()
        name, reason = tilecraft.conv_ops.last_conv_pick()
        ours = problem.op_call(o, "blocking")
    else:
        if force or tuning.find_tuned(args) is None:
            tuning.tune(args, max_candidates, max_seconds)
        name, reason = problem.one_call(o, "blocking")
        kernel = _served_kernel(problem, args, name)
        ours = lambda: kernel.run(args, assume_supported_args=True)  # noqa: E731
        # The ranked first pick, what serves before tuning (timed too when it is another kernel).
        from tilecraft import api

        first = api.get_kernels(args)[0]
        record["first_kernel"] = first.metadata.kernel_name
        if first.metadata.kernel_name != name:
            first_run = lambda: first.run(args, assume_supported_args=True)  # noqa: E731
    record["plan_seconds"] = round(time.perf_counter() - started, 3)
    record["kernel"], record["reason"] = name, reason
    theirs = problem.theirs(o)
    want = problem.reference(o)
    o["out"].fill_(float("nan"))
    ours()
    torch.cuda.synchronize()
    record["error"] = relative_error(o["out"], want)
    record["cublas_error"] = relative_error(theirs(), want)
    alone = problem.theirs_alone(o) if hasattr(problem, "theirs_alone") else None
    ours_us, theirs_us, alone_us = [], [], []
    for _ in range(2):
        ours_us.append(timer.median_us(ours, repeats))
        theirs_us.append(timer.median_us(theirs, repeats))
        if alone is not None:
            alone_us.append(timer.median_us(alone, repeats))
    record["tilecraft_us"], record["cublas_us"] = min(ours_us), min(theirs_us)
    if "first_kernel" in record:
        try:
            record["first_us"] = (record["tilecraft_us"] if first_run is None
                                  else min(timer.median_us(first_run, repeats) for _ in range(2)))
            record["first_ratio"] = record["cublas_us"] / record["first_us"]
        except (RuntimeError, ValueError) as error:  # the record keeps the tuned timing
            record["first_failed"] = str(error).splitlines()[0]
    if alone_us:
        # The stricter baseline: the library's convolution without the epilogue it leaves to
        # other launches.
        record["baseline_alone_us"] = min(alone_us)
        record["ratio_alone"] = record["baseline_alone_us"] / record["tilecraft_us"]
    record["tilecraft_tflops"] = problem.flops / record["tilecraft_us"] / 1e6
    record["cublas_tflops"] = problem.flops / record["cublas_us"] / 1e6
    record["ratio"] = record["cublas_us"] / record["tilecraft_us"]
    tuned = tuning.find_tuned(args)
    measured = sorted((c for c in (tuned or {}).get("candidates", []) if c["outcome"] == "measured"),
                      key=lambda c: c["median_us"])
    record["candidates"] = [{"kernel": c["kernel_name"], "us": c["median_us"],
                             "tflops": c["tflops"]} for c in measured[:top]]
    record["skipped"] = [{"kernel": c["kernel_name"], "outcome": c["outcome"],
                          "reason": c["reason"]}
                         for c in (tuned or {}).get("candidates", []) if c["outcome"] != "measured"]
    return record
