"""Convolutions (tilecraft's SM80 CUTLASS 2.x and SM90 CUTLASS 3.x implicit-GEMM kernels, and
``tilecraft.conv2d``) beside cuDNN through torch (``cudnn.benchmark`` on, channels-last tensors),
in the same process on the same tensors.

  python bench/bench_conv.py [--set resnet50|unet|vgg16|densenet121|yolov3 ...]
                             [--kind fprop|dgrad|wgrad|fused ...]
                             [--dtype f16|bf16 ...] [--batch 1 --batch 32 ...] [--no-sm90]
                             [--no-one-call] [--one-call-tuning off|auto|blocking] [--json FILE]

Sets:
  resnet50  the ResNet-50 layers of shared/HOPPER-NOTES.md (N, C, H, W, K, R, S, stride, pad)
  unet      layers of a latent-diffusion UNet at a 32x32 latent (320/640/1280 channels, the 4-
            channel input and output convolutions, a stride-2 downsampling), batches 1, 32 and
            128 (``--batch`` to choose)
  vgg16     VGG-16's 3x3 layers at 224x224, N16 (the 3-channel first layer, 64 to 512 channels)
  densenet121
            DenseNet-121's dense-layer convolutions at 224x224, N32: the 3x3 128 -> 32 (growth
            rate) layer of each block, 1x1 bottlenecks to 128 and a transition 1x1
  yolov3    Darknet-53 (YOLOv3) at 416x416, N16: the 3-channel first layer, the stride-2
            downsampling 3x3 layers and the residual units' 1x1 / 3x3 pairs

Kinds: fprop (y = conv(x, w)), dgrad (dx from dy and w), wgrad (dw from dy and x; SM80 kernels
also with serial and parallel split-K, up to 128 slices), fused (y = relu(conv(x, w) + bias): our
one kernel, the bias a per-channel C on SM80 and the epilogue's bias on SM90, against torch's
``relu(conv2d(x, w, bias))``).

tilecraft side: for each problem, every candidate of the kind (SM80 tile shapes; SM90 tiles,
clusters and stage counts where TMA can take the layer: channels multiples of 8, dgrad of unit
stride; the optimized iterators; a 3-channel image zero-padded to 4 or 8 channels for the SM80
kernels and to 8 for the SM90 ones (16-byte TMA accesses), the padding copy of x timed and added
to those candidates' times (weights are padded once, ahead of time: not charged);
``tilecraft.conv2d`` for 1x1 fprop and fused layers, which it runs as a GEMM) is compiled up front, checked against cuDNN's output (max |ours - cuDNN| /
max |cuDNN| <= 1e-2) and timed; the table gives the fastest and the ratio cuDNN time / ours
(above 1: we are faster), and the geometric mean per kind and dtype; ``--json`` keeps every
candidate's time. Timing: ``tilecraft.profiling.Timer`` (median of launches, each after a write
of twice the L2 size and a 0.2 ms device spin, so host dispatch is not counted on either side;
both sides measured twice, the faster kept). Without a usable GPU the script says why and
exits 0.
"""

import argparse
import json
import math
import sys
import time

