"""Grouped, depthwise and 3-D convolutions through ``tilecraft.conv2d`` / ``tilecraft.conv3d``
(the performance model's first ranked kernel: CUTLASS 2.x group, depthwise and Conv3d kernels,
arch 80) beside cuDNN through torch (``cudnn.benchmark`` on, channels-last tensors, TF32 off),
in the same process on the same tensors.

  python bench/bench_conv_extra.py [--set resnext|depthwise|efficientnet|conv3d ...]
      [--tuned N] [--sm90-3d] [--json FILE]

Sets:
  resnext       the grouped 3x3 convolutions of ResNeXt-50 32x4d (32 groups), batch 32, f16
  depthwise     MobileNetV2-style depthwise 3x3 layers (C == K == groups), batch 32, f16, bf16
                and f32
  efficientnet  EfficientNet-B0-style depthwise 3x3 and 5x5 layers, batch 32, f16
  conv3d        3x3x3 video layers (batch 8, 8 frames), f16 and bf16

--tuned N: besides the one-call first pick, each of the N best-ranked kernels is run through
the api, checked and timed, and the fastest reported ("tuned", as the tuner would pick).
--sm90-3d: the conv3d layers also run on SM90 3-D kernels described explicitly (CUTLASS's
ConvUniversal and tilecraft's persistent cooperative and ping-pong forms; get_kernels does not
list them yet) through the operation-first API, checked and timed; the fastest reported.

Each layer's kernels are compiled up front in one parallel batch; every result is checked
against cuDNN's (max |ours - cuDNN| / max |cuDNN| <= 1e-2) before timing. Timing:
``tilecraft.profiling.Timer`` (median of launches after an L2 flush and a 0.2 ms device spin, so
host dispatch is not counted); each side measured twice, the faster kept. The table gives both
times and cuDNN time / ours (above 1: we are faster) and the geometric mean per set. Without a
usable GPU the script says why and exits 0.
"""

import argparse
import json
import math
import sys

RESNEXT = [  # (N, C, H, W, K, R, S, stride, pad, groups)
    (32, 128, 56, 56, 128, 3, 3, 1, 1, 32), (32, 256, 56, 56, 256, 3, 3, 2, 1, 32),
    (32, 256, 28, 28, 256, 3, 3, 1, 1, 32), (32, 512, 14, 14, 512, 3, 3, 1, 1, 32),
    (32, 1024, 7, 7, 1024, 3, 3, 1, 1, 32),
]
DEPTHWISE = [
    (32, 96, 112, 112, 96, 3, 3, 2, 1, 96), (32, 144, 56, 56, 144, 3, 3, 1, 1, 144),
    (32, 192, 28, 28, 192, 3, 3, 1, 1, 192), (32, 384, 14, 14, 384, 3, 3, 1, 1, 384),
    (32, 960, 7, 7, 960, 3, 3, 1, 1, 960),
]
EFFICIENTNET = [
    (32, 32, 112, 112, 32, 3, 3, 1, 1, 32), (32, 96, 112, 112, 96, 3, 3, 2, 1, 96),
    (32, 144, 56, 56, 144, 5, 5, 2, 2, 144), (32, 240, 28, 28, 240, 3, 3, 2, 1, 240),
    (32, 480, 14, 14, 480, 5, 5, 1, 2, 480), (32, 672, 14, 14, 672, 5, 5, 2, 2, 672),
    (32, 1152, 7, 7, 1152, 3, 3, 1, 1, 1152),
]
CONV3D = [  # (N, C, D, H, W, K, T, R, S, stride (d, h, w), pad)
    (8, 64, 8, 56, 56, 64, 3, 3, 3, (1, 1, 1), 1), (8, 128, 8, 28, 28, 128, 3, 3, 3, (1, 1, 1), 1),
    (8, 128, 8, 56, 56, 256, 3, 3, 3, (1, 2, 2), 1), (8, 256, 4, 14, 14, 256, 3, 3, 3, (1, 1, 1), 1),
]


