"""What the two-GPU suite compiles: operations of every family, taken from the other GPU suites'
kernel tables (their case runners check them), and the arguments whose first-ranked kernels the
arguments-first and one-call items run. ``compile_all`` compiles the operations in ONE
``compiler.add_module`` and the picks in ONE ``api.compile_kernels``."""

import time
from dataclasses import dataclass, field
from types import SimpleNamespace

# Keys of each suite's table.
SM80_KEYS = ("f16_rcr", "simt32_ccc", "bf16_crc")            # gpu/gpu_kernels.py
SM90_KEYS = ("bf16_rcr", "coop_streamk", "e4m3_rcr_bf16", "bias_col_gelu")  # gpu90
GROUPED_KEYS = ("g80_f16_rcr_dev", "g80_simt32_crr_host", "g90_bf16_coop")  # gpu_grouped
CONV_KEYS = ("f16_fprop_opt_st", "f16_wgrad_opt_st", "s90_f16_fprop")      # gpu_conv

# Shapes of the arguments-first items (test_multigpu_api.py).
GEMM_MNK = (200, 136, 96)
CONV_X, CONV_W, CONV_OUT = (2, 48, 12, 10), (40, 48, 3, 3), (2, 40, 12, 10)


def evt_epilogue(accum, alpha, C, bias):
    """The custom epilogue of the two-GPU items: D and its largest magnitude."""
    D = alpha * accum + C + bias
    return D, D.abs().max()


def evt_graph(C, bias):
    import tilecraft

    return tilecraft.epilogue.trace(
        evt_epilogue, accum=SimpleNamespace(shape=tuple(C.shape), dtype="float32"), alpha=2.0,
        C=C, bias=bias, D=C)


def evt_arguments(a, b, out, C, bias, amax):
    import torch

    from tilecraft.api.arguments import EpilogueArguments, GemmArguments

    graph = evt_graph(C, bias)
    amax_name = next(name for name in graph.output_names if name != graph.d_output)
    return GemmArguments(a, b, out, torch.float32, epilogue=EpilogueArguments(
        graph=graph, operands={"alpha": 2.0, "C": C, "bias": bias, amax_name: amax}))


class FamilyOps:
    """A suite's ``ops`` for its case runners: ``get(key)`` gives the operation built here."""

    def __init__(self, build, table):
        self._build, self._table = build, table
        self.ops = {}
        self.errors = {}

    def make(self, keys):
        for key in keys:
            try:
                self.ops[key] = self._build(self._table[key])
            except Exception as error:  # noqa: BLE001 (its items fail with the text)
                self.errors[key] = f"{type(error).__name__}: {error}"

    def get(self, key):
        if key in self.errors:
            raise AssertionError(f"{key}: the description was refused: {self.errors[key]}")
        return self.ops[key]


def seed_operation():
    """The seed's spelling of an arch-80 GEMM: f16 A and B row-major, float32 C and D."""
    import tilecraft as cutlass

    math = cutlass.MathInstruction([16, 8, 16], cutlass.float16, cutlass.float16, cutlass.float32,
                                   cutlass.OpClass.TensorOp, cutlass.MathOperation.multiply_add)
    tile = cutlass.TileDescription([128, 128, 32], 3, [2, 2, 1], math)
    A = cutlass.TensorDescription(cutlass.float16, cutlass.RowMajor, 8)
    B = cutlass.TensorDescription(cutlass.float16, cutlass.RowMajor, 8)
    C = cutlass.TensorDescription(cutlass.float32, cutlass.RowMajor, 4)
    epilogue = cutlass.LinearCombination(cutlass.float32, 4, cutlass.float32, cutlass.float32)
    return cutlass.GemmOperationUniversal(80, tile, A, B, C, epilogue, cutlass.IdentitySwizzle1)


@dataclass
class Compiled:
    seed: object                 # seed_operation()
    sm80: FamilyOps
    sm90: FamilyOps
    grouped: FamilyOps
    conv: FamilyOps
    picks: dict = field(default_factory=dict)   # name -> api.Kernel (or None)
    report: str = ""


