"""tilecraft's torch ops without a GPU: registrations, fake-tensor functions (meta tensors),
torch.compile(fullgraph=True) tracing with no graph break, backward graphs, the nn layers' state
dicts and CPU path, the activations' derivatives and verify mode's comparison."""

import math
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the torch ops are not "
                                            "registered and have nothing to be tested against")
dynamo_testing = pytest.importorskip("torch._dynamo.testing")

import tilecraft  # noqa: E402
import tilecraft.nn  # noqa: E402
from tilecraft import activation_grad, torch_ops, verify  # noqa: E402

META = "meta"
OPS = ("gemm", "grouped_gemm", "grouped_gemm_k", "conv2d", "conv2d_input_grad",
       "conv2d_weight_grad", "gemm_epilogue")


def meta(*shape, dtype=torch.bfloat16, grad=False, channels_last=False):
    t = torch.empty(shape, dtype=dtype, device=META)
    if channels_last:
        t = t.contiguous(memory_format=torch.channels_last)
    return t.requires_grad_(grad)


def compiled(function, *args):
    """(outputs, frames, graphs' node targets) of torch.compile(fullgraph=True) on ``args``."""
    targets = []

    def backend(gm, example_inputs):
        targets.extend(str(node.target) for node in gm.graph.nodes)
        return gm.forward

    counter = dynamo_testing.CompileCounterWithBackend(backend)
    torch._dynamo.reset()
    outputs = torch.compile(function, fullgraph=True, backend=counter)(*args)
    return outputs, counter.frame_count, targets


def test_every_op_is_registered_with_a_schema():
    for name in OPS:
        schema = str(getattr(torch.ops.tilecraft, name).default._schema)
        assert schema.startswith(f"tilecraft::{name}("), schema


def test_gemm_fake_gives_the_shape_dtype_and_layout_of_the_kernels_output():
    out = torch.ops.tilecraft.gemm(meta(64, 32), meta(32, 48))
    assert (tuple(out.shape), out.dtype, out.stride()) == ((64, 48), torch.bfloat16, (48, 1))
    batched = torch.ops.tilecraft.gemm(meta(3, 64, 32), meta(32, 48))
    assert tuple(batched.shape) == (3, 64, 48)
    assert torch.ops.tilecraft.gemm(meta(8, 16, dtype=torch.int8),
                                    meta(16, 8, dtype=torch.int8)).dtype == torch.int32
    assert torch.ops.tilecraft.gemm(meta(8, 16), meta(16, 8),
                                    out_dtype=torch.float32).dtype == torch.float32


def test_gemm_fake_refuses_mismatched_operands_by_name():
    with pytest.raises(ValueError, match=r"B: expected \(K=32, N\) to match A's K, got \(16, 8\)"):
        torch.ops.tilecraft.gemm(meta(64, 32), meta(16, 8))
    with pytest.raises(ValueError, match="A, B: expected 2-D"):
        torch.ops.tilecraft.gemm(meta(64), meta(64, 8))


def test_conv2d_fakes_are_channels_last_of_the_output_extent():
    y = torch.ops.tilecraft.conv2d(meta(2, 16, 9, 9, channels_last=True),
                                   meta(32, 16, 3, 3, channels_last=True), None, [2, 2],
                                   [1, 1, 1, 1], [1, 1])
    assert tuple(y.shape) == (2, 32, 5, 5)
    assert y.is_contiguous(memory_format=torch.channels_last)
    dx = torch.ops.tilecraft.conv2d_input_grad(y, meta(32, 16, 3, 3), [2, 16, 9, 9], [2, 2],
                                               [1, 1, 1, 1], [1, 1])
    dw = torch.ops.tilecraft.conv2d_weight_grad(y, meta(2, 16, 9, 9), [32, 16, 3, 3], [2, 2],
                                                [1, 1, 1, 1], [1, 1])
    assert tuple(dx.shape) == (2, 16, 9, 9) and tuple(dw.shape) == (32, 16, 3, 3)
    assert dx.is_contiguous(memory_format=torch.channels_last)


def test_grouped_fakes():
    offsets = torch.empty(4, dtype=torch.int32, device=META)
    out = torch.ops.tilecraft.grouped_gemm(meta(96, 64), meta(4, 64, 32), offsets)
    assert tuple(out.shape) == (96, 32)
    dB = torch.ops.tilecraft.grouped_gemm_k(meta(96, 64), meta(96, 32), offsets, 0.5)
    assert tuple(dB.shape) == (4, 64, 32)
    with pytest.raises(ValueError, match="A, grad, offsets: expected"):
        torch.ops.tilecraft.grouped_gemm_k(meta(96, 64), meta(95, 32), offsets)
    with pytest.raises(ValueError, match="A, B, offsets: expected"):
        torch.ops.tilecraft.grouped_gemm(meta(96, 64), meta(64, 32), offsets)