RESNET50 = [  # (N, C, H, W, K, R, S, stride, pad)
    (32, 64, 56, 56, 64, 3, 3, 1, 1), (32, 256, 56, 56, 64, 1, 1, 1, 0),
    (32, 128, 28, 28, 128, 3, 3, 1, 1), (32, 256, 14, 14, 256, 3, 3, 1, 1),
    (32, 512, 7, 7, 512, 3, 3, 1, 1), (32, 64, 56, 56, 256, 1, 1, 1, 0),
    (128, 3, 224, 224, 64, 7, 7, 2, 3),
]
UNET = [  # (C, H, W, K, R, S, stride, pad) at batch N
    (4, 32, 32, 320, 3, 3, 1, 1), (320, 32, 32, 320, 3, 3, 1, 1), (320, 32, 32, 320, 3, 3, 2, 1),
    (640, 16, 16, 640, 3, 3, 1, 1), (1280, 8, 8, 1280, 3, 3, 1, 1), (320, 32, 32, 4, 3, 3, 1, 1),
]
VGG16 = [  # (N, C, H, W, K, R, S, stride, pad)
    (16, 3, 224, 224, 64, 3, 3, 1, 1), (16, 64, 224, 224, 64, 3, 3, 1, 1),
    (16, 64, 112, 112, 128, 3, 3, 1, 1), (16, 128, 112, 112, 128, 3, 3, 1, 1),
    (16, 256, 56, 56, 256, 3, 3, 1, 1), (16, 512, 28, 28, 512, 3, 3, 1, 1),
    (16, 512, 14, 14, 512, 3, 3, 1, 1),
]
DENSENET121 = [
    (32, 128, 56, 56, 32, 3, 3, 1, 1), (32, 128, 28, 28, 32, 3, 3, 1, 1),
    (32, 128, 14, 14, 32, 3, 3, 1, 1), (32, 128, 7, 7, 32, 3, 3, 1, 1),
    (32, 224, 56, 56, 128, 1, 1, 1, 0), (32, 480, 28, 28, 128, 1, 1, 1, 0),
    (32, 992, 14, 14, 128, 1, 1, 1, 0), (32, 512, 28, 28, 256, 1, 1, 1, 0),
]
YOLOV3 = [
    (16, 3, 416, 416, 32, 3, 3, 1, 1), (16, 32, 416, 416, 64, 3, 3, 2, 1),
    (16, 64, 208, 208, 32, 1, 1, 1, 0), (16, 32, 208, 208, 64, 3, 3, 1, 1),
    (16, 128, 104, 104, 256, 3, 3, 2, 1), (16, 256, 52, 52, 128, 1, 1, 1, 0),
    (16, 128, 52, 52, 256, 3, 3, 1, 1), (16, 512, 26, 26, 256, 1, 1, 1, 0),
    (16, 256, 26, 26, 512, 3, 3, 1, 1), (16, 512, 13, 13, 1024, 3, 3, 1, 1),
]
FIXED_BATCH_SETS = {"resnet50": RESNET50, "vgg16": VGG16, "densenet121": DENSENET121,
                    "yolov3": YOLOV3}
# SM80 tensor-op tiles: (threadblock, stages, warps)
TILES = [((128, 128, 32), 3, (2, 2, 1)), ((256, 128, 32), 3, (4, 2, 1)),
         ((128, 256, 32), 3, (2, 4, 1)), ((128, 64, 32), 4, (2, 2, 1)),
         ((64, 64, 64), 4, (2, 2, 1))]
# Layers of fewer than 8 channels on a side (a 3-channel image, a 4-channel latent): these only.
SMALL_TILES = [TILES[0], TILES[3], TILES[4], ((256, 64, 32), 3, (4, 1, 1)),
               ((128, 64, 64), 3, (2, 2, 1))]
# SM90 (CUTLASS 3.x ConvUniversal, TmaWarpSpecialized: one consumer warpgroup, not persistent):
# (tile, cluster, stages; 0 = as many as shared memory holds). Fewer stages let two CTAs share an
# SM, so one CTA's epilogue overlaps the other's main loop (CUTLASS has no persistent conv kernel).
# TMA im2col needs channel counts that are multiples of 8 (16 bytes); dgrad unit strides.
SM90_TILES = [((128, 128, 64), (1, 1, 1), 0), ((128, 128, 64), (2, 1, 1), 0),
              ((128, 128, 64), (1, 1, 1), 3), ((128, 64, 64), (1, 1, 1), 0),
              ((128, 64, 64), (1, 1, 1), 4), ((64, 128, 64), (1, 1, 1), 0)]
# tilecraft's persistent SM90 convolutions (jit/sm90_conv_persistent.cuh; --sm90 adds them):
# CUTLASS's cooperative and ping-pong GEMM kernels over the conv mainloop, for fprop, fused and
# unit-stride dgrad; for wgrad the cooperative kernel on the stream-K tile scheduler (split-K
# slices, or 1: CUTLASS's stream-K decomposition) and ping-pong, whose tile N must divide C.
COOP, PINGPONG = "TmaWarpSpecializedCooperative", "TmaWarpSpecializedPingpong"
SM90_PERSISTENT_TILES = [((128, 128, 64), (1, 1, 1), 0, COOP),
                         ((256, 128, 64), (1, 1, 1), 0, COOP),
                         ((128, 256, 64), (1, 1, 1), 0, COOP),
                         ((128, 128, 64), (2, 1, 1), 0, COOP),
                         ((64, 128, 64), (1, 1, 1), 0, PINGPONG),
                         ((64, 256, 64), (1, 1, 1), 0, PINGPONG)]
