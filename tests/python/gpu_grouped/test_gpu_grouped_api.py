"""The arguments-first surface of grouped GEMM on the GPU: tilecraft.api.GroupedGemmArguments in
the mixture-of-experts form torch._grouped_mm takes (offsets on the device or the host, both B
orientations) and in lists, get_kernels' ranking, Kernel.run, tilecraft.grouped_gemm, and bad
offsets. Outputs are poisoned first and checked element by element against float64. Helpers and
the kernel table come from test_gpu_grouped."""

import itertools
import re
import time
from types import SimpleNamespace

import pytest

import sm90_check
import sm90_data
import sm90_reference
from sm90_kernels import KERNELS as SM90_ROWS
from test_gpu_grouped import (_torch, expect_refused, poisoned, random_values, still_poisoned)

# ---- the arguments-first surface: tilecraft.api and tilecraft.grouped_gemm ----------------------

MOE_TOKENS = (37, 0, 128, 1, 200, 64)     # an expert without tokens, one with a single token
MOE_K, MOE_N = 256, 384
MOE_TAIL = 5                              # rows after the last group: no expert's, never written


def moe_problem(gen, orientation, offsets_on="cuda", with_c=False, dtype="bf16"):
    """torch._grouped_mm's operands: x (T, K) row-major; B (G, K, N) per group row-major
    (contiguous) or column-major (w.transpose(-2, -1) of a contiguous (G, N, K)); out (T, N)
    poisoned; offsets int32 cumulative END rows."""
    torch = _torch()
    row = SimpleNamespace(arch=80)   # gpu_helpers' uniform(-1, 1) values rounded to the dtype
    G, T = len(MOE_TOKENS), sum(MOE_TOKENS) + MOE_TAIL
    x = random_values(row, (T, MOE_K), dtype, "float", 0, gen)
    if orientation == "col":
        b = random_values(row, (G, MOE_N, MOE_K), dtype, "float", 0, gen).transpose(-2, -1)
    else:
        b = random_values(row, (G, MOE_K, MOE_N), dtype, "float", 0, gen)
    ends = list(itertools.accumulate(MOE_TOKENS))
    offsets = torch.tensor(ends, dtype=torch.int32, device=offsets_on)
    C = random_values(row, (T, MOE_N), dtype, "float", 0, gen) if with_c else None
    return SimpleNamespace(x=x, b=b, offsets=offsets, out=poisoned((T, MOE_N), dtype), C=C,
                           ends=ends, starts=[0] + ends[:-1])


def moe_arguments(p, **kw):
    from tilecraft import api

    torch = _torch()
    kw.setdefault("accumulator_type", torch.float32)
    return api.GroupedGemmArguments(p.x, p.b, p.out, offsets=p.offsets, **kw)


BF16_SPEC = SM90_ROWS["bf16_rcr"]   # f32 accumulation of bf16 products: the error bound's row


def assert_close_bf16(got, a64, b64, alpha, c_term, what, activation=None):
    """|got - ref| within the f32-accumulation bound plus one bf16 ulp (sm90_check's rule)."""
    K = a64.shape[-1]
    z = alpha * (a64 @ b64)
    z_abs = z.abs()
    mm_abs = abs(alpha) * (a64.abs() @ b64.abs())
    if c_term is not None:
        z = z + c_term
        z_abs = z_abs + c_term.abs()
    want = sm90_reference.activation_ref(activation, z)
    tol = sm90_check.EPILOGUE_RTOL * z_abs + sm90_check.data_rtol(BF16_SPEC, K) * mm_abs
    urtol, uatol = sm90_reference.ULP["bf16"]
    tol = tol + urtol * (want.abs() + tol) + uatol
    got64 = sm90_data.to64(got)
    bad = ~((got64 - want).abs() <= tol)
    assert not bool(bad.any()), (f"{what}: {int(bad.sum())} of {bad.numel()} elements mismatch, "
                                 f"first at {bad.nonzero()[:4].tolist()}")


def check_moe(p, out, what, alpha=1.0, beta=0.0, activation=None, tail_untouched=True):
    """Each group's rows of ``out`` against float64; rows past the last group untouched."""
    for g, (s, e) in enumerate(zip(p.starts, p.ends)):
        if e == s:
            continue
        c_term = beta * sm90_data.to64(p.C[s:e]) if p.C is not None and beta else None
        assert_close_bf16(out[s:e], sm90_data.to64(p.x[s:e]), sm90_data.to64(p.b[g]), alpha,
                          c_term, f"{what}: group {g} (rows {s}:{e})", activation)
    if tail_untouched:
        assert still_poisoned(out[p.ends[-1]:]), f"{what}: rows past the last group were written"


