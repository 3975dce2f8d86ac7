"""One convolution case end to end: the Conv2dOperation of a ConvSpec (spelled as in seed 002),
fresh random operands, a poisoned output, Conv2dArguments, run, sync, and the float64 reference
computed by torch's autograd on the logical NCHW tensors (fprop: the convolution; dgrad: the
gradient of the input; wgrad: the gradient of the filter), every element checked.

torch and tilecraft are imported lazily so that the module collects without them.
"""

from dataclasses import dataclass, field

import gpu_check
from conv_kernels import ALGORITHMS, SEED_TYPE, STRIDES, TORCH_TYPE

# Where data, outputs and the float64 reference live; the two-GPU suite (tests/python/gpu_multi)
# sets "cuda:1" while cuda:0 stays the current device.
DEVICE = "cuda"


def _torch():
    import torch

    return torch


def build_operation(spec):
    """The Conv2dOperation of a ConvSpec, spelled as in seed 002."""
    import tilecraft as cutlass

    def dt(name):
        return getattr(cutlass, SEED_TYPE[name])

    math_inst = cutlass.MathInstruction(list(spec.inst), dt(spec.element), dt(spec.element),
                                        dt(spec.acc), getattr(cutlass.OpClass, spec.opclass),
                                        getattr(cutlass.MathOperation, spec.math))
    if spec.arch == 90:
        tile = cutlass.TileDescription(
            list(spec.tile), spec.stages, None, math_inst, cluster_shape=list(spec.cluster),
            kernel_schedule=getattr(cutlass.KernelScheduleType, spec.schedule),
            tile_scheduler=getattr(cutlass.TileSchedulerType, spec.scheduler))
    else:
        tile = cutlass.TileDescription(list(spec.tile), spec.stages, list(spec.warps), math_inst)
    fusions = {"bias": "column", "element_bias": dt(spec.out)} if spec.bias else {}
    if spec.interleaved:
        la, lb, lc = cutlass.TensorNC32HW32, cutlass.TensorC32RSK32, cutlass.TensorNC32HW32
    elif spec.spatial_dims == 3:
        la = lb = lc = cutlass.TensorNDHWC
    else:
        la = lb = lc = cutlass.TensorNHWC
    A = cutlass.TensorDescription(dt(spec.element), la, spec.align_a)
    B = cutlass.TensorDescription(dt(spec.element), lb, spec.align_b)
    C = cutlass.TensorDescription(dt(spec.out), lc, spec.align_c)
    if spec.epilogue == "LinearCombination":
        epilogue = cutlass.LinearCombination(dt(spec.out), spec.align_c, dt(spec.acc),
                                             dt(spec.compute), **fusions)
    elif spec.epilogue == "LinearCombinationClamp":
        epilogue = cutlass.LinearCombinationClamp(dt(spec.out), spec.align_c, dt(spec.acc),
                                                  dt(spec.compute))
    elif spec.epilogue == "FastLinearCombinationClamp":
        epilogue = cutlass.FastLinearCombinationClamp(dt(spec.out), spec.align_c)
    else:
        activation = getattr(cutlass, spec.activation)
        epilogue = cutlass.LinearCombinationGeneric(activation(dt(spec.compute)), dt(spec.out),
                                                    spec.align_c, dt(spec.acc), dt(spec.compute),
                                                    **fusions)
    if spec.graph is not None:
        from conv_graphs import graph_of

        epilogue = graph_of(spec)
    make = cutlass.Conv3dOperation if spec.spatial_dims == 3 else cutlass.Conv2dOperation
    return make(
        getattr(cutlass.conv.Operator, spec.kind),
        getattr(cutlass.conv.IteratorAlgorithm, ALGORITHMS[spec.algorithm]), spec.arch, tile, A,
        B, C,
        getattr(cutlass.conv.StrideSupport, STRIDES[spec.stride]), epilogue,
        getattr(cutlass, spec.swizzle), group_mode=getattr(cutlass.conv.GroupMode,
                                                           spec.group_mode))


