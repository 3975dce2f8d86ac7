"""tilecraft's ops as torch custom operators, so that ``torch.compile`` traces them (no graph
break), autograd differentiates them and CUDA graphs capture them.

    torch.ops.tilecraft.gemm(A, B, C, bias, alpha, beta, activation, ...)
    torch.ops.tilecraft.grouped_gemm(A, B, offsets, bias, alpha, activation, ...)
    torch.ops.tilecraft.conv2d(x, w, bias, stride, padding, dilation, groups, activation, ...)
    torch.ops.tilecraft.gemm_epilogue(A, B, epilogue, tensors, names, scalars, scalar_names, ...)

``tilecraft.gemm``, ``grouped_gemm`` (the stacked form) and ``conv2d`` call these by themselves
inside ``torch.compile`` and when an input requires grad, so a model written with them (or with
``tilecraft.nn``) needs nothing more. Each op has a fake-tensor function (shapes, dtypes and
strides of the outputs, nothing run) and a backward through tilecraft's own kernels: GEMMs for a
GEMM, dgrad and wgrad convolutions for a convolution, grouped GEMMs for a grouped GEMM.
Importing this module imports torch and registers the ops once per process.
"""

from typing import List, Optional, Sequence

import torch
from torch import Tensor

from tilecraft import activation_grad, conv_ops, epilogue_ops, grouped_ops, interop, ops

_LIB = "tilecraft"
_epilogues = {}  # name -> the epilogue function gemm_epilogue traces


def _args(values):
    return tuple(values or ())


def _output_dtype(A, out_dtype):
    return interop.output_dtype(A) if out_dtype is None else out_dtype


def _check_matrices(A, B):
    if A.dim() not in (2, 3) or B.dim() not in (2, 3):
        raise ValueError(f"A, B: expected 2-D (M, K) and (K, N) tensors, or 3-D with a leading "
                         f"batch dimension, got A {tuple(A.shape)} and B {tuple(B.shape)}")
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"B: expected (K={A.shape[-1]}, N) to match A's K, got "
                         f"{tuple(B.shape)}")


# ---------------------------------------------------------------- GEMM


@torch.library.custom_op(f"{_LIB}::gemm", mutates_args=())
def gemm(A: Tensor, B: Tensor, C: Optional[Tensor] = None, bias: Optional[Tensor] = None,
         alpha: float = 1.0, beta: float = 0.0, activation: str = "",
         activation_args: Optional[Sequence[float]] = None, bias_per_row: bool = False,
         out_dtype: Optional[torch.dtype] = None, accumulator_type: Optional[torch.dtype] = None,
         tuning: str = "", allow_tf32: Optional[bool] = None, verify: bool = False) -> Tensor:
    """``activation(alpha * (A @ B) + beta * C + bias)`` as ``tilecraft.gemm`` computes it."""
    return ops.gemm(A, B, C=C, alpha=alpha, beta=beta, bias=bias,
                     activation=activation or None, activation_args=_args(activation_args),
                     bias_per_row=bias_per_row, out_dtype=out_dtype,
                     accumulator_type=accumulator_type, tuning=tuning or None,
                     allow_tf32=allow_tf32, verify=verify or None)


@gemm.register_fake
def _gemm_fake(A, B, C=None, bias=None, alpha=1.0, beta=0.0, activation="",
               activation_args=None, bias_per_row=False, out_dtype=None, accumulator_type=None,
               tuning="", allow_tf32=None, verify=False):
    _check_matrices(A, B)
    shape = (A.shape[-2], B.shape[-1])
    if A.dim() == 3 or B.dim() == 3:
        shape = (A.shape[0] if A.dim() == 3 else B.shape[0],) + shape
    return A.new_empty(shape, dtype=_output_dtype(A, out_dtype))


def _gemm_setup(ctx, inputs, output):
    A, B, C, bias, alpha, beta, activation, activation_args, bias_per_row = inputs[:9]
    ctx.alpha, ctx.beta, ctx.activation = alpha, beta, activation
    ctx.activation_args, ctx.bias_per_row = _args(activation_args), bias_per_row
    ctx.has_C, ctx.has_bias = C is not None, bias is not None
    ctx.options = inputs[9:]
    kept = output if activation in activation_grad.FROM_OUTPUT else None
    ctx.save_for_backward(A, B, C, bias, kept)