@pytest.fixture(scope="module")
def moe_kernels(grouped_report):
    """The ranked first kernel for the mixture-of-experts arguments of each B orientation,
    compiled together (one api.compile_kernels call). The one-call and list-form tests use the
    same shapes, so their picks are found in the cache."""
    import sys

    from tilecraft import api

    torch = _torch()
    gen = torch.Generator(device="cuda")
    gen.manual_seed(3)
    picked = {}
    for orientation in ("col", "row"):
        kernels = api.get_kernels(moe_arguments(moe_problem(gen, orientation)))
        picked[orientation] = kernels[0] if kernels else None
    start = time.monotonic()
    error = None
    try:
        api.compile_kernels([k for k in picked.values() if k is not None])
    except Exception as exc:  # the tests using the kernels fail with it
        error = f"{type(exc).__name__}: {exc}"
    report = (f"tilecraft grouped GEMM suite: api.compile_kernels of the mixture-of-experts "
              f"picks took {time.monotonic() - start:.1f} s: "
              + ", ".join(f"{o}: {k.metadata.kernel_name if k else 'NONE FOUND'}"
                          for o, k in picked.items()))
    if error:
        report += f"; raised {error}"
    grouped_report.append(report)
    sys.stderr.write("\n" + report + "\n")
    return picked


def _picked(moe_kernels, orientation):
    kernel = moe_kernels[orientation]
    assert kernel is not None, f"api.get_kernels found no kernel for the {orientation}-major MoE"
    return kernel


@pytest.mark.parametrize("orientation,offsets_on", [
    pytest.param("col", "cuda", marks=pytest.mark.sanitizer), ("col", "cpu"), ("row", "cuda"),
    ("row", "cpu")])
def test_moe_form(moe_kernels, gen, seed_note, orientation, offsets_on):
    """api.GroupedGemmArguments in torch._grouped_mm's form, offsets on the device or the host;
    the ranked pick supports, compiles (a cache hit) and runs it. The offsets are read when the
    arguments are made: changing them afterwards changes nothing."""
    torch = _torch()
    p = moe_problem(gen, orientation, offsets_on)
    args = moe_arguments(p)
    kernel = _picked(moe_kernels, orientation)
    status = kernel.supports(args)
    assert status, f"{kernel.metadata.kernel_name} refuses its own arguments: {status.error}"
    artifact = kernel.compile(args)
    p.offsets.fill_(-1)   # already read back: the launch uses the values of make time
    kernel.run(args, artifact)
    torch.cuda.synchronize()
    check_moe(p, p.out, f"MoE {orientation}-major B, offsets on {offsets_on}, "
                        f"{kernel.metadata.kernel_name} {seed_note}")


def test_moe_with_c_alpha_beta_on_a_stream(moe_kernels, gen, seed_note):
    """alpha, beta and C in the MoE form, launched on a given torch stream."""
    torch = _torch()
    p = moe_problem(gen, "col", with_c=True)
    args = moe_arguments(p, C=p.C, alpha=0.5, beta=-1.25)
    kernel = _picked(moe_kernels, "col")
    assert kernel.supports(args), kernel.supports(args).error
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    kernel.run(args, kernel.compile(args), stream=stream)
    stream.synchronize()
    check_moe(p, p.out, f"MoE with C, alpha 0.5, beta -1.25 {seed_note}", 0.5, -1.25)


def test_get_kernels_ranks_grouped_arguments(moe_kernels, gen):
    """get_kernels(grouped args): non-empty, best first (scores non-increasing), every listed
    kernel supports the arguments; a kernel of other element types says why it does not."""
    from tilecraft import api

    p = moe_problem(gen, "col")
    args = moe_arguments(p)
    kernels = api.get_kernels(args)
    assert kernels, "no kernel for bf16 grouped arguments"
    scores = [k.metadata.score for k in kernels]
    assert scores == sorted(scores, reverse=True), "kernels are not ranked best-first"
    assert kernels[0].metadata.kernel_name == moe_kernels["col"].metadata.kernel_name
    assert "group" in kernels[0].metadata.kernel_name.lower(), kernels[0].metadata.kernel_name
    kernel_class = kernels[0].metadata.kernel_class
    assert kernel_class in (api.Sm80GroupedGemmKernel, api.Sm90GroupedGemmKernel), kernel_class
    for kernel in kernels[:8]:
        status = kernel.supports(args)
        assert status, f"{kernel.metadata.kernel_name}: {status.error}"
    f16 = moe_problem(gen, "col", dtype="f16")
    status = kernels[0].supports(moe_arguments(f16))
    assert not status and status.error and re.search(r"(?i)bf(loat)?16|float16", status.error), \
        status
    assert still_poisoned(p.out) and still_poisoned(f16.out)


