"""One tuner for every family on a GPU: grouped GEMMs and convolutions (fprop, dgrad, wgrad) tune
by measurement (each candidate checked on the tuner's own random operands against float64),
store their winner under their signature, and the one-call ops serve it; every output checked
element by element against float64 with the output poisoned first."""

import itertools

import pytest

import tilecraft
from tilecraft import tuning
from tilecraft.api.arguments import Conv2dArguments, EpilogueArguments, GroupedGemmArguments

torch = pytest.importorskip("torch")
F = torch.nn.functional
CANDIDATES = 3


def _check(got, want, scale, tolerance, what):
    assert not torch.isnan(got).any(), f"{what}: elements never written"
    error = (got.double() - want).abs()
    bad = error > tolerance * scale + 1e-6
    assert not bad.any(), (f"{what}: {int(bad.sum())} elements off, first at "
                           f"{tuple(bad.nonzero()[0].tolist())}")


def _grouped_reference(x, w, rows):
    """out[rows of group e] = x[those rows] @ w[e]^T in float64, and the same of magnitudes."""
    want = torch.empty(x.shape[0], w.shape[1], dtype=torch.float64, device="cuda")
    scale = torch.empty_like(want)
    start = 0
    for e, end in enumerate(itertools.accumulate(rows)):
        a, b = x[start:end].double(), w[e].double().t()
        want[start:end], scale[start:end] = a @ b, a.abs() @ b.abs()
        start = end
    return want, scale


def _assert_tuned(report):
    assert report["stored"] and report["winner"], report
    measured = [c for c in report["candidates"] if c["outcome"] == "measured"]
    assert measured, report["candidates"]
    # A candidate refused by the tuner's float64 check would say so; none of ours may be wrong.
    assert not [c for c in report["candidates"] if c["outcome"] == "verify_failed"], report


def test_grouped_moe_tunes_and_the_one_call_serves_the_winner():
    g = torch.Generator(device="cuda").manual_seed(5)
    rows = [150, 0, 37, 300, 1, 64, 200, 9]
    k, n = 264, 200
    x = torch.rand(sum(rows), k, generator=g, device="cuda").sub(0.5).bfloat16()
    w = torch.rand(len(rows), n, k, generator=g, device="cuda").sub(0.5).bfloat16()
    offs = torch.tensor(list(itertools.accumulate(rows)), dtype=torch.int32, device="cuda")
    out = torch.full((sum(rows), n), float("nan"), dtype=torch.bfloat16, device="cuda")
    args = GroupedGemmArguments(x, w.transpose(-2, -1), out, torch.float32, offsets=offs)
    report = tuning.tune(args, max_candidates=CANDIDATES)
    _assert_tuned(report)
    assert report["signature"].startswith("grouped;"), report["signature"]
    tilecraft.grouped_gemm(x, w.transpose(-2, -1), offsets=offs, out=out, tuning="blocking")
    name, reason = tilecraft.grouped_ops.last_grouped_pick()
    assert name == report["winner"] and "tuned winner from the tuning cache" in reason, reason
    want, scale = _grouped_reference(x, w, rows)
    _check(out, want, scale, 2 ** -7, "grouped bf16")


@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
def test_convolution_tunes_and_the_one_call_serves_the_winner(kind):
    g = torch.Generator(device="cuda").manual_seed(9)
    cl = torch.channels_last

    def rand(*shape):
        return torch.rand(*shape, generator=g, device="cuda").sub(0.5).half().contiguous(
            memory_format=cl)

    x, w, dy = rand(2, 32, 17, 15), rand(40, 32, 3, 3), rand(2, 40, 9, 8)
    geometry = dict(stride=2, padding=1)
    bias = (torch.rand(40, generator=g, device="cuda").sub(0.5).half() if kind == "fprop"
            else None)
    a, b, shape = {"fprop": (x, w, (2, 40, 9, 8)), "dgrad": (dy, w, (2, 32, 17, 15)),
                   "wgrad": (dy, x, (40, 32, 3, 3))}[kind]
    out = torch.full(shape, float("nan"), dtype=torch.half, device="cuda").contiguous(
        memory_format=cl)
    epilogue = EpilogueArguments(bias=bias, activation="relu") if bias is not None else None
    args = Conv2dArguments(a, b, out, torch.float32, kind=kind, epilogue=epilogue, **geometry)
    report = tuning.tune(args, max_candidates=CANDIDATES)
    _assert_tuned(report)
    assert report["signature"].startswith("conv;" + kind), report["signature"]
    name, reason = tilecraft._core.api.conv2d(args._native, 0, "blocking")
    assert name == report["winner"] and "tuned winner from the tuning cache" in reason, reason
    torch.cuda.synchronize()
    xd, wd, dyd = x.double(), w.double(), dy.double()
    if kind == "fprop":
        want = F.relu(F.conv2d(xd, wd, bias.double(), **geometry))
        scale = F.conv2d(xd.abs(), wd.abs(), bias.double().abs(), **geometry)
    elif kind == "dgrad":
        want = torch.nn.grad.conv2d_input(x.shape, wd, dyd, **geometry)
        scale = torch.nn.grad.conv2d_input(x.shape, wd.abs(), dyd.abs(), **geometry)
    else:
        want = torch.nn.grad.conv2d_weight(xd, w.shape, dyd, **geometry)
        scale = torch.nn.grad.conv2d_weight(xd.abs(), w.shape, dyd.abs(), **geometry)
    _check(out, want, scale, 2 ** -9, f"conv2d {kind} f16")


