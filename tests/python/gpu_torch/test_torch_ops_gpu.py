"""tilecraft's torch ops on a GPU: torch.compile(fullgraph=True) of a transformer block and a
small CNN with zero graph breaks, matching eager; backward of every op against float64; a
training step against torch's own layers; CUDA-graph capture and replay with new inputs; verify
mode catching a wrong result. Outputs are poisoned (NaN) where the test owns them; every element
is compared. The backward tests of the three ops (with a group of no rows) are the
compute-sanitizer subset (``-m sanitizer``)."""

import os

import pytest

torch = pytest.importorskip("torch")

import tilecraft  # noqa: E402
import tilecraft.nn  # noqa: E402
from tilecraft import verify  # noqa: E402

DEVICE = "cuda"


@pytest.fixture(scope="module", autouse=True)
def family_kernels():
    """Automatic tuning with one candidate per signature: a kernel compiled for a family (dtypes,
    layouts, epilogue) serves its other shapes at once. The first kernel of each family this file
    uses is compiled up front, all at once."""
    saved = {k: os.environ.get(k) for k in ("TILECRAFT_TUNING", "TILECRAFT_TUNING_CANDIDATES")}
    os.environ["TILECRAFT_TUNING"] = "auto"
    os.environ["TILECRAFT_TUNING_CANDIDATES"] = "1"
    from tilecraft import _core

    _core.tune.precompile(family_problems(), 1, False)  # half precision: no tf32 question
    yield
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def family_problems():
    """tilecraft.api arguments of the first problem of each kernel family the tests use."""
    from tilecraft.api.arguments import (Conv2dArguments, EpilogueArguments, GemmArguments,
                                         GroupedGemmArguments)

    def empty(*shape, dtype=torch.bfloat16, channels_last=False):
        t = torch.empty(shape, dtype=dtype, device=DEVICE)
        return t.contiguous(memory_format=torch.channels_last) if channels_last else t

    f32 = torch.float32
    made = []
    for dtype in (torch.bfloat16, torch.float16):  # Linear: x @ W^T (+ bias, + gelu)
        x, W, out, b = (empty(64, 128, dtype=dtype), empty(128, 128, dtype=dtype),
                        empty(64, 128, dtype=dtype), empty(128, dtype=dtype))
        made.append(GemmArguments(x, W.t(), out, f32, EpilogueArguments(bias=b)))
        made.append(GemmArguments(x, W.t(), out, f32,
                                  EpilogueArguments(bias=b, activation="gelu")))
        made.append(GemmArguments(x, W.t(), out, f32,
                                  EpilogueArguments(bias=b, activation="relu")))
        made.append(GemmArguments(x, W, out, f32))  # dA = g @ W
        made.append(GemmArguments(empty(64, 128, dtype=dtype).t(), empty(64, 128, dtype=dtype),
                                  empty(128, 128, dtype=dtype), f32))  # dW^T = x^T @ g
    h = torch.float16
    for (n, c, size, k, stride) in ((8, 16, 32, 32, 1), (8, 32, 32, 64, 2), (4, 32, 20, 64, 2)):
        x = empty(n, c, size, size, dtype=h, channels_last=True)
        w = empty(k, c, 3, 3, dtype=h, channels_last=True)
        p = (size + 2 - 3) // stride + 1
        y = empty(n, k, p, p, dtype=h, channels_last=True)
        made.append(Conv2dArguments(x, w, y, f32, stride=stride, padding=1,
                                    epilogue=EpilogueArguments(bias=empty(k, dtype=h),
                                                               activation="relu")))
        if n == 4:
            made.append(Conv2dArguments.dgrad(y, w, x, f32, stride=stride, padding=1))
            made.append(Conv2dArguments.wgrad(y, x, w, f32, stride=stride, padding=1))
    offsets = torch.tensor([40, 40, 168, 256], dtype=torch.int32, device=DEVICE)
    A, g = empty(256, 64), empty(256, 96)
    W = empty(4, 96, 64)
    made.append(GroupedGemmArguments(A, W.transpose(-2, -1), empty(256, 96), f32,
                                     offsets=offsets, activation="relu", offsets_on_device=True))
    made.append(GroupedGemmArguments(g, W, empty(256, 64), f32, offsets=offsets,
                                     offsets_on_device=True))
    rows = [(0, 40), (40, 168), (168, 256)]
    made.append(GroupedGemmArguments([A[s:e].t() for s, e in rows], [g[s:e] for s, e in rows],
                                     [empty(64, 96) for _ in rows], f32))
    return made


