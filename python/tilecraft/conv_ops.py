"""``tilecraft.conv2d`` and ``conv3d``: a convolution of channels-last torch tensors in one call.

A 1x1 convolution of unit stride and no padding is the GEMM ``x[N*H*W, C] @ w[K, C]^T`` on the
same memory (channels-last), so it runs through ``tilecraft.gemm`` and its tuning. Any other
convolution is tuned by measurement through the same tuner, per signature (the kind, dtypes,
alignments, epilogue and layer; the batch in buckets). ``tuning=`` (default: the environment's
``TILECRAFT_TUNING``, else ``"auto"``), as for ``gemm``: ``"auto"`` serves a stored winner, or a
kernel compiled earlier for the layer, or the ranked first pick compiled now (a minute or so;
cached on disk afterwards) while the top candidates tune in the background, and the winner
takes over once stored; ``"blocking"`` tunes a signature without a winner before returning;
``"force"`` tunes again; ``"off"`` runs the ranked first pick. ``last_conv_pick()`` says which
kernel ran and why.
"""

from tilecraft import _core, interop
from tilecraft.api.arguments import Conv2dArguments, Conv3dArguments, EpilogueArguments
from tilecraft.conv_geometry import as_padding, as_padding_3d, as_pair, as_triple
from tilecraft.tuning import check_tuning_options

_last_pick = {}  # the last call's kernel_name and reason, or its GEMM plan's key (read lazily)
_GEMM_ROUTE = "1x1 unit-stride convolution run as the GEMM x[N*H*W, C] @ w[K, C]^T: "


def output_extent(x, w, stride, padding, dilation):
    (sh, sw), (dh, dw) = as_pair("stride", stride), as_pair("dilation", dilation)
    top, bottom, left, right = as_padding(padding)
    n, _, h, wd = x.shape
    k, _, r, s = w.shape
    p = (h + top + bottom - dh * (r - 1) - 1) // sh + 1
    q = (wd + left + right - dw * (s - 1) - 1) // sw + 1
    return n, k, p, q


def _as_gemm_operands(x, w, out, stride, padding, groups):
    """(A, B, D) views for a 1x1, unit-stride, unpadded convolution, or None for any other."""
    if (tuple(w.shape[2:]) != (1, 1) or as_pair("stride", stride) != (1, 1) or
            any(as_padding(padding)) or groups != 1):
        return None
    n, c, h, wd = x.shape
    k = w.shape[0]
    try:
        a = x.permute(0, 2, 3, 1).view(n * h * wd, c)
        b = w.permute(0, 2, 3, 1).view(k, c).t()
        d = out.permute(0, 2, 3, 1).view(n * h * wd, k)
    except RuntimeError:  # not viewable as matrices: the convolution kernels take it
        return None
    return a, b, d


def conv2d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, activation=None,
           activation_args=(), out=None, accumulator_type=None, stream=None, tuning=None,
           verify=None):
    """``activation(conv2d(x, w) + bias)`` in one kernel, as ``torch.nn.functional.conv2d``
    computes it (cross-correlation), for CUDA tensors in ``torch.channels_last`` memory format:
    ``x`` (N, C, H, W), ``w`` (K, C, R, S), ``bias`` (K,) or None. ``stride`` and ``dilation``:
    an int or two; ``padding``: an int, two (rows, columns) or four (top, bottom, left, right).
    ``groups``: a grouped fprop, w (K, C // groups, R, S) (C == K == groups: depthwise).
    ``activation``: None, "relu", "gelu", "silu", ... (the epilogue's). Returns ``out`` (N, K,
    P, Q), channels-last, of x's dtype (allocated unless given). A channels-first tensor is
    refused with the fix in the message; nothing is launched on bad input. ``tuning``: as
    ``tilecraft.gemm``'s (see the module's documentation). This is the call on the tensors as
    given; ``tilecraft.conv2d`` (``tilecraft.calls.conv2d``) takes the same arguments and goes
    through the torch op inside ``torch.compile`` and autograd. ``verify``: also compute a
    reference (torch's convolution) and raise on a mismatch (default: the ``TILECRAFT_VERIFY``
    setting; see ``tilecraft.verify``)."""
    from tilecraft import verify as verifying

    checked = verifying.wanted(verify)
    if checked:
        verifying.refuse_in_capture(x)
    out = _conv2d_unchecked(x, w, bias, stride, padding, dilation, groups, activation,
                            activation_args, out, accumulator_type, stream, tuning)
    if checked:
        verifying.check_conv2d(x, w, out, bias, as_pair("stride", stride), as_padding(padding),
                               as_pair("dilation", dilation), groups,
                               interop.activation_name(activation), tuple(activation_args))
    return out


def _conv2d_unchecked(x, w, bias, stride, padding, dilation, groups, activation,
                      activation_args, out, accumulator_type, stream, tuning):
    check_tuning_options(tuning, None, None, None)
    torch = interop.torch()
    args, out, accumulator_type = _fprop_arguments(
        Conv2dArguments, torch.channels_last, "(N, C, H, W) and (K, C, R, S)", x, w, out,
        lambda: output_extent(x, w, stride, padding, dilation), accumulator_type, bias,
        activation, activation_args, stride=stride, padding=padding, dilation=dilation,
        groups=groups)
    operands = _as_gemm_operands(x, w, out, stride, padding, groups)
    if operands is not None:
        from tilecraft.ops import plan_gemm

        a, b, d = operands
        plan = plan_gemm(a, b, d, bias=bias, activation=activation,
                         activation_args=activation_args, accumulator_type=accumulator_type,
                         tuning=tuning)
        plan._launch(a, b, d, None, bias, stream)
        _last_pick.clear()
        _last_pick["plan_key"] = plan._key
        return out
    _run_served_pick(args, stream, tuning)
    return out


