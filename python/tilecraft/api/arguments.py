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


def _activation(value):
    """None, a tilecraft.Activation or its name, as an Activation."""
    if value is None:
        return _core.Activation.identity
    if isinstance(value, str):
        try:
            return getattr(_core.Activation, value)
        except AttributeError:
            names = ", ".join(repr(a.name) for a in _core.Activation)
            raise ValueError(f"activation: expected None, a tilecraft.Activation or one of "
                             f"[{names}], got {value!r}") from None
    return value


def _tensor_list(name, value):
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name}: expected a list with one tensor per problem, got "
                        f"{_core.given(value)}")
    return [_detached(t) for t in value]


@dataclass
class GroupedGemmArguments(RuntimeArguments):
    """Many independent GEMMs in one launch: ``out[g] = activation(alpha * (A[g] @ B[g]) +
    beta * C[g])``.

    Two forms. Lists: ``A``, ``B``, ``out`` (and ``C``) are lists of 2-D CUDA tensors, A[g]
    (M_g, K_g), B[g] (K_g, N_g), out[g] (M_g, N_g); every non-empty problem's tensors share a
    dtype and a layout. Mixture of experts (``offsets`` given, the form ``torch._grouped_mm``
    takes): A is one stacked (total_rows, K) tensor, B a 3-D (groups, K, N) weight whose
    matrices are row- or column-major (``w.transpose(-2, -1)`` of a contiguous (groups, N, K)),
    out (total_rows, N), and ``offsets`` an int32 tensor of each group's end row; group g is
    rows ``[offsets[g-1], offsets[g])``. Offsets on the device are read back to the host once,
    here (one synchronization), and checked: non-negative, non-decreasing, within A's rows.
    ``bias`` adds N values per problem (a list of vectors; in the stacked form a (groups, N)
    tensor: one bias per expert) and selects SM90 kernels that fuse it.
    ``scale_a`` / ``scale_b`` are fp8 per-tensor scales (numbers). Bad input raises ValueError
    or TypeError naming the problem and the argument."""

    A: Any
    B: Any
    out: Any
    accumulator_type: Any = None
    C: Any = None
    alpha: float = 1.0
    beta: float = 0.0
    offsets: Any = None
    activation: Any = None
    activation_args: Sequence[float] = ()
    scale_a: float = 1.0
    scale_b: float = 1.0
    bias: Any = None
    _native: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        accumulator = self.accumulator_type
        if accumulator is None:
            accumulator = DataType.f32
        accumulator = numeric_type("accumulator_type", accumulator)
        common = (accumulator, )
        tail = (self.alpha, self.beta, _activation(self.activation),
                list(self.activation_args), self.scale_a, self.scale_b)
        if self.offsets is not None:
            self._native = _core.api.GroupedGemmArguments.make_stacked(
                _detached(self.A), _detached(self.B), _detached(self.out),
                _detached(self.offsets), *common, _detached(self.C), *tail,
                _detached(self.bias))
        else:
            C = None if self.C is None else _tensor_list("C", self.C)
            bias = None if self.bias is None else _tensor_list("bias", self.bias)
            self._native = _core.api.GroupedGemmArguments.make(
                _tensor_list("A", self.A), _tensor_list("B", self.B),
                _tensor_list("out", self.out), *common, C, *tail, bias)

    @property
    def problem_count(self):
        return self._native.problem_count

    @property
    def problem_sizes(self):
        """[(M, N, K), ...] per problem."""
        return [(s.m(), s.n(), s.k()) for s in self._native.problem_sizes]

    @property
    def flops(self):
        return self._native.flops


__all__ = ["RuntimeArguments", "GemmArguments", "GroupedGemmArguments", "EpilogueArguments"]