def close(got, expected, rtol, what):
    """Every element of got within rtol of float64 expected, relative to its magnitude scale."""
    got64, expected64 = got.double(), expected.double()
    scale = expected64.abs().mean().item() + 1e-6
    error = (got64 - expected64).abs()
    worst = error.max().item()
    assert torch.isfinite(got64).all(), f"{what}: non-finite elements"
    assert worst <= rtol * (expected64.abs() + scale).max().item(), (
        f"{what}: worst error {worst:.3g} at {divmod(int(error.argmax()), got.shape[-1])}")


def random(*shape, dtype=torch.bfloat16, scale=1.0, grad=False):
    return (torch.randn(shape, device=DEVICE, dtype=torch.float32) * scale).to(dtype) \
        .requires_grad_(grad)


class Block(torch.nn.Module):
    def __init__(self, width=256, heads=4, linear=tilecraft.nn.Linear):
        super().__init__()
        self.heads = heads
        self.qkv = linear(width, 3 * width)
        self.proj = linear(width, width)
        self.up = linear(width, 4 * width, **({"activation": "gelu"}
                                               if linear is tilecraft.nn.Linear else {}))
        self.down = linear(4 * width, width)
        self.norm1 = torch.nn.LayerNorm(width)
        self.norm2 = torch.nn.LayerNorm(width)
        self.gelu = linear is not tilecraft.nn.Linear

    def forward(self, x):
        b, t, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(width, dim=-1)
        q, k, v = (s.reshape(b, t, self.heads, -1).transpose(1, 2) for s in (q, k, v))
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, width))
        h = self.up(self.norm2(x))
        return x + self.down(torch.nn.functional.gelu(h) if self.gelu else h)


class SmallCnn(torch.nn.Module):
    def __init__(self, conv=tilecraft.nn.Conv2d, linear=tilecraft.nn.Linear):
        super().__init__()
        fused = conv is tilecraft.nn.Conv2d
        self.conv1 = conv(16, 32, 3, padding=1, **({"activation": "relu"} if fused else {}))
        self.conv2 = conv(32, 64, 3, stride=2, padding=1,
                          **({"activation": "relu"} if fused else {}))
        self.head = linear(64, 16)
        self.relu = not fused

    def forward(self, x):
        y = self.conv1(x)
        y = torch.relu(y) if self.relu else y
        y = self.conv2(y)
        y = torch.relu(y) if self.relu else y
        return self.head(y.mean((2, 3)))


def explain_breaks(function, *args):
    explanation = torch._dynamo.explain(function)(*args)
    return explanation.graph_break_count, explanation.break_reasons


def test_compiled_transformer_block_has_no_graph_break_and_matches_eager():
    torch.manual_seed(0)
    block = Block().to(DEVICE, torch.bfloat16)
    x = random(4, 64, 256)
    with torch.no_grad():
        eager = block(x)
        breaks, reasons = explain_breaks(block, x)
        assert breaks == 0, reasons
        torch._dynamo.reset()
        compiled = torch.compile(block, fullgraph=True)(x)
    close(compiled, eager, 2e-2, "compiled block")
    reference = Block(linear=torch.nn.Linear).to(DEVICE, torch.float64)
    reference.load_state_dict(block.state_dict())
    with torch.no_grad():
        close(eager, reference(x.double()), 4e-2, "block against float64 torch layers")


