"""``tilecraft.grouped_gemm``: many GEMMs in one launch, in one call.

Grouped kernels are tuned by measurement through the same tuner as GEMMs, per signature (dtypes,
layouts, alignments, epilogue; the rows per group, N, K and the group count in buckets).
``tuning=`` (default: the environment's ``TILECRAFT_TUNING``, else ``"auto"``): ``"auto"``
serves a stored winner, or a kernel compiled earlier for the family, or the ranked first pick
compiled now (minutes on a slow machine; cached on disk afterwards) while the top candidates tune
in the background, and the winner takes over once stored; ``"blocking"`` tunes a signature
without a winner before returning; ``"force"`` tunes again; ``"off"`` runs the ranked first pick.
``last_grouped_pick()`` says which kernel ran and why.
"""

from tilecraft import _core, interop
from tilecraft.api.arguments import GroupedGemmArguments
from tilecraft.tuning import check_tuning_options

_last_pick = {}


def grouped_gemm(A, B, offsets=None, out=None, C=None, alpha=1.0, beta=0.0, bias=None,
                 activation=None, activation_args=(), accumulator_type=None, out_dtype=None,
                 stream=None, tuning=None, verify=None, offsets_on_device=False):
    """``out[g] = activation(alpha * (A[g] @ B[g]) + beta * C[g] + bias[g])`` for every problem.

    Lists: ``A``, ``B`` (and ``C``, ``out``) are lists of 2-D CUDA tensors; returns the list of
    outputs. Mixture of experts (``offsets`` given, as ``torch._grouped_mm`` takes it): ``A``
    (total_rows, K), ``B`` (groups, K, N) (e.g. ``w.transpose(-2, -1)`` of a contiguous
    (groups, N, K)), ``offsets`` int32 end rows per group; returns one (total_rows, N) tensor.
    Its weight gradient (``B`` 2-D, as ``torch._grouped_mm`` takes it): ``A`` (M, total_rows),
    ``B`` (total_rows, N); returns (groups, M, N), ``out[g] = alpha * A[:, rows of g] @
    B[rows of g]``, zeros for a group with no rows (no C nor bias; offsets always read on the
    device). ``bias``: a list of N-vectors, or (groups, N) in the stacked form (SM90 kernels
    fuse it).
    Missing outputs are allocated (torch tensors of A's dtype, or ``out_dtype``). Offsets on the
    device are read back to the host (one synchronization per call; make
    ``api.GroupedGemmArguments`` once and run a kernel on it to pay that once), unless
    ``offsets_on_device``: then each launch reads them on its stream (no synchronization; a CUDA
    graph can capture the call and replay it with new offsets), each end raised to the previous
    group's end and lowered to total_rows (groups never overlap nor leave the tensors; a
    decreasing offset makes its group empty); kernels are ranked and tuned for total_rows /
    groups rows a group. The torch op always reads them on the device. ``tuning``: see
    the module's documentation. ``verify``: also compute a reference and raise on a mismatch
    (default: the ``TILECRAFT_VERIFY`` setting; see ``tilecraft.verify``).

    This is the call on the tensors as given; ``tilecraft.grouped_gemm``
    (``tilecraft.calls.grouped_gemm``) takes the same arguments and goes through the torch op
    inside ``torch.compile`` and autograd. A CUDA graph cannot capture this call (the shapes are
    read on the host at each call).
    """
    check_tuning_options(tuning, None, None, None)
    if not isinstance(offsets_on_device, bool):
        raise TypeError(f"offsets_on_device: expected True or False, got "
                        f"{_core.given(offsets_on_device)}")
    torch = interop.torch()
    stacked = offsets is not None
    rows_are_k = stacked and getattr(B, "ndim", 0) == 2
    if (not offsets_on_device and not rows_are_k and torch.cuda.is_available() and
            torch.cuda.is_current_stream_capturing()):
        raise RuntimeError("stream: capturing a CUDA graph, and tilecraft.grouped_gemm reads the "
                           "problem shapes on the host at each call, which a graph cannot "
                           "replay: pass offsets_on_device=True (the stacked form), or capture a "
                           "kernel's run on api.GroupedGemmArguments made before the capture")
    if out is None:
        if rows_are_k:
            out = torch.empty((offsets.shape[0], A.shape[0], B.shape[-1]),
                              dtype=out_dtype or A.dtype, device=A.device)
        elif stacked:
            dtype = out_dtype or A.dtype
            out = torch.empty((A.shape[0], B.shape[-1]), dtype=dtype, device=A.device)
        else:
            if not isinstance(A, (list, tuple)) or not isinstance(B, (list, tuple)):
                raise TypeError("grouped_gemm: A and B must be lists of tensors (or pass "
                                "offsets= for the stacked form)")
            if len(A) != len(B):
                raise ValueError(f"B: expected one tensor per problem ({len(A)} in A), got "
                                 f"{len(B)}")
            out = [torch.empty((a.shape[0], b.shape[-1]), dtype=out_dtype or a.dtype,
                               device=a.device) for a, b in zip(A, B)]
    if accumulator_type is None:
        first = A if stacked else (A[0] if A else None)
        accumulator_type = (torch.int32 if first is not None and first.dtype == torch.int8
                            else torch.float32)
        if first is not None and first.dtype == torch.float64:
            accumulator_type = torch.float64
    args = GroupedGemmArguments(A, B, out, accumulator_type, C=C, alpha=alpha, beta=beta,
                                offsets=offsets, activation=activation,
                                activation_args=activation_args, bias=bias,
                                offsets_on_device=offsets_on_device)
    name, reason = _core.api.grouped_gemm(args, interop.stream_handle(stream, args), tuning)
    _last_pick["kernel_name"], _last_pick["reason"] = name, reason
    from tilecraft import verify as verifying

    if verifying.wanted(verify):
        verifying.refuse_in_capture(out if stacked else out[0])
        verifying.check_grouped(A, B, offsets, out, C, alpha, beta, bias,
                                interop.activation_name(activation), tuple(activation_args))
    return out


def last_grouped_pick():
    """(kernel_name, reason) of the last grouped_gemm call in this process."""
    return _last_pick.get("kernel_name"), _last_pick.get("reason")


__all__ = ["grouped_gemm", "last_grouped_pick"]