@dataclass(frozen=True)
class Shape:
    n: int
    h: int
    w: int
    c: int
    k: int
    r: int
    s: int
    pad: tuple = (0, 0, 0, 0)      # top, bottom, left, right
    stride: tuple = (1, 1)
    dilation: tuple = (1, 1)
    groups: int = 1
    # 3-D: (D, T, pad front, pad back, stride, dilation) of the depth; None for 2-D
    depth: tuple = None

    @property
    def z(self):
        d, t, front, back, stride, dil = self.depth
        return (d + front + back - dil * (t - 1) - 1) // stride + 1

    @property
    def p(self):
        return (self.h + self.pad[0] + self.pad[1] - self.dilation[0] * (self.r - 1) - 1) \
            // self.stride[0] + 1

    @property
    def q(self):
        return (self.w + self.pad[2] + self.pad[3] - self.dilation[1] * (self.s - 1) - 1) \
            // self.stride[1] + 1

    def __str__(self):
        return (f"N{self.n} H{self.h} W{self.w} C{self.c} K{self.k} R{self.r} S{self.s} "
                f"pad{self.pad} stride{self.stride} dil{self.dilation}"
                + (f" groups{self.groups}" if self.groups != 1 else "")
                + (f" depth(D, T, front, back, stride, dil)={self.depth}" if self.depth else ""))


@dataclass(frozen=True)
class ConvCase:
    key: str
    shape: Shape
    alpha: float = 1.0
    beta: float = 0.0
    c_form: str = "full"          # "full" | "none" (C=None) | "bias" (one value per channel)
    form: str = "flat"            # "flat" | "nhwc" (4-D in layout order) | "channels_last"
    mode: str = "cross_correlation"
    split_k: int = 1
    split_mode: str = "Serial"
    data: str = "int"             # "int": small integers (exact) | "float": uniform(-1, 1)
    act_args: tuple = field(default=())

    def __str__(self):
        extra = f" split {self.split_mode} x{self.split_k}" if self.split_k > 1 else ""
        return (f"{self.key} [{self.shape}] {self.mode} alpha={self.alpha} beta={self.beta} "
                f"C={self.c_form} {self.form} {self.data}{extra}")


def torch_dtype(element):
    return getattr(_torch(), TORCH_TYPE[element])


def _random(shape, element, data, amax, gen):
    torch = _torch()
    if data == "int":
        x = torch.randint(-amax, amax + 1, shape, generator=gen, device=DEVICE,
                          dtype=torch.float64)
    else:
        x = torch.rand(shape, generator=gen, device=DEVICE, dtype=torch.float64) * 2 - 1
    return x.to(torch_dtype(element))