def test_compiled_cnn_has_no_graph_break_and_matches_eager():
    torch.manual_seed(1)
    model = SmallCnn().to(DEVICE, torch.float16, memory_format=torch.channels_last)
    x = random(8, 16, 32, 32, dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        eager = model(x)
        breaks, reasons = explain_breaks(model, x)
        assert breaks == 0, reasons
        torch._dynamo.reset()
        compiled = torch.compile(model, fullgraph=True)(x)
        reference = SmallCnn(torch.nn.Conv2d, torch.nn.Linear).to(DEVICE, torch.float64)
        reference.load_state_dict(model.state_dict())
        expected = reference(x.double())
    close(compiled, eager, 1e-2, "compiled cnn")
    close(eager, expected, 1e-2, "cnn against float64 torch layers")


@pytest.mark.sanitizer
def test_gemm_backward_matches_float64():
    torch.manual_seed(2)
    A, W = random(96, 80, grad=True), random(112, 80, grad=True)
    B = W.t()
    bias = random(112, grad=True)
    y = tilecraft.gemm(A, B, bias=bias, activation="gelu", alpha=0.5)
    grad = random(96, 112)
    y.backward(grad)
    A64, W64, bias64 = (t.detach().double().requires_grad_() for t in (A, W, bias))
    y64 = torch.nn.functional.gelu(0.5 * A64 @ W64.t() + bias64)
    y64.backward(grad.double())
    close(y, y64, 2e-2, "y")
    for got, expected, name in ((A.grad, A64.grad, "dA"), (W.grad, W64.grad, "dW"),
                                (bias.grad, bias64.grad, "dbias")):
        close(got, expected, 3e-2, name)


@pytest.mark.sanitizer
def test_conv_backward_runs_dgrad_and_wgrad_and_matches_float64():
    torch.manual_seed(3)
    x = random(4, 32, 20, 20, dtype=torch.float16).contiguous(
        memory_format=torch.channels_last).requires_grad_()
    w = random(64, 32, 3, 3, dtype=torch.float16, scale=0.2).contiguous(
        memory_format=torch.channels_last).requires_grad_()
    bias = random(64, dtype=torch.float16, grad=True)
    y = tilecraft.conv2d(x, w, bias, stride=2, padding=1, activation="relu")
    grad = random(*y.shape, dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    y.backward(grad)
    x64, w64, b64 = (t.detach().double().requires_grad_() for t in (x, w, bias))
    y64 = torch.relu(torch.nn.functional.conv2d(x64, w64, b64, 2, 1))
    y64.backward(grad.double())
    close(y, y64, 1e-2, "y")
    close(x.grad, x64.grad, 2e-2, "dx")
    close(w.grad, w64.grad, 2e-2, "dw")
    close(bias.grad, b64.grad, 2e-2, "dbias")


@pytest.mark.sanitizer
def test_grouped_backward_matches_float64():
    torch.manual_seed(4)
    groups, k, n = 4, 64, 96
    offsets = torch.tensor([40, 40, 168, 256], dtype=torch.int32, device=DEVICE)
    A = random(256, k, grad=True)
    W = random(groups, n, k, scale=0.2)
    B = W.transpose(-2, -1).detach().requires_grad_()
    y = tilecraft.grouped_gemm(A, B, offsets, activation="relu")
    grad = random(256, n)
    y.backward(grad)
    A64, B64 = A.detach().double().requires_grad_(), B.detach().double().requires_grad_()
    starts = [0, 40, 40, 168]
    y64 = torch.cat([torch.relu(A64[s:e] @ B64[g]) for g, (s, e) in
                     enumerate(zip(starts, offsets.tolist()))])
    y64.backward(grad.double())
    close(y, y64, 2e-2, "y")
    close(A.grad, A64.grad, 3e-2, "dA")
    close(B.grad, B64.grad, 3e-2, "dB")
    assert torch.count_nonzero(B.grad[1]) == 0  # the group without rows


def test_training_step_matches_torch_layers():
    torch.manual_seed(5)
    ours = torch.nn.Sequential(tilecraft.nn.Linear(128, 256, activation="gelu"),
                               tilecraft.nn.Linear(256, 64)).to(DEVICE, torch.bfloat16)
    theirs = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.GELU(),
                                 torch.nn.Linear(256, 64)).to(DEVICE, torch.float32)
    theirs[0].load_state_dict(ours[0].state_dict())
    theirs[2].load_state_dict(ours[1].state_dict())
    x, target = random(512, 128), random(512, 64)
    losses = []
    for model, dtype in ((ours, torch.bfloat16), (theirs, torch.float32)):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        loss = torch.nn.functional.mse_loss(model(x.to(dtype)).float(), target.float())
        loss.backward()
        losses.append(loss.item())
        optimizer.step()
    assert abs(losses[0] - losses[1]) <= 2e-2 * losses[1], losses
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        close(p.grad.float(), q.grad, 3e-2, f"{name}.grad")
        close(p.float(), q, 2e-2, f"{name} after one step")


def capture(function, *static):
    """A CUDA graph of function(*static), warmed up first on a side stream."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            function(*static)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = function(*static)
    return graph, out


def replay_with_new_inputs(function, reference, *static, rtol):
    graph, out = capture(function, *static)
    for round in range(2):
        for t in static:
            t.copy_(torch.randn_like(t, dtype=torch.float32).to(t.dtype))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        close(out, reference(*static), rtol, f"replay {round}")


def test_cuda_graph_replays_gemm_conv_layers_and_custom_epilogues_with_new_inputs():
    torch.manual_seed(6)
    with torch.no_grad():
        A, W, bias = random(192, 128), random(160, 128), random(160)
        replay_with_new_inputs(
            lambda a, w, c: tilecraft.gemm(a, w.t(), bias=c, activation="relu"),
            lambda a, w, c: torch.relu(a.double() @ w.double().t() + c.double()), A, W, bias,
            rtol=2e-2)
        x = random(8, 16, 32, 32, dtype=torch.float16).contiguous(
            memory_format=torch.channels_last)
        w = random(32, 16, 3, 3, dtype=torch.float16).contiguous(
            memory_format=torch.channels_last)
        cb = random(32, dtype=torch.float16)
        replay_with_new_inputs(
            lambda x, w, c: tilecraft.conv2d(x, w, c, padding=1, activation="relu"),
            lambda x, w, c: torch.relu(torch.nn.functional.conv2d(x.double(), w.double(),
                                                                  c.double(), padding=1)),
            x, w, cb, rtol=1e-2)
        layer = tilecraft.nn.Linear(128, 64, activation="gelu").to(DEVICE, torch.bfloat16)
        replay_with_new_inputs(
            layer, lambda x: torch.nn.functional.gelu(
                x.double() @ layer.weight.double().t() + layer.bias.double()),
            random(32, 128), rtol=2e-2)

        def epilogue(accum, alpha, bias):
            D = alpha * accum + bias
            return D

        replay_with_new_inputs(
            lambda a, w, c: tilecraft.gemm(a, w.t(), epilogue=epilogue,
                                           epilogue_args={"alpha": 0.5, "bias": c}),
            lambda a, w, c: 0.5 * (a.double() @ w.double().t()) + c.double(), A, W, bias,
            rtol=2e-2)


def test_cuda_graph_of_a_backward_step_replays():
    torch.manual_seed(7)
    layer = tilecraft.nn.Linear(128, 96, activation="gelu").to(DEVICE, torch.bfloat16)
    x = random(64, 128)

    def step(x):
        layer.zero_grad(set_to_none=False)
        y = layer(x)
        y.float().sum().backward()
        return layer.weight.grad

    layer(x).float().sum().backward()  # makes the grads the graph writes into
    graph, grad = capture(step, x)
    x.copy_(random(64, 128))
    graph.replay()
    torch.cuda.synchronize()
    W = layer.weight.detach().double().requires_grad_()
    torch.nn.functional.gelu(x.double() @ W.t() + layer.bias.double()).sum().backward()
    close(grad, W.grad, 3e-2, "weight grad after replay")


def test_cuda_graph_of_a_convolution_backward_step_replays():
    """tilecraft.nn.Conv2d's forward and backward (dgrad and wgrad kernels) in one graph,
    replayed with a new input: both gradients against float64."""
    torch.manual_seed(11)
    layer = tilecraft.nn.Conv2d(16, 32, 3, stride=2, padding=1, activation="relu").to(
        DEVICE, torch.float16, memory_format=torch.channels_last)
    x = random(4, 16, 20, 20, dtype=torch.float16).contiguous(
        memory_format=torch.channels_last).requires_grad_()

    def step(x):
        layer.zero_grad(set_to_none=False)
        x.grad.zero_()
        layer(x).float().sum().backward()
        return x.grad, layer.weight.grad

    layer(x).float().sum().backward()
    graph, (dx, dw) = capture(step, x)
    with torch.no_grad():
        x.copy_(random(4, 16, 20, 20, dtype=torch.float16))
    dx.fill_(float("nan"))
    dw.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    x64 = x.detach().double().requires_grad_()
    w64 = layer.weight.detach().double().requires_grad_()
    torch.relu(torch.nn.functional.conv2d(x64, w64, layer.bias.double(), 2, 1)).sum().backward()
    close(dx, x64.grad, 3e-2, "dx after replay")
    close(dw, w64.grad, 3e-2, "dw after replay")


def test_cuda_graph_of_a_grouped_backward_step_replays_with_new_offsets():
    """Forward and backward of a mixture-of-experts layer in one graph: the weight gradient
    (tilecraft::grouped_gemm_k) reads the offsets on the device too, and zeros the experts that
    get no rows in a replay."""
    torch.manual_seed(10)
    groups, k, n, rows = 4, 64, 96, 256
    A = random(rows, k, grad=True)
    W = random(groups, n, k, scale=0.2).requires_grad_()
    offsets = torch.tensor([40, 40, 168, 256], dtype=torch.int32, device=DEVICE)
    dy = random(rows, n)

    def step(a):
        a.grad.zero_()
        W.grad.zero_()
        tilecraft.grouped_gemm(a, W.transpose(-2, -1), offsets, activation="relu").backward(dy)
        return a.grad, W.grad

    tilecraft.grouped_gemm(A, W.transpose(-2, -1), offsets, activation="relu").backward(dy)
    graph, (dA, dW) = capture(step, A)
    for ends in ([100, 101, 200, 256], [0, 256, 256, 256]):
        offsets.copy_(torch.tensor(ends, dtype=torch.int32))
        with torch.no_grad():
            A.copy_(random(rows, k))
            dy.copy_(random(rows, n))
        dA.fill_(float("nan"))
        dW.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        A64 = A.detach().double().requires_grad_()
        W64 = W.detach().double().requires_grad_()
        starts = [0] + ends[:-1]
        y64 = torch.cat([torch.relu(A64[s:e] @ W64[g].t()) for g, (s, e) in
                         enumerate(zip(starts, ends))])
        y64.backward(dy.double())
        close(dA, A64.grad, 3e-2, f"dA after a replay with ends {ends}")
        close(dW, W64.grad, 3e-2, f"dW after a replay with ends {ends}")
        for g, (s, e) in enumerate(zip(starts, ends)):
            if s == e:
                assert torch.count_nonzero(dW[g]) == 0, f"expert {g} has no rows: {ends}"


def test_first_call_inside_a_capture_and_grouped_capture_are_refused_before_any_launch():
    A, B = random(48, 40), random(40, 24)
    offsets = torch.tensor([20, 48], dtype=torch.int32, device=DEVICE)
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="no plan exists yet"):
        with torch.cuda.graph(graph):
            tilecraft.gemm(A, B, alpha=0.75)
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="pass offsets_on_device=True"):
        with torch.cuda.graph(graph):
            tilecraft.grouped_gemm(A, random(2, 40, 24), offsets)
    torch.cuda.synchronize()


def test_cuda_graph_replays_grouped_gemm_with_new_offsets():
    torch.manual_seed(9)
    groups, k, n, rows = 4, 64, 96, 256
    A, W = random(rows, k), random(groups, n, k, scale=0.2)
    offsets = torch.tensor([40, 40, 168, 256], dtype=torch.int32, device=DEVICE)

    def run(a, w):
        return tilecraft.grouped_gemm(a, w.transpose(-2, -1), offsets, activation="relu",
                                      offsets_on_device=True)

    graph, out = capture(run, A, W)
    for ends in ([100, 101, 200, 256], [0, 256, 256, 256]):
        offsets.copy_(torch.tensor(ends, dtype=torch.int32))
        A.copy_(random(rows, k))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        starts = [0] + ends[:-1]
        expected = torch.cat([torch.relu(A[s:e].double() @ W[g].double().t())
                              for g, (s, e) in enumerate(zip(starts, ends))])
        close(out, expected, 2e-2, f"grouped replay with ends {ends}")


def test_verify_mode_catches_a_wrong_result_and_passes_right_ones(monkeypatch):
    torch.manual_seed(8)
    A, B = random(130, 96), random(96, 72)
    close(tilecraft.gemm(A, B, verify=True), A.double() @ B.double(), 2e-2, "verified")
    plan = tilecraft.plan_gemm(A, B)
    launch = type(plan)._launch

    def wrong(self, *args):
        out = launch(self, *args)
        out[17, 5] += 1.0
        return out

    monkeypatch.setattr(type(plan), "_launch", wrong)
    with pytest.raises(verify.VerificationError, match=r"out\[17, 5\] = "):
        tilecraft.gemm(A, B, verify=True)
    monkeypatch.setenv("TILECRAFT_VERIFY", "1")
    with pytest.raises(verify.VerificationError, match=r"1 of 9360 elements differ"):
        tilecraft.gemm(A, B)
    monkeypatch.setattr(type(plan), "_launch", launch)
    x = random(2, 16, 12, 12, dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    w = random(32, 16, 3, 3, dtype=torch.float16).contiguous(memory_format=torch.channels_last)
    tilecraft.conv2d(x, w, padding=1)  # verified by the setting
    offsets = torch.tensor([50, 130], dtype=torch.int32, device=DEVICE)
    tilecraft.grouped_gemm(A, random(2, 96, 72), offsets)  # verified by the setting
