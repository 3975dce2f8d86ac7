"""Conv2dArguments (seed 002, "Conv2d Arguments")."""

from tilecraft import _core
from tilecraft.arguments import visitor_arguments
from tilecraft.interop import detached, stream_getter

_KEYWORDS = ("operation", "problem_size", "A", "B", "C", "D", "output_op", "split_k_mode",
             "split_k_slices", "bias")


class Conv2dArguments:
    """A convolution's tensors and scalars, checked against a ``Conv2dOperation`` and packed for
    launch.

    ``Conv2dArguments(operation, problem_size, A, B, C, D, output_op, split_k_mode=
    conv.SplitKMode.Serial, split_k_slices=None)``. A, B, C, D are the implicit GEMM's operands,
    as in CUTLASS: fprop A = x (N,H,W,C), B = w (K,R,S,C), D = y (N,P,Q,K); dgrad A = dy, B = w,
    D = dx; wgrad A = dy, B = x, D = dw. Each is a torch or cupy device tensor or a numpy array
    (staged, and copied back by ``sync()``), packed in the operation's layout: flat, 4-D in that
    order, or a torch (N, C, H, W) tensor in ``torch.channels_last`` memory format (a 3-D
    convolution: a ``Conv3dOperation`` and a ``conv.Conv3dProblemSize``, 5-D (N, D, H, W, C) /
    (K, T, R, S, C) tensors, or torch (N, C, D, H, W) in ``torch.channels_last_3d``; grouped:
    the filter is (K, R, S, C / groups)). C may hold one value per output channel (a bias, 1-D),
    and may be None when beta is 0.
    ``split_k_slices`` (default: the problem size's) splits the reduction serially, or with
    ``SplitKMode.Parallel`` into a workspace summed by a reduction kernel (arch=80 kernels).
    ``bias``: for arch=90 kernels whose epilogue adds one (``bias="column"``), one value per
    output channel, fused before the activation.
    An operation with a custom epilogue (an epilogue graph) takes its values as ``output_op =
    operation.epilogue_type(**operands)``: tensors shaped like D given as D is, column inputs
    and reductions one value per output channel, row ones one per output position; C and
    ``bias`` are then not given (pass them as the graph's operands).

    Bad input raises TypeError or ValueError naming the argument; nothing is launched.
    """

    def __init__(self, *args, **kwargs):
        if len(args) > len(_KEYWORDS):
            raise TypeError(f"Conv2dArguments() takes at most {len(_KEYWORDS)} arguments")
        values = dict(zip(_KEYWORDS, args))
        for key, value in kwargs.items():
            if key not in _KEYWORDS:
                raise TypeError(f"Conv2dArguments() got an unexpected keyword argument '{key}'")
            if key in values:
                raise TypeError(f"Conv2dArguments() got multiple values for argument '{key}'")
            values[key] = value
        output_op = values.get("output_op")
        if isinstance(output_op, (list, tuple)) and len(output_op) == 1:
            values["output_op"] = output_op[0]  # the seed's trailing comma
        visitor = visitor_arguments(values, "Conv2dArguments")
        for required in ("operation", "problem_size", "A", "B", "D"):
            if required not in values:
                raise TypeError(f"Conv2dArguments() missing required argument '{required}'")
        native = dict(values)
        operation = native["operation"]
        native["operation"] = getattr(operation, "_op", operation)
        for key in ("A", "B", "C", "D", "bias"):
            if native.get(key) is not None:
                native[key] = detached(native[key])
        self._native = _core.Conv2dArguments.make(**native)
        self.operation = operation
        self.problem_size = values["problem_size"]
        self.A, self.B, self.C, self.D = (values["A"], values["B"], values.get("C"), values["D"])
        self.output_op = visitor if visitor is not None else values.get("output_op")
        self._current_stream = stream_getter([t for t in (self.A, self.B, self.D)
                                               if t is not None])
        if visitor is not None:
            visitor._arguments = self

    def sync(self):
        """Waits for the launch; copies D back into a numpy (host) D array."""
        self._native.sync()

    @property
    def workspace_bytes(self):
        return self._native.workspace_bytes


__all__ = ["Conv2dArguments"]
