"""Verify mode: each one-call op also computes a reference and raises on a mismatch.

``tilecraft.gemm(..., verify=True)``, ``grouped_gemm(..., verify=True)`` and ``conv2d(...,
verify=True)``, or ``TILECRAFT_VERIFY=1`` for every call of the process: after the kernel, the
same expression is computed in float32 (float64 for float64 operands) by torch (cuBLAS, cuDNN)
or, for cupy tensors, by cupy, on the same stream, and compared element by element. An element
is wrong when ``|out - reference| > rtol * bound + atol``, where ``bound`` is the same expression
on the operands' magnitudes (``|alpha| * (|A| @ |B|) + |beta| * |C| + |bias|``, scaled for the
activation's slope) and ``rtol`` the output's and inputs' rounding (``TOLERANCES``). A mismatch
raises ``VerificationError`` naming the first wrong element (its index, value, reference and
allowed error) and how many are wrong. The check synchronizes and costs about two more GEMMs (or
convolutions) of float32 plus the comparison: for debugging and tests, not for speed.
"""

import os

from tilecraft import activation_grad, interop

# Relative error allowed per dtype (of the inputs or the output, whichever is coarser).
TOLERANCES = {"float64": 1e-10, "float32": 2e-5, "tf32": 4e-3, "float16": 4e-3,
              "bfloat16": 1.6e-2, "float8_e4m3fn": 0.13, "float8_e5m2": 0.26, "int8": 0.0,
              "int32": 0.0}
ATOL = 1e-6
# The largest slope of each activation (the bound grows by it).
_SLOPE = {"gelu": 1.13, "gelu_tanh": 1.13, "silu": 1.1, "hardswish": 1.5}


class VerificationError(AssertionError):
    """A result that differs from the reference beyond the dtype's tolerance."""


def wanted(verify):
    """Whether a call verifies: its ``verify`` argument, else the ``TILECRAFT_VERIFY`` setting."""
    if verify is not None:
        if not isinstance(verify, bool):
            raise TypeError(f"verify: expected None, True or False, got {type(verify).__name__}")
        return verify
    value = os.environ.get("TILECRAFT_VERIFY", "")
    if value.lower() in ("", "0", "false", "no", "off"):
        return False
    if value.lower() in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"TILECRAFT_VERIFY: expected 1, true, yes, on or 0, false, no, off, got "
                     f"{value!r}")


_told = set()


def refuse_epilogue(verify):
    """Custom epilogues have no reference here: refused when asked for by argument, said once
    when asked for by the setting."""
    message = ("verify: a GEMM with a custom epilogue is not verified (tilecraft has no "
               "reference for the epilogue function)")
    if verify:
        raise ValueError(message)
    if message not in _told:
        _told.add(message)
        import warnings

        warnings.warn(message + "; TILECRAFT_VERIFY skips it", stacklevel=4)


def refuse_in_capture(tensor):
    """The check reads the result on the host: refused while torch captures a CUDA graph."""
    if interop.is_torch(tensor) and tensor.is_cuda and \
            interop.torch().cuda.is_current_stream_capturing():
        raise RuntimeError("verify: the check reads the result on the host, which a CUDA graph "
                           "capture cannot do; capture without verify (TILECRAFT_VERIFY=0)")


def _rtol(dtypes, tf32):
    names = [interop.dtype_name(t) if hasattr(t, "dtype") else str(t) for t in dtypes]
    names = ["tf32" if n == "float32" and tf32 else n for n in names]
    return max(TOLERANCES.get(n, 1e-2) for n in names)


def _first_wrong(out, reference, allowed, what):
    """Raises VerificationError at the first element where out and reference differ by more than
    allowed (all three of one shape, on one device; torch or cupy)."""
    if interop.is_torch(out):
        torch = interop.torch()
        got = out.to(reference.dtype)
        wrong = ~((got - reference).abs() <= allowed)  # NaN counts as wrong
        count = int(wrong.sum())
        if count == 0:
            return
        flat = int(torch.nonzero(wrong.reshape(-1))[0, 0])
        index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), wrong.shape))
        value, expected = float(got.reshape(-1)[flat]), float(reference.reshape(-1)[flat])
        limit = float(allowed.reshape(-1)[flat])
    else:
        import cupy

        got = out.astype(reference.dtype)
        wrong = ~(cupy.abs(got - reference) <= allowed)
        count = int(wrong.sum())
        if count == 0:
            return
        flat = int(cupy.flatnonzero(wrong)[0])
        index = tuple(int(i) for i in cupy.unravel_index(flat, wrong.shape))
        value, expected = float(got.ravel()[flat]), float(reference.ravel()[flat])
        limit = float(allowed.ravel()[flat])
    total = wrong.numel() if interop.is_torch(wrong) else wrong.size
    raise VerificationError(
        f"{what}: out{list(index)} = {value!r}, expected {expected!r} (allowed error {limit:.3g}); "
        f"{count} of {total} elements differ")


def _module(tensor):
    if interop.is_torch(tensor):
        return interop.torch()
    if interop.framework(tensor) == "cupy":
        import cupy

        return cupy
    raise TypeError(f"verify: needs torch or cupy tensors for the reference, got "
                    f"{type(tensor).__name__}")


