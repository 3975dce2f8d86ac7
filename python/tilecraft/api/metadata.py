"""KernelMetadata (seed 003): what a kernel is, for filtering with ``metadata_filter``.

``metadata.operands`` is a GemmOperandsMetadata (per operand ``dtype``, ``layout``,
``alignment``; ``accumulator``), ``metadata.design`` an Sm80DesignMetadata or Sm90DesignMetadata
(tile, cluster, stages, schedules, swizzle), ``metadata.epilogue`` an EpilogueMetadata.
``metadata.score`` is the ranking model's TFLOP/s estimate for the arguments get_kernels ranked
for (0 when listed without arguments).
"""

from dataclasses import dataclass, field
from typing import Any, Optional, Tuple

from tilecraft._core import (Activation, BiasKind, DataType, EpilogueKind, EpilogueScheduleType,
                             KernelScheduleType, Layout, Swizzle, TileSchedulerType)


@dataclass(slots=True)
class OperandMetadata:
    dtype: DataType
    layout: Layout
    alignment: int


@dataclass(slots=True)
class OperandsMetadata:
    """Base class of the operand descriptions of every kernel family."""


@dataclass(slots=True)
class GemmOperandsMetadata(OperandsMetadata):
    """``fast_accum``: an fp8 kernel that accumulates without promoting to f32 every few
    k-blocks; it runs only arguments made with ``use_fast_accum=True``."""
    A: OperandMetadata
    B: OperandMetadata
    out: OperandMetadata
    accumulator: DataType
    fast_accum: bool = False


@dataclass(slots=True)
class DesignMetadata:
    """Base class of the design (performance) choices of a kernel."""


@dataclass(slots=True)
class Sm80DesignMetadata(DesignMetadata):
    """A CUTLASS 2.x tensor-op kernel (mma.sync; a cp.async multistage mainloop, or for 16-bit
    operands of any alignment a two-stage one): runs on SM80 and later."""
    tile_shape: Tuple[int, int, int]
    warp_count: Tuple[int, int, int]
    instruction_shape: Tuple[int, int, int]
    stages: int
    swizzle: Swizzle
    # K slices of each launch: serial split-K (the partial sums meet in out, which holds the
    # accumulator's type) or, with split_k_parallel, parallel split-K (a slice of accumulators each
    # in a workspace, summed into out by a second kernel); the kernel's name ends in _splitk<n>
    # (and _parallel) when it is more than 1.
    split_k_slices: int = 1
    split_k_parallel: bool = False


@dataclass(slots=True)
class Sm90DesignMetadata(DesignMetadata):
    """A CUTLASS 3.x kernel (TMA, wgmma, warp-specialized): runs on compute capability 9.0."""
    tile_shape: Tuple[int, int, int]
    cluster_shape: Tuple[int, int, int]
    instruction_shape: Tuple[int, int, int]
    stages: int  # 0: as many as fit
    kernel_schedule: KernelScheduleType
    epilogue_schedule: EpilogueScheduleType
    tile_scheduler: TileSchedulerType
    swizzle: Swizzle
    # Stream-K kernels: K slices of each launch (split-K reduced in a workspace of the
    # accumulator's type); the kernel's name ends in _splitk<n> when it is more than 1.
    split_k_slices: int = 1
    # fp8 with f32 promotion: wgmma k-blocks between promotions of the partial sums (0:
    # CUTLASS's 4); the kernel's name ends in _promo<n> when it is set.
    mma_promotion_interval: int = 0


@dataclass(slots=True)
class Sm100DesignMetadata(DesignMetadata):
    """Blackwell designs. tilecraft lists no SM100 kernels yet; the class exists so that the
    seed's filters run (and find none)."""
    tile_shape: Tuple[int, int, int]
    cluster_shape: Tuple[int, int, int]


@dataclass(slots=True)
class EpilogueMetadata:
    kind: EpilogueKind
    activation: Activation
    compute: DataType
    per_tensor_scales: bool
    bias: BiasKind = BiasKind.none
    bias_dtype: DataType = DataType.f32  # meaningful when bias is not BiasKind.none
    epilogue_graph: str = ""  # the custom epilogue's key (EpilogueGraph.key); "" without one


@dataclass(slots=True)
class KernelFacts:
    """Registers, spills and residency of a kernel: the compiler's (``source == "compiler"``)
    once it was built with this cache, else ``"predicted"`` from its tile. -1: not known."""
    source: str = "unknown"
    registers: int = -1
    spill_store_bytes: int = -1
    spill_load_bytes: int = -1
    stack_bytes: int = -1
    static_smem_bytes: int = -1
    max_ctas_per_sm: int = -1

    @property
    def spills(self):
        return self.spill_store_bytes > 0 or self.spill_load_bytes > 0


@dataclass(slots=True)
class ConvMetadata:
    """What a convolution kernel computes: ``kind`` (conv.Operator.fprop, dgrad, wgrad), its
    ``iterator_algorithm``, ``stride_support`` and ``group_mode`` (conv.GroupMode)."""

    kind: Any
    iterator_algorithm: Any
    stride_support: Any
    group_mode: Any


@dataclass(slots=True)
class KernelMetadata:
    kernel_name: str
    kernel_class: type
    min_cc: int
    operands: OperandsMetadata
    design: Optional[DesignMetadata] = None
    epilogue: Optional[EpilogueMetadata] = None
    score: float = 0.0
    score_explain: str = ""
    facts: KernelFacts = field(default_factory=KernelFacts)
    conv: Optional[ConvMetadata] = None  # convolution kernels only


def from_fields(fields, kernel_classes):
    """The Python view of a C++ tilecraft::api::KernelMetadata, from Kernel.metadata_fields."""
    name, kernel_class, min_cc, operands, design, epilogue, score, explain, facts, conv = fields
    a, b, out, accumulator, fast_accum = operands
    (arch, tile, cluster, warps, instruction, stages, kernel, epi, scheduler, swizzle, split_k,
     split_k_parallel, promotion) = design
    if arch == 90:
        design = Sm90DesignMetadata(tuple(tile), tuple(cluster), tuple(instruction), stages,
                                    kernel, epi, scheduler, swizzle, split_k, promotion)
    else:
        design = Sm80DesignMetadata(tuple(tile), tuple(warps), tuple(instruction), stages,
                                    swizzle, split_k, split_k_parallel)
    return KernelMetadata(
        kernel_name=name, kernel_class=kernel_classes[kernel_class], min_cc=min_cc,
        operands=GemmOperandsMetadata(OperandMetadata(*a), OperandMetadata(*b),
                                      OperandMetadata(*out), accumulator, fast_accum),
        design=design, epilogue=EpilogueMetadata(*epilogue), score=score, score_explain=explain,
        facts=KernelFacts(*facts), conv=None if conv is None else ConvMetadata(*conv))


__all__ = ["ConvMetadata", "OperandMetadata", "OperandsMetadata", "GemmOperandsMetadata", "DesignMetadata",
           "Sm80DesignMetadata", "Sm90DesignMetadata", "Sm100DesignMetadata", "EpilogueMetadata",
           "KernelFacts", "KernelMetadata"]