@pytest.mark.sm90
def test_moe_matches_torch_grouped_mm(moe_kernels, gen, seed_note):
    """Our reading of offsets (cumulative END rows; group g = rows [offsets[g-1], offsets[g]))
    is torch._grouped_mm's: both agree with the float64 reference on every group's rows."""
    torch = _torch()
    if not hasattr(torch, "_grouped_mm"):
        pytest.skip(f"torch {torch.__version__} has no torch._grouped_mm")
    p = moe_problem(gen, "col")
    try:
        theirs = torch._grouped_mm(p.x, p.b, offs=p.offsets)
    except (RuntimeError, TypeError) as error:
        pytest.skip(f"torch._grouped_mm refused these operands: {error}")
    torch.cuda.synchronize()
    check_moe(p, theirs, f"torch._grouped_mm {seed_note}", tail_untouched=False)
    args = moe_arguments(p)
    kernel = _picked(moe_kernels, "col")
    kernel.run(args, kernel.compile(args))
    torch.cuda.synchronize()
    check_moe(p, p.out, f"tilecraft {seed_note}")


def test_list_form_api(moe_kernels, rng, gen, seed_note):
    """api.GroupedGemmArguments of lists: ragged M, N and K per group, B column-major, an empty
    group; run with the compiled MoE pick when it supports them (else the ranked first)."""
    from tilecraft import api

    torch = _torch()
    row = SimpleNamespace(arch=80)
    sizes = [(rng.randint(1, 300), 8 * rng.randint(2, 60), 8 * rng.randint(2, 60))
             for _ in range(6)]
    sizes[3] = (0,) + sizes[3][1:]
    A = [random_values(row, (m, k), "bf16", "float", 0, gen) for m, n, k in sizes]
    B = [random_values(row, (n, k), "bf16", "float", 0, gen).t() for m, n, k in sizes]
    out = [poisoned((m, n), "bf16") for m, n, k in sizes]
    args = api.GroupedGemmArguments(A, B, out, accumulator_type=torch.float32)
    kernels = api.get_kernels(args)
    assert kernels and kernels[0].supports(args)
    kernel = moe_kernels["col"] if moe_kernels["col"] and moe_kernels["col"].supports(args) \
        else kernels[0]
    kernel.run(args)
    torch.cuda.synchronize()
    for g, (m, n, k) in enumerate(sizes):
        if m:
            assert_close_bf16(out[g], sm90_data.to64(A[g]), sm90_data.to64(B[g]), 1.0, None,
                              f"list form group {g} {m}x{n}x{k} {seed_note}")


def test_grouped_gemm_one_call(moe_kernels, gen, seed_note):
    """tilecraft.grouped_gemm: the MoE form returns a tensor (a new one, or the ``out`` given,
    whose rows past the last group stay untouched); the list form returns a list; C, alpha
    and beta."""
    import tilecraft

    torch = _torch()
    p = moe_problem(gen, "col", with_c=True)
    fresh = tilecraft.grouped_gemm(p.x, p.b, offsets=p.offsets)
    torch.cuda.synchronize()
    assert torch.is_tensor(fresh) and tuple(fresh.shape) == (p.x.shape[0], MOE_N)
    check_moe(p, fresh, f"grouped_gemm MoE, new out {seed_note}", tail_untouched=False)
    given = tilecraft.grouped_gemm(p.x, p.b, offsets=p.offsets, out=p.out, C=p.C, alpha=0.5,
                                   beta=0.25)
    torch.cuda.synchronize()
    assert given is p.out
    check_moe(p, p.out, f"grouped_gemm MoE with C {seed_note}", 0.5, 0.25)

    groups = [(s, e, g) for g, (s, e) in enumerate(zip(p.starts, p.ends))]
    A = [p.x[s:e] for s, e, _ in groups]
    B = [p.b[g] for _, _, g in groups]
    outs = tilecraft.grouped_gemm(A, B)
    torch.cuda.synchronize()
    assert isinstance(outs, list) and len(outs) == len(groups)
    for (s, e, g), o in zip(groups, outs):
        assert tuple(o.shape) == (e - s, MOE_N)
        if e > s:
            assert_close_bf16(o, sm90_data.to64(p.x[s:e]), sm90_data.to64(p.b[g]), 1.0, None,
                              f"grouped_gemm list form group {g} {seed_note}")
    given_list = [poisoned((e - s, MOE_N), "bf16") for s, e, _ in groups]
    back = tilecraft.grouped_gemm(A, B, out=given_list)
    torch.cuda.synchronize()
    assert isinstance(back, list) and all(a is b for a, b in zip(back, given_list))


