"""The one adapter between tilecraft and the tensor libraries (torch, cupy, numpy, anything that
speaks DLPack): which library a tensor is from, its framework's current stream, stream handles,
tensors that cross detached, and new torch outputs. Tensors themselves cross into C++ by DLPack
in the bindings; nothing here copies data.
"""

import numbers

from tilecraft import _core
from tilecraft._core import DataType

# Accumulators for input dtypes whose default is not float32.
_ACCUMULATORS = {"float64": DataType.f64, "int8": DataType.s32, "uint8": DataType.s32}
# torch dtypes of a new output where it is not the input's.
_TORCH_OUT = {"int8": "int32", "float8_e4m3fn": "bfloat16", "float8_e5m2": "bfloat16"}


def torch():
    """The torch module, imported on first use (tilecraft itself does not need torch)."""
    import torch as module

    return module


def framework(value):
    """'torch', 'cupy', 'numpy', ... : the top-level module of a value's type."""
    return type(value).__module__.split(".")[0]


def is_torch(value):
    return framework(value) == "torch"


def dtype_name(tensor):
    """A torch or numpy-style dtype's name without its module: 'float16', 'bfloat16', ..."""
    return str(tensor.dtype).replace("torch.", "")


def default_accumulator(tensor):
    """The accumulator a GEMM of ``tensor``'s dtype uses unless one is named."""
    return _ACCUMULATORS.get(dtype_name(tensor), DataType.f32)


def torch_stream(device_index):
    """torch's current stream on a device, as a cudaStream_t handle (int)."""
    module = torch()
    raw = getattr(module._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(device_index)
    return module.cuda.current_stream(device_index).cuda_stream


def cupy_stream(device_index):
    """cupy's current stream on a device (not the current device's), as a handle (int)."""
    import cupy

    with cupy.cuda.Device(device_index):
        return cupy.cuda.get_current_stream().ptr


def stream_getter(tensors):
    """A function giving the current stream of the first CUDA tensor's framework on that
    tensor's device (not the current device's), as an int; 0 (the default stream) without one."""
    for tensor in tensors:
        kind = framework(tensor)
        if kind == "torch" and tensor.is_cuda:
            index = tensor.device.index
            return lambda: torch_stream(index)
        if kind == "cupy":
            index = tensor.device.id
            return lambda: cupy_stream(index)
    return lambda: 0


def _framework_stream(stream):
    """The handle of a torch.cuda.Stream or a cupy Stream, as an int; None for anything else."""
    for attribute in ("cuda_stream", "ptr"):
        if hasattr(stream, attribute):
            return int(getattr(stream, attribute))
    return None


def stream_int(stream):
    """A torch or cupy stream, or a cudaStream_t handle (an int >= 0), as an int."""
    handle = _framework_stream(stream)
    if handle is not None:
        return handle
    if isinstance(stream, numbers.Integral) and not isinstance(stream, bool) and stream >= 0:
        return int(stream)
    raise TypeError(f"stream: expected None, a torch or cupy stream, or a cudaStream_t handle "
                    f"(an int >= 0), got {_core.given(stream)}")


def stream_handle(stream, args):
    """The cudaStream_t of a torch or cupy stream; a handle (int) as given, for the binding to
    check; None: the current stream of the framework of ``args``' tensors (A, B, out)."""
    if stream is None:
        tensors = []
        for name in ("A", "B", "out"):
            value = getattr(args, name, None)
            if isinstance(value, (list, tuple)):
                value = value[0] if value else None
            tensors.append(value)
        return stream_getter(tuple(tensors))()
    handle = _framework_stream(stream)
    return stream if handle is None else handle


def detached(value):
    """A torch tensor that requires grad crosses DLPack detached: the same memory (outputs are
    written in place, as the caller asked). Anything else passes as it is."""
    if getattr(value, "requires_grad", False) is True and hasattr(value, "detach"):
        return value.detach()
    return value


def output_dtype(A):
    """The torch dtype of a new output for A's dtype (int8 gives int32, fp8 gives bfloat16)."""
    name = dtype_name(A)
    return getattr(torch(), _TORCH_OUT.get(name, name))


def new_output(A, B, out_dtype):
    """out for A @ B with torch tensors: (M, N) or (L, M, N), row-major, on A's device."""
    module = torch()
    if A.dim() not in (2, 3) or B.dim() not in (2, 3):
        raise ValueError(f"A, B: expected 2-D (M, K) and (K, N) tensors, or 3-D with a leading "
                         f"batch dimension, got A {tuple(A.shape)} and B {tuple(B.shape)}")
    shape = (A.shape[-2], B.shape[-1])
    if A.dim() == 3 or B.dim() == 3:
        shape = (A.shape[0] if A.dim() == 3 else B.shape[0],) + shape
    if out_dtype is None:
        out_dtype = output_dtype(A)
    return module.empty(shape, dtype=out_dtype, device=A.device)


def wants_torch_op(*tensors, out=None, stream=None):
    """True when a call on torch tensors should go through tilecraft's torch op
    (``tilecraft.torch_ops``): inside ``torch.compile``, or when an input requires grad (and the
    call names no ``out`` or ``stream``, which the op does not take)."""
    first = tensors[0] if tensors else None
    if not is_torch(first):
        return False
    module = torch()
    if module.compiler.is_compiling():
        return True
    if out is not None or stream is not None or not module.is_grad_enabled():
        return False
    return any(getattr(t, "requires_grad", False) is True for t in tensors if t is not None)


def activation_name(activation):
    """An activation (None, a name or a tilecraft.Activation) as its name; "" for None."""
    return "" if activation is None else str(getattr(activation, "name", activation))


def refuse_first_call_in_capture(A):
    """Raises when torch is capturing a CUDA graph on A's stream: a call's first run (choosing,
    compiling and loading a kernel, sizing its workspace) is not stream work."""
    if is_torch(A) and A.is_cuda and torch().cuda.is_current_stream_capturing():
        raise RuntimeError("stream: capturing a CUDA graph, and no plan exists yet for these "
                           "tensors and arguments (making one cannot be captured): run the call "
                           "once before the capture, as torch.cuda.graph's warm-up does")