def _through_activation(ctx, grad, kept, recompute, dtype):
    """grad through the forward's activation (ctx.activation): the gradient of the
    pre-activation, in ``dtype``. The derivative comes from the kept output where the activation
    allows (activation_grad.FROM_OUTPUT), else from the pre-activation ``recompute()`` gives."""
    if ctx.activation in ("", "identity"):
        return grad.to(dtype)
    if kept is not None:
        slope = activation_grad.derivative_from_output(ctx.activation, kept)
    else:
        slope = activation_grad.derivative(ctx.activation, recompute(), ctx.activation_args)
    return (grad.float() * slope).to(dtype)


def _sum_to(tensor, shape):
    """tensor summed over its broadcast leading dimensions down to ``shape``."""
    while tensor.dim() > len(shape):
        tensor = tensor.sum(0)
    return tensor


def _gemm_backward(ctx, grad):
    A, B, C, bias, kept = ctx.saved_tensors
    if not A.is_floating_point() or A.element_size() < 2:
        raise RuntimeError(f"tilecraft.gemm: no gradient for {A.dtype} inputs")

    def recompute():
        return torch.ops.tilecraft.gemm(A, B, C, bias, ctx.alpha, ctx.beta, "", None,
                                        ctx.bias_per_row, None, *ctx.options[1:])

    g = _through_activation(ctx, grad, kept, recompute, grad.dtype)
    need = ctx.needs_input_grad
    dA = dB = dC = dbias = None
    if need[0]:
        dA = torch.ops.tilecraft.gemm(g, B.transpose(-2, -1), alpha=ctx.alpha,
                                      out_dtype=A.dtype)
        dA = _sum_to(dA, A.shape)
    if need[1]:
        if B.dim() == 2 and A.dim() == 3:
            rows = A.reshape(-1, A.shape[-1]).transpose(0, 1)
            dB = torch.ops.tilecraft.gemm(rows, g.reshape(-1, g.shape[-1]), alpha=ctx.alpha,
                                          out_dtype=B.dtype)
        else:
            dB = torch.ops.tilecraft.gemm(A.transpose(-2, -1), g, alpha=ctx.alpha,
                                          out_dtype=B.dtype)
            dB = _sum_to(dB, B.shape)
    if need[2] and ctx.has_C:
        dC = _sum_to(g * ctx.beta, C.shape).to(C.dtype)
    if need[3] and ctx.has_bias:
        axis = -1 if ctx.bias_per_row else -2
        dbias = g.float().sum(axis)
        dbias = _sum_to(dbias, bias.shape).to(bias.dtype)
    return (dA, dB, dC, dbias) + (None,) * 10


gemm.register_autograd(_gemm_backward, setup_context=_gemm_setup)


# ---------------------------------------------------------------- grouped GEMM (stacked form)


@torch.library.custom_op(f"{_LIB}::grouped_gemm", mutates_args=())
def grouped_gemm(A: Tensor, B: Tensor, offsets: Tensor, bias: Optional[Tensor] = None,
                 alpha: float = 1.0, activation: str = "",
                 activation_args: Optional[Sequence[float]] = None,
                 out_dtype: Optional[torch.dtype] = None, tuning: str = "",
                 verify: bool = False) -> Tensor:
    """``out[rows of g] = activation(alpha * A[rows of g] @ B[g] + bias[g])``."""
    return grouped_ops.grouped_gemm(A, B, offsets, alpha=alpha, bias=bias,
                                     activation=activation or None,
                                     activation_args=_args(activation_args),
                                     out_dtype=out_dtype, tuning=tuning or None,
                                     verify=verify or None, offsets_on_device=True)


@grouped_gemm.register_fake
def _grouped_fake(A, B, offsets, bias=None, alpha=1.0, activation="", activation_args=None,
                  out_dtype=None, tuning="", verify=False):
    if A.dim() != 2 or B.dim() != 3 or offsets.dim() != 1:
        raise ValueError(f"A, B, offsets: expected (total_rows, K), (groups, K, N) and (groups,), "
                         f"got {tuple(A.shape)}, {tuple(B.shape)} and {tuple(offsets.shape)}")
    return A.new_empty((A.shape[0], B.shape[-1]), dtype=out_dtype or A.dtype)


@torch.library.custom_op(f"{_LIB}::grouped_gemm_k", mutates_args=())
def grouped_gemm_k(A: Tensor, grad: Tensor, offsets: Tensor, alpha: float = 1.0) -> Tensor:
    """``out[g] = alpha * A[rows of g]^T @ grad[rows of g]`` (groups, K, N): the weight gradient
    of a stacked grouped GEMM, as one grouped GEMM whose problems sum over their group's rows
    (zeros for a group with none). The offsets are read on the device: a CUDA graph captures
    it."""
    if A.shape[0] == 0:
        return torch.zeros((offsets.shape[0], A.shape[1], grad.shape[1]), dtype=A.dtype,
                           device=A.device)
    return grouped_ops.grouped_gemm(A.contiguous().transpose(0, 1), grad.contiguous(), offsets,
                                     alpha=alpha, out_dtype=A.dtype)


