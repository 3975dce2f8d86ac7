"""GemmArguments of the arguments-first API (seed 003): ``out = A @ B``."""

import numbers
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from tilecraft import _core
from tilecraft._core import Activation, DataType
from tilecraft.arguments import _scale, _tensor_like

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
class EpilogueArguments:
    """What the epilogue does before ``out`` is written::

        out = activation(alpha * scale_a * scale_b * (A @ B) + beta * C + bias)

    Every kernel takes ``alpha``, ``beta`` and ``C`` (shaped, typed and laid out like ``out``).
    An ``activation`` ("relu", "gelu", ... or a ``tilecraft.Activation``; ``activation_args``
    for leaky_relu's slope and clamp's bounds) or a ``bias`` (N values, or M with
    ``bias_per_row``; (L, N) for one per batch) selects kernels that fuse it: get_kernels
    derives them. ``scale_a`` / ``scale_b`` (floats or one-element float32 CUDA tensors) are the
    per-tensor scales of fp8 kernels."""

    alpha: float = 1.0
    beta: float = 0.0
    C: Any = None
    activation: Any = None
    activation_args: Sequence[float] = ()
    bias: Any = None
    bias_per_row: bool = False
    scale_a: Any = None
    scale_b: Any = None

    def _native_kwargs(self):
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise TypeError(f"epilogue.{name}: expected a number, got {value!r}")
        if not isinstance(self.bias_per_row, bool):
            raise TypeError(f"epilogue.bias_per_row: expected a bool, got {self.bias_per_row!r}")
        try:
            args = [float(v) for v in self.activation_args]
        except (TypeError, ValueError):
            raise TypeError(f"epilogue.activation_args: expected numbers, got "
                            f"{self.activation_args!r}") from None
        return dict(alpha=float(self.alpha), beta=float(self.beta),
                    C=_tensor_like("epilogue.C", self.C, allow_none=True),
                    activation=_activation(self.activation), activation_args=args,
                    bias=_tensor_like("epilogue.bias", self.bias, allow_none=True),
                    bias_per_row=self.bias_per_row,
                    scale_a=_scale("epilogue.scale_a", self.scale_a),
                    scale_b=_scale("epilogue.scale_b", self.scale_b))


def _activation(value):
    if value is None:
        return Activation.identity
    if isinstance(value, Activation):
        return value
    if isinstance(value, str) and value in Activation.__members__:
        return Activation.__members__[value]
    raise ValueError(f"epilogue.activation: expected None, a tilecraft.Activation or one of "
                     f"{sorted(Activation.__members__)}, got {value!r}")


@dataclass
class RuntimeArguments:
    """What an operation computes and on which operands (seed 003)."""


@dataclass
class GemmArguments(RuntimeArguments):
    """``out = A @ B`` with A (M, K), B (K, N), out (M, N), or all three with a leading batch
    dimension L. Tensors are CUDA tensors (torch, cupy, ... by DLPack). Checked on construction:
    ranks, shapes, batch extents, one device, a contiguous inner dimension; a mismatch raises
    ValueError naming the argument. ``epilogue`` (an EpilogueArguments) adds alpha, beta, C,
    an activation, a bias or fp8 scales."""

    A: Any
    B: Any
    out: Any
    accumulator_type: Any
    epilogue: Optional[EpilogueArguments] = None
    _native: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        tensors = [_tensor_like(name, getattr(self, name)) for name in ("A", "B", "out")]
        epilogue = EpilogueArguments() if self.epilogue is None else self.epilogue
        if not isinstance(epilogue, EpilogueArguments):
            raise TypeError(f"epilogue: expected tilecraft.api.arguments.EpilogueArguments, got "
                            f"{type(epilogue).__name__}")
        self._native = _core.api.GemmArguments.make(
            *tensors, numeric_type("accumulator_type", self.accumulator_type),
            **epilogue._native_kwargs())

    @property
    def problem_shape(self):
        """(M, N, K, L)."""
        n = self._native
        return n.m, n.n, n.k, n.batch


__all__ = ["RuntimeArguments", "GemmArguments", "EpilogueArguments"]
