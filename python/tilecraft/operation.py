"""GemmOperationUniversal (seed 002, "GEMM Operation")."""

from tilecraft import _core
from tilecraft._core import EpilogueParams


def _seed_arch(who, args, kwargs):
    """The seed calls arch ``compute_capability``: accepted as its keyword too (kwargs is
    updated in place). Returns args."""
    if "compute_capability" in kwargs:
        if args or "arch" in kwargs:
            raise TypeError(f"{who}() got both 'arch' and its seed name 'compute_capability'")
        kwargs["arch"] = kwargs.pop("compute_capability")
    return args


class GemmOperationUniversal:
    """A described GEMM kernel: compiled by ``compiler.add_module`` (or on first use), launched by
    ``run``. Validation happens here: a value of the wrong type raises TypeError, a bad
    combination ValueError, each naming the argument.

    ``arch=80`` builds CUTLASS 2.x kernels (they also run on Hopper); ``arch=90`` builds CUTLASS
    3.x TMA/wgmma kernels from a tile whose math instruction is a wgmma shape ``[64, N, K]``.
    """

    _graph = None  # the epilogue graph of a visitor=True operation

    def __init__(self, *args, **kwargs):
        """``GemmOperationUniversal(arch, tile_description, A, B, C, epilogue_functor,
        swizzling_functor=IdentitySwizzle1, visitor=False)``; the seed calls arch
        ``compute_capability``, which is accepted as its keyword too.

        ``visitor=True`` (the seed's epilogue visitor tree): ``epilogue_functor`` is an epilogue
        graph from ``tilecraft.epilogue.trace``, which the kernel computes in place of a linear
        combination; its runtime values come from ``operation.epilogue_type(**operands)``."""
        args = _seed_arch("GemmOperationUniversal", args, kwargs)
        self._graph = None
        visitor = kwargs.pop("visitor", args[7] if len(args) > 7 else False)
        args = args[:7]
        if visitor is True:
            # The C++ binding binds the arguments by name and checks each one's type and value.
            op = _core.GemmOperation.make_visitor(*args, **kwargs)
            self._graph = op.description.epilogue_graph
        elif visitor is False:
            op = _core.GemmOperation.make(*args, **kwargs)
        else:
            raise TypeError(f"visitor: expected True or False, got {_core.given(visitor)}")
        self._adopt(op)

    def _adopt(self, op):
        self._op = op
        description = op.description
        self.arch = description.arch
        self.tile_description = description.tile_description
        self.A, self.B, self.C = description.A, description.B, description.C
        self.epilogue_functor = description.epilogue_functor
        self.swizzling_functor = description.swizzling_functor
        self.element_epilogue = self.epilogue_functor.element_epilogue

    def procedural_name(self):
        return self._op.procedural_name()

    def epilogue_type(self, *args, **operands):
        """``operation.epilogue_type(alpha, beta, *activation_args)``: the epilogue's runtime
        values, checked against the functor (leaky_relu takes its slope).

        With ``visitor=True``: ``operation.epilogue_type(**operands)``, the epilogue graph's
        scalars (numbers), input tensors and outputs by their names in the traced function
        (``problem_size=`` is accepted and unused, as in the seed); pass it as GemmArguments'
        ``output_op`` and call its ``sync()`` after the launch."""
        if self._graph is not None:
            if args:
                raise TypeError("epilogue_type: an epilogue visitor tree takes its values by "
                                "name (epilogue_type(alpha=..., C=..., ...)), got positional ones")
            operands.pop("problem_size", None)
            return EpilogueVisitorArguments(self._graph, operands)
        if operands:
            raise TypeError(f"epilogue_type() got an unexpected keyword argument "
                            f"'{next(iter(operands))}'")
        alpha = args[0] if len(args) > 0 else 1.0
        beta = args[1] if len(args) > 1 else 0.0
        return self._op.epilogue_type(alpha, beta, list(args[2:]))

    def is_compiled(self):
        return self._op.is_compiled()

    # The native launch that takes this family's arguments.
    _native_run = "run"

    def run(self, arguments):
        """Launches on the current stream of the framework the tensors came from (torch or cupy;
        the default stream for numpy and other host arrays). Does not synchronize."""
        current_stream = getattr(arguments, "_current_stream", None)  # the arguments' (a wrong
        getattr(self._op, self._native_run)(  # kind of arguments is refused by name)
            arguments, current_stream() if current_stream else 0)

    def __repr__(self):
        return f"GemmOperationUniversal({self.procedural_name()})"


class EpilogueVisitorArguments:
    """``output_op`` of an epilogue visitor tree: the graph's runtime scalars, input tensors and
    outputs by name. ``sync()`` waits for the launch that used it (and copies host outputs
    back)."""

    def __init__(self, graph, operands):
        self.graph = graph
        self.operands = dict(operands)
        self._arguments = None

    def sync(self):
        if self._arguments is not None:
            self._arguments.sync()

    def __repr__(self):
        return f"EpilogueVisitorArguments({sorted(self.operands)})"