@pytest.mark.slow
def test_grouped_gemm_activation(moe_kernels, gen, seed_note):
    """activation="relu" in the one call (compiles the fused kernel on first use)."""
    import tilecraft

    torch = _torch()
    p = moe_problem(gen, "col")
    tilecraft.grouped_gemm(p.x, p.b, offsets=p.offsets, out=p.out, activation="relu")
    torch.cuda.synchronize()
    check_moe(p, p.out, f"grouped_gemm relu {seed_note}", activation="relu")


def with_ends(p, ends):
    """The problem p with new end rows (written into its device offsets in place)."""
    p.offsets.copy_(_torch().tensor(ends, dtype=_torch().int32))
    p.ends, p.starts = list(ends), [0] + list(ends[:-1])
    return p


def run_first_pick(args):
    """(kernel, artifact): the ranked first kernel of ``args``, which supports them, compiled and
    run once (synchronized)."""
    from tilecraft import api

    kernel = api.get_kernels(args)[0]
    assert kernel.supports(args), kernel.supports(args).error
    artifact = kernel.compile(args)
    kernel.run(args, artifact)
    _torch().cuda.synchronize()
    return kernel, artifact


@pytest.mark.parametrize("orientation", ["col", "row"])
def test_moe_offsets_read_on_the_device_at_each_launch(gen, seed_note, orientation):
    """offsets_on_device: the arguments are made without reading the offsets; each launch reads
    them on its stream, so new offsets written after make time serve the next launch. The kernel
    is the ranked first pick of those arguments, run twice on the same arguments."""
    torch = _torch()
    p = moe_problem(gen, orientation)
    args = moe_arguments(p, offsets_on_device=True)
    assert args._native.offsets_on_device
    kernel, artifact = run_first_pick(args)
    check_moe(p, p.out, f"MoE {orientation}-major, offsets read on the device, "
                        f"{kernel.metadata.kernel_name} {seed_note}")
    total = sum(MOE_TOKENS)
    moved = list(itertools.accumulate(reversed(MOE_TOKENS)))
    assert moved[-1] == total
    with_ends(p, moved)
    p.out.fill_(float("nan"))
    kernel.run(args, artifact)
    torch.cuda.synchronize()
    check_moe(p, p.out, f"the same arguments after new offsets {moved} {seed_note}")


def test_moe_device_offsets_out_of_order_or_range_stay_inside_the_tensors(gen, seed_note):
    """Offsets read on the device are not checked on the host: each end is raised to the
    previous group's end and lowered to the rows, so a decreasing offset gives an empty group
    and one past the rows ends at the last row; nothing outside the tensors is touched."""
    from tilecraft import api

    torch = _torch()
    p = moe_problem(gen, "col")
    rows = p.x.shape[0]
    given = [37, 20, 300, 10**9, -4, 400]
    with_ends(p, given)
    args = moe_arguments(p, offsets_on_device=True)
    kernel = api.get_kernels(args)[0]
    kernel.run(args, kernel.compile(args))
    torch.cuda.synchronize()
    running, ends = 0, []
    for e in given:
        running = max(running, min(max(e, 0), rows))
        ends.append(running)
    p.ends, p.starts = ends, [0] + ends[:-1]
    check_moe(p, p.out, f"offsets {given} read as {ends} {seed_note}", tail_untouched=False)


def captured(run):
    """A CUDA graph of run(), after two warm-up calls on a side stream (the first call makes the
    plan a capture needs)."""
    torch = _torch()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        run()
        run()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run()
    return graph