class Block(torch.nn.Module):
    """A small transformer block: attention by torch, projections and MLP by tilecraft.nn."""

    def __init__(self, width=64, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = tilecraft.nn.Linear(width, 3 * width)
        self.proj = tilecraft.nn.Linear(width, width)
        self.up = tilecraft.nn.Linear(width, 4 * width, activation="gelu")
        self.down = tilecraft.nn.Linear(4 * width, width)
        self.norm1 = torch.nn.LayerNorm(width)
        self.norm2 = torch.nn.LayerNorm(width)

    def forward(self, x):
        b, t, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(width, dim=-1)
        q, k, v = (s.reshape(b, t, self.heads, -1).transpose(1, 2) for s in (q, k, v))
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, width))
        return x + self.down(self.up(self.norm2(x)))


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = tilecraft.nn.Conv2d(8, 16, 3, padding=1, activation="relu")
        self.conv2 = tilecraft.nn.Conv2d(16, 32, 3, stride=2, padding="valid", activation="silu")
        self.head = tilecraft.nn.Linear(32, 10)

    def forward(self, x):
        y = self.conv2(self.conv1(x))
        return self.head(y.mean((2, 3)))


def test_a_transformer_block_traces_whole_with_its_backward():
    block = Block().to(device=META, dtype=torch.bfloat16)
    x = meta(2, 16, 64, grad=True)
    y, frames, targets = compiled(block, x)
    assert frames == 1
    assert sum("tilecraft.gemm" in t for t in targets) == 4
    y.float().sum().backward()
    assert x.grad.shape == x.shape
    assert all(p.grad is not None and p.grad.shape == p.shape for p in block.parameters())


def test_a_small_cnn_traces_whole_with_its_backward():
    model = SmallCnn().to(device=META, dtype=torch.float16, memory_format=torch.channels_last)
    x = meta(2, 8, 16, 16, dtype=torch.float16, channels_last=True, grad=True)
    y, frames, targets = compiled(model, x)
    assert frames == 1 and tuple(y.shape) == (2, 10)
    assert sum("tilecraft.conv2d" in t for t in targets) == 2
    y.float().sum().backward()
    assert model.conv1.weight.grad.shape == (16, 8, 3, 3) and x.grad.shape == x.shape


def test_the_weight_gradient_form_has_a_backward_through_the_first_form():
    """tilecraft.grouped_gemm with a 2-D B on tensors that require grad goes through
    tilecraft::grouped_gemm_k, whose own backward is two grouped GEMMs of the first form."""
    offsets = torch.empty(4, dtype=torch.int32, device=META)
    A, G = meta(64, 96, grad=True), meta(96, 32, grad=True)
    out = tilecraft.grouped_gemm(A, G, offsets)
    assert tuple(out.shape) == (4, 64, 32)
    out.float().sum().backward()
    assert A.grad.shape == A.shape and G.grad.shape == G.shape
    with pytest.raises(TypeError, match="^bias: not taken by tilecraft's torch op"):
        tilecraft.grouped_gemm(A, G, offsets, bias=meta(4, 32))


def test_a_strided_three_channel_input_gradient_runs_torch_and_says_so():
    """The two-stage strided dgrad is not built: a stem layer's input gradient is torch's
    convolution_backward, with a warning; its filter gradient stays tilecraft's."""
    x = meta(2, 3, 32, 32, dtype=torch.float16, channels_last=True, grad=True)
    w = meta(16, 3, 7, 7, dtype=torch.float16, channels_last=True, grad=True)
    torch_ops._warned.clear()
    with pytest.warns(UserWarning, match="two-stage strided dgrad gives wrong results"):
        tilecraft.conv2d(x, w, stride=2, padding=3).float().sum().backward()
    assert x.grad.shape == x.shape and w.grad.shape == w.shape