class GemmOperationGrouped(GemmOperationUniversal):
    """A described grouped GEMM kernel (seed 002, "GEMM Grouped Operation"): many problems of
    their own sizes in one launch, run with ``GemmGroupedArguments``.

    ``arch=80`` builds CUTLASS 2.x ``GemmGrouped`` kernels, SIMT or TensorOp, scheduling tiles
    on the host (``SchedulerMode.Host``: precomputed at each launch from sizes known on the host)
    or on the device (``SchedulerMode.Device``). ``arch=90`` builds CUTLASS 3.x pointer-array
    grouped kernels (TMA, warp-specialized cooperative or ping-pong, clusters), which schedule
    on the device.
    """

    def __init__(self, *args, **kwargs):
        """``GemmOperationGrouped(arch, tile_description, A, B, C, epilogue_functor,
        swizzling_functor=IdentitySwizzle1, precompute_mode=SchedulerMode.Device)``."""
        self._adopt(_core.GemmOperation.make_grouped(*_seed_arch("GemmOperationGrouped", args,
                                                                 kwargs), **kwargs))
        self.precompute_mode = self._op.description.scheduler_mode

    _native_run = "run_grouped"

    def __repr__(self):
        return f"GemmOperationGrouped({self.procedural_name()})"


class Conv2dOperation(GemmOperationUniversal):
    """A described implicit-GEMM convolution kernel (seed 002, "Conv2d Operation"), run with
    ``Conv2dArguments``.

    ``Conv2dOperation(conv_kind, iterator_algorithm, arch, tile_description, A, B, C,
    stride_support, epilogue_functor, swizzling_functor=IdentitySwizzle1)``: ``conv_kind``
    ``conv.Operator.fprop``, ``dgrad`` or ``wgrad``; ``iterator_algorithm``
    ``conv.IteratorAlgorithm.analytic``, ``optimized``, ``fixed_channels`` (fprop, C equal to A's
    alignment) or ``few_channels`` (fprop, C a multiple of it); ``stride_support``
    ``StrideSupport.Strided`` or ``Unity`` (a dgrad specialized for unit strides). A, B and C are
    ``TensorNHWC`` descriptions (int8 fprop also ``TensorNC32HW32`` / ``TensorC32RSK32``).
    ``arch=80`` builds CUTLASS 2.x ``ImplicitGemmConvolution`` kernels, which also run on Hopper.

    ``group_mode`` (keyword, default ``conv.GroupMode.NoneGroup``): a grouped fprop kernel for
    ``Conv2dProblemSize(..., groups > 1)``, arch 80: ``SingleGroup`` (tensor cores; K / groups a
    multiple of the tile's N), ``MultipleGroup`` (tensor cores, analytic; the tile's N a multiple
    of K / groups) or ``Depthwise`` (CUDA cores, analytic, 2 stages; C == K == groups).
    ``iterator_algorithm=conv.IteratorAlgorithm.direct`` with ``Depthwise`` or ``MultipleGroup``
    is tilecraft's own direct grouped fprop on CUDA cores (not an implicit GEMM; see
    docs/conv.md): ``threadblock_shape`` is [output pixels, output channels, 1] per CTA.

    ``epilogue_functor`` may be an epilogue graph from ``tilecraft.epilogue.trace`` (a custom
    epilogue) on the persistent SM90 kernels (``arch=90``, kernel_schedule
    TmaWarpSpecializedCooperative or TmaWarpSpecializedPingpong). The function sees the implicit
    GEMM's (M, N) output: M its positions (fprop: N*P*Q), N its channels (fprop: K); a column
    input is one value per output channel. Its values come from
    ``operation.epilogue_type(**operands)``, passed as Conv2dArguments' ``output_op``.
    """

    def __init__(self, *args, **kwargs):
        if args and "compute_capability" in kwargs:
            raise TypeError("Conv2dOperation() got both a positional arch and 'compute_capability'")
        if "compute_capability" in kwargs:
            kwargs["arch"] = kwargs.pop("compute_capability")
        functor = kwargs.get("epilogue_functor", args[8] if len(args) > 8 else None)
        if isinstance(functor, _core.EpilogueGraph):
            op = _core.GemmOperation.make_conv2d_visitor(*args, **kwargs)
            self._adopt(op)
            self._graph = op.description.epilogue_graph
        else:
            self._adopt(_core.GemmOperation.make_conv2d(*args, **kwargs))
        description = self._op.description
        self.conv_kind = description.conv_kind
        self.iterator_algorithm = description.iterator_algorithm
        self.stride_support = description.stride_support
        self.group_mode = description.group_mode

    _native_run = "run_conv"

    def __repr__(self):
        return f"Conv2dOperation({self.procedural_name()})"


class Conv3dOperation(Conv2dOperation):
    """A described 3-D implicit-GEMM convolution kernel: ``Conv2dOperation``'s arguments with
    ``TensorNDHWC`` descriptions (CUTLASS 2.x ``Conv3d`` kernels, ``arch=80``; on tensor cores
    A and B have alignment 128 bits, one element on CUDA cores; dgrad is ``analytic`` with
    ``StrideSupport.Strided`` or ``optimized`` with ``Unity``). Run with ``Conv2dArguments`` and
    a ``conv.Conv3dProblemSize``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        layout = self._op.description.A.layout
        if layout != _core.Layout.TensorNDHWC:
            raise ValueError(f"A: Conv3dOperation takes TensorNDHWC descriptions (a 3-D "
                             f"convolution), got {layout.name}; describe a 2-D convolution "
                             f"with Conv2dOperation")

    def __repr__(self):
        return f"Conv3dOperation({self.procedural_name()})"


__all__ = ["GemmOperationUniversal", "GemmOperationGrouped", "Conv2dOperation", "Conv3dOperation",
           "EpilogueParams"]
