"""One-call ops: ``tilecraft.gemm(A, B)`` picks, compiles, tunes and runs; ``tilecraft.plan_gemm``
holds the pick for repeated calls.

Which kernel serves (``tuning=`` or ``TILECRAFT_TUNING``):

- a winner stored in the tuning cache for the problem's signature (device model, dtypes,
  layouts, alignments, epilogue, shape bucket) serves at once, in any process;
- ``"auto"`` (default): otherwise a kernel already compiled for the problem's family serves at
  once (or the ranked first pick is compiled), while the top ``max_candidates`` candidates tune
  on a background thread; the winner takes over once stored;
- ``"blocking"``: tuned before the first call returns; ``"force"``: tuned again;
  ``"off"``: the ranked first pick.

``plan.state`` says which kernel serves and why.
"""

import numbers

from tilecraft import _core, interop
from tilecraft.api.arguments import EpilogueArguments, GemmArguments
from tilecraft.tuning import check_tuning_options

_plans = {}


def _describe(name, tensor):
    """What a plan depends on in a tensor: shape, strides, dtype, device and pointer alignment."""
    if tensor is None:
        return None
    if interop.is_torch(tensor):
        return (tensor.shape, tensor.stride(), tensor.dtype, tensor.device, tensor.data_ptr() & 15)
    data = getattr(tensor, "data", None)
    if type(tensor).__module__.split(".")[0] == "cupy" and hasattr(data, "ptr"):
        return (tensor.shape, tensor.strides, tensor.dtype, tensor.device.id, data.ptr & 15)
    raise TypeError(f"{name}: expected a CUDA tensor (torch or cupy), got {_core.given(tensor)}")


def _pointer(tensor):
    if tensor is None:
        return 0
    if interop.is_torch(tensor):
        return tensor.data_ptr()
    return tensor.data.ptr


def _scale_key(name, scale):
    if scale is None:
        return None
    if isinstance(scale, numbers.Real) and not isinstance(scale, bool):
        return float(scale)
    return ("tensor", _describe(name, scale), _pointer(scale))




def _default_allow_tf32(A):
    if interop.is_torch(A) and interop.dtype_name(A) == "float32":
        return bool(interop.torch().backends.cuda.matmul.allow_tf32)
    return True


class GemmPlan:
    """The pick for one problem (shapes, strides, dtypes, device, scalars): ``plan(A, B, out)``
    runs it on tensors like those it was made for. ``state`` says which kernel serves and why;
    ``wait_for_tuning(timeout)`` waits for background tuning (the winner serves the next call)."""

    __slots__ = ("_native", "_key", "_out_dtype", "_device_index", "_torch")

    def __init__(self, native, key, out_dtype, device_index, is_torch):
        self._native = native
        self._key = key
        self._out_dtype = out_dtype
        self._device_index = device_index
        self._torch = is_torch

    @property
    def kernel_name(self):
        return self._native.kernel_name

    @property
    def state(self):
        """kernel_name, reason, tuned, tuning (in the background), tuning_error, calls."""
        return self._native.state

    @property
    def signature(self):
        return self._native.signature

    def wait_for_tuning(self, timeout=600.0):
        """Waits until background tuning for this plan has ended (True) or ``timeout`` seconds
        passed (False)."""
        return self._native.wait_for_tuning(float(timeout))

    def __call__(self, A, B, out=None, C=None, bias=None, stream=None):
        """Runs the plan's kernel on A, B (and C, bias) into out (new when None); returns out."""
        key = (_describe("A", A), _describe("B", B),
               None if out is None else _describe("out", out), _describe("C", C),
               _describe("bias", bias))
        if key != self._key[:5]:
            raise ValueError("plan: the tensors differ from those the plan was made for (shapes, "
                             "strides, dtypes, device or pointer alignment); make a new plan")
        return self._launch(A, B, out, C, bias, stream)

    def _launch(self, A, B, out, C, bias, stream):
        if out is None:
            out = interop.new_output(A, B, self._out_dtype)
        if stream is None:
            stream = (interop.torch_stream(self._device_index) if self._torch
                      else interop.cupy_stream(self._device_index))
        else:
            stream = interop.stream_int(stream)
        self._native.launch(_pointer(A), _pointer(B), _pointer(C), _pointer(out), _pointer(bias),
                            stream)
        return out

    def __repr__(self):
        return f"GemmPlan({self.kernel_name!r})"


