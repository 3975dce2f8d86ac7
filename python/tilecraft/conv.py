"""``cutlass.conv`` in the seeds: the convolution vocabulary and ``Conv2dProblemSize``.

``conv.Operator.{fprop, dgrad, wgrad}``, ``conv.IteratorAlgorithm.{analytic, optimized,
fixed_channels, few_channels, direct}`` (``direct``: tilecraft's direct grouped and depthwise
fprop on CUDA cores, not an implicit GEMM), ``conv.StrideSupport.{Strided, Unity}``,
``conv.Mode.{cross_correlation, convolution}``, ``conv.SplitKMode.{Serial, Parallel}``,
``conv.GroupMode.{NoneGroup, SingleGroup, MultipleGroup, Depthwise}`` (``cutlass_library``'s
names: how a grouped fprop kernel maps groups onto CTAs).
"""

from tilecraft import _core
from tilecraft._core import (ConvKind as Operator, ConvMode as Mode, GroupMode,
                             IteratorAlgorithm, SplitKMode, StrideSupport)


def Conv2dProblemSize(*args, **kwargs):  # noqa: N802  (the seed's spelling)
    """``Conv2dProblemSize(input_size, filter_size, padding, stride, dilation,
    mode=Mode.cross_correlation, split_k_slices=1, groups=1)``.

    ``input_size`` is ``Tensor4DCoord(N, H, W, C)``, ``filter_size`` ``Tensor4DCoord(K, R, S,
    C // groups)``, ``padding`` ``Tensor4DCoord(top, bottom, left, right)``, ``stride`` and
    ``dilation`` ``MatrixCoord(rows, columns)``. The output extent P x Q follows as torch
    computes it (dilation included). Bad extents raise ValueError naming the argument.
    """
    return _core.Conv2dProblemSize.make(*args, **kwargs)


def Conv3dProblemSize(*args, **kwargs):  # noqa: N802  (CUTLASS's spelling)
    """``Conv3dProblemSize(input_size, filter_size, padding, stride, dilation,
    mode=Mode.cross_correlation, split_k_slices=1, groups=1)`` for a 3-D convolution (run by
    a ``Conv2dOperation`` / ``Conv3dOperation`` of ``TensorNDHWC`` operands).

    ``input_size`` is (N, D, H, W, C), ``filter_size`` (K, T, R, S, C // groups), ``padding``
    (front, back, top, bottom, left, right), ``stride`` and ``dilation`` (depth, rows,
    columns). The output extent Z x P x Q follows as torch computes it. Bad extents raise
    ValueError naming the argument.
    """
    return _core.Conv2dProblemSize.make_3d(*args, **kwargs)


__all__ = ["Conv2dProblemSize", "Conv3dProblemSize", "GroupMode", "IteratorAlgorithm", "Mode", "Operator", "SplitKMode",
           "StrideSupport"]