SM90_PERSISTENT_WGRAD_TILES = [((128, 128, 64), (1, 1, 1), 0, COOP, "StreamK"),
                               ((128, 64, 64), (1, 1, 1), 0, COOP, "StreamK"),
                               ((256, 64, 64), (1, 1, 1), 0, COOP, "StreamK"),
                               ((128, 128, 64), (2, 1, 1), 0, COOP, "StreamK"),
                               ((64, 128, 64), (1, 1, 1), 0, PINGPONG, "Persistent"),
                               ((64, 64, 64), (1, 1, 1), 0, PINGPONG, "Persistent")]


def wgrad_splits(layer, tile):
    """Split-K slice counts worth trying for an SM80 wgrad: powers of two while every slice keeps
    at least 1024 of the implicit GEMM's K (N*P*Q), the grid stays within 16 waves of CTAs and the
    count within 128."""
    gemm_k = layer.n * layer.p * layer.q
    ctas = math.ceil(layer.k / tile[0]) * math.ceil(layer.c_kernel * layer.r * layer.s / tile[1])
    splits = [1]
    while (splits[-1] < 128 and gemm_k // (splits[-1] * 2) >= 1024 and
           ctas * splits[-1] * 2 <= 16 * 132):
        splits.append(splits[-1] * 2)
    return splits
TOLERANCE = 1e-2


def skip_reason():
    try:
        import torch
    except Exception as error:  # noqa: BLE001
        return f"torch is not importable ({type(error).__name__}: {error})"
    try:
        import tilecraft
    except Exception as error:  # noqa: BLE001
        return f"tilecraft is not importable ({type(error).__name__}: {error})"
    reason = tilecraft._core.cuda_device_available()
    if reason is not None:
        return reason
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


class Layer:
    def __init__(self, set_name, n, c, h, w, k, r, s, stride, pad):
        self.set, self.n, self.c, self.h, self.w, self.k, self.r, self.s = (set_name, n, c, h, w,
                                                                            k, r, s)
        self.stride, self.pad = stride, pad
        self.p = (h + 2 * pad - r) // stride + 1
        self.q = (w + 2 * pad - s) // stride + 1

    @property
    def c_kernel(self):
        """Channels the kernel sees: 3-channel images are padded to 4 (fixed_channels)."""
        return 4 if self.c < 4 else self.c

    @property
    def flops(self):
        return 2.0 * self.n * self.p * self.q * self.k * self.c * self.r * self.s

    @property
    def label(self):
        return (f"N{self.n} C{self.c} {self.h}x{self.w} K{self.k} {self.r}x{self.s} "
                f"s{self.stride} p{self.pad}")


def layers_of(sets, batches):
    out = []
    for name, rows in FIXED_BATCH_SETS.items():
        if name in sets:
            out += [Layer(name, *row) for row in rows]
    if "unet" in sets:
        for n in batches:
            out += [Layer("unet", n, *row) for row in UNET]
    return out


def sm90_applies(kind, layer):
    return layer.c % 8 == 0 and layer.k % 8 == 0 and (kind != "dgrad" or layer.stride == 1)


