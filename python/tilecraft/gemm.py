"""``tilecraft.gemm``: the one-call GEMM, and (as ``cutlass.gemm`` in the seeds) GemmCoord and the
GEMM modes.

The package's attribute ``tilecraft.gemm`` is the function ``tilecraft.calls.gemm`` (a function,
so that torch.compile traces calls to it), carrying ``GemmCoord`` and ``Mode``; this module, for
``from tilecraft.gemm import GemmCoord``, is callable too.
"""

import sys
import types

from tilecraft._core import GemmCoord, GemmMode as Mode


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        from tilecraft.calls import gemm

        return gemm(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["GemmCoord", "Mode"]
