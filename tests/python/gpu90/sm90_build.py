"""Building GemmOperationUniversal(arch=90) objects from sm90_kernels rows, spelled as a user
would (cutlass.bfloat16, cutlass.KernelScheduleType..., cutlass.gelu), and compiling the ones
a session needs in ONE ``compiler.add_module`` call."""

import time
import warnings

from sm90_kernels import ELEMENTS, KERNELS, alignment


def _dt(cutlass, element):
    return getattr(cutlass, ELEMENTS[element][0])


def build_epilogue(cutlass, spec):
    """LinearCombination or LinearCombinationGeneric with the row's SM90 fusions."""
    fusions = {}
    if spec.bias:
        fusions.update(bias=spec.bias, element_bias=_dt(cutlass, spec.bias_element))
    if spec.aux:
        fusions.update(aux=True, element_aux=_dt(cutlass, spec.aux_el) if spec.aux_el else None)
    if spec.scales:
        fusions.update(scales=True)
    out, acc, compute = (_dt(cutlass, e) for e in (spec.out, spec.acc, spec.compute))
    if spec.activation is None:
        return cutlass.LinearCombination(out, alignment(spec.out), acc, compute, **fusions)
    return cutlass.LinearCombinationGeneric(getattr(cutlass, spec.activation), out,
                                            alignment(spec.out), acc, compute, **fusions)


def build_operation(spec):
    import tilecraft as cutlass

    math = cutlass.MathInstruction(list(spec.inst), _dt(cutlass, spec.a), _dt(cutlass, spec.b),
                                   _dt(cutlass, spec.acc), cutlass.OpClass.TensorOp,
                                   getattr(cutlass.MathOperation, spec.math))
    tile = cutlass.TileDescription(
        list(spec.tile), spec.stages, None, math, cluster_shape=list(spec.cluster),
        kernel_schedule=getattr(cutlass.KernelScheduleType, spec.schedule),
        epilogue_schedule=cutlass.EpilogueScheduleType.Auto,
        tile_scheduler=getattr(cutlass.TileSchedulerType, spec.scheduler))
    la, lb, lc = (getattr(cutlass, name) for name in spec.layout_names)
    A = cutlass.TensorDescription(_dt(cutlass, spec.a), la, alignment(spec.a))
    B = cutlass.TensorDescription(_dt(cutlass, spec.b), lb, alignment(spec.b))
    C = cutlass.TensorDescription(_dt(cutlass, spec.out), lc, alignment(spec.out))
    return cutlass.GemmOperationUniversal(arch=90, tile_description=tile, A=A, B=B, C=C,
                                          epilogue_functor=build_epilogue(cutlass, spec),
                                          swizzling_functor=getattr(cutlass, spec.swizzle))


class Operations:
    """Operations by key, built once per session. ``compile`` runs ONE add_module; a row whose
    description is rejected is recorded, and ``get`` raises that error again for its tests."""

    def __init__(self):
        self._ops = {}
        self.build_errors = {}
        self.compile_error = None
        self.compile_seconds = 0.0
        self._compiled_keys = set()

    def get(self, key):
        """The operation of ``key``. After an add_module that raised, an operation left
        uncompiled fails here with that error instead of recompiling on each test's run()."""
        if key in self._compiled_keys and self.compile_error is not None:
            op = self._ops[key]
            if not op.is_compiled():
                raise RuntimeError(f"SM90 kernel {key!r} did not compile in the session's "
                                   f"add_module: {self.compile_error}")
        if key not in self._ops:
            try:
                self._ops[key] = build_operation(KERNELS[key])
            except Exception as error:
                raise RuntimeError(f"building SM90 kernel {key!r} failed: "
                                   f"{type(error).__name__}: {error}\n  row: {KERNELS[key]}"
                                   ) from error
        return self._ops[key]

    def compile(self, keys):
        import tilecraft

        ops = []
        for key in keys:
            try:
                ops.append(self.get(key))
                self._compiled_keys.add(key)
            except Exception as error:  # its tests fail with this error
                self.build_errors[key] = f"{type(error).__name__}: {error}"  # text: no traceback kept
        start = time.monotonic()
        try:
            if ops:
                tilecraft.compiler.add_module(ops)
        except Exception as error:  # the kernels left uncompiled fail their tests in get()
            self.compile_error = f"{type(error).__name__}: {error}"
            warnings.warn(f"compiler.add_module failed for some SM90 kernels: {error}")
        self.compile_seconds = time.monotonic() - start
