"""Custom epilogues of the conv suite's graph rows (conv_kernels.ConvSpec.graph): functions of the
implicit GEMM's (M, N) output, written and described as the GEMM EVT suite's cases
(tests/python/gpu_evt/evt_cases.py: ``Case``, ``In``, ``Out``), traced by
``tilecraft.epilogue.trace`` and, for the reference, called on ``evt_ref.R`` values.

M is the output's positions (fprop y: N*P*Q, dgrad dx: N*H*W; wgrad dw: K) and N its channels
(fprop K, dgrad C; wgrad R*S*C): a "col" input holds one value per output channel.
Importing this module needs neither torch nor tilecraft.
"""

from evt_cases import Case, In, Out, make_graph
from evt_ref import gelu, silu


def bias_gelu_residual_colsum(accum, alpha, bias, residual):
    z = alpha * accum + bias
    D = gelu(z) + residual
    colsum = D.sum(dim=0)
    return D, colsum, z


def silu_scale_amax(accum, scale):
    D = silu(accum) * scale
    amax = D.abs().max()
    return D, amax


def accumulate_rowsum(accum, alpha, C, beta):
    D = alpha * accum + beta * C
    rowsum = D.sum(dim=1)
    return D, rowsum


GRAPHS = {case.name: case for case in (
    # fprop: a residual block's tail (the residual, of D's type, is the epilogue's source C), the
    # pre-activation kept, and per-channel sums (batch-norm statistics).
    Case("bias_gelu_residual_colsum", bias_gelu_residual_colsum,
         {"alpha": In("scalar", lo=0.5, hi=2.0), "bias": In("col", "f32"),
          "residual": In("full", "f16")},
         (Out("D", "store", "f16"), Out("colsum", "col"), Out("z", "store", "f16"))),
    # dgrad: a gated gradient scaled per input channel, and its absolute maximum.
    Case("silu_scale_amax", silu_scale_amax, {"scale": In("col", "f32", lo=0.5, hi=2.0)},
         (Out("D", "store", "f16"), Out("amax", "all"))),
    # wgrad: a filter gradient accumulated into the one given (alpha dw + beta C), and its sum
    # per output channel.
    Case("accumulate_rowsum", accumulate_rowsum,
         {"alpha": In("scalar"), "C": In("full", "f16"), "beta": In("scalar")},
         (Out("D", "store", "f16"), Out("rowsum", "row"))),
)}


def graph_of(spec):
    """The traced epilogue graph of a conv_kernels row with a custom epilogue."""
    return make_graph(GRAPHS[spec.graph])