def make_op(kind, dtype, tile, layer, fused=False, arch=80, c_pad=None):
    import tilecraft as cutlass

    el = {"f16": cutlass.float16, "bf16": cutlass.bfloat16}[dtype]
    if arch == 90:
        shape, cluster, stages = tile[:3]
        schedule = tile[3] if len(tile) > 3 else "TmaWarpSpecialized"
        scheduler = tile[4] if len(tile) > 4 else "Persistent"
        math_inst = cutlass.MathInstruction([64, shape[1], 16], el, el, cutlass.float32,
                                            cutlass.OpClass.TensorOp,
                                            cutlass.MathOperation.multiply_add)
        tile_desc = cutlass.TileDescription(
            list(shape), stages, None, math_inst, cluster_shape=list(cluster),
            kernel_schedule=getattr(cutlass.KernelScheduleType, schedule),
            tile_scheduler=getattr(cutlass.TileSchedulerType, scheduler))
    else:
        shape, stages, warps = tile
        math_inst = cutlass.MathInstruction([16, 8, 16], el, el, cutlass.float32,
                                            cutlass.OpClass.TensorOp,
                                            cutlass.MathOperation.multiply_add)
        tile_desc = cutlass.TileDescription(list(shape), stages, list(warps), math_inst)
    few = kind == "fprop" and layer.c < 8 and arch == 80  # SM90: TMA im2col of the padded image
    c, k = c_pad or layer.c_kernel, layer.k
    contiguous = {"fprop": (c, c, k), "dgrad": (k, c, c), "wgrad": (k, c, c)}[kind]
    align_a, align_b, align_c = (min(8, ch & -ch) for ch in contiguous)
    A = cutlass.TensorDescription(el, cutlass.TensorNHWC, align_a)
    B = cutlass.TensorDescription(el, cutlass.TensorNHWC, align_b)
    C = cutlass.TensorDescription(el, cutlass.TensorNHWC, align_c)
    if fused and arch == 90:   # the bias rides in the epilogue, not in C
        epilogue = cutlass.LinearCombinationGeneric(cutlass.relu(cutlass.float32), el, align_c,
                                                    cutlass.float32, cutlass.float32,
                                                    bias="column", element_bias=el)
    elif fused:
        epilogue = cutlass.LinearCombinationGeneric(cutlass.relu(cutlass.float32), el, align_c,
                                                    cutlass.float32, cutlass.float32)
    else:
        epilogue = cutlass.LinearCombination(el, align_c, cutlass.float32, cutlass.float32)
    algorithm = cutlass.conv.IteratorAlgorithm.fixed_channels if few else \
        cutlass.conv.IteratorAlgorithm.optimized
    stride = cutlass.conv.StrideSupport.Unity if (kind == "dgrad" and layer.stride == 1) else \
        cutlass.conv.StrideSupport.Strided
    conv_kind = getattr(cutlass.conv.Operator, kind)
    return cutlass.Conv2dOperation(conv_kind, algorithm, arch, tile_desc, A, B, C, stride, epilogue,
                                   cutlass.IdentitySwizzle1)


def tensors(layer, dtype, seed):
    import torch

    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    dt = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    cl = torch.channels_last

    def rnd(*shape):
        return (torch.rand(*shape, generator=g, device="cuda") * 2 - 1).to(dt) \
            .contiguous(memory_format=cl)

    x = rnd(layer.n, layer.c, layer.h, layer.w)
    w = rnd(layer.k, layer.c, layer.r, layer.s)
    dy = rnd(layer.n, layer.k, layer.p, layer.q)
    bias = (torch.rand(layer.k, generator=g, device="cuda") * 2 - 1).to(dt)
    return x, w, dy, bias


def pad_channels(t, c):
    """A channels-last copy of t with its channels zero-padded to c (3-channel images)."""
    import torch

    if t.shape[1] == c:
        return t
    out = torch.zeros((t.shape[0], c, *t.shape[2:]), dtype=t.dtype, device=t.device) \
        .contiguous(memory_format=torch.channels_last)
    out[:, :t.shape[1]] = t
    return out


def cudnn_call(kind, layer, x, w, dy, bias):
    import torch

    F = torch.nn.functional
    stride, pad = (layer.stride,) * 2, (layer.pad,) * 2
    if kind == "fprop":
        return lambda: F.conv2d(x, w, None, stride, pad)
    if kind == "fused":
        return lambda: torch.relu(F.conv2d(x, w, bias, stride, pad))
    mask = [kind == "dgrad", kind == "wgrad", False]
    index = 0 if kind == "dgrad" else 1

    def backward():
        return torch.ops.aten.convolution_backward(dy, x, w, None, stride, pad, (1, 1), False,
                                                   (0, 0), 1, mask)[index]
    return backward


def kernel_channels(op, layer):
    """Channels op reads: a fixed_channels kernel exactly its access size (the image is padded to
    it), any other the layer's (3-channel images padded to 4)."""
    import tilecraft as cutlass

    if op.iterator_algorithm == cutlass.conv.IteratorAlgorithm.fixed_channels:
        return op.A.alignment
    if op.arch == 90 and layer.c % 8:  # TMA reads 16 bytes: the image padded to 8 channels
        return 8
    return layer.c_kernel


def problem_size(layer, split=1, c=None):
    import tilecraft as cutlass

    p, c = layer.pad, c or layer.c_kernel
    return cutlass.conv.Conv2dProblemSize(
        cutlass.Tensor4DCoord(layer.n, layer.h, layer.w, c),
        cutlass.Tensor4DCoord(layer.k, layer.r, layer.s, c),
        cutlass.Tensor4DCoord(p, p, p, p), cutlass.MatrixCoord(layer.stride, layer.stride),
        cutlass.MatrixCoord(1, 1), cutlass.conv.Mode.cross_correlation, split, 1)