def test_one_call_moe_with_device_offsets_is_captured_and_replayed_with_new_routing(gen,
                                                                                    seed_note):
    """tilecraft.grouped_gemm(..., offsets_on_device=True) in a CUDA graph: the replay reads the
    offsets and inputs written into the captured tensors after the capture."""
    import tilecraft

    torch = _torch()
    p = moe_problem(gen, "col")
    out = p.out
    graph = captured(lambda: tilecraft.grouped_gemm(p.x, p.b, p.offsets, out=out,
                                                    offsets_on_device=True))
    for tokens in (list(reversed(MOE_TOKENS)), [100, 100, 0, 100, 100, 30]):
        with_ends(p, list(itertools.accumulate(tokens)))
        p.x.copy_(torch.randn_like(p.x, dtype=torch.float32).to(p.x.dtype))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check_moe(p, out, f"replay with tokens {tokens} {seed_note}")


# ---- the weight-gradient form: the stacked rows are each group's K -------------------------------

def weight_grad_problem(gen):
    """x (T, K) and grad (T, N) row-major, as a MoE layer's backward holds them: out[g] =
    x[rows of g]^T @ grad[rows of g], (G, K, N) poisoned. A = x.t() is (K, T) column-major."""
    torch = _torch()
    row = SimpleNamespace(arch=80)
    G, T = len(MOE_TOKENS), sum(MOE_TOKENS) + MOE_TAIL
    x = random_values(row, (T, MOE_K), "bf16", "float", 0, gen)
    grad = random_values(row, (T, MOE_N), "bf16", "float", 0, gen)
    ends = list(itertools.accumulate(MOE_TOKENS))
    offsets = torch.tensor(ends, dtype=torch.int32, device="cuda")
    return SimpleNamespace(x=x, grad=grad, offsets=offsets, out=poisoned((G, MOE_K, MOE_N), "bf16"),
                           ends=ends)


def check_weight_grad(p, out, given_ends, what, alpha=1.0):
    """Each group's matrix against float64 over its rows (the ends read as the kernels read
    them); a group with no rows must be zeros."""
    rows, running, start = p.x.shape[0], 0, 0
    for g, e in enumerate(given_ends):
        running = max(running, min(max(e, 0), rows))
        if running == start:
            assert bool((out[g] == 0).all()), f"{what}: group {g} has no rows but is not zeros"
        else:
            assert_close_bf16(out[g], sm90_data.to64(p.x[start:running]).t(),
                              sm90_data.to64(p.grad[start:running]), alpha, None,
                              f"{what}: group {g} (rows {start}:{running})")
        start = running


@pytest.mark.sanitizer
def test_weight_gradient_form_sums_each_groups_rows_and_zeros_empty_groups(gen, seed_note):
    """api.GroupedGemmArguments with a 2-D B: problem g sums over group g's rows (its K); the
    offsets are read on the device at each launch (so a second launch after new offsets,
    decreasing and out of range ones included, reads them), and a group with no rows is
    written with zeros."""
    from tilecraft import api

    torch = _torch()
    p = weight_grad_problem(gen)
    args = api.GroupedGemmArguments(p.x.t(), p.grad, p.out, torch.float32, offsets=p.offsets,
                                    alpha=0.5)
    assert args._native.offsets_on_device
    kernel, artifact = run_first_pick(args)
    name = kernel.metadata.kernel_name
    check_weight_grad(p, p.out, p.ends, f"weight-gradient form, {name} {seed_note}", alpha=0.5)
    given = [37, 20, 300, 10**9, -4, 400]
    p.offsets.copy_(torch.tensor(given, dtype=torch.int32))
    p.out.fill_(float("nan"))
    kernel.run(args, artifact)
    torch.cuda.synchronize()
    check_weight_grad(p, p.out, given, f"after new offsets {given}, {name} {seed_note}",
                      alpha=0.5)


def test_one_call_weight_gradient_form_is_captured_and_replayed_with_new_routing(gen,
                                                                                 seed_note):
    """tilecraft.grouped_gemm(x.t(), grad, offsets) allocates (G, K, N) and a CUDA graph of it
    replays with new offsets (an empty group among them) and new inputs."""
    import tilecraft

    torch = _torch()
    p = weight_grad_problem(gen)
    run = lambda: tilecraft.grouped_gemm(p.x.t(), p.grad, p.offsets, out=p.out)
    got = run()
    torch.cuda.synchronize()
    assert got is p.out
    check_weight_grad(p, p.out, p.ends, f"one call {seed_note}")
    fresh = tilecraft.grouped_gemm(p.x.t(), p.grad, p.offsets)
    assert tuple(fresh.shape) == (len(MOE_TOKENS), MOE_K, MOE_N) and fresh.dtype == p.x.dtype
    graph = captured(run)
    for tokens in (list(reversed(MOE_TOKENS)), [100, 100, 0, 100, 100, 30]):
        ends = list(itertools.accumulate(tokens))
        p.offsets.copy_(torch.tensor(ends, dtype=torch.int32))
        p.x.copy_(torch.randn_like(p.x, dtype=torch.float32).to(p.x.dtype))
        p.out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check_weight_grad(p, p.out, ends, f"replay with tokens {tokens} {seed_note}")