def _families():
    import conv_case
    import conv_kernels
    import gpu_helpers
    import gpu_kernels
    import sm90_build
    import sm90_kernels
    import test_gpu_grouped

    return dict(sm80=FamilyOps(gpu_helpers.build_operation, gpu_kernels.KERNELS),
                sm90=FamilyOps(sm90_build.build_operation, sm90_kernels.KERNELS),
                grouped=FamilyOps(test_gpu_grouped.build_operation, test_gpu_grouped.TABLE),
                conv=FamilyOps(conv_case.build_operation, conv_kernels.KERNELS))


def channels_last(shape, dtype, device, fill=None, gen=None):
    """A channels-last tensor of ``shape`` (N, C, H, W): small random integers, or ``fill``."""
    import torch

    if fill is None:
        t = torch.randint(-2, 3, shape, generator=gen, device=device).to(dtype)
    else:
        t = torch.full(shape, fill, dtype=dtype, device=device)
    return t.contiguous(memory_format=torch.channels_last)


def pick_arguments(device):
    """name -> api arguments whose first-ranked kernel an item runs (the same shapes, types and
    layouts as the item: the kernel is then found compiled)."""
    import torch

    from tilecraft import api
    from tilecraft.api.arguments import EpilogueArguments

    M, N, K = GEMM_MNK
    f16, bf16 = torch.float16, torch.bfloat16
    a = torch.zeros(M, K, dtype=f16, device=device)
    b = torch.zeros(K, N, dtype=f16, device=device)
    out = torch.zeros(M, N, dtype=f16, device=device)
    moe_x = torch.zeros(70, 64, dtype=bf16, device=device)
    moe_w = torch.zeros(3, 96, 64, dtype=bf16, device=device).transpose(-2, -1)
    offsets = torch.tensor([20, 20, 70], dtype=torch.int32, device=device)
    return {
        "gemm": api.arguments.GemmArguments(a, b, out, torch.float32),
        "gemm_c": api.arguments.GemmArguments(
            a, b, out, torch.float32, epilogue=EpilogueArguments(beta=1.0, C=out)),
        "grouped": api.GroupedGemmArguments(moe_x, moe_w, torch.zeros(70, 96, dtype=bf16,
                                                                      device=device),
                                            offsets=offsets, accumulator_type=torch.float32),
        "conv": api.Conv2dArguments(channels_last(CONV_X, f16, device, 0),
                                    channels_last(CONV_W, f16, device, 0),
                                    channels_last(CONV_OUT, f16, device, 0), torch.float32,
                                    padding=1),
        "evt": evt_arguments(a, b, out, torch.zeros(M, N, dtype=f16, device=device),
                             torch.zeros(N, dtype=torch.float32, device=device),
                             torch.zeros(1, dtype=torch.float32, device=device)),
    }


def compile_all(device):
    import tilecraft
    from tilecraft import api

    families = _families()
    for name, keys in (("sm80", SM80_KEYS), ("sm90", SM90_KEYS), ("grouped", GROUPED_KEYS),
                       ("conv", CONV_KEYS)):
        families[name].make(keys)
    compiled = Compiled(seed=seed_operation(), **families)
    operations = [compiled.seed] + [op for f in families.values() for op in f.ops.values()]
    lines = []
    start = time.monotonic()
    try:
        tilecraft.compiler.add_module(operations)
        lines.append(f"add_module of {len(operations)} operations took "
                     f"{time.monotonic() - start:.1f} s")
    except Exception as error:  # noqa: BLE001 (the items of the failing kernels fail)
        lines.append(f"add_module raised {type(error).__name__}: {error}")
    for f in families.values():
        lines += [f"refused {k}: {e}" for k, e in f.errors.items()]
    for name, args in pick_arguments(device).items():
        kernels = api.get_kernels(args)
        compiled.picks[name] = kernels[0] if kernels else None
    start = time.monotonic()
    try:
        api.compile_kernels([k for k in compiled.picks.values() if k is not None])
        lines.append(f"api.compile_kernels of the picks took {time.monotonic() - start:.1f} s: "
                     + ", ".join(f"{n}: {k.metadata.kernel_name if k else 'NONE'}"
                                 for n, k in compiled.picks.items()))
    except Exception as error:  # noqa: BLE001
        lines.append(f"api.compile_kernels raised {type(error).__name__}: {error}")
    compiled.report = "tilecraft two-GPU suite: " + "; ".join(lines)
    return compiled