def our_arguments(kind, op, layer, x, w, dy, bias, out, split=1, parallel=False):
    import tilecraft as cutlass

    mode = cutlass.conv.SplitKMode.Parallel if parallel else cutlass.conv.SplitKMode.Serial
    c_kernel = kernel_channels(op, layer) if kind in ("fprop", "fused") else layer.c_kernel
    xk, wk = pad_channels(x, c_kernel), pad_channels(w, c_kernel)
    epilogue_bias = None
    if kind in ("fprop", "fused"):
        a, b, c = xk, wk, (bias if kind == "fused" else None)
        if kind == "fused" and op.arch == 90:
            c, epilogue_bias = None, bias
    elif kind == "dgrad":
        a, b, c = dy, wk, None
    else:
        a, b, c = dy, xk, None
    beta = 1.0 if c is not None else 0.0
    return cutlass.Conv2dArguments(op, problem_size(layer, split, c_kernel), a, b, c, out,
                                   op.epilogue_type(1.0, beta), mode, split, bias=epilogue_bias)


class OneCallConv:
    """``tilecraft.conv2d`` as a candidate beside the Conv2dOperation kernels: a 1x1, unit-stride,
    unpadded layer runs there as a GEMM (``tilecraft.gemm``'s pick; ``--one-call-tuning``)."""

    arch = "conv2d"
    tile_description = None

    def __init__(self, kind, tuning):
        self.kind, self.tuning, self.kernel = kind, tuning, "?"

    @staticmethod
    def applies(kind, layer):
        return (kind in ("fprop", "fused") and layer.r == layer.s == 1 and layer.stride == 1 and
                layer.pad == 0)

    def prepare(self, x, w, bias, out):
        """The call to time, made once here (its first call compiles or tunes)."""
        import tilecraft

        fused = self.kind == "fused"

        def call():
            tilecraft.conv2d(x, w, bias=bias if fused else None,
                             activation="relu" if fused else None, out=out, tuning=self.tuning)
        call()
        self.kernel = tilecraft.conv_ops.last_conv_pick()[0]
        return call

    def run(self, call):
        call()

    def procedural_name(self):
        return f"tilecraft.conv2d -> {self.kernel}"


def relative_error(got, want):
    g, w = got.float(), want.float()
    return float((g - w).abs().max() / w.abs().max().clamp_min(1e-30))


def describe_candidates(args):
    """[(layer, kind, dtype, candidates)] and {name: operation} of every candidate kernel."""
    work = []
    ops = {}
    for layer in layers_of(args.set, args.batch):
        for kind in args.kind:
            for dtype in args.dtype:
                op_kind = "fprop" if kind == "fused" else kind
                cands = []
                small = min(layer.c_kernel, layer.k) < 8
                tiles = [(t, 80) for t in (SMALL_TILES if small else TILES)]
                padded_sm90 = op_kind == "fprop" and layer.c < 8 and layer.k % 8 == 0
                if args.sm90 and (sm90_applies(op_kind, layer) or padded_sm90):
                    tiles += [(t, 90) for t in SM90_TILES]
                    persistent = (SM90_PERSISTENT_WGRAD_TILES if op_kind == "wgrad" else
                                  SM90_PERSISTENT_TILES)
                    tiles += [(t, 90) for t in persistent]
                pads = (None,)
                if op_kind == "fprop" and layer.c < 8:  # fixed_channels reads 4 or 8 at a time
                    pads = (None, 8)
                for (tile, arch), c_pad in ((t, c) for t in tiles for c in pads):
                    if arch == 90 and (c_pad is None) == padded_sm90:  # SM90: 8 channels
                        continue
                    try:
                        op = make_op(op_kind, dtype, tile, layer, fused=kind == "fused",
                                     arch=arch, c_pad=c_pad)
                    except Exception as error:  # noqa: BLE001 - a tile the rules refuse
                        print(f"  ({layer.label} {kind} {dtype} {tile[0]}: {error})")
                        continue
                    ops.setdefault(op.procedural_name(), op)
                    cands.append(ops[op.procedural_name()])
                if args.one_call and OneCallConv.applies(kind, layer):
                    cands.append(OneCallConv(kind, args.one_call_tuning))
                work.append((layer, kind, dtype, cands))
    return work, ops


