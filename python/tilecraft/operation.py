"""GemmOperationUniversal (seed 002, "GEMM Operation")."""

from tilecraft import _core
from tilecraft._core import EpilogueParams, Swizzle


class GemmOperationUniversal:
    """A described GEMM kernel: compiled by ``compiler.add_module`` (or on first use), launched by
    ``run``. Validation happens here: a bad combination raises ValueError naming the part.

    ``arch=80`` builds CUTLASS 2.x kernels (they also run on Hopper); ``arch=90`` builds CUTLASS
    3.x TMA/wgmma kernels from a tile whose math instruction is a wgmma shape ``[64, N, K]``.
    """

    def __init__(self, arch, tile_description, A, B, C, epilogue_functor,
                 swizzling_functor=Swizzle.IdentitySwizzle1, visitor=False, **kwargs):
        if "compute_capability" in kwargs:
            arch = kwargs.pop("compute_capability")
        if kwargs:
            raise TypeError(f"GemmOperationUniversal() got unexpected keyword arguments: "
                            f"{', '.join(sorted(kwargs))}")
        if visitor:
            raise _core.UnsupportedError(
                "visitor: pass visitor=False; SM90 operations build their fused epilogues (bias, "
                "activation, aux output, fp8 scales) on CUTLASS's epilogue visitor trees from "
                "the epilogue functor's bias=/aux=/scales= options")
        if not isinstance(swizzling_functor, Swizzle):
            raise TypeError("swizzling_functor: expected one of cutlass.IdentitySwizzle1/2/4/8, "
                            f"HorizontalSwizzle, BatchedIdentitySwizzle; got {swizzling_functor!r}")
        self._op = _core.GemmOperation.make(int(arch), tile_description, A, B, C,
                                            epilogue_functor, swizzling_functor)
        self.arch = int(arch)
        self.tile_description = tile_description
        self.A, self.B, self.C = A, B, C
        self.epilogue_functor = epilogue_functor
        self.swizzling_functor = swizzling_functor
        self.element_epilogue = epilogue_functor.element_epilogue

    def procedural_name(self):
        return self._op.procedural_name()

    def epilogue_type(self, alpha=1.0, beta=0.0, *activation_args):
        """``operation.epilogue_type(alpha, beta, *activation_args)``: the epilogue's runtime
        values, checked against the functor (leaky_relu takes its slope)."""
        return self._op.epilogue_type(float(alpha), float(beta),
                                      [float(a) for a in activation_args])

    def is_compiled(self):
        return self._op.is_compiled()

    def run(self, arguments):
        """Launches on the current stream of the framework the tensors came from (torch or cupy;
        the default stream for numpy and other host arrays). Does not synchronize."""
        self._op.run(arguments._native, arguments._current_stream())

    def __repr__(self):
        return f"GemmOperationUniversal({self.procedural_name()})"


__all__ = ["GemmOperationUniversal", "EpilogueParams"]
