"""The arguments-first API (seed 003) and the one-call ops on cuda:1 while cuda:0 is current:
GEMM (with and without a compiled artifact, saved and loaded, on a caller's stream of cuda:1 and
on cuda:1's current stream), plans made per device, a custom epilogue (graph), grouped GEMM and
convolution. Small integer data keep every product and sum exact: results must equal the float64
reference in every element; outputs are poisoned (NaN) first. The kernels are the first-ranked
picks compiled by the ``kernels`` fixture (multi_kernels.pick_arguments: the same shapes)."""

import pytest

import tilecraft
from multi_kernels import (CONV_OUT, CONV_W, CONV_X, GEMM_MNK, channels_last, evt_arguments,
                           evt_epilogue)
from tilecraft import api
from tilecraft.api.arguments import GemmArguments

torch = pytest.importorskip("torch")
DEV = torch.device("cuda", 1)


def ints(shape, gen, dtype=torch.float16, device=DEV):
    return torch.randint(-2, 3, shape, generator=gen, device=device).to(dtype)


def nan_like(shape, dtype=torch.float16, device=DEV):
    return torch.full(shape, float("nan"), dtype=dtype, device=device)


def assert_equal(got, want, what):
    got = got.double()
    bad = got != want
    assert not bool(bad.any()), (f"{what}: {int(bad.sum())} of {bad.numel()} elements differ "
                                 f"from float64, first at {bad.nonzero()[:4].tolist()}")


def gemm_operands(gen):
    M, N, K = GEMM_MNK
    return ints((M, K), gen), ints((K, N), gen), ints((M, N), gen)


def picked(kernels, name):
    kernel = kernels.picks.get(name)
    assert kernel is not None, f"api.get_kernels found no kernel for the {name} arguments"
    return kernel


def test_get_kernels_ranks_for_the_operands_device(kernels, gen):
    a, b, c = gemm_operands(gen)
    args = GemmArguments(a, b, nan_like(c.shape), torch.float32)
    with torch.cuda.device(0):
        first = api.get_kernels(args)[0]
    assert first.metadata.kernel_name == picked(kernels, "gemm").metadata.kernel_name


@pytest.mark.sanitizer
def test_arguments_first_gemm_with_and_without_an_artifact(kernels, gen, tmp_path):
    kernel = picked(kernels, "gemm")
    a, b, _ = gemm_operands(gen)
    want = a.double() @ b.double()
    out = nan_like(want.shape)
    args = GemmArguments(a, b, out, torch.float32)
    assert kernel.supports(args)
    kernel.run(args)  # compiled on first use: found in the cache; cuda:1's current stream
    torch.cuda.synchronize(DEV)
    assert_equal(out, want, "Kernel.run, no artifact")

    artifact = kernel.compile(args)
    artifact.save(tmp_path / "gemm.tcart")
    loaded = api.CompiledArtifact.load(tmp_path / "gemm.tcart")
    out.fill_(float("nan"))
    stream = torch.cuda.Stream(device=DEV)
    kernel.run(args, compiled_artifact=loaded, stream=stream)
    stream.synchronize()
    assert_equal(out, want, "Kernel.run with a loaded artifact on a caller's stream of cuda:1")

    out.fill_(float("nan"))
    with torch.cuda.stream(stream):  # cuda:1's current stream, set while cuda:0 is current
        kernel.run(args, compiled_artifact=artifact)
    stream.synchronize()
    assert_equal(out, want, "Kernel.run on cuda:1's current (non-default) stream")


def test_one_call_gemm_and_plans_per_device(kernels, gen):
    a, b, c = gemm_operands(gen)
    out = tilecraft.gemm(a, b, C=c, beta=1.0, tuning="off")
    torch.cuda.synchronize(DEV)
    assert out.device == DEV
    assert_equal(out, a.double() @ b.double() + c.double(), "tilecraft.gemm with C on cuda:1")

    plans = {}
    for device in (DEV, torch.device("cuda", 0), DEV):
        x, y = ints(a.shape, gen, device=device), ints(b.shape, gen, device=device)
        result = nan_like((x.shape[0], y.shape[1]), device=device)
        plan = tilecraft.plan_gemm(x, y, result, tuning="off")
        plans.setdefault(device, plan)
        assert plans[device] is plan, "a plan for the same tensors was made twice"
        plan(x, y, result)
        torch.cuda.synchronize(device)
        assert_equal(result, x.double() @ y.double(), f"plan on {device}")
    assert plans[DEV] is not plans[torch.device("cuda", 0)]
    x0 = ints(a.shape, gen, device=torch.device("cuda", 0))
    with pytest.raises(ValueError, match="device"):
        plans[DEV](x0, ints(b.shape, gen, device=torch.device("cuda", 0)))