def compile_candidates(args, ops):
    """Every candidate in one add_module, and the SM80 wgrad kernels' parallel split-K variants
    in another (tilecraft.conv2d's GEMMs compile on their first call)."""
    import tilecraft

    start = time.monotonic()
    tilecraft.compiler.add_module(list(ops.values()))
    wgrad_ops = [op for op in ops.values()
                 if op.conv_kind == tilecraft.conv.Operator.wgrad and op.arch == 80]
    if wgrad_ops and args.parallel_split_k:
        tilecraft.compiler.add_module(wgrad_ops, split_k_parallel=True)
    print(f"compiled {len(ops)} kernels in {time.monotonic() - start:.1f} s")


def write_json(path, records, summary=None):
    if path:
        with open(path, "w") as f:
            json.dump({"records": records, "summary": summary or {}}, f, indent=1)


def run(args):
    import torch

    import tilecraft
    from tilecraft.profiling import Timer

    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from common import device_line

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(device_line())
    timer = Timer()
    work, ops = describe_candidates(args)
    compile_candidates(args, ops)

    records = []
    for layer, kind, dtype, cands in work:
        x, w, dy, bias = tensors(layer, dtype, seed=hash((layer.label, kind, dtype)) & 0xFFFF)
        reference_fn = cudnn_call(kind, layer, x, w, dy, bias)
        want = reference_fn()
        torch.cuda.synchronize()
        out = torch.empty_like(want).contiguous(memory_format=torch.channels_last)
        if kind == "dgrad" and layer.c_kernel != layer.c:
            out = torch.empty((layer.n, layer.c_kernel, layer.h, layer.w), dtype=want.dtype,
                              device="cuda").contiguous(memory_format=torch.channels_last)
        elif kind == "wgrad" and layer.c_kernel != layer.c:
            out = torch.empty((layer.k, layer.c_kernel, layer.r, layer.s), dtype=want.dtype,
                              device="cuda").contiguous(memory_format=torch.channels_last)
        best = None
        errors = []
        timings = []
        # A candidate reading the image padded to more channels is charged the padding copy of
        # x (weights are padded once, ahead of time): measured once per channel count.
        pad_cost = {}

        def padding_us(op):
            if kind not in ("fprop", "fused") or isinstance(op, OneCallConv):
                return 0.0
            c = kernel_channels(op, layer)
            if c == layer.c:
                return 0.0
            if c not in pad_cost:
                pad_cost[c] = timer.median_us(lambda: pad_channels(x, c))
            return pad_cost[c]

        for op in cands:
            td = op.tile_description  # None for tilecraft.conv2d (OneCallConv)
            stream_k = td is not None and td.tile_scheduler == tilecraft.TileSchedulerType.StreamK
            splits = (wgrad_splits(layer, op.tile_description.threadblock_shape)
                      if kind == "wgrad" and (op.arch == 80 or stream_k) else (1,))
            for split in splits:
                for parallel in ((False, True) if split > 1 and args.parallel_split_k and
                                 op.arch == 80 else (False,)):
                    try:
                        ours = (op.prepare(x, w, bias, out) if isinstance(op, OneCallConv) else
                                our_arguments(kind, op, layer, x, w, dy, bias, out, split,
                                              parallel))
                    except Exception as error:  # noqa: BLE001 - this kernel cannot take it
                        errors.append(f"{op.procedural_name()} split {split}: {error}")
                        continue
                    out.fill_(float("nan"))
                    op.run(ours)
                    torch.cuda.synchronize()
                    got = out[:, :layer.c] if out.shape != want.shape else out
                    err = relative_error(got, want)
                    if not err <= TOLERANCE:
                        errors.append(f"{op.procedural_name()} split {split}: WRONG, relative "
                                      f"error {err:.3g}")
                        continue
                    us = timer.median_us(lambda: op.run(ours)) + padding_us(op)  # noqa: B023
                    timings.append((op.procedural_name() + (f" split {split}"
                                                            f"{'p' if parallel else 's'}"
                                                            if split > 1 else ""), round(us, 2)))
                    if best is None or us < best[0]:
                        best = (us, op, split, parallel, err, ours)
        if best is None:
            print(f"{layer.label} {kind} {dtype}: no kernel ran it: {errors[:3]}")
            records.append({"layer": layer.label, "set": layer.set, "kind": kind,
                            "dtype": dtype, "error": errors[:3]})
            continue
        ours = best[5]
        pad_us = padding_us(best[1])
        us = min(best[0], timer.median_us(lambda: best[1].run(ours)) + pad_us)  # noqa: B023
        cudnn_us = min(timer.median_us(reference_fn), timer.median_us(reference_fn))
        ratio = cudnn_us / us
        td = best[1].tile_description
        tile = td.threadblock_shape if td is not None else ()
        arch_text = f"sm{best[1].arch} " if td is not None else "tilecraft.conv2d (GEMM)"
        if best[1].arch == 90:
            arch_text += f"c{'x'.join(map(str, td.cluster_shape[:2]))} s{td.stages} "
        split_text = f" split {best[2]}{'p' if best[3] else 's'}" if best[2] > 1 else ""
        record = {"layer": layer.label, "set": layer.set, "kind": kind, "dtype": dtype,
                  "cudnn_us": round(cudnn_us, 2), "ours_us": round(us, 2),
                  "ratio": round(ratio, 3), "tflops": round(layer.flops / us / 1e6, 1),
                  "cudnn_tflops": round(layer.flops / cudnn_us / 1e6, 1),
                  "kernel": best[1].procedural_name() + split_text,
                  "tile": arch_text + "x".join(map(str, tile)) + split_text,
                  "rel_err": best[4], "pad_us": round(pad_us, 2),
                  "candidates": sorted(timings, key=lambda t: t[1])}
        records.append(record)
        print(f"{layer.label:42s} {kind:6s} {dtype:4s} cuDNN {cudnn_us:9.1f} us "
              f"({record['cudnn_tflops']:6.1f} TF)  ours {us:9.1f} us ({record['tflops']:6.1f} "
              f"TF)  ratio {ratio:5.2f}  {record['tile']}", flush=True)
        del ours, best
        write_json(args.json, records)  # kept row by row: a run stopped early keeps its rows

    print()
    print("| set | kind | dtype | layers | geomean cuDNN/ours | min | max |")
    print("|---|---|---|---|---|---|---|")
    summary = {}
    for set_name in args.set:
        for kind in args.kind:
            for dtype in args.dtype:
                ratios = [r["ratio"] for r in records if r["set"] == set_name and
                          r["kind"] == kind and r["dtype"] == dtype and "ratio" in r]
                if not ratios:
                    continue
                geo = math.exp(sum(math.log(v) for v in ratios) / len(ratios))
                summary[f"{set_name}/{kind}/{dtype}"] = geo
                print(f"| {set_name} | {kind} | {dtype} | {len(ratios)} | {geo:.3f} | "
                      f"{min(ratios):.2f} | {max(ratios):.2f} |")
    write_json(args.json, records, summary)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", action="append", choices=(*FIXED_BATCH_SETS, "unet"))
    parser.add_argument("--kind", action="append", choices=("fprop", "dgrad", "wgrad", "fused"))
    parser.add_argument("--dtype", action="append", choices=("f16", "bf16"))
    parser.add_argument("--batch", action="append", type=int)
    parser.add_argument("--no-parallel-split-k", dest="parallel_split_k", action="store_false")
    parser.add_argument("--no-sm90", dest="sm90", action="store_false",
                        help="SM80 (CUTLASS 2.x) candidates only")
    parser.add_argument("--no-one-call", dest="one_call", action="store_false",
                        help="leave tilecraft.conv2d (1x1 layers as GEMMs) out of the candidates")
    parser.add_argument("--one-call-tuning", default="off",
                        choices=("off", "auto", "blocking", "force"),
                        help="tilecraft.conv2d's tuning= for its GEMM route (default off: the "
                             "ranked first pick)")
    parser.add_argument("--compile-only", action="store_true",
                        help="compile every candidate into the kernel cache and exit (no GPU "
                             "needed: a cache made here can be carried to the GPU machine)")
    parser.add_argument("--json")
    args = parser.parse_args()
    args.set = args.set or ["resnet50", "unet"]
    args.kind = args.kind or ["fprop", "dgrad", "wgrad", "fused"]
    args.dtype = args.dtype or ["f16", "bf16"]
    args.batch = args.batch or [1, 32, 128]
    if args.compile_only:
        args.one_call = False
        compile_candidates(args, describe_candidates(args)[1])
        return 0
    reason = skip_reason()
    if reason:
        print(f"bench_conv: skipped: {reason}")
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