def test_conv2d_one_call_takes_a_tuning_mode_and_refuses_a_bad_one():
    x = torch.rand(1, 16, 9, 9, device="cuda").half().contiguous(memory_format=torch.channels_last)
    w = torch.rand(16, 16, 3, 3, device="cuda").half().contiguous(memory_format=torch.channels_last)
    with pytest.raises(ValueError, match="^tuning: expected None or one of"):
        tilecraft.conv2d(x, w, padding=1, tuning="sometimes")
    out = tilecraft.conv2d(x, w, padding=1, tuning="off")
    name, reason = tilecraft.conv_ops.last_conv_pick()
    assert name and "(tuning off)" in reason, reason
    want = F.conv2d(x.double(), w.double(), padding=1)
    _check(out, want, F.conv2d(x.double().abs(), w.double().abs(), padding=1), 2 ** -9,
           "conv2d f16 tuning off")


@pytest.mark.parametrize("out_dtype", ["float16", "float32"])
def test_conv_wgrad_split_k_kernels_match_float64(out_dtype):
    """The K-slice counts get_kernels offers for a wgrad with a long reduction (parallel slices
    summed by a reduction kernel into an f16 filter gradient; serial ones meeting in an f32 one),
    on one kernel, each run twice (the workspace and semaphores must be ready for the next
    launch), every element against float64."""
    from tilecraft import api

    g = torch.Generator(device="cuda").manual_seed(13)
    cl = torch.channels_last
    dy = torch.rand(16, 64, 28, 28, generator=g, device="cuda").sub(0.5).half().contiguous(
        memory_format=cl)
    x = torch.rand(16, 64, 28, 28, generator=g, device="cuda").sub(0.5).half().contiguous(
        memory_format=cl)
    dtype = getattr(torch, out_dtype)
    out = torch.empty(64, 64, 3, 3, dtype=dtype, device="cuda").contiguous(memory_format=cl)
    args = Conv2dArguments(dy, x, out, torch.float32, kind="wgrad", padding=1)
    by_splits, base = {}, None
    for kernel in api.get_kernels(args):
        splits = kernel.metadata.design.split_k_slices
        name = kernel.metadata.kernel_name.rsplit("_splitk", 1)[0]
        if splits > 1 and base in (None, name):
            base = name
            by_splits.setdefault(splits, kernel)
    assert by_splits, "no split-K kernel offered"
    want = torch.nn.grad.conv2d_weight(x.double(), out.shape, dy.double(), padding=1)
    scale = torch.nn.grad.conv2d_weight(x.double().abs(), out.shape, dy.double().abs(), padding=1)
    for splits, kernel in sorted(by_splits.items()):
        assert kernel.metadata.design.split_k_parallel is (out_dtype == "float16")
        for attempt in range(2):
            out.fill_(float("nan"))
            kernel.run(args)
            torch.cuda.synchronize()
            _check(out, want, scale, 2 ** -9 if out_dtype == "float16" else 1e-5,
                   f"wgrad {out_dtype} {splits} slices, run {attempt + 1}")


def test_grouped_auto_serves_at_once_and_the_background_winner_takes_over():
    """The default mode: a new signature runs at once on the ranked first pick (or a kernel
    compiled earlier for the family) while its candidates tune in the background; a later call
    of the same signature runs the measured winner, and every call's output is right."""
    import time

    g = torch.Generator(device="cuda").manual_seed(17)
    rows = [40, 0, 120, 7, 300, 64]
    k, n = 328, 136  # a signature no other test tunes
    x = torch.rand(sum(rows), k, generator=g, device="cuda").sub(0.5).half()
    w = torch.rand(len(rows), n, k, generator=g, device="cuda").sub(0.5).half()
    offs = torch.tensor(list(itertools.accumulate(rows)), dtype=torch.int32, device="cuda")
    want, scale = _grouped_reference(x, w, rows)
    reasons = []
    deadline = time.monotonic() + 900
    while True:
        out = torch.full((sum(rows), n), float("nan"), dtype=torch.half, device="cuda")
        tilecraft.grouped_gemm(x, w.transpose(-2, -1), offsets=offs, out=out, tuning="auto")
        _check(out, want, scale, 2 ** -9, f"grouped f16, call {len(reasons) + 1}")
        name, reason = tilecraft.grouped_ops.last_grouped_pick()
        reasons.append(reason)
        if "measured in the background" in reason or "no winner" in reason:
            break
        assert time.monotonic() < deadline, f"no background winner after 900 s: {reasons[-1]}"
        time.sleep(2)
    assert "tune in the background" in reasons[0], reasons[0]
    assert reasons[-1] == "tuned winner (measured in the background)", reasons[-1]
    assert tuning.find_tuned(GroupedGemmArguments(x, w.transpose(-2, -1), out, torch.float32,
                                                  offsets=offs))["kernel_name"] == name