@grouped_gemm_k.register_fake
def _grouped_k_fake(A, grad, offsets, alpha=1.0):
    if A.dim() != 2 or grad.dim() != 2 or offsets.dim() != 1 or A.shape[0] != grad.shape[0]:
        raise ValueError(f"A, grad, offsets: expected (total_rows, K), (total_rows, N) and "
                         f"(groups,), got {tuple(A.shape)}, {tuple(grad.shape)} and "
                         f"{tuple(offsets.shape)}")
    return A.new_empty((offsets.shape[0], A.shape[1], grad.shape[1]))


def _grouped_k_setup(ctx, inputs, output):
    A, grad, offsets, alpha = inputs
    ctx.alpha = alpha
    ctx.save_for_backward(A, grad, offsets)


def _grouped_k_backward(ctx, dout):
    """out[g] = alpha A_g^T G_g: dA_g = alpha G_g dout[g]^T and dG_g = alpha A_g dout[g], each
    a grouped GEMM of the stacked form."""
    A, grad, offsets = ctx.saved_tensors
    dout = dout.contiguous()
    need = ctx.needs_input_grad
    dA = dgrad = None
    if need[0]:
        dA = torch.ops.tilecraft.grouped_gemm(grad, dout.transpose(-2, -1), offsets, None,
                                              ctx.alpha)
    if need[1]:
        dgrad = torch.ops.tilecraft.grouped_gemm(A, dout, offsets, None, ctx.alpha)
    return dA, dgrad, None, None


grouped_gemm_k.register_autograd(_grouped_k_backward, setup_context=_grouped_k_setup)


def _grouped_setup(ctx, inputs, output):
    A, B, offsets, bias, alpha, activation, activation_args = inputs[:7]
    ctx.alpha, ctx.activation, ctx.activation_args = alpha, activation, _args(activation_args)
    ctx.has_bias = bias is not None
    kept = output if activation in activation_grad.FROM_OUTPUT else None
    ctx.save_for_backward(A, B, bias, kept, offsets)


def _grouped_backward(ctx, grad):
    A, B, bias, kept, offsets = ctx.saved_tensors

    def recompute():
        return torch.ops.tilecraft.grouped_gemm(A, B, offsets, bias, ctx.alpha)

    g = _through_activation(ctx, grad, kept, recompute, A.dtype).contiguous()
    need = ctx.needs_input_grad
    dA = dB = dbias = None
    if need[0]:
        dA = torch.ops.tilecraft.grouped_gemm(g, B.transpose(-2, -1), offsets, None, ctx.alpha)
    if need[1]:
        dB = torch.ops.tilecraft.grouped_gemm_k(A, g, offsets, ctx.alpha)
    if need[3] and ctx.has_bias:
        rows = torch.arange(A.shape[0], device=A.device, dtype=offsets.dtype)
        group = torch.searchsorted(offsets, rows, right=True)
        dbias = torch.zeros(bias.shape, dtype=torch.float32, device=A.device)
        dbias.index_add_(0, group.clamp(max=bias.shape[0] - 1), g.float())
        dbias = dbias.to(bias.dtype)
    return dA, dB, None, dbias, None, None, None, None, None, None


grouped_gemm.register_autograd(_grouped_backward, setup_context=_grouped_setup)


# ---------------------------------------------------------------- convolution


@torch.library.custom_op(f"{_LIB}::conv2d", mutates_args=())
def conv2d(x: Tensor, w: Tensor, bias: Optional[Tensor], stride: Sequence[int],
           padding: Sequence[int], dilation: Sequence[int], groups: int = 1,
           activation: str = "", activation_args: Optional[Sequence[float]] = None,
           tuning: str = "", verify: bool = False) -> Tensor:
    """``activation(conv2d(x, w) + bias)`` on channels-last tensors, as ``tilecraft.conv2d``."""
    return conv_ops.conv2d(x, w, bias, tuple(stride), tuple(padding), tuple(dilation), groups,
                            activation or None, _args(activation_args), tuning=tuning or None,
                            verify=verify or None)


@conv2d.register_fake
def _conv2d_fake(x, w, bias, stride, padding, dilation, groups=1, activation="",
                 activation_args=None, tuning="", verify=False):
    if x.dim() != 4 or w.dim() != 4:
        raise ValueError(f"x, w: expected 4-D tensors (N, C, H, W) and (K, C, R, S), got "
                         f"{tuple(x.shape)} and {tuple(w.shape)}")
    extent = conv_ops.output_extent(x, w, tuple(stride), tuple(padding), tuple(dilation))
    return x.new_empty(extent).contiguous(memory_format=torch.channels_last)