@pytest.mark.sanitizer
def test_custom_epilogue_on_the_second_device(kernels, gen):
    a, b, c = gemm_operands(gen)
    bias = ints((c.shape[1],), gen, dtype=torch.float32)
    want = 2.0 * (a.double() @ b.double()) + c.double() + bias.double()
    D, amax = tilecraft.gemm(a, b, epilogue=evt_epilogue,
                             epilogue_args={"alpha": 2.0, "C": c, "bias": bias})
    torch.cuda.synchronize(DEV)
    assert D.device == DEV and amax.device == DEV
    assert_equal(D, want, "one-call custom epilogue D on cuda:1")
    assert_equal(amax.reshape(()), want.abs().max(), "one-call custom epilogue amax on cuda:1")

    out, amax = nan_like(c.shape), torch.full((1,), float("nan"), device=DEV)
    args = evt_arguments(a, b, out, c, bias, amax)
    stream = torch.cuda.Stream(device=DEV)
    picked(kernels, "evt").run(args, stream=stream)
    stream.synchronize()
    assert_equal(out, want, "arguments-first custom epilogue D on cuda:1")
    assert_equal(amax.reshape(()), want.abs().max(), "arguments-first custom epilogue amax")


def moe(gen, device=DEV):
    x = ints((70, 64), gen, torch.bfloat16, device)
    w = ints((3, 96, 64), gen, torch.bfloat16, device).transpose(-2, -1)
    ends = [20, 20, 70]
    offsets = torch.tensor(ends, dtype=torch.int32, device=device)
    want = torch.empty(70, 96, dtype=torch.float64, device=device)
    for g, (s, e) in enumerate(zip([0] + ends[:-1], ends)):
        want[s:e] = x[s:e].double() @ w[g].double()
    return x, w, offsets, want


@pytest.mark.sanitizer
def test_grouped_gemm_api_and_one_call(kernels, gen):
    kernel = picked(kernels, "grouped")
    x, w, offsets, want = moe(gen)
    out = nan_like((70, 96), torch.bfloat16)
    args = api.GroupedGemmArguments(x, w, out, offsets=offsets, accumulator_type=torch.float32)
    stream = torch.cuda.Stream(device=DEV)
    kernel.run(args, stream=stream)
    stream.synchronize()
    assert_equal(out, want, "grouped Kernel.run on a caller's stream of cuda:1")
    fresh = tilecraft.grouped_gemm(x, w, offsets=offsets)
    torch.cuda.synchronize(DEV)
    assert fresh.device == DEV
    assert_equal(fresh, want, "tilecraft.grouped_gemm on cuda:1")


@pytest.mark.sanitizer
def test_convolution_api_and_one_call(kernels, gen):
    kernel = picked(kernels, "conv")
    x = channels_last(CONV_X, torch.float16, DEV, gen=gen)
    w = channels_last(CONV_W, torch.float16, DEV, gen=gen)
    want = torch.nn.functional.conv2d(x.double(), w.double(), padding=1)
    out = channels_last(CONV_OUT, torch.float16, DEV, fill=float("nan"))
    args = api.Conv2dArguments(x, w, out, torch.float32, padding=1)
    kernel.run(args)
    torch.cuda.synchronize(DEV)
    assert_equal(out, want, "conv Kernel.run on cuda:1")
    fresh = tilecraft.conv2d(x, w, padding=1)
    torch.cuda.synchronize(DEV)
    assert fresh.device == DEV
    assert_equal(fresh, want, "tilecraft.conv2d on cuda:1")


def test_one_call_operands_on_two_devices_are_refused(gen):
    a, b, _ = gemm_operands(gen)
    out = nan_like((a.shape[0], b.shape[1]), device=torch.device("cuda", 0))
    with pytest.raises(ValueError, match=r"cuda:1.*cuda:0|cuda:0.*cuda:1"):
        tilecraft.gemm(a, b, out, tuning="off")
    x, w, offsets, _ = moe(gen)
    with pytest.raises(ValueError, match=r"cuda:1.*cuda:0|cuda:0.*cuda:1"):
        tilecraft.grouped_gemm(x, w, offsets=offsets,
                               out=nan_like((70, 96), torch.bfloat16, torch.device("cuda", 0)))
    torch.cuda.synchronize()
    assert torch.isnan(out).all()
