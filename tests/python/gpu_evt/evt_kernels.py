"""The kernels the graphs run on, and GemmOperationUniversal(visitor=True) objects built from a
kernel and a case, spelled as a user would.

Keys: ``sm90-f16coop`` (f16 operands, wgmma 64x128x16, tile 128x128x64, cooperative,
persistent), ``sm90-f16pp`` (the same operands on a 64x128x64 pingpong tile),
``sm90-f16streamk`` (the cooperative tile on the stream-K scheduler: CTAs share a tile's K range
and one of them runs the epilogue), ``sm90-bf16coop``,
``sm90-e4m3coop`` (fp8 operands, tile 128x128x128); ``sm80-f16`` / ``sm80-bf16`` (mma 16x8x16,
tile 128x128x32, 3 stages, 2x2x1 warps). A is RowMajor and B ColumnMajor (TN); C / D take the
case's D element type and layout (full epilogue tensors share D's layout).
"""

import time
import warnings
from dataclasses import dataclass

import pytest

from evt_cases import ELEMENT_BYTES, make_graph, split_key


@dataclass(frozen=True)
class Kernel:
    arch: int
    ab: str                 # element of A and B
    inst: tuple
    tile: tuple
    stages: int = 0
    warps: tuple = None
    schedule: str = ""      # SM90 kernel schedule
    scheduler: str = "Persistent"   # SM90 tile scheduler

    @property
    def k_multiple(self):
        """K is A's and B's contiguous extent (TN): a multiple of 16 bytes."""
        return 16 // ELEMENT_BYTES[self.ab]


KERNELS = {
    "sm90-f16coop": Kernel(90, "f16", (64, 128, 16), (128, 128, 64),
                           schedule="TmaWarpSpecializedCooperative"),
    "sm90-f16pp": Kernel(90, "f16", (64, 128, 16), (64, 128, 64),
                         schedule="TmaWarpSpecializedPingpong"),
    "sm90-f16streamk": Kernel(90, "f16", (64, 128, 16), (128, 128, 64),
                              schedule="TmaWarpSpecializedCooperative", scheduler="StreamK"),
    "sm90-bf16coop": Kernel(90, "bf16", (64, 128, 16), (128, 128, 64),
                            schedule="TmaWarpSpecializedCooperative"),
    "sm90-e4m3coop": Kernel(90, "e4m3", (64, 128, 32), (128, 128, 128),
                            schedule="TmaWarpSpecializedCooperative"),
    "sm80-f16": Kernel(80, "f16", (16, 8, 16), (128, 128, 32), 3, (2, 2, 1)),
    "sm80-bf16": Kernel(80, "bf16", (16, 8, 16), (128, 128, 32), 3, (2, 2, 1)),
}
# While arch-80 emission of epilogue graphs is being written, the description refuses every
# graph at arch 80 with this text (after the graph's own arch-80 rules): such items skip, saying
# so, and run as soon as the refusal is gone.
SM80_PENDING = "kernels (CUTLASS 2.x visitors) cannot take one yet"
CUTLASS_ELEMENTS = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "e4m3": "e4m3",
                    "e5m2": "e5m2"}


def element(cutlass, name):
    return getattr(cutlass, CUTLASS_ELEMENTS[name])


def tile_description(cutlass, kernel):
    math = cutlass.MathInstruction(list(kernel.inst), element(cutlass, kernel.ab),
                                   element(cutlass, kernel.ab), cutlass.float32,
                                   cutlass.OpClass.TensorOp, cutlass.MathOperation.multiply_add)
    if kernel.arch == 80:
        return cutlass.TileDescription(list(kernel.tile), kernel.stages, list(kernel.warps), math)
    return cutlass.TileDescription(
        list(kernel.tile), 0, None, math, cluster_shape=[1, 1, 1],
        kernel_schedule=getattr(cutlass.KernelScheduleType, kernel.schedule),
        epilogue_schedule=cutlass.EpilogueScheduleType.Auto,
        tile_scheduler=getattr(cutlass.TileSchedulerType, kernel.scheduler))


def describe(kernel, case, graph):
    """GemmOperationUniversal(arch, tile, A, B, C, graph, visitor=True) for ``case``."""
    import tilecraft as cutlass

    ab = element(cutlass, kernel.ab)
    align = 16 // ELEMENT_BYTES[kernel.ab]
    A = cutlass.TensorDescription(ab, cutlass.RowMajor, align)
    B = cutlass.TensorDescription(ab, cutlass.ColumnMajor, align)
    C = cutlass.TensorDescription(element(cutlass, case.d_element), getattr(cutlass, case.layout),
                                  16 // ELEMENT_BYTES[case.d_element])
    return cutlass.GemmOperationUniversal(arch=kernel.arch,
                                          tile_description=tile_description(cutlass, kernel),
                                          A=A, B=B, C=C, epilogue_functor=graph, visitor=True)


class EvtOps:
    """Operations by op key, built once per session; ``compile`` runs ONE add_module. A key
    whose description is refused is recorded, and ``get`` raises that error for its tests."""

    def __init__(self):
        self._ops = {}
        self.build_errors = {}
        self.compile_error = None
        self.compile_seconds = 0.0
        self.compiled_keys = []

    def get(self, key):
        if key in self.build_errors:
            if SM80_PENDING in self.build_errors[key]:
                pytest.skip(f"arch=80 epilogue graphs are not emitted yet: "
                            f"{self.build_errors[key]}")
            raise RuntimeError(f"describing {key!r} failed: {self.build_errors[key]}")
        if key not in self._ops:
            kernel_key, case = split_key(key)
            self._ops[key] = describe(KERNELS[kernel_key], case, make_graph(case))
        op = self._ops[key]
        if key in self.compiled_keys and self.compile_error is not None and not op.is_compiled():
            raise RuntimeError(f"{key!r} did not compile in the session's add_module: "
                               f"{self.compile_error}")
        return op

    def compile(self, keys):
        import tilecraft

        ops = []
        for key in keys:
            try:
                ops.append(self.get(key))
                self.compiled_keys.append(key)
            except Exception as error:  # its tests fail (or xfail) with this error
                self.build_errors[key] = f"{type(error).__name__}: {error}"
        start = time.monotonic()
        try:
            if ops:
                tilecraft.compiler.add_module(ops)
        except Exception as error:  # the kernels left uncompiled fail their tests in get()
            self.compile_error = f"{type(error).__name__}: {error}"
            warnings.warn(f"compiler.add_module failed for some EVT kernels: {error}")
        self.compile_seconds = time.monotonic() - start