def _gradient_operand(tensor):
    return tensor.contiguous(memory_format=torch.channels_last)


def _conv_gradient(kind, grad, operand, size, stride, padding, dilation):
    return conv_ops.conv2d_grad(kind, _gradient_operand(grad), _gradient_operand(operand),
                                 tuple(size), tuple(stride), tuple(padding), tuple(dilation))


def _channels_last_empty(like, size):
    return like.new_empty(tuple(size)).contiguous(memory_format=torch.channels_last)


@torch.library.custom_op(f"{_LIB}::conv2d_input_grad", mutates_args=())
def conv2d_input_grad(grad: Tensor, w: Tensor, input_size: Sequence[int], stride: Sequence[int],
                      padding: Sequence[int], dilation: Sequence[int]) -> Tensor:
    """The input gradient of a convolution (a dgrad convolution), channels-last."""
    return _conv_gradient("dgrad", grad, w, input_size, stride, padding, dilation)


@conv2d_input_grad.register_fake
def _input_grad_fake(grad, w, input_size, stride, padding, dilation):
    return _channels_last_empty(grad, input_size)


@torch.library.custom_op(f"{_LIB}::conv2d_weight_grad", mutates_args=())
def conv2d_weight_grad(grad: Tensor, x: Tensor, weight_size: Sequence[int],
                       stride: Sequence[int], padding: Sequence[int],
                       dilation: Sequence[int]) -> Tensor:
    """The filter gradient of a convolution (a wgrad convolution), channels-last."""
    return _conv_gradient("wgrad", grad, x, weight_size, stride, padding, dilation)


@conv2d_weight_grad.register_fake
def _weight_grad_fake(grad, x, weight_size, stride, padding, dilation):
    return _channels_last_empty(grad, weight_size)


def _conv_setup(ctx, inputs, output):
    x, w, bias, stride, padding, dilation, groups, activation, activation_args = inputs[:9]
    ctx.geometry = (tuple(stride), tuple(padding), tuple(dilation))
    ctx.groups, ctx.activation, ctx.activation_args = groups, activation, _args(activation_args)
    ctx.has_bias = bias is not None
    kept = output if activation in activation_grad.FROM_OUTPUT else None
    ctx.save_for_backward(x, w, bias, kept)


def _conv_backward(ctx, grad):
    x, w, bias, kept = ctx.saved_tensors
    stride, padding, dilation = ctx.geometry

    def recompute():
        return torch.ops.tilecraft.conv2d(x, w, bias, stride, padding, dilation, ctx.groups)

    g = _through_activation(ctx, grad, kept, recompute, x.dtype)
    need = ctx.needs_input_grad
    dx = dw = dbias = None
    if ctx.groups != 1 and (need[0] or need[1]):
        _warn_once("tilecraft.conv2d: the backward of a grouped convolution (groups > 1) runs "
                   "torch's convolution_backward; tilecraft has grouped fprop kernels only")
        dx, dw = _torch_conv_backward(g, x, w, stride, padding, dilation, ctx.groups, need)
    else:
        if need[0] and _narrow_strided_dgrad(x, stride):
            _warn_once("tilecraft.conv2d: the input gradient of a strided convolution whose input "
                       "channels no 32-bit access divides (a 3-channel first layer, say) runs "
                       "torch's convolution_backward: CUTLASS's two-stage strided dgrad gives "
                       "wrong results and is not built")
            dx, _ = _torch_conv_backward(g, x, w, stride, padding, dilation, 1, (True, False))
        elif need[0]:
            dx = torch.ops.tilecraft.conv2d_input_grad(g, w, list(x.shape), stride, padding,
                                                       dilation)
        if need[1]:
            dw = torch.ops.tilecraft.conv2d_weight_grad(g, x, list(w.shape), stride, padding,
                                                        dilation)
    if need[2] and ctx.has_bias:
        dbias = g.float().sum((0, 2, 3)).to(bias.dtype)
    return dx, dw, dbias, None, None, None, None, None, None, None, None


def _narrow_strided_dgrad(x, stride):
    """Whether the input gradient needs the two-stage strided dgrad, which is not built: a
    stride above 1 and input channels that no 32-bit access divides."""
    return any(s != 1 for s in stride) and (x.shape[1] * x.element_size()) % 4 != 0


