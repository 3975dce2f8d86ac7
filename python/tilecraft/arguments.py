"""GemmArguments (seed 002, "GEMM Arguments")."""

import difflib
import warnings

from tilecraft import _core
from tilecraft._core import GemmMode
from tilecraft.interop import detached, stream_getter

_KEYWORDS = ("operation", "problem_size", "A", "B", "C", "D", "output_op", "gemm_mode",
             "split_k_slices", "batch", "bias", "aux", "scale_a", "scale_b", "scale_c", "scale_d",
             "deterministic", "launch_with_pdl")
_SCALES = ("scale_a", "scale_b", "scale_c", "scale_d")
# Misspellings that appear in published examples, accepted with a warning.
_ALIASES = {"split_k_splices": "split_k_slices"}


class GemmArguments:
    """A GEMM's operands and scalars, validated against ``operation`` and packed for launch.

    Tensors may be torch or cupy device tensors or numpy arrays (staged to the GPU; ``sync()``
    copies D back). Raises TypeError (a value of the wrong type) or ValueError (a mismatch),
    naming the argument; nothing is launched.

    SM90 epilogue fusions take ``bias`` (M or N values, or one vector per batch), ``aux`` (shaped
    like D) and fp8 per-tensor scales ``scale_a`` ... ``scale_d`` (floats, or one-element float32
    CUDA tensors read at launch). ``deterministic=False`` lets SM90 stream-K and split-K kernels
    reduce partial sums in any order: faster, but not bitwise reproducible from run to run.
    ``launch_with_pdl`` (default True) launches SM90 kernels with programmatic dependent launch:
    a kernel's prologue overlaps the end of the kernel before it on the stream, while its memory
    accesses still wait for that kernel to finish. SM80 kernels always launch plainly.
    """

    def __init__(self, *args, **kwargs):
        for alias, keyword in _ALIASES.items():
            if alias in kwargs:
                warnings.warn(f"GemmArguments: '{alias}' is a misspelling of '{keyword}'; "
                              f"accepted, but write {keyword}=", stacklevel=2)
                if keyword in kwargs:
                    raise TypeError(f"GemmArguments: got both '{alias}' and '{keyword}'")
                kwargs[keyword] = kwargs.pop(alias)
        unknown = [k for k in kwargs if k not in _KEYWORDS]
        if unknown:
            name = unknown[0]
            close = difflib.get_close_matches(name, _KEYWORDS, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise TypeError(f"GemmArguments() got an unexpected keyword argument '{name}'{hint}")
        if len(args) > len(_KEYWORDS):
            raise TypeError(f"GemmArguments() takes at most {len(_KEYWORDS)} arguments")
        values = dict(zip(_KEYWORDS, args))
        for key, value in kwargs.items():
            if key in values:
                raise TypeError(f"GemmArguments() got multiple values for argument '{key}'")
            values[key] = value
        output_op = values.get("output_op")
        if isinstance(output_op, (list, tuple)) and len(output_op) == 1:
            values["output_op"] = output_op[0]  # the seed's trailing comma: (epilogue_type(...),)
        visitor = visitor_arguments(values)
        missing = [k for k in ("operation", "problem_size", "A", "B", "D") if k not in values]
        if missing:
            raise TypeError(f"GemmArguments() missing required argument '{missing[0]}'")
        # The C++ binding checks every value by name (types first, then against the operation)
        # before anything is staged, compiled or launched.
        native = {key: detached(value) for key, value in values.items()}
        self._native = _core.GemmArguments.make(**native)

        self.operation = values["operation"]
        self.problem_size = values["problem_size"]
        self.A, self.B, self.C, self.D = values["A"], values["B"], values.get("C"), values["D"]
        self.output_op = visitor if visitor is not None else values.get("output_op")
        self.gemm_mode = values.get("gemm_mode", GemmMode.Gemm)
        self.split_k_slices = values.get("split_k_slices", 1)
        self.batch = values.get("batch", 1)
        self.bias, self.aux = values.get("bias"), values.get("aux")
        self._current_stream = stream_getter((self.A, self.B, self.C, self.D))
        if visitor is not None:
            visitor._arguments = self

    def sync(self):
        """Waits for the launch; copies D back into a numpy (host) D."""
        self._native.sync()

    @property
    def workspace_bytes(self):
        return self._native.workspace_bytes


def visitor_arguments(values, who="GemmArguments"):
    """An epilogue visitor tree's output_op becomes the native ``epilogue`` operands (values is
    updated in place); returns it, or None for other epilogues."""
    from tilecraft.operation import EpilogueVisitorArguments

    output_op = values.get("output_op")
    if not isinstance(output_op, EpilogueVisitorArguments):
        return None
    operands = dict(output_op.operands)
    d_name = output_op.graph.d_output
    if d_name in operands:
        if values.get("D") is None:
            values["D"] = operands[d_name]
        elif operands[d_name] is not values["D"]:
            raise ValueError(f"output_op.{d_name}: the epilogue's D output is {who}' D; "
                             f"got two different tensors for it")
        del operands[d_name]
    values["epilogue"] = {key: detached(value) for key, value in operands.items()}
    del values["output_op"]
    return output_op