def _make_plan(key, A, B, out, C, alpha, beta, bias, bias_per_row, activation, activation_args,
               accumulator_type, scale_a, scale_b, out_dtype, tuning, max_candidates,
               max_seconds, allow_tf32, use_fast_accum):
    check_tuning_options(tuning, max_candidates, max_seconds, allow_tf32)
    is_torch = interop.is_torch(A)
    if out is None:
        if not is_torch:
            raise ValueError("out: required for cupy tensors (torch tensors get a new one)")
        out = interop.new_output(A, B, out_dtype)
    if accumulator_type is None:
        accumulator_type = interop.default_accumulator(A)
    epilogue = EpilogueArguments(alpha=alpha, beta=beta, C=C, activation=activation,
                                 activation_args=tuple(activation_args), bias=bias,
                                 bias_per_row=bias_per_row, scale_a=scale_a, scale_b=scale_b)
    if not isinstance(use_fast_accum, bool):
        raise TypeError(f"use_fast_accum: expected True or False, got {_core.given(use_fast_accum)}")
    args = GemmArguments(A, B, out, accumulator_type, epilogue, use_fast_accum)
    if allow_tf32 is None:
        allow_tf32 = _default_allow_tf32(A)
    native = _core.tune.make_plan(args, tuning or "", max_candidates,
                                  None if max_seconds is None else float(max_seconds), allow_tf32)
    device_index = A.device.index if is_torch else A.device.id
    return GemmPlan(native, key, out.dtype if out_dtype is None else out_dtype, device_index,
                    is_torch)


def _key(A, B, out, C, alpha, beta, bias, bias_per_row, activation, activation_args,
         accumulator_type, scale_a, scale_b, out_dtype, tuning, max_candidates, max_seconds,
         allow_tf32, use_fast_accum):
    return (_describe("A", A), _describe("B", B),
            None if out is None else _describe("out", out), _describe("C", C),
            _describe("bias", bias), alpha, beta, bias_per_row, activation,
            tuple(activation_args), accumulator_type, _scale_key("scale_a", scale_a),
            _scale_key("scale_b", scale_b), out_dtype, tuning, max_candidates, max_seconds,
            _default_allow_tf32(A) if allow_tf32 is None else allow_tf32, use_fast_accum)


def plan_gemm(A, B, out=None, C=None, alpha=1.0, beta=0.0, bias=None, activation=None,
              accumulator_type=None, scale_a=None, scale_b=None, *, activation_args=(),
              bias_per_row=False, out_dtype=None, tuning=None, max_candidates=None,
              max_seconds=None, allow_tf32=None, use_fast_accum=False):
    """The GemmPlan ``gemm`` uses for these tensors and arguments (made on first use, then kept
    for the process). Arguments as for ``gemm``."""
    key = _key(A, B, out, C, alpha, beta, bias, bias_per_row, activation, activation_args,
               accumulator_type, scale_a, scale_b, out_dtype, tuning, max_candidates, max_seconds,
               allow_tf32, use_fast_accum)
    plan = _plans.get(key)
    if plan is None:
        interop.refuse_first_call_in_capture(A)
        plan = _make_plan(key, A, B, out, C, alpha, beta, bias, bias_per_row, activation,
                          activation_args, accumulator_type, scale_a, scale_b, out_dtype, tuning,
                          max_candidates, max_seconds, allow_tf32, use_fast_accum)
        _plans[key] = plan
    return plan