def interleaved_k_order(k):
    """Where output channel j of the filter goes in the TensorC32RSK32 filter CUTLASS's
    interleaved int8 convolution reads (cutlass::reorder_convK<32>, which CUTLASS's interleaved
    testbed applies): the same permutation as reorder_column<32> of the implicit GEMM's B."""
    return [(j // 32) * 32 + ((j % 8) // 2) * 8 + ((j % 32) // 8) * 2 + j % 2 for j in range(k)]


def to_layout(t, role, spec, form):
    """The tensor Conv2dArguments receives for a logical NHWC / KRSC tensor ``t`` (4-D, in
    layout order): flat, 4-D, or a torch (N, C, H, W) channels_last view."""
    if spec.interleaved:
        n, h, w, c = t.shape
        if role == "filter":   # (K, R, S, C) -> (C/32, R, S, K', 32), K reordered
            order = interleaved_k_order(n)
            reordered = _torch().empty_like(t)
            reordered[order] = t
            return reordered.view(n, h, w, c // 32, 32).permute(3, 1, 2, 0, 4).contiguous() \
                .flatten()
        return t.view(n, h, w, c // 32, 32).permute(0, 3, 1, 2, 4).contiguous().flatten()
    t = t.contiguous()
    if form == "flat":
        return t.flatten()
    if form == "nhwc":
        return t
    if t.dim() == 5:
        return t.permute(0, 4, 1, 2, 3)   # (N, C, D, H, W) view, channels-last-3d strides
    return t.permute(0, 3, 1, 2)   # (N, C, H, W) view with channels-last strides


def from_layout(passed, spec, extent, form):
    """D (as passed to Conv2dArguments) back as a logical NHWC (NDHWC) tensor."""
    if len(extent) == 5:
        if form == "channels_last":
            return passed.permute(0, 2, 3, 4, 1)
        return passed.reshape(extent)
    n, h, w, c = extent
    if spec.interleaved:
        return passed.reshape(n, c // 32, h, w, 32).permute(0, 2, 3, 1, 4).reshape(n, h, w, c)
    if form == "channels_last":
        return passed.permute(0, 2, 3, 1)
    return passed.reshape(n, h, w, c)


def reference(kind, x, w, dy, shape, mode):
    """float64 fprop output, input gradient (dgrad) or filter gradient (wgrad), as logical
    NHWC / KRSC tensors (NDHWC / KTRSC in 3-D); x, w and dy are such tensors (the one a kind does
    not read may be None)."""
    torch = _torch()
    F = torch.nn.functional
    x_ext, w_ext, _ = extents(None, shape)
    if x is None:
        x = torch.zeros(x_ext, dtype=torch.float64, device=DEVICE)
    if w is None:
        w = torch.zeros(w_ext, dtype=torch.float64, device=DEVICE)
    three_d = shape.depth is not None
    to_torch = (0, 4, 1, 2, 3) if three_d else (0, 3, 1, 2)
    to_layout_order = (0, 2, 3, 4, 1) if three_d else (0, 2, 3, 1)
    x64 = x.double().permute(*to_torch).clone().requires_grad_(kind == "dgrad")
    w64 = w.double().permute(*to_torch).clone().requires_grad_(kind == "wgrad")
    top, bottom, left, right = shape.pad
    spatial = (-1, -2, -3) if three_d else (-1, -2)
    filt = w64.flip(*spatial) if mode == "convolution" else w64
    if three_d:
        _, _, front, back, stride_d, dil_d = shape.depth
        y = F.conv3d(F.pad(x64, (left, right, top, bottom, front, back)), filt,
                     stride=(stride_d,) + tuple(shape.stride),
                     dilation=(dil_d,) + tuple(shape.dilation), groups=shape.groups)
    else:
        y = F.conv2d(F.pad(x64, (left, right, top, bottom)), filt, stride=shape.stride,
                     dilation=shape.dilation, groups=shape.groups)
    if kind == "fprop":
        return y.permute(*to_layout_order).detach()
    (grad,) = torch.autograd.grad(y, x64 if kind == "dgrad" else w64,
                                  dy.double().permute(*to_torch))
    return grad.permute(*to_layout_order).detach()


def extents(spec, shape):
    """(A, B, D) extents of a kind in layout order; with spec None, (x, w, y)."""
    x = (shape.n, shape.h, shape.w, shape.c)
    w = (shape.k, shape.r, shape.s, shape.c // shape.groups)
    y = (shape.n, shape.p, shape.q, shape.k)
    if shape.depth is not None:
        d, t = shape.depth[0], shape.depth[1]
        x = (shape.n, d, shape.h, shape.w, shape.c)
        w = (shape.k, t, shape.r, shape.s, shape.c // shape.groups)
        y = (shape.n, shape.z, shape.p, shape.q, shape.k)
    if spec is None:
        return x, w, y
    return {"fprop": (x, w, y), "dgrad": (y, w, x), "wgrad": (y, x, w)}[spec.kind]


def amax_of(spec, shape):
    """Small integers keep every sum exact: f16 accumulation needs |sum| <= 2048."""
    if spec.acc == "f16":
        return 1
    return 2 if spec.element in ("s8",) else 3


def problem_size(case, shape):
    import tilecraft as cutlass

    if shape.depth is not None:
        d, t, front, back, stride_d, dil_d = shape.depth
        return cutlass.conv.Conv3dProblemSize(
            (shape.n, d, shape.h, shape.w, shape.c),
            (shape.k, t, shape.r, shape.s, shape.c // shape.groups),
            (front, back) + tuple(shape.pad), (stride_d,) + tuple(shape.stride),
            (dil_d,) + tuple(shape.dilation), getattr(cutlass.conv.Mode, case.mode),
            case.split_k, shape.groups)
    return cutlass.conv.Conv2dProblemSize(
        cutlass.Tensor4DCoord(shape.n, shape.h, shape.w, shape.c),
        cutlass.Tensor4DCoord(shape.k, shape.r, shape.s, shape.c // shape.groups),
        cutlass.Tensor4DCoord(*shape.pad), cutlass.MatrixCoord(*shape.stride),
        cutlass.MatrixCoord(*shape.dilation), getattr(cutlass.conv.Mode, case.mode),
        case.split_k, shape.groups)


def run_case(ops, case, gen):
    """Runs one case; returns (got, pre-activation float64 reference, error scale)."""
    import tilecraft as cutlass

    torch = _torch()
    from conv_kernels import KERNELS

    spec = KERNELS[case.key]
    shape = case.shape
    op = ops.get(case.key)
    a_ext, b_ext, d_ext = extents(spec, shape)
    amax = amax_of(spec, shape)
    a = _random(a_ext, spec.element, case.data, amax, gen)
    b = _random(b_ext, spec.element, case.data, amax, gen)
    channels = d_ext[-1]
    if case.c_form == "full":
        c = _random(d_ext, spec.out, case.data, amax, gen)
    elif case.c_form == "bias":
        c = _random((channels,), spec.out, case.data, amax, gen)
    else:
        c = None
    bias = _random((channels,), spec.out, case.data, amax, gen) if spec.bias else None
    poison = -77 if spec.out in ("s8", "s32") else float("nan")
    d = torch.full(d_ext, poison, dtype=torch_dtype(spec.out), device=DEVICE)
    passed_d = to_layout(d, "output", spec, case.form)
    passed_c = None
    if c is not None:
        passed_c = c if case.c_form == "bias" else to_layout(c, "output", spec, case.form)
    roles = {"fprop": ("act", "filter"), "dgrad": ("act", "filter"), "wgrad": ("act", "act")}
    passed_a = to_layout(a, roles[spec.kind][0], spec, case.form)
    passed_b = to_layout(b, roles[spec.kind][1], spec, case.form)
    output_op = op.epilogue_type(*([case.alpha, case.beta] + list(case.act_args)))
    args = cutlass.Conv2dArguments(
        op, problem_size(case, shape), passed_a, passed_b, passed_c, passed_d, output_op,
        getattr(cutlass.conv.SplitKMode, case.split_mode), case.split_k, bias=bias)
    op.run(args)
    args.sync()
    got = from_layout(passed_d, spec, d_ext, case.form).double()

    x, w, dy = {"fprop": (a, b, None), "dgrad": (None, b, a), "wgrad": (b, None, a)}[spec.kind]
    acc = reference(spec.kind, x, w, dy, shape, case.mode)
    abs_acc = reference(spec.kind, *(t if t is None else t.double().abs() for t in (x, w, dy)),
                        shape, case.mode)
    if c is None:
        c64 = torch.zeros_like(acc)
    else:
        c64 = c.double().expand_as(acc) if case.c_form == "bias" else c.double()
    pre = case.alpha * acc + case.beta * c64
    scale = abs(case.alpha) * abs_acc + abs(case.beta) * c64.abs()
    if bias is not None:
        pre = pre + bias.double()
        scale = scale + bias.double().abs()
    del args
    return got, pre, scale


def check_case(ops, case, gen, seed_note=""):
    from conv_kernels import KERNELS

    spec = KERNELS[case.key]
    got, pre, scale = run_case(ops, case, gen)
    what = f"{case} {seed_note}".strip()
    want = gpu_check.expected_output(spec, case, pre)
    out_atol, out_rtol = gpu_check.OUT_EPS.get(spec.out, (0.0, 0.0))
    if case.data == "float":
        rtol = gpu_check.float_data_rtol(spec, shape_k(case.shape, spec.kind))
        tol = rtol * scale + out_rtol * want.abs() + out_atol
        gpu_check.assert_within(got, want, tol, what)
    elif spec.activation in gpu_check.ACT_TOL_F32:
        table = gpu_check.ACT_TOL_F64 if spec.compute == "f64" else gpu_check.ACT_TOL_F32
        atol, rtol = table[spec.activation]
        tol = atol + out_atol + (rtol + out_rtol) * want.abs()
        gpu_check.assert_within(got, want, tol, what)
    else:
        gpu_check.assert_exact(got, gpu_check.round_to_output(spec, want), what)
    return got


def shape_k(shape, kind):
    """The implicit GEMM's K."""
    t, z = (shape.depth[1], shape.z) if shape.depth else (1, 1)
    if kind == "fprop":
        return shape.c // shape.groups * t * shape.r * shape.s
    if kind == "dgrad":
        return shape.k * t * shape.r * shape.s
    return shape.n * z * shape.p * shape.q
