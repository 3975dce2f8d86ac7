"""Convolutions through the arguments-first API (tilecraft.api.Conv2dArguments, get_kernels,
Kernel.supports / compile / run, artifacts) and the one-call tilecraft.conv2d, on channels-last
torch tensors, every element against torch's float64 convolution (its autograd gradients for
dgrad and wgrad), outputs poisoned first.

Random floats in [-1, 1]; the bound is the f32-accumulation error of the products plus one
rounding of the output: |got - want| <= 2^-9 * scale + ulp(out) * |want|, scale the same
convolution of the absolute values.
"""

import pytest

pytestmark = pytest.mark.gpu

OUT_ULP = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23}


def _torch():
    import torch

    return torch


def _channels_last(shape):
    torch = _torch()
    return torch.channels_last_3d if len(shape) == 5 else torch.channels_last


def randn_cl(shape, dtype, gen):
    """Uniform in [-1, 1], channels-last (channels-last-3d for 5-D shapes)."""
    torch = _torch()
    t = torch.rand(shape, generator=gen, device="cuda", dtype=torch.float32) * 2 - 1
    return t.to(dtype).contiguous(memory_format=_channels_last(shape))


def poisoned_like_cl(shape, dtype):
    torch = _torch()
    return torch.full(shape, float("nan"), dtype=dtype, device="cuda").contiguous(
        memory_format=_channels_last(shape))


def reference(kind, x, w, dy, stride, padding, dilation, groups=1):
    """float64 fprop, dgrad or wgrad of torch's conv2d (symmetric padding (rows, columns))."""
    torch = _torch()
    F = torch.nn.functional
    x64 = x.double().detach().requires_grad_(kind == "dgrad")
    w64 = w.double().detach().requires_grad_(kind == "wgrad")
    y = F.conv2d(x64, w64, stride=stride, padding=padding, dilation=dilation, groups=groups)
    if kind == "fprop":
        return y.detach()
    (grad,) = torch.autograd.grad(y, x64 if kind == "dgrad" else w64, dy.double())
    return grad.detach()


def check(got, want, scale, what):
    bound = 2.0 ** -9 * scale + OUT_ULP[str(got.dtype).replace("torch.", "")] * want.abs()
    bad = ~((got.double() - want).abs() <= bound)  # NaN (unwritten) fails
    assert not bool(bad.any()), (f"{what}: {int(bad.sum())} of {bad.numel()} elements off; "
                                 f"first at {bad.nonzero()[0].tolist()}")


@pytest.fixture
def gen():
    torch = _torch()
    g = torch.Generator(device="cuda")
    g.manual_seed(20261125)
    return g


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
@pytest.mark.parametrize("activation", [None, "relu"])
def test_conv2d_one_call(gen, dtype_name, activation):
    import tilecraft

    torch = _torch()
    dtype = getattr(torch, dtype_name)
    x = randn_cl((4, 64, 17, 15), dtype, gen)
    w = randn_cl((72, 64, 3, 3), dtype, gen)
    bias = (torch.rand(72, generator=gen, device="cuda") * 2 - 1).to(dtype)
    out = poisoned_like_cl((4, 72, 9, 8), dtype)
    got = tilecraft.conv2d(x, w, bias=bias, stride=2, padding=1, activation=activation, out=out)
    assert got is out
    pre = reference("fprop", x, w, None, 2, 1, 1) + bias.double().view(1, -1, 1, 1)
    want = torch.relu(pre) if activation == "relu" else pre
    scale = reference("fprop", x.abs(), w.abs(), None, 2, 1, 1) + bias.double().abs().view(
        1, -1, 1, 1)
    check(got, want, scale, f"conv2d {dtype_name} {activation}")
    name, reason = tilecraft.conv_ops.last_conv_pick()
    assert name and "ranked first pick" in reason