def test_weight_gradient_form_refusals_name_the_argument(gen):
    """C, host offsets and shapes that do not agree are refused before anything is written;
    a stacked step that would misalign a group's start lowers the alignment kernels are chosen
    for."""
    from tilecraft import api

    torch = _torch()
    p = weight_grad_problem(gen)

    def make(A=p.x.t(), B=p.grad, out=p.out, offsets=p.offsets, **kw):
        return lambda: api.GroupedGemmArguments(A, B, out, torch.float32, offsets=offsets, **kw)

    T = p.x.shape[0]
    expect_refused(make(C=p.out, beta=1.0), [r"\bC\b", r"2-D B"], [p.out])
    expect_refused(make(offsets=p.offsets.cpu()), [r"offsets", r"CUDA"], [p.out])
    expect_refused(make(B=p.grad[:-1]), [r"\bB\b", rf"total_rows={T}"], [p.out])
    expect_refused(make(out=p.out[:-1]), [r"\bout\b", r"groups=6"], [p.out])
    # A (K, T) row-major: a group's first column can start at any element, so kernels are
    # chosen for 1-element alignment (a kernel's own run refuses a wider one).
    wide = torch.zeros((MOE_K, 440), dtype=p.x.dtype, device="cuda")
    assert make(A=wide[:, :T])()._native.alignments[0] == 1


# ---- the arguments-first surface: bad input -----------------------------------------------------

def test_bad_moe_offsets(gen):
    """Negative, decreasing and overflowing offsets, and a count that does not match B's
    groups: each raises naming offsets (and the entry); nothing is written."""
    torch = _torch()
    p = moe_problem(gen, "col")
    T = p.x.shape[0]

    def with_ends(ends, device="cuda"):
        q = SimpleNamespace(**vars(p))
        q.offsets = torch.tensor(ends, dtype=torch.int32, device=device)
        return lambda: moe_arguments(q)

    ends = list(p.ends)
    negative = [-1] + ends[1:]
    decreasing = ends[:3] + [ends[2] - 10] + ends[4:]
    overflowing = ends[:-1] + [T + 1]
    expect_refused(with_ends(negative), [r"offsets\[0\]", r"negative|>= ?0"], [p.out])
    expect_refused(with_ends(decreasing), [r"offsets\[3\]"], [p.out])
    expect_refused(with_ends(overflowing, "cpu"), [r"offsets\[5\]", rf"\b{T}\b"], [p.out])
    expect_refused(with_ends(ends[:-1]), [r"offsets", r"\b6\b"], [p.out])
    moe_arguments(p)  # the original offsets are legal


def test_bad_list_form_api(gen):
    """Lists of different lengths and a group of another dtype: named; nothing written."""
    from tilecraft import api

    torch = _torch()
    row = SimpleNamespace(arch=80)
    sizes = [(16, 32, 64), (0, 32, 64), (40, 48, 64), (8, 32, 64)]
    A = [random_values(row, (m, k), "bf16", "float", 0, gen) for m, n, k in sizes]
    B = [random_values(row, (n, k), "bf16", "float", 0, gen).t() for m, n, k in sizes]
    out = [poisoned((m, n), "bf16") for m, n, k in sizes]
    f32 = torch.float32
    expect_refused(lambda: api.GroupedGemmArguments(A, B[:3], out, accumulator_type=f32),
                   [r"\bB\b", r"\b3\b"], out)
    A_bad = list(A)
    A_bad[2] = A[2].to(torch.float16)
    expect_refused(lambda: api.GroupedGemmArguments(A_bad, B, out, accumulator_type=f32),
                   [r"A\[2\]"], out)
    out_bad = list(out)
    out_bad[0] = poisoned((17, 32), "bf16")
    expect_refused(lambda: api.GroupedGemmArguments(A, B, out_bad, accumulator_type=f32),
                   [r"out\[0\]|D\[0\]"], out)
    api.GroupedGemmArguments(A, B, out, accumulator_type=f32)  # the originals are legal
