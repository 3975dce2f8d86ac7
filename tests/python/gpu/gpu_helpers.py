"""Shared machinery of the GPU suite: building operations from gpu_kernels.KERNELS, placing
logical matrices in every layout / form, and running one GemmCase end to end (fresh data,
poisoned D, launch, sync, float64 reference). The checks live in gpu_check.py.

torch, numpy and tilecraft are imported lazily so that this module (and every test module)
imports and collects on a machine without torch or a GPU.
"""

from dataclasses import dataclass

from gpu_kernels import KERNELS, SEED_TYPE, TORCH_TYPE

MODES = ("Gemm", "GemmSplitKParallel", "Batched", "Array")
# Where data, outputs and the float64 reference live; the two-GPU suite (tests/python/gpu_multi)
# sets "cuda:1" while cuda:0 stays the current device.
DEVICE = "cuda"
F16_MAX = 65504.0


def _torch():
    import torch

    return torch


# ---- operations -----------------------------------------------------------------------------

def build_operation(spec):
    """The GemmOperationUniversal of a KernelSpec, spelled as in the seed (cutlass.float16...)."""
    import tilecraft as cutlass

    def dt(name):
        return getattr(cutlass, SEED_TYPE[name])

    math_inst = cutlass.MathInstruction(list(spec.inst), dt(spec.element), dt(spec.element),
                                        dt(spec.acc), getattr(cutlass.OpClass, spec.opclass),
                                        getattr(cutlass.MathOperation, spec.math))
    tile = cutlass.TileDescription(list(spec.tile), spec.stages, list(spec.warps), math_inst)
    la, lb, lc = (getattr(cutlass, name) for name in spec.layout_names)
    A = cutlass.TensorDescription(dt(spec.element), la, spec.align_ab)
    B = cutlass.TensorDescription(dt(spec.element), lb, spec.align_ab)
    C = cutlass.TensorDescription(dt(spec.out), lc, spec.align_c)
    if spec.epilogue == "LinearCombination":
        epilogue = cutlass.LinearCombination(dt(spec.out), spec.align_c, dt(spec.acc),
                                             dt(spec.compute))
    elif spec.epilogue == "LinearCombinationClamp":
        epilogue = cutlass.LinearCombinationClamp(dt(spec.out), spec.align_c, dt(spec.acc),
                                                  dt(spec.compute))
    elif spec.epilogue == "FastLinearCombinationClamp":
        epilogue = cutlass.FastLinearCombinationClamp(dt(spec.out), spec.align_c)
    else:
        activation = getattr(cutlass, spec.activation)  # cutlass.relu, cutlass.gelu, ...
        epilogue = cutlass.LinearCombinationGeneric(activation(dt(spec.compute)), dt(spec.out),
                                                    spec.align_c, dt(spec.acc), dt(spec.compute))
    return cutlass.GemmOperationUniversal(arch=80, tile_description=tile, A=A, B=B, C=C,
                                          epilogue_functor=epilogue,
                                          swizzling_functor=getattr(cutlass, spec.swizzle))


# ---- data -----------------------------------------------------------------------------------

def torch_dtype(element):
    return getattr(_torch(), TORCH_TYPE[element])


def poison_for(element):
    return -77 if element in ("s8", "s32") else float("nan")


def random_values(shape, element, data, amax, gen):
    """Fresh random values, exactly representable in ``element``: small integers in
    [-amax, amax] ("int") or uniform(-1, 1) rounded to the element ("float")."""
    torch = _torch()
    if data == "int":
        x = torch.randint(-amax, amax + 1, shape, generator=gen, device=DEVICE)
    else:
        x = torch.rand(shape, generator=gen, device=DEVICE, dtype=torch.float64) * 2 - 1
    return x.to(torch_dtype(element))


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def _contiguous(x):
    if _is_torch(x):
        return x.contiguous()
    import numpy as np

    return np.ascontiguousarray(x)


def _full(like, shape, value):
    if _is_torch(like):
        return _torch().full(shape, value, dtype=like.dtype, device=like.device)
    import numpy as np

    return np.full(shape, value, dtype=like.dtype)