def gemm(A, B, out=None, C=None, alpha=1.0, beta=0.0, bias=None, activation=None,
         accumulator_type=None, scale_a=None, scale_b=None, *, activation_args=(),
         bias_per_row=False, out_dtype=None, tuning=None, max_candidates=None, max_seconds=None,
         allow_tf32=None, use_fast_accum=False, stream=None, epilogue=None,
         epilogue_args=None, verify=None):
    """``out = activation(alpha * scale_a * scale_b * (A @ B) + beta * C + bias)``; returns out.

    A (M, K) and B (K, N) CUDA tensors (torch or cupy), or both with a leading batch dimension;
    out is made when None (torch: int8 gives int32, fp8 gives bfloat16 unless ``out_dtype``
    says otherwise). dtypes: float16, bfloat16, float32 (tf32 tensor cores when ``allow_tf32``,
    default torch.backends.cuda.matmul.allow_tf32; else full f32), float64, int8, float8_e4m3fn
    and float8_e5m2 (``scale_a`` / ``scale_b``: per-tensor scales, floats or one-element float32
    tensors; ``use_fast_accum`` allows kernels that skip the f32 promotion, as in
    torch._scaled_mm). ``activation``: "relu", "gelu", "gelu_tanh", ... (``activation_args`` for
    leaky_relu's slope and clamp's bounds); ``bias``: N values (M with ``bias_per_row``).
    ``tuning``, ``max_candidates``, ``max_seconds``: see the module's documentation
    (defaults: TILECRAFT_TUNING, TILECRAFT_TUNING_CANDIDATES, TILECRAFT_TUNING_SECONDS).
    ``stream``: default the current stream of A's device.

    ``epilogue``: a custom epilogue, a function of the accumulator (or its graph from
    ``tilecraft.epilogue.trace``), run inside the GEMM kernel in place of the expression above;
    ``epilogue_args``: its inputs (tensors, numbers) and any outputs to write into, by the
    function's parameter and output names. ``out`` is its D output. Outputs not given are made
    (torch). Returns out when the epilogue has one output, else the tuple of its outputs (stores,
    then reductions, in the function's order). See ``tilecraft.epilogue_ops``.

    ``verify``: also compute a reference and raise ``tilecraft.verify.VerificationError`` on a
    mismatch (default: the ``TILECRAFT_VERIFY`` setting; see ``tilecraft.verify``).

    This is the call on the tensors as given; ``tilecraft.gemm`` (``tilecraft.calls.gemm``)
    takes the same arguments and goes through the torch op inside ``torch.compile`` and
    autograd."""
    from tilecraft import verify as verifying

    checked = verifying.wanted(verify)
    if epilogue is not None:
        if checked:
            verifying.refuse_epilogue(verify)
        from tilecraft.epilogue_ops import gemm_with_epilogue

        given = {"C": C is None, "alpha": alpha == 1.0, "beta": beta == 0.0, "bias": bias is None,
                 "activation": activation is None, "scale_a": scale_a is None,
                 "scale_b": scale_b is None, "activation_args": not tuple(activation_args)}
        for name, default in given.items():
            if not default:
                raise ValueError(f"{name}: with a custom epilogue, pass the epilogue's inputs in "
                                 f"epilogue_args by its parameter names")
        return gemm_with_epilogue(A, B, out, epilogue, epilogue_args, accumulator_type,
                                  out_dtype, stream)
    if epilogue_args is not None:
        raise ValueError("epilogue_args: given without an epilogue")
    plan = plan_gemm(A, B, out, C, alpha, beta, bias, activation, accumulator_type, scale_a,
                     scale_b, activation_args=activation_args, bias_per_row=bias_per_row,
                     out_dtype=out_dtype, tuning=tuning, max_candidates=max_candidates,
                     max_seconds=max_seconds, allow_tf32=allow_tf32,
                     use_fast_accum=use_fast_accum)
    if checked:
        verifying.refuse_in_capture(A)
    out = plan._launch(A, B, out, C, bias, stream)
    if checked:
        tf32 = interop.dtype_name(A) == "float32" and (
            _default_allow_tf32(A) if allow_tf32 is None else allow_tf32)
        verifying.check_gemm(A, B, out, C, alpha, beta, bias, interop.activation_name(activation),
                             tuple(activation_args), bias_per_row,
                             1.0 if scale_a is None else scale_a,
                             1.0 if scale_b is None else scale_b, tf32)
    return out


def clear_plans():
    """Drops the plans ``gemm``, ``plan_gemm`` and ``conv2d``'s GEMM route keep for the process
    (and the loaded kernels only they hold); their kernels stay compiled in the disk cache and a
    later call makes its plan again. Returns how many were dropped."""
    from tilecraft import epilogue_ops

    dropped = len(_plans) + epilogue_ops.clear()
    _plans.clear()
    return dropped


__all__ = ["GemmPlan", "clear_plans", "gemm", "plan_gemm"]