@pytest.mark.parametrize("activation", [None, "relu"])
def test_conv2d_one_by_one_runs_as_a_gemm(gen, activation):
    import tilecraft

    torch = _torch()
    x = randn_cl((3, 64, 11, 13), torch.float16, gen)
    w = randn_cl((72, 64, 1, 1), torch.float16, gen)
    bias = (torch.rand(72, generator=gen, device="cuda") * 2 - 1).half()
    out = poisoned_like_cl((3, 72, 11, 13), torch.float16)
    got = tilecraft.conv2d(x, w, bias=bias, activation=activation, out=out, tuning="off")
    assert got is out
    pre = reference("fprop", x, w, None, 1, 0, 1) + bias.double().view(1, -1, 1, 1)
    want = torch.relu(pre) if activation == "relu" else pre
    scale = reference("fprop", x.abs(), w.abs(), None, 1, 0, 1) + bias.double().abs().view(
        1, -1, 1, 1)
    check(got, want, scale, f"conv2d 1x1 {activation}")
    name, reason = tilecraft.conv_ops.last_conv_pick()
    assert "as the GEMM" in reason and "fprop" not in name, (name, reason)
    assert tilecraft.clear_plans() >= 1  # the GEMM route's plan, kept until now


@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
def test_api_kernels_rank_compile_and_run(gen, kind, tmp_path):
    import tilecraft
    import tilecraft.api as api

    torch = _torch()
    dtype = torch.float16
    x = randn_cl((2, 48, 12, 10), dtype, gen)
    w = randn_cl((40, 48, 3, 3), dtype, gen)
    dy = randn_cl((2, 40, 12, 10), dtype, gen)
    shapes = {"fprop": (x, w, (2, 40, 12, 10)), "dgrad": (dy, w, (2, 48, 12, 10)),
              "wgrad": (dy, x, (40, 48, 3, 3))}
    a, b, out_shape = shapes[kind]
    out = poisoned_like_cl(out_shape, dtype)
    args = api.Conv2dArguments(a, b, out, torch.float32, kind=kind, padding=1)
    kernels = api.get_kernels(args)
    assert kernels, "no kernel listed"
    assert all(k.metadata.conv.kind == getattr(tilecraft.conv.Operator, kind)
               for k in kernels[:20])
    kernel = kernels[0]
    assert kernel.supports(args)
    artifact = kernel.compile(args)
    path = tmp_path / "conv.tca"
    artifact.save(str(path))
    loaded = api.CompiledArtifact.load(str(path))
    kernel.run(args, loaded)
    torch.cuda.synchronize()
    want = reference(kind, x, w, dy, 1, 1, 1)
    scale = reference(kind, x.abs(), w.abs(), dy.abs(), 1, 1, 1)
    check(out, want, scale, f"api {kind} {kernel.metadata.kernel_name}")


