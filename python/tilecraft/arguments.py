"""GemmArguments (seed 002, "GEMM Arguments")."""

import difflib
import numbers
import warnings

from tilecraft import _core
from tilecraft._core import EpilogueParams, GemmCoord, GemmMode

_KEYWORDS = ("operation", "problem_size", "A", "B", "C", "D", "output_op", "gemm_mode",
             "split_k_slices", "batch", "bias", "aux", "scale_a", "scale_b", "scale_c", "scale_d",
             "deterministic", "launch_with_pdl")
_SCALES = ("scale_a", "scale_b", "scale_c", "scale_d")
# Misspellings that appear in published examples, accepted with a warning.
_ALIASES = {"split_k_splices": "split_k_slices"}


def _stream_getter(tensors):
    """Returns a function giving the current stream of the tensors' framework, as an int."""
    for tensor in tensors:
        module = type(tensor).__module__.split(".")[0]
        if module == "torch" and tensor.is_cuda:
            import torch

            return lambda: torch.cuda.current_stream().cuda_stream
        if module == "cupy":
            import cupy

            return lambda: cupy.cuda.get_current_stream().ptr
    return lambda: 0


class GemmArguments:
    """A GEMM's operands and scalars, validated against ``operation`` and packed for launch.

    Tensors may be torch or cupy device tensors or numpy arrays (staged to the GPU; ``sync()``
    copies D back). Raises ValueError naming the argument on any mismatch; nothing is launched.

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
        missing = [k for k in ("operation", "problem_size", "A", "B", "D") if k not in values]
        if missing:
            raise TypeError(f"GemmArguments() missing required argument '{missing[0]}'")

        operation = values["operation"]
        if not hasattr(operation, "_op"):
            raise TypeError(f"operation: expected a GemmOperationUniversal, got {operation!r}")
        problem_size = values["problem_size"]
        if not isinstance(problem_size, GemmCoord):
            raise TypeError(f"problem_size: expected cutlass.gemm.GemmCoord(M, N, K), got "
                            f"{problem_size!r}")
        output_op = values.get("output_op")
        if output_op is None:
            output_op = operation.epilogue_type(1.0, 0.0)
        if isinstance(output_op, (list, tuple)) and len(output_op) == 1:
            output_op = output_op[0]  # the seed's trailing-comma form: (epilogue_type(...),)
        if not isinstance(output_op, EpilogueParams):
            raise TypeError(f"output_op: expected operation.epilogue_type(alpha, beta, ...), got "
                            f"{output_op!r}")
        gemm_mode = values.get("gemm_mode", GemmMode.Gemm)
        if not isinstance(gemm_mode, GemmMode):
            raise TypeError(f"gemm_mode: expected a cutlass.gemm.Mode, got {gemm_mode!r}")
        split_k_slices = _integer("split_k_slices", values.get("split_k_slices", 1))
        batch = _integer("batch", values.get("batch", 1))

        self.operation = operation
        self.problem_size = problem_size
        self.A, self.B, self.C, self.D = values["A"], values["B"], values.get("C"), values["D"]
        self.output_op = output_op
        self.gemm_mode = gemm_mode
        self.split_k_slices = split_k_slices
        self.batch = batch
        self.bias, self.aux = values.get("bias"), values.get("aux")
        tensors = [_tensor_like(name, getattr(self, name), allow_none=(name == "C"))
                   for name in ("A", "B", "C", "D")]
        bias = _tensor_like("bias", self.bias, allow_none=True)
        aux = _tensor_like("aux", self.aux, allow_none=True)
        scales = [_scale(name, values.get(name)) for name in _SCALES]
        deterministic = values.get("deterministic", True)
        if not isinstance(deterministic, bool):
            raise TypeError(f"deterministic: expected True or False, got {deterministic!r}")
        launch_with_pdl = values.get("launch_with_pdl", True)
        if not isinstance(launch_with_pdl, bool):
            raise TypeError(f"launch_with_pdl: expected True or False, got {launch_with_pdl!r}")
        self._native = _core.GemmArguments.make(operation._op, problem_size, *tensors, output_op,
                                                gemm_mode, split_k_slices, batch, bias, aux,
                                                scales, deterministic, launch_with_pdl)
        self._current_stream = _stream_getter((self.A, self.B, self.C, self.D))

    def sync(self):
        """Waits for the launch; copies D back into a numpy (host) D."""
        self._native.sync()

    @property
    def workspace_bytes(self):
        return self._native.workspace_bytes


def _integer(name, value):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an integer, got {value!r}")
    return value


def _scale(name, value):
    """A per-tensor scale: None, a number, or a tensor (passed through for the C++ checks)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected a float or a one-element float32 CUDA tensor, got "
                        f"{value!r}")
    if isinstance(value, numbers.Real):  # float, int, numpy scalars
        return float(value)
    return _tensor_like(name, value)


def _tensor_like(name, value, allow_none=False):
    """Checks that value can cross by DLPack; a torch tensor that requires grad crosses detached
    (the same memory: D is written in place, as the caller asked)."""
    if value is None and allow_none:
        return None
    if not (hasattr(value, "__dlpack__") or hasattr(value, "__array_interface__")):
        raise TypeError(f"{name}: expected a torch, cupy or numpy array, got "
                        f"{type(value).__name__}")
    if getattr(value, "requires_grad", False):
        value = value.detach()
    return value
