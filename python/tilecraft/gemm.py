"""``tilecraft.gemm``: the one-call GEMM, and (as ``cutlass.gemm`` in the seeds) GemmCoord and the
GEMM modes.

``tilecraft.gemm(A, B, ...)`` is ``tilecraft.ops.gemm``: this module is callable.
"""

import sys
import types

from tilecraft._core import GemmCoord, GemmMode as Mode


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        from tilecraft.ops import gemm

        return gemm(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["GemmCoord", "Mode"]
