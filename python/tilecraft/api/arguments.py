"""GemmArguments of the arguments-first API (seed 003): ``out = A @ B``."""

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from tilecraft import _core
from tilecraft._core import DataType
from tilecraft.conv_geometry import as_padding, as_padding_3d, as_pair, as_triple
from tilecraft.interop import detached

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
    per-tensor scales of fp8 kernels.

    ``graph``: a custom epilogue (``tilecraft.epilogue.trace(fn, ...)``) computed instead of the
    expression above; ``out`` is its D output and ``operands`` a dict of its other tensors
    (inputs and outputs) and its scalars, by the names in ``fn``. get_kernels then lists kernels
    that fuse the graph (arch 90)."""

    alpha: float = 1.0
    beta: float = 0.0
    C: Any = None
    activation: Any = None
    activation_args: Sequence[float] = ()
    bias: Any = None
    bias_per_row: bool = False
    scale_a: Any = None
    scale_b: Any = None
    graph: Any = None
    operands: Any = None


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
            detached(self.A), detached(self.B), detached(self.out),
            numeric_type("accumulator_type", self.accumulator_type), e.alpha, e.beta,
            detached(e.C), e.activation, e.activation_args, detached(e.bias), e.bias_per_row,
            detached(e.scale_a), detached(e.scale_b), self.use_fast_accum, e.graph,
            None if e.operands is None else {k: detached(v) for k, v in e.operands.items()}
            if isinstance(e.operands, dict) else e.operands)

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
    return [detached(t) for t in value]


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
    ``offsets_on_device``: the offsets (a CUDA tensor) are never read on the host; each launch
    reads them on its stream (a CUDA graph can capture it and replay it with new offsets), each
    end raised to the previous group's end and lowered to total_rows, so groups never overlap
    and no row outside the tensors is touched (a decreasing offset makes its group empty);
    kernels are checked and ranked for total_rows / groups rows a group. Its weight gradient
    (``B`` 2-D, as ``torch._grouped_mm`` takes it too): A (M, total_rows), B (total_rows, N),
    out (groups, M, N), ``out[g] = alpha * A[:, rows of g] @ B[rows of g]`` (zeros for a group
    with no rows); no C nor bias, and the offsets are always read on the device.
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
    offsets_on_device: bool = False
    _native: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.offsets_on_device and self.offsets is None:
            raise ValueError("offsets_on_device: given without offsets (the stacked form)")
        accumulator = self.accumulator_type
        if accumulator is None:
            accumulator = DataType.f32
        accumulator = numeric_type("accumulator_type", accumulator)
        common = (accumulator, )
        tail = (self.alpha, self.beta, _activation(self.activation),
                list(self.activation_args), self.scale_a, self.scale_b)
        if self.offsets is not None:
            self._native = _core.api.GroupedGemmArguments.make_stacked(
                detached(self.A), detached(self.B), detached(self.out),
                detached(self.offsets), *common, detached(self.C), *tail,
                detached(self.bias), offsets_on_device=self.offsets_on_device)
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


def _conv_kind(value):
    if isinstance(value, str):
        try:
            return getattr(_core.ConvKind, value)
        except AttributeError:
            raise ValueError(f"kind: expected 'fprop', 'dgrad', 'wgrad' or a "
                             f"tilecraft.conv.Operator, got {value!r}") from None
    return value


@dataclass
class Conv2dArguments(RuntimeArguments):
    """A 2-D convolution on channels-last CUDA tensors (``torch.channels_last``), in torch's
    logical order: activations (N, C, H, W), filters (K, C, R, S). The operands of ``kind``:

    * ``"fprop"``: ``A`` = x (N, C, H, W), ``B`` = w (K, C, R, S), ``out`` = y (N, K, P, Q)
    * ``"dgrad"``: ``A`` = dy (N, K, P, Q), ``B`` = w, ``out`` = dx (N, C, H, W)
    * ``"wgrad"``: ``A`` = dy, ``B`` = x, ``out`` = dw (K, C, R, S)

    ``stride`` and ``dilation``: an int or (rows, columns); ``padding``: an int, (rows, columns)
    or (top, bottom, left, right); ``groups``: 1, or a divisor of C and K for a grouped fprop
    (w is (K, C // groups, R, S); arch-80 group kernels; C == K == groups is depthwise, on CUDA
    cores, listed for f32 and f64);
    ``mode``: ``conv.Mode.cross_correlation`` (torch's, the default) or ``convolution``.
    ``epilogue`` (an EpilogueArguments): ``out = activation(alpha * conv + beta * C + bias)``,
    ``C`` shaped like ``out``, ``bias`` one value per output channel (SM90 kernels fuse it; SM80
    kernels read it as a C of one value per channel, so not beside a C). Checked on
    construction; a mismatch raises ValueError naming the argument."""

    A: Any
    B: Any
    out: Any
    accumulator_type: Any = None
    kind: Any = "fprop"
    stride: Any = 1
    padding: Any = 0
    dilation: Any = 1
    groups: int = 1
    epilogue: Optional[EpilogueArguments] = None
    mode: Any = None
    _native: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        e = EpilogueArguments() if self.epilogue is None else self.epilogue
        if not isinstance(e, EpilogueArguments):
            raise TypeError(f"epilogue: expected a tilecraft.api.arguments.EpilogueArguments, "
                            f"got {_core.given(e)}")
        if e.bias_per_row or e.scale_a is not None or e.scale_b is not None:
            raise ValueError("epilogue: a convolution's epilogue takes alpha, beta, C, an "
                             "activation and a bias of one value per output channel "
                             "(bias_per_row and fp8 scales are GEMM fusions)")
        if e.graph is not None or e.operands is not None:
            raise ValueError("epilogue: get_kernels lists no convolution with a custom epilogue "
                             "graph yet; describe one explicitly: Conv2dOperation(..., "
                             "epilogue_functor=graph) on a persistent SM90 kernel (docs/conv.md)")
        accumulator = DataType.f32 if self.accumulator_type is None else \
            numeric_type("accumulator_type", self.accumulator_type)
        mode = _core.ConvMode.cross_correlation if self.mode is None else self.mode
        self._native = _core.api.Conv2dArguments.make(
            _conv_kind(self.kind), detached(self.A), detached(self.B), detached(self.out),
            accumulator, groups=self.groups, mode=mode, C=detached(e.C), alpha=e.alpha,
            beta=e.beta, activation=_activation(e.activation),
            activation_args=list(e.activation_args), bias=detached(e.bias), **self._geometry())

    def _geometry(self):
        return {"stride": as_pair("stride", self.stride), "padding": as_padding(self.padding),
                "dilation": as_pair("dilation", self.dilation)}

    @classmethod
    def dgrad(cls, dy, w, dx, accumulator_type=None, **kwargs):
        """The input gradient ``dx`` of a convolution from ``dy`` and its filter ``w``."""
        return cls(dy, w, dx, accumulator_type, kind="dgrad", **kwargs)

    @classmethod
    def wgrad(cls, dy, x, dw, accumulator_type=None, **kwargs):
        """The filter gradient ``dw`` of a convolution from ``dy`` and its input ``x``."""
        return cls(dy, x, dw, accumulator_type, kind="wgrad", **kwargs)

    @property
    def problem_size(self):
        """The conv.Conv2dProblemSize the tensors and geometry describe."""
        return self._native.problem_size

    @property
    def flops(self):
        return self._native.flops


@dataclass
class Conv3dArguments(Conv2dArguments):
    """A 3-D convolution on channels-last CUDA tensors (``torch.channels_last_3d``), in torch's
    logical order: activations (N, C, D, H, W), filters (K, C, T, R, S), outputs (N, K, Z, P, Q);
    the operands of ``kind`` as for ``Conv2dArguments``. ``stride`` and ``dilation``: an int or
    (depth, rows, columns); ``padding``: an int, (depth, rows, columns) or (front, back, top,
    bottom, left, right). Runs on CUTLASS 2.x Conv3d kernels (arch 80: 128-bit channel accesses
    on tensor cores, so C and K multiples of 8 halves / 4 floats, or CUDA cores); groups 1."""

    def _geometry(self):
        sd, sh, sw = as_triple("stride", self.stride)
        dd, dh, dw = as_triple("dilation", self.dilation)
        front, back, top, bottom, left, right = as_padding_3d(self.padding)
        return {"stride": (sh, sw), "padding": (top, bottom, left, right), "dilation": (dh, dw),
                "stride_d": sd, "padding_d": (front, back), "dilation_d": dd}

    @property
    def problem_size(self):
        """The conv.Conv3dProblemSize the tensors and geometry describe."""
        return self._native.problem_size


__all__ = ["RuntimeArguments", "GemmArguments", "GroupedGemmArguments", "Conv2dArguments",
           "Conv3dArguments", "EpilogueArguments"]