@pytest.mark.parametrize("kind", ["fprop", "dgrad", "wgrad"])
def test_three_channels_run_on_the_two_stage_mainloop(gen, kind):
    # A first layer of 3 channels (7x7, stride 2): no access wider than one f16 element divides
    # C, so only the two-stage analytic kernels run it, with no copy; fprop with bias and ReLU
    # through the one call, each kind's first two kernels through the API. CUTLASS's two-stage
    # strided dgrad gave wrong results on an H100 (bench/RESULTS.md) and is not listed: dgrad
    # runs the unit-stride form of the same layer.
    import tilecraft
    import tilecraft.api as api

    torch = _torch()
    dtype = torch.float16
    x = randn_cl((2, 3, 30, 26), dtype, gen)
    w = randn_cl((16, 3, 7, 7), dtype, gen)
    dy = randn_cl((2, 16, 15, 13), dtype, gen)
    stride = 2
    if kind == "dgrad":
        strided = api.Conv2dArguments(dy, w, poisoned_like_cl((2, 3, 30, 26), dtype),
                                      torch.float32, kind=kind, stride=2, padding=3)
        assert not api.get_kernels(strided), "the two-stage strided dgrad is listed"
        stride, dy = 1, randn_cl((2, 16, 30, 26), dtype, gen)
    want = reference(kind, x, w, dy, stride, 3, 1)
    scale = reference(kind, x.abs(), w.abs(), dy.abs(), stride, 3, 1)
    if kind == "fprop":
        bias = (torch.rand(16, generator=gen, device="cuda") * 2 - 1).half()
        out = poisoned_like_cl((2, 16, 15, 13), dtype)
        got = tilecraft.conv2d(x, w, bias=bias, stride=2, padding=3, activation="relu", out=out,
                               tuning="off")
        check(got, torch.relu(want + bias.double().view(1, -1, 1, 1)),
              scale + bias.double().abs().view(1, -1, 1, 1), "conv2d C=3 7x7/2 + bias + relu")
        name, _ = tilecraft.conv_ops.last_conv_pick()
        assert "analytic" in name and "32x2" in name, name
    a, b, out_shape = {"fprop": (x, w, (2, 16, 15, 13)), "dgrad": (dy, w, (2, 3, 30, 26)),
                       "wgrad": (dy, x, (16, 3, 7, 7))}[kind]
    out = poisoned_like_cl(out_shape, dtype)
    args = api.Conv2dArguments(a, b, out, torch.float32, kind=kind, stride=stride, padding=3)
    kernels = api.get_kernels(args)
    assert kernels, f"no {kind} kernel for 3 channels"
    for kernel in kernels[:2]:
        assert kernel.metadata.design.stages == 2, kernel.metadata.kernel_name
        out.fill_(float("nan"))
        kernel.run(args)
        torch.cuda.synchronize()
        check(out, want, scale, f"{kind} {kernel.metadata.kernel_name}")


@pytest.mark.parametrize("dtype_name,groups,c,k", [
    ("float16", 4, 128, 256), ("float16", 8, 64, 64), ("bfloat16", 2, 96, 64),
    ("float32", 32, 32, 32), ("float32", 6, 48, 48)])
