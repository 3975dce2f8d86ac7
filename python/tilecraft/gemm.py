"""``cutlass.gemm``: GemmCoord and the GEMM modes."""

from tilecraft._core import GemmCoord, GemmMode as Mode

__all__ = ["GemmCoord", "Mode"]