def conv2d_grad(kind, dy, operand, size, stride, padding, dilation, tuning=None):
    """A convolution's input gradient (``kind`` "dgrad": operand w, size x's) or filter gradient
    ("wgrad": operand x, size w's) from ``dy``, all channels-last; returns the new gradient."""
    torch = interop.torch()
    out = torch.empty(tuple(size), dtype=dy.dtype, device=dy.device).contiguous(
        memory_format=torch.channels_last)
    make = Conv2dArguments.dgrad if kind == "dgrad" else Conv2dArguments.wgrad
    accumulator = torch.float64 if dy.dtype == torch.float64 else torch.float32
    args = make(dy, operand, out, accumulator, stride=stride, padding=padding,
                dilation=dilation)
    _run_served_pick(args, None, tuning)
    return out


def _fprop_arguments(arguments_class, memory_format, order, x, w, out, extent, accumulator_type,
                     bias, activation, activation_args, **geometry):
    """(args, out, accumulator_type) of a one-call fprop: x and w checked to be CUDA tensors of
    the rank ``order`` names, out allocated in ``memory_format`` when not given."""
    torch = interop.torch()
    format_name = str(memory_format).replace("torch.", "")
    rank = 5 if memory_format == torch.channels_last_3d else 4
    for name, value in (("x", x), ("w", w)):
        if not isinstance(value, torch.Tensor) or not value.is_cuda:
            raise TypeError(f"{name}: expected a torch CUDA tensor ({format_name} memory "
                            f"format), got {_core.given(value)}")
    if x.dim() != rank or w.dim() != rank:
        raise ValueError(f"x, w: expected {rank}-D tensors {order}, got {tuple(x.shape)} and "
                         f"{tuple(w.shape)}")
    if out is None:
        out = torch.empty(extent(), dtype=x.dtype, device=x.device).contiguous(
            memory_format=memory_format)
    if accumulator_type is None:
        accumulator_type = torch.float64 if x.dtype == torch.float64 else torch.float32
    epilogue = EpilogueArguments(activation=activation, activation_args=activation_args,
                                 bias=bias)
    args = arguments_class(x, w, out, accumulator_type, kind="fprop", epilogue=epilogue,
                           **geometry)
    return args, out, accumulator_type


def _run_served_pick(args, stream, tuning=None):
    name, reason = _core.api.conv2d(args._native, interop.stream_handle(stream, args), tuning)
    _last_pick.clear()
    _last_pick.update(kernel_name=name, reason=reason)


def _output_extent_3d(x, w, stride, padding, dilation):
    strides, dilations = as_triple("stride", stride), as_triple("dilation", dilation)
    pads = as_padding_3d(padding)
    n, k = x.shape[0], w.shape[0]
    out = [n, k]
    for i in range(3):
        extent, taps = x.shape[2 + i], w.shape[2 + i]
        span = extent + pads[2 * i] + pads[2 * i + 1] - dilations[i] * (taps - 1) - 1
        out.append(span // strides[i] + 1)
    return tuple(out)


def conv3d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, activation=None,
           activation_args=(), out=None, accumulator_type=None, stream=None, tuning=None):
    """``activation(conv3d(x, w) + bias)`` in one kernel, as ``torch.nn.functional.conv3d``
    computes it, for CUDA tensors in ``torch.channels_last_3d`` memory format: ``x`` (N, C, D, H,
    W), ``w`` (K, C, T, R, S), ``bias`` (K,) or None. ``stride`` and ``dilation``: an int or
    three (depth, rows, columns); ``padding``: an int, three, or six (front, back, top, bottom,
    left, right). Runs CUTLASS 2.x Conv3d kernels (arch 80: C and K multiples of 8 halves / 4
    floats on tensor cores), tuned as ``conv2d``'s (``tuning=``). Returns ``out`` (N, K, Z, P,
    Q), channels-last-3d, of x's dtype (allocated unless given)."""
    check_tuning_options(tuning, None, None, None)
    torch = interop.torch()
    args, out, _ = _fprop_arguments(
        Conv3dArguments, torch.channels_last_3d, "(N, C, D, H, W) and (K, C, T, R, S)", x, w,
        out, lambda: _output_extent_3d(x, w, stride, padding, dilation), accumulator_type, bias,
        activation, activation_args, stride=stride, padding=padding, dilation=dilation,
        groups=groups)
    _run_served_pick(args, stream, tuning)
    return out


def last_conv_pick():
    """(kernel_name, reason) of the last conv2d or conv3d call in this process."""
    if "plan_key" in _last_pick:
        from tilecraft import ops

        plan = ops._plans.get(_last_pick["plan_key"])
        if plan is None:
            return None, _GEMM_ROUTE + "its plan has been dropped (tilecraft.clear_plans)"
        return plan.kernel_name, _GEMM_ROUTE + plan.state["reason"]
    return _last_pick.get("kernel_name"), _last_pick.get("reason")


__all__ = ["conv2d", "conv3d", "last_conv_pick"]
