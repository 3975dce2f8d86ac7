"""GemmArguments of the arguments-first API (seed 003): ``out = A @ B``."""

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from tilecraft import _core
from tilecraft._core import DataType
from tilecraft.arguments import _detached

_TORCH_NAMES = {"float32": DataType.f32, "float16": DataType.f16, "bfloat16": DataType.bf16,
                "int32": DataType.s32, "float64": DataType.f64}


def numeric_type(name, value):
    """A DataType from a tilecraft type (cutlass.Float32), a torch dtype or a numpy dtype."""
    if isinstance(value, DataType):
        return value
    if not isinstance(value, str):  # a type, not its name
        text = getattr(value, "__name__", None) or str(value).replace("torch.", "")
        if isinstance(text, str) and text in _TORCH_NAMES:
            return _TORCH_NAMES[text]
    raise TypeError(f"{name}: expected a tilecraft type (tilecraft.Float32, ...) or a torch / "
                    f"numpy dtype (float32, float16, int32), got {_core.given(value)}")


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


@dataclass
class RuntimeArguments:
    """What an operation computes and on which operands (seed 003)."""


@dataclass
class GemmArguments(RuntimeArguments):
    """``out = A @ B`` with A (M, K), B (K, N), out (M, N), or all three with a leading batch
    dimension L. Tensors are CUDA tensors (torch, cupy, ... by DLPack). Checked on construction:
    ranks, shapes, batch extents, one device, a contiguous inner dimension; a mismatch raises
    ValueError naming the argument. ``epilogue`` (an EpilogueArguments) adds alpha, beta, C,
    an activation, a bias or fp8 scales. ``use_fast_accum`` (fp8 only) also admits kernels that
    accumulate without promoting to f32 every few k-blocks (torch._scaled_mm's flag)."""

    A: Any
    B: Any
    out: Any
    accumulator_type: Any
    epilogue: Optional[EpilogueArguments] = None
    use_fast_accum: bool = False
    _native: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        epilogue = EpilogueArguments() if self.epilogue is None else self.epilogue
        if not isinstance(epilogue, EpilogueArguments):
            raise TypeError(f"epilogue: expected a tilecraft.api.arguments.EpilogueArguments, "
                            f"got {_core.given(epilogue)}")
        # The binding checks each value under the name given here (epilogue.alpha, ...).
        e = epilogue
        self._native = _core.api.GemmArguments.make(
            _detached(self.A), _detached(self.B), _detached(self.out),
            numeric_type("accumulator_type", self.accumulator_type), e.alpha, e.beta,
            _detached(e.C), e.activation, e.activation_args, _detached(e.bias), e.bias_per_row,
            _detached(e.scale_a), _detached(e.scale_b), self.use_fast_accum)

    @property
    def problem_shape(self):
        """(M, N, K, L)."""
        n = self._native
        return n.m, n.n, n.k, n.batch


__all__ = ["RuntimeArguments", "GemmArguments", "EpilogueArguments"]