def skip_reason():
    try:
        import torch
    except Exception as error:
        return f"torch is not importable ({error})"
    if not torch.cuda.is_available():
        return "no CUDA device visible to torch"
    import tilecraft

    return tilecraft._core.cuda_device_available()


def cases(sets):
    import torch

    out = []
    if "resnext" in sets:
        out += [("resnext", torch.float16, layer) for layer in RESNEXT]
    if "depthwise" in sets:
        out += [("depthwise", dtype, layer) for dtype in (torch.float16, torch.bfloat16,
                                                          torch.float32) for layer in DEPTHWISE]
    if "efficientnet" in sets:
        out += [("efficientnet", torch.float16, layer) for layer in EFFICIENTNET]
    if "conv3d" in sets:
        out += [("conv3d", dtype, layer) for dtype in (torch.float16, torch.bfloat16)
                for layer in CONV3D]
    return out


class Case:
    def __init__(self, set_name, dtype, layer):
        import torch

        self.set_name, self.dtype, self.layer = set_name, dtype, layer
        gen = torch.Generator(device="cuda").manual_seed(hash(layer) & 0xFFFF)

        def rnd(shape, fmt):
            t = torch.rand(shape, generator=gen, device="cuda") * 2 - 1
            return t.to(dtype).contiguous(memory_format=fmt)

        if set_name == "conv3d":
            n, c, d, h, w, k, t, r, s, stride, pad = layer
            fmt = torch.channels_last_3d
            self.x, self.w = rnd((n, c, d, h, w), fmt), rnd((k, c, t, r, s), fmt)
            self.kwargs = {"stride": stride, "padding": pad}
        else:
            n, c, h, w, k, r, s, stride, pad, groups = layer
            fmt = torch.channels_last
            self.x, self.w = rnd((n, c, h, w), fmt), rnd((k, c // groups, r, s), fmt)
            self.kwargs = {"stride": stride, "padding": pad, "groups": groups}

    @property
    def label(self):
        dtype = str(self.dtype).replace("torch.", "")
        if self.set_name == "conv3d":
            n, c, d, h, w, k, t, r, s, stride, pad = self.layer
            return f"N{n} C{c} {d}x{h}x{w} K{k} {t}x{r}x{s} s{stride} {dtype}"
        n, c, h, w, k, r, s, stride, pad, groups = self.layer
        return f"N{n} C{c} {h}x{w} K{k} {r}x{s} s{stride} g{groups} {dtype}"

    def torch_call(self):
        import torch.nn.functional as F

        conv = F.conv3d if self.set_name == "conv3d" else F.conv2d
        return lambda: conv(self.x, self.w, **self.kwargs)

    def ours_call(self, out):
        import tilecraft

        conv = tilecraft.conv3d if self.set_name == "conv3d" else tilecraft.conv2d
        return lambda: conv(self.x, self.w, out=out, **self.kwargs)

    def api_arguments(self, out):
        import torch

        import tilecraft.api as api

        if self.set_name == "conv3d":
            return api.Conv3dArguments(self.x, self.w, out, torch.float32, **self.kwargs)
        return api.Conv2dArguments(self.x, self.w, out, torch.float32, **self.kwargs)

    def tflops(self, us):
        y_numel = self.out_numel
        taps = math.prod(self.w.shape[1:])  # C / groups * R * S (* T)
        return 2.0 * y_numel * taps / (us * 1e-6) / 1e12


def checked_timing(name, call, case, want, timer):
    """One candidate's record: its call run on the case's poisoned output, checked against cuDNN's
    (max relative error 1e-2), then timed; a mismatch is recorded, not timed."""
    import torch

    from tilecraft.profiling import relative_error

    case.out.fill_(float("nan"))
    call()
    torch.cuda.synchronize()
    error = relative_error(case.out, want)
    if not error <= 1e-2:
        return {"kernel": name, "error": f"relative error {error}"}
    return {"kernel": name, "us": min(timer.median_us(call), timer.median_us(call))}


def tuned_candidates(case, want, timer):
    """Each ranked candidate run through the api on the case's tensors (checked_timing); a
    refusal is recorded, not timed."""
    out = []
    for kernel in case.candidates:
        name = kernel.metadata.kernel_name
        status = kernel.supports(case.args)
        if not status:
            out.append({"kernel": name, "refused": status.error})
            continue
        out.append(checked_timing(name, lambda: kernel.run(case.args), case, want,  # noqa: B023
                                  timer))
    return out


# SM90 3-D candidates: (tile, stages, kernel schedule).
SM90_3D = [((128, 128, 64), 0, "TmaWarpSpecialized"), ((128, 64, 64), 4, "TmaWarpSpecialized"),
           ((128, 128, 64), 0, "TmaWarpSpecializedCooperative"),
           ((256, 128, 64), 0, "TmaWarpSpecializedCooperative"),
           ((64, 128, 64), 0, "TmaWarpSpecializedPingpong"),
           ((64, 256, 64), 0, "TmaWarpSpecializedPingpong")]


def sm90_3d_operations(dtype):
    """The SM90 3-D fprop operations of SM90_3D for a torch dtype (f16 or bf16)."""
    import torch

    import tilecraft as cutlass

    el = {torch.float16: cutlass.float16, torch.bfloat16: cutlass.bfloat16}[dtype]
    ops = []
    for tile, stages, schedule in SM90_3D:
        math_inst = cutlass.MathInstruction([64, tile[1], 16], el, el, cutlass.float32,
                                            cutlass.OpClass.TensorOp,
                                            cutlass.MathOperation.multiply_add)
        description = cutlass.TileDescription(
            list(tile), stages, None, math_inst,
            kernel_schedule=getattr(cutlass.KernelScheduleType, schedule))
        layout = cutlass.TensorNDHWC
        ops.append(cutlass.Conv3dOperation(
            cutlass.conv.Operator.fprop, cutlass.conv.IteratorAlgorithm.optimized, 90,
            description, cutlass.TensorDescription(el, layout, 8),
            cutlass.TensorDescription(el, layout, 8), cutlass.TensorDescription(el, layout, 8),
            cutlass.conv.StrideSupport.Strided,
            cutlass.LinearCombination(el, 8, cutlass.float32, cutlass.float32),
            cutlass.IdentitySwizzle1))
    return ops


def sm90_3d_candidates(case, want, timer):
    """Each SM90 3-D operation run on the case's tensors through Conv2dArguments
    (checked_timing); a refusal is recorded, not timed."""
    import tilecraft as cutlass

    n, c, d, h, w, k, t, r, s, stride, pad = case.layer
    problem = cutlass.conv.Conv3dProblemSize((n, d, h, w, c), (k, t, r, s, c), (pad,) * 6, stride,
                                             (1, 1, 1))
    out = []
    for op in case.sm90_operations:
        name = op.procedural_name()
        try:
            arguments = cutlass.Conv2dArguments(op, problem, case.x, case.w, None, case.out,
                                                op.epilogue_type(1.0, 0.0))
        except Exception as error:  # noqa: BLE001 - this kernel cannot take the layer
            out.append({"kernel": name, "refused": str(error)})
            continue
        out.append(checked_timing(name, lambda: op.run(arguments), case, want,  # noqa: B023
                                  timer))
    return out


def best_of(label, records, case, theirs_us, table):
    """The fastest timed record of `records`, printed beside cuDNN and its ratio added to
    `table`; nothing when none was timed."""
    timed = [c for c in records if "us" in c]
    if not timed:
        return
    best = min(timed, key=lambda c: c["us"])
    ratio = theirs_us / best["us"]
    table.setdefault((case.set_name, str(case.dtype)), []).append(ratio)
    print(f"{'  ' + label:10} {'':44} {'':9} {best['us']:9.1f} {case.tflops(best['us']):7.1f} "
          f"{ratio:6.3f}  {best['kernel']}", flush=True)


def run(args):
    import torch

    import tilecraft
    import tilecraft.api as api
    from tilecraft.profiling import Timer, relative_error

    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from common import device_line

    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    print(device_line())
    timer = Timer()
    work = [Case(*c) for c in cases(args.set)]
    picks = {}
    for case in work:
        want = case.torch_call()()
        case.out = torch.empty_like(want)
        case.out_numel = want.numel()
        case.args = case.api_arguments(case.out)
        case.candidates = api.get_kernels(case.args)[:max(1, args.tuned)]
        for kernel in case.candidates:
            picks[kernel.metadata.kernel_name] = kernel
        case.sm90_operations = (sm90_3d_operations(case.dtype)
                                if args.sm90_3d and case.set_name == "conv3d" else [])
    print(f"compiling {len(picks)} kernels in one batch", flush=True)
    api.compile_kernels(list(picks.values()))
    explicit = {op.procedural_name(): op for case in work for op in case.sm90_operations}
    if explicit:
        print(f"compiling {len(explicit)} SM90 3-D operations in one batch", flush=True)
        tilecraft.compiler.add_module(list(explicit.values()))

    rows, ratios, tuned, sm90 = [], {}, {}, {}
    print(f"{'set':10} {'layer':44} {'cuDNN us':>9} {'ours us':>9} {'TF/s':>7} {'ratio':>6}  kernel")
    for case in work:
        reference = case.torch_call()
        want = reference()
        ours = case.ours_call(case.out)
        try:
            ours()
        except Exception as error:  # a layer no kernel takes: said, not timed
            print(f"{case.set_name:10} {case.label:44} refused: {error}")
            rows.append({"set": case.set_name, "layer": case.label, "error": str(error)})
            continue
        torch.cuda.synchronize()
        error = relative_error(case.out, want)
        name, _ = tilecraft.conv_ops.last_conv_pick()
        if not error <= 1e-2:
            print(f"{case.set_name:10} {case.label:44} MISMATCH rel error {error:.3g} ({name})")
            rows.append({"set": case.set_name, "layer": case.label, "kernel": name,
                         "error": f"relative error {error}"})
            continue
        theirs_us = min(timer.median_us(reference), timer.median_us(reference))
        ours_us = min(timer.median_us(ours), timer.median_us(ours))
        ratio = theirs_us / ours_us
        ratios.setdefault((case.set_name, str(case.dtype)), []).append(ratio)
        print(f"{case.set_name:10} {case.label:44} {theirs_us:9.1f} {ours_us:9.1f} "
              f"{case.tflops(ours_us):7.1f} {ratio:6.3f}  {name}", flush=True)
        row = {"set": case.set_name, "layer": case.label, "kernel": name,
               "cudnn_us": theirs_us, "ours_us": ours_us, "ratio": ratio,
               "relative_error": error}
        if args.tuned > 0:
            row["candidates"] = tuned_candidates(case, want, timer)
            best_of("tuned", row["candidates"], case, theirs_us, tuned)
        if case.sm90_operations:
            row["sm90_3d"] = sm90_3d_candidates(case, want, timer)
            best_of("sm90 3-D", row["sm90_3d"], case, theirs_us, sm90)
        rows.append(row)
    for label, table in (("first pick", ratios), ("tuned", tuned), ("SM90 3-D, explicit", sm90)):
        for (set_name, dtype), values in table.items():
            geomean = math.exp(sum(math.log(v) for v in values) / len(values))
            print(f"geomean cuDNN/ours {set_name} {dtype.replace('torch.', '')} ({label}): "
                  f"{geomean:.3f} (min {min(values):.3f}, {len(values)} layers)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device_line(), "rows": rows}, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append",
                        choices=["resnext", "depthwise", "efficientnet", "conv3d"])
    parser.add_argument("--tuned", type=int, default=0, metavar="N")
    parser.add_argument("--sm90-3d", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    args.set = args.set or ["resnext", "depthwise", "efficientnet", "conv3d"]
    reason = skip_reason()
    if reason:
        print(f"bench_conv_extra: skipped: {reason}")
        return 0
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
