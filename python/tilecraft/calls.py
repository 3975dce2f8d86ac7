"""The one-call ops as the package exports them: ``tilecraft.gemm``, ``tilecraft.grouped_gemm``
and ``tilecraft.conv2d``. Each runs the call on the tensors as given (``tilecraft.ops.gemm``,
``grouped_ops.grouped_gemm``, ``conv_ops.conv2d``: see those for the arguments), except inside
``torch.compile`` and when an input requires grad (and the call names no ``out`` or ``stream``):
then it goes through tilecraft's torch op (``tilecraft.torch_ops``), which torch.compile traces
without a graph break and autograd differentiates through tilecraft's kernels.
"""

from tilecraft import conv_ops, grouped_ops, interop, ops
from tilecraft.conv_geometry import as_padding, as_pair
from tilecraft.tuning import check_tuning_options


def _refuse_in_torch_op(**given):
    """Arguments the torch op does not carry, refused by name."""
    for name, value in given.items():
        if value is not None:
            raise TypeError(f"{name}: not taken by tilecraft's torch op, which serves calls "
                            f"inside torch.compile and calls on tensors that require grad; got "
                            f"a {type(value).__name__} (call outside torch.compile on detached "
                            f"tensors to pass it)")


def gemm(A, B, out=None, C=None, alpha=1.0, beta=0.0, bias=None, activation=None,
         accumulator_type=None, scale_a=None, scale_b=None, *, activation_args=(),
         bias_per_row=False, out_dtype=None, tuning=None, max_candidates=None, max_seconds=None,
         allow_tf32=None, use_fast_accum=False, stream=None, epilogue=None,
         epilogue_args=None, verify=None):
    if interop.wants_torch_op(A, B, C, bias, out=out, stream=stream):
        from tilecraft import torch_ops

        _refuse_in_torch_op(out=out, stream=stream, scale_a=scale_a, scale_b=scale_b,
                            max_candidates=max_candidates, max_seconds=max_seconds,
                            use_fast_accum=use_fast_accum or None)
        if epilogue is not None:
            return torch_ops.gemm_with_epilogue(A, B, epilogue, epilogue_args, out_dtype)
        return torch_ops.gemm(A, B, C, bias, float(alpha), float(beta),
                              interop.activation_name(activation), list(activation_args),
                              bias_per_row, out_dtype, accumulator_type, tuning or "",
                              allow_tf32, bool(verify))
    return ops.gemm(A, B, out, C, alpha, beta, bias, activation, accumulator_type, scale_a,
                    scale_b, activation_args=activation_args, bias_per_row=bias_per_row,
                    out_dtype=out_dtype, tuning=tuning, max_candidates=max_candidates,
                    max_seconds=max_seconds, allow_tf32=allow_tf32,
                    use_fast_accum=use_fast_accum, stream=stream, epilogue=epilogue,
                    epilogue_args=epilogue_args, verify=verify)


def grouped_gemm(A, B, offsets=None, out=None, C=None, alpha=1.0, beta=0.0, bias=None,
                 activation=None, activation_args=(), accumulator_type=None, out_dtype=None,
                 stream=None, tuning=None, verify=None, offsets_on_device=False):
    if offsets is not None and interop.wants_torch_op(A, B, offsets, bias, C, out=out,
                                                       stream=stream):
        from tilecraft import torch_ops

        _refuse_in_torch_op(out=out, stream=stream, C=C, beta=beta or None,
                            accumulator_type=accumulator_type)
        check_tuning_options(tuning, None, None, None)
        if getattr(B, "ndim", 0) == 2:  # the weight-gradient form: A is (M, total_rows)
            _refuse_in_torch_op(bias=bias, activation=activation, out_dtype=out_dtype,
                                tuning=tuning, verify=verify)
            return torch_ops.grouped_gemm_k(A.transpose(0, 1), B, offsets, float(alpha))
        return torch_ops.grouped_gemm(A, B, offsets, bias, float(alpha),
                                      interop.activation_name(activation),
                                      list(activation_args), out_dtype, tuning or "",
                                      bool(verify))
    return grouped_ops.grouped_gemm(A, B, offsets, out, C, alpha, beta, bias, activation,
                                    activation_args, accumulator_type, out_dtype, stream,
                                    tuning, verify, offsets_on_device)


def conv2d(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, activation=None,
           activation_args=(), out=None, accumulator_type=None, stream=None, tuning=None,
           verify=None):
    if interop.wants_torch_op(x, w, bias, out=out, stream=stream):
        from tilecraft import torch_ops

        _refuse_in_torch_op(out=out, stream=stream, accumulator_type=accumulator_type)
        check_tuning_options(tuning, None, None, None)
        return torch_ops.conv2d(x, w, bias, list(as_pair("stride", stride)),
                                list(as_padding(padding)), list(as_pair("dilation", dilation)),
                                groups, interop.activation_name(activation),
                                list(activation_args), tuning or "", bool(verify))
    return conv_ops.conv2d(x, w, bias, stride, padding, dilation, groups, activation,
                           activation_args, out, accumulator_type, stream, tuning, verify)


_ROUTING = ("\n\n    ``tilecraft.{0}``: inside ``torch.compile``, and when an input requires grad "
            "(with ``out`` and ``stream`` not given), the call goes through the torch op "
            "``torch.ops.tilecraft.{0}`` (``tilecraft.torch_ops``).")
for _call, _eager in ((gemm, ops.gemm), (grouped_gemm, grouped_ops.grouped_gemm),
                      (conv2d, conv_ops.conv2d)):
    _call.__doc__ = (_eager.__doc__ or "") + _ROUTING.format(_call.__name__)

__all__ = ["conv2d", "gemm", "grouped_gemm"]