def test_conv2d_grouped_and_depthwise(gen, dtype_name, groups, c, k):
    """The one-call conv2d and the api's ranked kernels for groups > 1: group kernels fitting the
    groups (tensor-op single or multiple group; depthwise on CUDA cores), with a bias."""
    import tilecraft
    import tilecraft.api as api

    torch = _torch()
    dtype = getattr(torch, dtype_name)
    x = randn_cl((2, c, 13, 11), dtype, gen)
    w = randn_cl((k, c // groups, 3, 3), dtype, gen)
    bias = (torch.rand(k, generator=gen, device="cuda") * 2 - 1).to(dtype)
    out = poisoned_like_cl((2, k, 7, 6), dtype)
    got = tilecraft.conv2d(x, w, bias=bias, stride=2, padding=1, groups=groups, out=out)
    assert got is out
    pre = reference("fprop", x, w, None, 2, 1, 1, groups) + bias.double().view(1, -1, 1, 1)
    scale = reference("fprop", x.abs(), w.abs(), None, 2, 1, 1, groups) + \
        bias.double().abs().view(1, -1, 1, 1)
    check(got, pre, scale, f"conv2d {dtype_name} groups={groups}")
    name, reason = tilecraft.conv_ops.last_conv_pick()
    depthwise = c == k == groups
    assert ("depthwise" if depthwise else "group") in name, name

    args = api.Conv2dArguments(x, w, out, torch.float32, padding=1, stride=2, groups=groups)
    kernels = api.get_kernels(args)
    assert kernels and all(k.metadata.conv.group_mode != tilecraft.conv.GroupMode.NoneGroup
                           for k in kernels)


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_conv2d_half_depthwise_runs_on_the_direct_kernel(gen, dtype_name):
    """Half-precision depthwise fprop, once refused (CUTLASS's depthwise kernels accumulate in
    the operands' type), runs on tilecraft's direct kernel with float32 accumulators."""
    import tilecraft

    torch = _torch()
    dtype = getattr(torch, dtype_name)
    x = randn_cl((2, 24, 9, 10), dtype, gen)
    w = randn_cl((24, 1, 3, 3), dtype, gen)
    out = poisoned_like_cl((2, 24, 9, 10), dtype)
    got = tilecraft.conv2d(x, w, padding=1, groups=24, out=out)
    assert got is out
    pre = reference("fprop", x, w, None, 1, 1, 1, 24)
    scale = reference("fprop", x.abs(), w.abs(), None, 1, 1, 1, 24)
    check(got, pre, scale, f"conv2d {dtype_name} depthwise")
    name, _ = tilecraft.conv_ops.last_conv_pick()
    assert "_direct_depthwise_" in name, name


def reference3d(kind, x, w, dy, stride, padding, dilation):
    torch = _torch()
    F = torch.nn.functional
    x64 = x.double().detach().requires_grad_(kind == "dgrad")
    w64 = w.double().detach().requires_grad_(kind == "wgrad")
    y = F.conv3d(x64, w64, stride=stride, padding=padding, dilation=dilation)
    if kind == "fprop":
        return y.detach()
    (grad,) = torch.autograd.grad(y, x64 if kind == "dgrad" else w64, dy.double())
    return grad.detach()


@pytest.mark.parametrize("dtype_name", ["float16", "bfloat16"])
def test_conv3d_one_call(gen, dtype_name):
    """tilecraft.conv3d with a bias and relu, strided and padded, against torch's conv3d."""
    import tilecraft

    torch = _torch()
    dtype = getattr(torch, dtype_name)
    x = randn_cl((2, 24, 7, 9, 8), dtype, gen)
    w = randn_cl((40, 24, 3, 3, 3), dtype, gen)
    bias = (torch.rand(40, generator=gen, device="cuda") * 2 - 1).to(dtype)
    out = poisoned_like_cl((2, 40, 4, 5, 4), dtype)
    got = tilecraft.conv3d(x, w, bias=bias, stride=2, padding=1, activation="relu", out=out)
    assert got is out
    pre = reference3d("fprop", x, w, None, 2, 1, 1) + bias.double().view(1, -1, 1, 1, 1)
    scale = reference3d("fprop", x.abs(), w.abs(), None, 2, 1, 1) + \
        bias.double().abs().view(1, -1, 1, 1, 1)
    check(got, torch.relu(pre), scale, f"conv3d {dtype_name}")
    name, _ = tilecraft.conv_ops.last_conv_pick()
    assert "ndhwc" in name, name


@pytest.mark.parametrize("kind", ["dgrad", "wgrad"])
def test_api_conv3d_gradients(gen, kind):
    import tilecraft.api as api

    torch = _torch()
    dtype = torch.float16
    x = randn_cl((2, 16, 6, 7, 5), dtype, gen)
    w = randn_cl((24, 16, 3, 3, 3), dtype, gen)
    dy = randn_cl((2, 24, 6, 7, 5), dtype, gen)
    a, b, out_shape = {"dgrad": (dy, w, (2, 16, 6, 7, 5)),
                       "wgrad": (dy, x, (24, 16, 3, 3, 3))}[kind]
    out = poisoned_like_cl(out_shape, dtype)
    args = api.Conv3dArguments(a, b, out, torch.float32, kind=kind, padding=1)
    assert args.problem_size.Z == 6
    kernels = api.get_kernels(args)
    assert kernels, "no kernel listed"
    kernel = kernels[0]
    kernel.run(args, kernel.compile(args))
    torch.cuda.synchronize()
    want = reference3d(kind, x, w, dy, 1, 1, 1)
    scale = reference3d(kind, x.abs(), w.abs(), dy.abs(), 1, 1, 1)
    check(out, want, scale, f"api conv3d {kind} {kernel.metadata.kernel_name}")


def test_conv2d_refuses_channels_first_and_launches_nothing(gen):
    import tilecraft

    torch = _torch()
    x = torch.rand(2, 16, 8, 8, device="cuda", dtype=torch.float16)  # channels-first
    w = randn_cl((16, 16, 3, 3), torch.float16, gen)
    out = poisoned_like_cl((2, 16, 8, 8), torch.float16)
    with pytest.raises(ValueError, match="channels-first: call .contiguous"):
        tilecraft.conv2d(x, w, padding=1, out=out)
    assert bool(out.isnan().all())
