"""``tilecraft.gemm(A, B, epilogue=fn, epilogue_args={...})``: a GEMM whose kernel computes a
custom epilogue (a function of the accumulator, traced once per shapes and types).

    def epi(accum, alpha, C, bias):
        D = relu(alpha * accum + C + bias)
        return D, D.abs().max()

    D, amax = tilecraft.gemm(A, B, epilogue=epi, epilogue_args={"alpha": 2.0, "C": c, "bias": b})

The kernel is the ranked first pick of ``tilecraft.api.get_kernels`` for the arguments (SM90 and
SM80 kernels fuse epilogue graphs), compiled on first use and kept for the process; custom epilogues
are not tuned by measurement. Outputs not given in ``epilogue_args`` are made (torch tensors):
stores shaped like D, reductions float32 vectors (M values for ``dim=1``, N for ``dim=0``) or one
value.
"""

import numbers
import threading

from tilecraft import _core, interop

_graphs = {}
_kernels = {}
_lock = threading.Lock()


class _Example:
    """Shape and dtype of an operand for tracing (no data)."""

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype


def _signature(value):
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return ("number",)
    shape = getattr(value, "shape", None)
    if shape is None:
        raise TypeError(f"epilogue_args: expected tensors and numbers, got {_core.given(value)}")
    return (tuple(int(s) for s in shape), str(getattr(value, "dtype", "")))


def _graph_for(epilogue, args, out, m, n, d_dtype):
    """The epilogue's graph: given, or traced from the function with the operands' shapes."""
    if isinstance(epilogue, _core.EpilogueGraph):
        return epilogue
    if not callable(epilogue) or not hasattr(epilogue, "__code__"):
        raise TypeError(f"epilogue: expected a Python function of the accumulator or a graph "
                        f"from tilecraft.epilogue.trace, got {_core.given(epilogue)}")
    from tilecraft.epilogue_trace import trace

    key = (epilogue.__code__, m, n, d_dtype, tuple(sorted((k, _signature(v))
                                                          for k, v in args.items())),
           None if out is None else _signature(out))
    graph = _graphs.get(key)
    if graph is not None:
        return graph
    examples = dict(args)
    examples.setdefault("accum", _Example((m, n), "float32"))
    first = trace(epilogue, **examples)
    d_name = first.d_output
    if d_name is not None and d_name not in examples:
        examples[d_name] = out if out is not None else _Example((m, n), d_dtype)
        first = trace(epilogue, **examples)
    _graphs[key] = first
    return first


def _make_outputs(graph, args, out, shape, device):
    """Outputs the caller did not give, made as torch tensors on A's device."""
    torch = interop.torch()
    made = dict(args)
    batch = shape[:-2]
    m, n = shape[-2], shape[-1]
    for name, kind, dtype, axis in graph.output_specs:
        if name == graph.d_output or name in made:
            continue
        torch_dtype = getattr(torch, _TORCH.get(dtype.name, dtype.name))
        if kind == "store":
            made[name] = torch.empty(shape, dtype=torch_dtype, device=device)
        else:
            extent = {"row": (m,), "column": (n,), "all": (1,) if not batch else ()}[axis.name]
            made[name] = torch.empty(batch + extent, dtype=torch_dtype, device=device)
    return made


_TORCH = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
          "s8": "int8", "s32": "int32", "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}


def _describe(tensor):
    if interop.is_torch(tensor):
        return (tuple(tensor.shape), tensor.stride(), tensor.dtype, tensor.device,
                tensor.data_ptr() & 15)
    return _signature(tensor)


