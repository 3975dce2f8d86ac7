"""GemmArguments of the arguments-first API (seed 003): ``out = A @ B``."""

from dataclasses import dataclass, field
from typing import Any

from tilecraft import _core
from tilecraft._core import DataType
from tilecraft.arguments import _tensor_like

_TORCH_NAMES = {"float32": DataType.f32, "float16": DataType.f16, "bfloat16": DataType.bf16,
                "int32": DataType.s32, "float64": DataType.f64}


def numeric_type(name, value):
    """A DataType from a tilecraft type (cutlass.Float32), a torch dtype or a numpy dtype."""
    if isinstance(value, DataType):
        return value
    text = getattr(value, "__name__", None) or str(value).replace("torch.", "")
    if text in _TORCH_NAMES:
        return _TORCH_NAMES[text]
    raise TypeError(f"{name}: expected a tilecraft type (tilecraft.Float32, ...) or a torch / "
                    f"numpy dtype (float32, float16, int32), got {value!r}")


@dataclass
class RuntimeArguments:
    """What an operation computes and on which operands (seed 003)."""


@dataclass
class GemmArguments(RuntimeArguments):
    """``out = A @ B`` with A (M, K), B (K, N), out (M, N), or all three with a leading batch
    dimension L. Tensors are CUDA tensors (torch, cupy, ... by DLPack). Checked on construction:
    ranks, shapes, batch extents, one device, a contiguous inner dimension; a mismatch raises
    ValueError naming the argument."""

    A: Any
    B: Any
    out: Any
    accumulator_type: Any
    _native: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        tensors = [_tensor_like(name, getattr(self, name)) for name in ("A", "B", "out")]
        self._native = _core.api.GemmArguments.make(
            *tensors, numeric_type("accumulator_type", self.accumulator_type))

    @property
    def problem_shape(self):
        """(M, N, K, L)."""
        n = self._native
        return n.m, n.n, n.k, n.batch


__all__ = ["RuntimeArguments", "GemmArguments"]