def _wide(tensor, module):
    """A float32 copy of a tensor (float64 for float64 and integers, whose sums float32 would
    round)."""
    name = interop.dtype_name(tensor)
    wide = "float64" if name == "float64" or "int" in name else "float32"
    if interop.is_torch(tensor):
        return tensor.to(getattr(module, wide))
    return tensor.astype(wide)


def _activate(module, name, z, args):
    if not name:
        return z
    if module.__name__ == "torch":
        return activation_grad.apply(name, z, args)
    torch = interop.torch()  # cupy: the activation through torch on the same memory (DLPack)
    return module.from_dlpack(activation_grad.apply(name, torch.from_dlpack(z), args))


def check_gemm(A, B, out, C=None, alpha=1.0, beta=0.0, bias=None, activation="",
               activation_args=(), bias_per_row=False, scale_a=1.0, scale_b=1.0, tf32=False):
    """Raises VerificationError unless ``out`` is ``activation(alpha * scale_a * scale_b * A @ B
    + beta * C + bias)`` within tolerance."""
    m = _module(out)
    a, b = _wide(A, m), _wide(B, m)
    scale = float(alpha) * float(scale_a) * float(scale_b)
    z = scale * (a @ b)
    bound = abs(scale) * (abs(a) @ abs(b))
    if C is not None and beta != 0.0:
        c = _wide(C, m)
        z = z + float(beta) * c
        bound = bound + abs(float(beta)) * abs(c)
    if bias is not None:
        v = _wide(bias, m)
        v = v.reshape(-1, 1) if bias_per_row else v
        z, bound = z + v, bound + abs(v)
    name = activation or ""
    reference = _activate(m, name, z, activation_args)
    rtol = _rtol([A, B, out], tf32)
    allowed = rtol * bound * _SLOPE.get(name, 1.0) + ATOL
    _first_wrong(out, reference, allowed, "verify (GEMM)")


def check_grouped(A, B, offsets, out, C=None, alpha=1.0, beta=0.0, bias=None, activation="",
                  activation_args=()):
    """check_gemm for each group of a stacked grouped GEMM (offsets read on the host, each end
    raised to the previous one and lowered to the rows, as the kernels read them), or of the
    lists ``A``, ``B``, ``out`` (and ``C``). A 2-D ``B``: the weight-gradient form, group g
    ``out[g] = alpha * A[:, rows] @ B[rows]``."""
    def item(values, g):
        return None if values is None else values[g]

    if offsets is None:
        for g, (a, b, d) in enumerate(zip(A, B, out)):
            _check_group(g, a, b, d, item(C, g), alpha, beta, item(bias, g), activation,
                         activation_args)
        return
    rows_are_k = B.ndim == 2
    total = B.shape[0] if rows_are_k else A.shape[0]
    start = 0
    for g, end in enumerate(int(e) for e in offsets.tolist()):
        end = max(start, min(max(end, 0), total))
        if rows_are_k:
            _check_group(g, A[:, start:end], B[start:end], out[g], None, alpha, 0.0, None, "",
                         ())
        else:
            c = None if C is None else C[start:end]
            _check_group(g, A[start:end], B[g], out[start:end], c, alpha, beta, item(bias, g),
                         activation, activation_args)
        start = end


def _check_group(g, a, b, d, c, alpha, beta, bias, activation, activation_args):
    if a.shape[0] == 0 or d.shape[-1] == 0:
        return
    try:
        check_gemm(a, b, d, C=c, alpha=alpha, beta=beta, bias=bias, activation=activation,
                   activation_args=activation_args)
    except VerificationError as error:
        raise VerificationError(f"group {g}: {error}") from None


def check_conv2d(x, w, out, bias=None, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1),
                 groups=1, activation="", activation_args=()):
    """Raises VerificationError unless ``out`` is torch's ``activation(conv2d(x, w) + bias)``
    (padding (top, bottom, left, right)) within tolerance."""
    torch = interop.torch()
    functional = torch.nn.functional
    xs, ws = _wide(x, torch), _wide(w, torch)
    top, bottom, left, right = padding
    xs = functional.pad(xs, (left, right, top, bottom))
    ax = functional.pad(x.abs().to(xs.dtype), (left, right, top, bottom))
    z = functional.conv2d(xs, ws, None, stride, 0, dilation, groups)
    bound = functional.conv2d(ax, ws.abs(), None, stride, 0, dilation, groups)
    if bias is not None:
        v = _wide(bias, torch).reshape(1, -1, 1, 1)
        z, bound = z + v, bound + v.abs()
    name = activation or ""
    reference = activation_grad.apply(name, z, activation_args)
    rtol = _rtol([x, w, out], x.dtype == torch.float32 and torch.backends.cudnn.allow_tf32)
    allowed = rtol * bound * _SLOPE.get(name, 1.0) + ATOL
    _first_wrong(out, reference, allowed, "verify (conv2d)")


__all__ = ["TOLERANCES", "VerificationError", "check_conv2d", "check_gemm", "check_grouped",
           "wanted"]