def outputs_for(A, B, out, epilogue, epilogue_args, out_dtype, outputs_given=True):
    """(graph, out, operands): the epilogue's graph for these operands, its D output (made when
    None) and its operands with the outputs not given made (torch), without running anything
    (``tilecraft.torch_ops`` gives fake tensors here for torch.compile). ``outputs_given``
    False: an output among ``epilogue_args`` is refused (the torch op makes every output)."""
    if epilogue_args is None:
        epilogue_args = {}
    if not isinstance(epilogue_args, dict) or not all(isinstance(k, str) for k in epilogue_args):
        raise TypeError(f"epilogue_args: expected a dict of the epilogue's names to tensors and "
                        f"numbers, got {_core.given(epilogue_args)}")
    if out is None and not interop.is_torch(A):
        raise ValueError("out: required for cupy tensors (torch tensors get a new one)")
    shape_a, shape_b = tuple(A.shape), tuple(B.shape)
    if len(shape_a) not in (2, 3) or len(shape_b) != len(shape_a):
        raise ValueError(f"A, B: expected 2-D (M, K) and (K, N) tensors, or 3-D with a leading "
                         f"batch dimension, got A {shape_a} and B {shape_b}")
    m, n = shape_a[-2], shape_b[-1]
    d_dtype = str(out.dtype if out is not None else (out_dtype or A.dtype)).replace("torch.", "")
    graph = _graph_for(epilogue, epilogue_args, out, m, n, d_dtype)
    given = sorted(set(graph.output_names) & set(epilogue_args))
    if given and not outputs_given:
        raise ValueError(f"epilogue_args: the torch op makes the epilogue's outputs; got "
                         f"{given} (call outside torch.compile on detached tensors to write "
                         f"into given outputs)")
    if out is None:
        dtype = out_dtype
        if dtype is None:
            spec = next(s for s in graph.output_specs if s[0] == graph.d_output)
            dtype = getattr(interop.torch(), _TORCH.get(spec[2].name, spec[2].name))
        out = interop.new_output(A, B, dtype)
    operands = _make_outputs(graph, epilogue_args, out, tuple(out.shape), out.device) \
        if interop.is_torch(out) else dict(epilogue_args)
    operands.pop("accum", None)
    return graph, out, operands


def gemm_with_epilogue(A, B, out, epilogue, epilogue_args, accumulator_type, out_dtype, stream,
                       outputs_given=True):
    from tilecraft import api

    graph, out, operands = outputs_for(A, B, out, epilogue, epilogue_args, out_dtype,
                                       outputs_given)
    shape_a, shape_b = tuple(A.shape), tuple(B.shape)
    if accumulator_type is None:
        accumulator_type = interop.default_accumulator(A)
    epilogue_arguments = api.arguments.EpilogueArguments(graph=graph, operands=operands)
    args = api.arguments.GemmArguments(A, B, out, accumulator_type, epilogue=epilogue_arguments)
    key = (_describe(A), _describe(B), _describe(out), graph.key, accumulator_type,
           tuple(sorted((k, _describe(v) if hasattr(v, "shape") else ("number",))
                        for k, v in operands.items())))
    with _lock:
        kernel = _kernels.get(key)
        if kernel is None:
            interop.refuse_first_call_in_capture(A)
            kernels = api.get_kernels(args)
            if not kernels:
                raise ValueError(f"epilogue: no kernel fuses this epilogue for A {shape_a} "
                                 f"{A.dtype}, B {shape_b} {B.dtype}, out {tuple(out.shape)} "
                                 f"{out.dtype}: custom epilogues run on SM90 kernels (TMA: "
                                 f"every tensor's rows and pointers 16-byte aligned, e.g. N a "
                                 f"multiple of 16 for an fp8 out) and on SM80 ones (f16, bf16 "
                                 f"or f32 out)")
            kernel = kernels[0]
            _kernels[key] = kernel
    if stream is None:
        stream = interop.torch_stream(A.device.index) if interop.is_torch(A) else None
    else:
        stream = interop.stream_int(stream)
    kernel.run(args, stream=stream)
    outputs = [out if name == graph.d_output else operands[name]
               for name in graph.output_names]
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def clear():
    """Drops the traced graphs and picked kernels (their kernels stay in the disk cache); returns
    how many kernels were dropped."""
    with _lock:
        dropped = len(_kernels)
        _graphs.clear()
        _kernels.clear()
    return dropped