def _torch_conv_backward(g, x, w, stride, padding, dilation, groups, need):
    """torch's convolution backward, where tilecraft has no kernel (the callers warn once)."""
    top, bottom, left, right = padding
    if top != bottom or left != right:
        raise NotImplementedError(f"padding: torch's convolution backward takes equal padding "
                                  f"on opposite sides, got {padding}")
    dx, dw, _ = torch.ops.aten.convolution_backward(
        g, x, w, None, list(stride), [top, left], list(dilation), False, [0, 0], groups,
        [need[0], need[1], False])
    return dx, dw


_warned = set()


def _warn_once(message):
    if message not in _warned:
        _warned.add(message)
        import warnings

        warnings.warn(message, stacklevel=3)


conv2d.register_autograd(_conv_backward, setup_context=_conv_setup)


# ---------------------------------------------------------------- custom epilogues


@torch.library.custom_op(f"{_LIB}::gemm_epilogue", mutates_args=())
def gemm_epilogue(A: Tensor, B: Tensor, epilogue: str, tensors: List[Tensor], tensor_names: str,
                  scalars: Sequence[float], scalar_names: str,
                  out_dtype: Optional[torch.dtype] = None) -> List[Tensor]:
    """A GEMM with the custom epilogue registered under ``epilogue`` (see ``epilogue_name``):
    its outputs in the function's order. ``tensor_names`` and ``scalar_names``: the epilogue's
    parameter names of ``tensors`` and ``scalars``, comma-separated."""
    outputs = epilogue_ops.gemm_with_epilogue(
        A, B, None, _epilogue(epilogue), _epilogue_args(tensors, tensor_names, scalars,
                                                        scalar_names), None, out_dtype, None,
        outputs_given=False)
    return list(outputs) if isinstance(outputs, tuple) else [outputs]


@gemm_epilogue.register_fake
def _gemm_epilogue_fake(A, B, epilogue, tensors, tensor_names, scalars, scalar_names,
                        out_dtype=None):
    _check_matrices(A, B)
    graph, out, operands = epilogue_ops.outputs_for(
        A, B, None, _epilogue(epilogue),
        _epilogue_args(tensors, tensor_names, scalars, scalar_names), out_dtype,
        outputs_given=False)
    return [out if name == graph.d_output else operands[name] for name in graph.output_names]


def _epilogue(name):
    function = _epilogues.get(name)
    if function is None:
        raise ValueError(f"epilogue: expected the name of an epilogue registered in this "
                         f"process (tilecraft.torch_ops.epilogue_name), got {name!r}")
    return function


def _epilogue_args(tensors, tensor_names, scalars, scalar_names):
    tensor_names = [n for n in tensor_names.split(",") if n]
    scalar_names = [n for n in scalar_names.split(",") if n]
    if len(tensors) != len(tensor_names) or len(scalars) != len(scalar_names):
        raise ValueError(f"tensor_names, scalar_names: expected one name per tensor and scalar "
                         f"({len(tensors)} and {len(scalars)}), got {len(tensor_names)} and "
                         f"{len(scalar_names)}")
    args = dict(zip(tensor_names, tensors))
    args.update(zip(scalar_names, (float(s) for s in scalars)))
    return args


@torch._dynamo.assume_constant_result
def epilogue_name(function):
    """The name ``gemm_epilogue`` knows ``function`` by in this process (registered on first
    use; inside ``torch.compile`` this runs once, when the function is traced)."""
    if isinstance(function, str):
        return function
    code = getattr(function, "__code__", None)
    if code is None:
        raise TypeError(f"epilogue: expected a Python function of the accumulator, got "
                        f"{type(function).__name__}")
    name = f"{code.co_filename}:{code.co_firstlineno}:{code.co_name}:{id(code)}"
    _epilogues[name] = function
    return name


def gemm_with_epilogue(A, B, epilogue, epilogue_args, out_dtype):
    """``tilecraft.gemm(A, B, epilogue=..., epilogue_args=...)`` through the op."""
    args = dict(epilogue_args or {})
    tensors = {k: v for k, v in args.items() if isinstance(v, Tensor)}
    scalars = {k: float(v) for k, v in args.items() if k not in tensors}
    outputs = torch.ops.tilecraft.gemm_epilogue(
        A, B, epilogue_name(epilogue), list(tensors.values()), ",".join(tensors),
        list(scalars.values()), ",".join(scalars), out_dtype)
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


__all__ = ["conv2d", "conv2d_input_grad", "conv2d_weight_grad", "epilogue_name", "gemm",
           "gemm_epilogue", "gemm_with_epilogue", "grouped_gemm", "grouped_gemm_k"]