def test_grouped_and_custom_epilogue_calls_trace_whole():
    offsets = torch.empty(4, dtype=torch.int32, device=META)

    def moe(A, B, offsets):
        return tilecraft.grouped_gemm(A, B, offsets, activation="silu")

    y, frames, targets = compiled(moe, meta(96, 64, grad=True), meta(4, 64, 32, grad=True),
                                  offsets)
    assert frames == 1 and any("tilecraft.grouped_gemm" in t for t in targets)

    def epilogue(accum, alpha, bias):
        D = alpha * accum + bias
        return D, D.abs().max()

    def fused(A, B, bias):
        return tilecraft.gemm(A, B, epilogue=epilogue, epilogue_args={"alpha": 2.0, "bias": bias})

    (d, amax), frames, targets = compiled(fused, meta(64, 32), meta(32, 48), meta(48))
    assert frames == 1 and any("tilecraft.gemm_epilogue" in t for t in targets)
    assert tuple(d.shape) == (64, 48) and amax.dtype == torch.float32


def test_inside_compile_arguments_the_op_does_not_take_are_refused_by_name():
    def with_out(A, B, out):
        return tilecraft.gemm(A, B, out=out)

    with pytest.raises(Exception, match="out: not taken by tilecraft's torch op"):
        compiled(with_out, meta(8, 8), meta(8, 8), meta(8, 8))


def test_layers_load_torchs_state_dicts_and_keep_their_parameters():
    reference = torch.nn.Linear(12, 7)
    layer = tilecraft.nn.Linear(12, 7, activation="relu")
    layer.load_state_dict(reference.state_dict())
    assert torch.equal(layer.weight, reference.weight) and torch.equal(layer.bias, reference.bias)
    conv = torch.nn.Conv2d(3, 5, 3, bias=False)
    ours = tilecraft.nn.Conv2d(3, 5, 3, bias=False, activation="gelu")
    ours.load_state_dict(conv.state_dict())
    assert set(ours.state_dict()) == {"weight"}
    assert "activation='gelu'" in repr(ours)
    with pytest.raises(ValueError, match="activation: expected None or one of"):
        tilecraft.nn.Linear(4, 4, activation="swish")
    with pytest.raises(ValueError, match=r"activation_args: clamp takes \(low, high\)"):
        tilecraft.nn.Linear(4, 4, activation="clamp")


def test_layers_on_cpu_tensors_compute_with_torch_and_say_so():
    torch.manual_seed(0)
    layer = tilecraft.nn.Linear(6, 5, activation="gelu").double()
    conv = tilecraft.nn.Conv2d(3, 4, 3, padding="same", activation="relu").double()
    x = torch.randn(7, 6, dtype=torch.float64)
    image = torch.randn(2, 3, 8, 8, dtype=torch.float64)
    tilecraft.nn._told.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = layer(x)
        z = conv(image)
    assert any("computed by torch" in str(w.message) for w in caught)
    expected = torch.nn.functional.gelu(torch.nn.functional.linear(x, layer.weight, layer.bias))
    assert torch.allclose(y, expected, rtol=0, atol=1e-12)
    expected = torch.relu(torch.nn.functional.conv2d(image, conv.weight, conv.bias, padding=1))
    assert torch.allclose(z, expected, rtol=0, atol=1e-12)


def test_layers_name_a_wrong_input_shape():
    with pytest.raises(ValueError, match=r"^x: expected \(\.\.\., in_features=12\), got \(4, 11\)"):
        tilecraft.nn.Linear(12, 7).to(META)(meta(4, 11))
    with pytest.raises(ValueError, match=r"^x: expected \(N, in_channels=3, H, W\), got "
                                         r"\(1, 4, 8, 8\)"):
        tilecraft.nn.Conv2d(3, 5, 3).to(META)(meta(1, 4, 8, 8))


def test_same_padding_of_even_filters_is_torchs_asymmetric_split():
    conv = tilecraft.nn.Conv2d(3, 4, (4, 2), padding="same", dilation=(1, 3))
    assert conv._padding() == (1, 2, 1, 2)
    assert tilecraft.nn.Conv2d(3, 4, 3, padding=(2, 1))._padding() == (2, 2, 1, 1)


@pytest.mark.parametrize("name,args", [("relu", ()), ("leaky_relu", (0.2,)), ("sigmoid", ()),
                                       ("tanh", ()), ("silu", ()), ("hardswish", ()),
                                       ("gelu", ()), ("gelu_tanh", ()), ("clamp", (-0.5, 0.7))])