def pack_interleaved(x, layout):
    """Packs a logical (rows, cols) matrix into CUTLASS's interleaved<32> storage (1-D):
    ColumnMajorInterleaved<32>: offset(r, c) = (c // 32) * rows * 32 + r * 32 + c % 32
    RowMajorInterleaved<32>:    offset(r, c) = (r // 32) * cols * 32 + c * 32 + r % 32"""
    rows, cols = x.shape
    if layout == "ColumnMajorInterleaved32":
        return _contiguous(x.reshape(rows, cols // 32, 32).swapaxes(0, 1)).reshape(-1)
    return _contiguous(x.reshape(rows // 32, 32, cols).swapaxes(1, 2)).reshape(-1)


def unpack_interleaved(flat, layout, rows, cols):
    if layout == "ColumnMajorInterleaved32":
        return flat.reshape(cols // 32, rows, 32).swapaxes(0, 1).reshape(rows, cols)
    return flat.reshape(rows // 32, cols, 32).swapaxes(1, 2).reshape(rows, cols)


def interleaved_b_column_order(n):
    """Where column j of B goes in the B that CUTLASS's interleaved int8 GEMM reads: its
    warp-level loads take B "column-reordered" within each group of 32 columns
    (cutlass::reorder_column<32> in tools/util/host_reorder.h, which CUTLASS's interleaved
    testbed and PyCUTLASS's gemm testbed apply to B before the launch; the logical B is what
    the reference multiplies)."""
    return [(j // 32) * 32 + ((j % 8) // 2) * 8 + ((j % 32) // 8) * 2 + j % 2 for j in range(n)]


def reorder_interleaved_b(b):
    """reorder_column<32>: dest[:, order[j]] = b[:, j]."""
    order = interleaved_b_column_order(b.shape[-1])
    if _is_torch(b):
        dest = _torch().empty_like(b)
        dest[:, order] = b
        return dest
    import numpy as np

    dest = np.empty_like(b)
    dest[:, order] = b
    return dest


@dataclass
class Placed:
    """A logical (batch..., rows, cols) matrix stored in a layout and form."""

    passed: object          # what GemmArguments receives
    to_logical: object      # maps a tensor like ``passed`` to its logical (batch..., rows, cols)
    padding: object = None  # the elements of the allocation outside the matrix (padded form)


def place(x, layout, form="2d", pad=0, fill=None):
    """Stores logical ``x`` (torch or numpy, (rows, cols) or (batch, rows, cols)) as
    ``layout`` in ``form``: "2d" (2-D / 3-D strided), "flat" (1-D packed), "padded" (a leading
    dimension ``pad`` elements larger than needed, the padding set to ``fill``)."""
    rows, cols = x.shape[-2:]
    lead = tuple(x.shape[:-2])
    if layout in ("ColumnMajorInterleaved32", "RowMajorInterleaved32"):
        assert not lead and form in ("2d", "flat"), "interleaved operands are packed 1-D"
        return Placed(pack_interleaved(x, layout),
                      lambda t: unpack_interleaved(t, layout, rows, cols))
    column = layout == "ColumnMajor"
    if form == "flat":
        if column:
            flat = _contiguous(x.swapaxes(-1, -2)).reshape(-1)
            return Placed(flat, lambda t: t.reshape(*lead, cols, rows).swapaxes(-1, -2))
        return Placed(_contiguous(x).reshape(-1), lambda t: t.reshape(*lead, rows, cols))
    if form == "padded":
        assert pad > 0
        stored = x.swapaxes(-1, -2) if column else x          # (…, outer, inner)
        outer, inner = stored.shape[-2:]
        buffer = _full(x, lead + (outer, inner + pad), 0 if fill is None else fill)
        buffer[..., :inner] = stored
        view = buffer[..., :inner]
        passed = view.swapaxes(-1, -2) if column else view
        return Placed(passed, lambda t: t, buffer[..., inner:])
    if column:
        return Placed(_contiguous(x.swapaxes(-1, -2)).swapaxes(-1, -2), lambda t: t)
    return Placed(_contiguous(x), lambda t: t)


# ---- one GEMM, end to end -------------------------------------------------------------------

@dataclass
class GemmCase:
    key: str
    M: int
    N: int
    K: int
    alpha: float = 1.0
    beta: float = 0.0
    with_c: bool = True
    mode: str = "Gemm"
    split: int = 1
    batch: int = 1
    form: str = "2d"            # "2d" | "flat" | "padded" for every operand
    broadcast: str = ""         # operands stored once and repeated over the batch (stride 0)
    data: str = "int"           # "int" (small integers, exact) | "float" (uniform(-1, 1))
    amax: int = 3
    cmax: int = 3
    act_args: tuple = ()
    alias_cd: bool = False      # C and D are the same tensor
    framework: str = "torch"    # "torch" | "numpy" | "cupy"
    side_stream: bool = False   # launch on a fresh non-default stream of the framework
    note: str = ""

    def __str__(self):
        bits = [f"{self.key}: {self.mode} M={self.M} N={self.N} K={self.K}",
                f"alpha={self.alpha} beta={self.beta}" + ("" if self.with_c else " C=None")]
        if self.mode == "Gemm" and self.split > 1:
            bits.append(f"serial split-K {self.split}")
        if self.mode == "GemmSplitKParallel":
            bits.append(f"slices {self.split}")
        if self.batch > 1:
            bits.append(f"batch {self.batch}" + (f" broadcast {self.broadcast}"
                                                  if self.broadcast else ""))
        bits += [f"form {self.form}", f"data {self.data}(amax={self.amax}, cmax={self.cmax})",
                 self.framework]
        if self.act_args:
            bits.append(f"activation args {self.act_args}")
        if self.alias_cd:
            bits.append("D is C")
        if self.side_stream:
            bits.append("side stream")
        if self.note:
            bits.append(self.note)
        return ", ".join(bits)


def _arguments(op, case, A, B, C, D):
    import tilecraft as cutlass

    kwargs = dict(operation=op, problem_size=cutlass.gemm.GemmCoord(case.M, case.N, case.K),
                  A=A, B=B, C=C, D=D,
                  output_op=op.epilogue_type(case.alpha, case.beta, *case.act_args),
                  gemm_mode=getattr(cutlass.gemm.Mode, case.mode),
                  split_k_slices=case.split)
    if case.mode in ("Batched", "Array"):
        kwargs["batch"] = case.batch
    return cutlass.GemmArguments(**kwargs)


def _launch(op, arguments, case):
    """operation.run on the framework's current stream (a fresh side stream if asked). Returns
    the side stream, which the caller keeps alive until arguments.sync() has waited on it."""
    torch = _torch()
    if not case.side_stream:
        op.run(arguments)
        return None
    torch.cuda.synchronize(DEVICE)  # the data was made on torch's default stream
    if case.framework == "cupy":
        import cupy

        # cupy makes streams on its current device: DEVICE's, made current for the launch too.
        with cupy.cuda.Device(torch.device(DEVICE).index):
            stream = cupy.cuda.Stream(non_blocking=True)
            with stream:
                op.run(arguments)
    else:
        stream = torch.cuda.Stream(device=DEVICE)
        with torch.cuda.stream(stream):
            op.run(arguments)
    return stream


def run_case(ops, case, gen):
    """Runs ``case`` on fresh random data with a poisoned D; returns (got, ref, scale, D_pad),
    got and ref as float64 CUDA tensors of shape (batch..., M, N)."""
    torch = _torch()
    spec = KERNELS[case.key]
    op = ops.get(case.key)
    la, lb, lc = spec.layout_names
    batched = case.mode in ("Batched", "Array")
    lead = (case.batch,) if batched else ()

    def logical(name, rows, cols, element, amax):
        shape = (rows, cols) if name in case.broadcast else lead + (rows, cols)
        return random_values(shape, element, case.data, amax, gen)

    A = logical("A", case.M, case.K, spec.element, case.amax)
    B = logical("B", case.K, case.N, spec.element, case.amax)
    C = logical("C", case.M, case.N, spec.out, case.cmax) if case.with_c else None
    pad_ab, pad_c = 2 * spec.align_ab, 2 * spec.align_c
    nan_in = float("nan") if spec.element != "s8" else 127

    def put(x, layout, pad, fill, name):
        if case.framework == "numpy":
            x = x.cpu().numpy()
        placed = place(x, layout, case.form, pad, fill)
        if name in case.broadcast:  # one matrix repeated over the batch: batch stride 0
            placed.passed = placed.passed[None].expand(case.batch, *placed.passed.shape)
        return placed

    pA = put(A, la, pad_ab, nan_in, "A")   # padding of inputs is NaN: reading it shows
    pB = put(reorder_interleaved_b(B) if spec.interleaved else B, lb, pad_ab, nan_in, "B")
    pC = put(C, lc, pad_c, poison_for(spec.out), "C") if C is not None else None
    poison = torch.full(lead + (case.M, case.N), poison_for(spec.out),
                        dtype=torch_dtype(spec.out), device=DEVICE)
    pD = pC if case.alias_cd else put(poison, lc, pad_c, poison_for(spec.out), "D")
    c_in = None if C is None else C.clone()

    passed = [p.passed if p is not None else None for p in (pA, pB, pC, pD)]
    if case.framework == "cupy":
        import cupy

        passed = [None if t is None else cupy.from_dlpack(t) for t in passed]
    arguments = _arguments(op, case, *passed)
    stream = _launch(op, arguments, case)
    arguments.sync()
    del stream

    out = passed[3]
    if case.framework == "numpy":
        out = torch.from_numpy(out)
    elif case.framework == "cupy":
        out = pD.passed  # the same memory, seen from torch
    got = pD.to_logical(out).to(device=DEVICE, dtype=torch.float64)
    if got.dim() == 2 and batched:
        got = got.expand(case.batch, *got.shape)
    A64, B64 = A.double(), B.double()
    acc = torch.matmul(A64, B64)
    ref = case.alpha * acc
    scale = abs(case.alpha) * torch.matmul(A64.abs(), B64.abs())
    if c_in is not None and case.beta != 0:
        ref = ref + case.beta * c_in.double()
        scale = scale + abs(case.beta) * c_in.double().abs()
    if ref.dim() == 2 and batched:
        ref, scale = ref.expand_as(got), scale.expand_as(got)
    padding = pD.padding
    if padding is not None and case.framework == "numpy":
        padding = None
    return got, ref, scale, padding