def test_activation_derivatives_match_autograd_in_float64(name, args):
    torch.manual_seed(1)
    z = (torch.randn(4096, dtype=torch.float64) * 3).requires_grad_()
    z.data[z.data.abs() < 1e-3] += 0.01  # no kinks at the sample points
    y = activation_grad.apply(name, z, args)
    (expected,) = torch.autograd.grad(y.sum(), z)
    got = activation_grad.derivative(name, z.detach(), args).double()
    assert torch.allclose(got, expected, rtol=1e-5, atol=1e-6), name
    if name in activation_grad.FROM_OUTPUT:
        from_y = activation_grad.derivative_from_output(name, y.detach()).double()
        assert torch.allclose(from_y, expected, rtol=1e-5, atol=1e-6)


def test_verify_passes_a_right_result_and_names_the_first_wrong_element():
    torch.manual_seed(2)
    A = torch.randn(33, 40, dtype=torch.float16)
    B = torch.randn(40, 17, dtype=torch.float16)
    bias = torch.randn(17, dtype=torch.float16)
    out = torch.nn.functional.gelu(A.float() @ B.float() * 0.5 + bias.float()).half()
    verify.check_gemm(A, B, out, alpha=0.5, bias=bias, activation="gelu")
    out[3, 11] += 0.25 + abs(float(out[3, 11])) * 0.05
    with pytest.raises(verify.VerificationError, match=r"out\[3, 11\] = .*1 of 561 elements"):
        verify.check_gemm(A, B, out, alpha=0.5, bias=bias, activation="gelu")
    out[0, 0] = float("nan")
    with pytest.raises(verify.VerificationError, match=r"out\[0, 0\] = nan.*2 of 561"):
        verify.check_gemm(A, B, out, alpha=0.5, bias=bias, activation="gelu")


def test_verify_checks_every_group_and_convolutions():
    torch.manual_seed(3)
    A = torch.randn(10, 8, dtype=torch.bfloat16)
    B = torch.randn(3, 8, 4, dtype=torch.bfloat16)
    offsets = torch.tensor([3, 3, 10], dtype=torch.int32)
    out = torch.empty(10, 4, dtype=torch.bfloat16)
    out[:3] = (A[:3].float() @ B[0].float()).bfloat16()
    out[3:] = (A[3:].float() @ B[2].float()).bfloat16()
    verify.check_grouped(A, B, offsets, out)
    out[7, 2] += 4.0
    with pytest.raises(verify.VerificationError, match=r"group 2: .*out\[4, 2\]"):
        verify.check_grouped(A, B, offsets, out)
    x = torch.randn(2, 3, 7, 7)
    w = torch.randn(5, 3, 3, 3)
    y = torch.relu(torch.nn.functional.conv2d(x, w, padding=(1, 1), stride=2))
    verify.check_conv2d(x, w, y, stride=(2, 2), padding=(1, 1, 1, 1), activation="relu")
    y[1, 4, 3, 0] = -1.0
    with pytest.raises(verify.VerificationError, match=r"out\[1, 4, 3, 0\] = -1.0"):
        verify.check_conv2d(x, w, y, stride=(2, 2), padding=(1, 1, 1, 1), activation="relu")


def test_verify_setting_and_argument(monkeypatch):
    monkeypatch.delenv("TILECRAFT_VERIFY", raising=False)
    assert verify.wanted(None) is False and verify.wanted(True) is True
    monkeypatch.setenv("TILECRAFT_VERIFY", "1")
    assert verify.wanted(None) is True and verify.wanted(False) is False
    with pytest.raises(TypeError, match="verify: expected None, True or False, got str"):
        verify.wanted("yes")
    monkeypatch.setenv("TILECRAFT_VERIFY", "sometimes")
    with pytest.raises(ValueError, match="TILECRAFT_VERIFY: expected 1, true.*got 'sometimes'"):
        verify.wanted(None)


def test_epilogue_names_are_stable_per_function_and_refuse_non_functions():
    def epilogue(accum):
        return accum

    assert torch_ops.epilogue_name(epilogue) == torch_ops.epilogue_name(epilogue)
    with pytest.raises(TypeError, match="epilogue: expected a Python function"):
        torch_ops.epilogue_name(3)
    with pytest.raises(ValueError, match="epilogue: expected the name of an epilogue registered"):
        torch_ops._epilogue("nowhere")


def test_tilecraft_gemm_is_a_function_carrying_the_seeds_names():
    assert callable(tilecraft.gemm) and not isinstance(tilecraft.gemm, type(math))
    assert tilecraft.gemm.GemmCoord(1, 2, 3).n() == 2
    assert tilecraft.gemm.Mode.Gemm is not None
    from tilecraft.gemm import GemmCoord

    assert GemmCoord is tilecraft.GemmCoord
