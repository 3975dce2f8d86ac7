"""The table of every SM90 kernel the suite compiles (pure Python: no torch, no tilecraft).

Each row is an Sm90Spec; tests name rows by key, and the session fixture in conftest.py builds
the operations of every key the selected tests use and compiles them in ONE
``compiler.add_module`` call (one nvcc job per row, about 90 s each, 16 at a time on the GPU
machine: 47 rows are three waves, the same wall time as 33).

Layout letters, as in tests/python/gpu: "<A><B><C/D>", r = RowMajor, c = ColumnMajor. A is
M x K, B is K x N, so "rcr" is CUTLASS's TN (both operands K-major) with a row-major D.
"""

from dataclasses import dataclass, replace

# name -> (seed spelling cutlass.<name>, torch dtype name, bits)
ELEMENTS = {
    "f16": ("float16", "float16", 16),
    "bf16": ("bfloat16", "bfloat16", 16),
    "tf32": ("tfloat32", "float32", 32),
    "f32": ("float32", "float32", 32),
    "e4m3": ("float8_e4m3", "float8_e4m3fn", 8),
    "e5m2": ("float8_e5m2", "float8_e5m2", 8),
    "s8": ("int8", "int8", 8),
    "s32": ("int32", "int32", 32),
}
FP8 = ("e4m3", "e5m2")
LAYOUT = {"r": "RowMajor", "c": "ColumnMajor"}
ACTIVATIONS = ("relu", "leaky_relu", "tanh", "sigmoid", "silu", "hardswish", "gelu",
               "gelu_tanh", "clamp")
COOP, PINGPONG, WS = ("TmaWarpSpecializedCooperative", "TmaWarpSpecializedPingpong",
                      "TmaWarpSpecialized")


def alignment(element):
    """Elements per 16 bytes: what SM90 TMA operands must be aligned to."""
    return 128 // ELEMENTS[element][2]


@dataclass(frozen=True)
class Sm90Spec:
    key: str
    a: str                       # element of A
    b: str                       # element of B
    acc: str                     # accumulator element
    out: str                     # C and D element
    layouts: str                 # "rcr", ... (A, B, C/D)
    inst: tuple                  # wgmma shape [64, N, K]
    tile: tuple
    cluster: tuple = (1, 1, 1)
    schedule: str = COOP         # KernelScheduleType member
    scheduler: str = "Persistent"  # TileSchedulerType member
    stages: int = 0
    math: str = "multiply_add"
    compute: str = "f32"         # element_epilogue_compute
    activation: str = None       # LinearCombinationGeneric activation, None: LinearCombination
    bias: str = None             # None | "row" (M values) | "column" (N values)
    bias_el: str = None          # element_bias (None: element_C)
    aux: bool = False
    aux_el: str = None           # element_aux (None: element_C)
    scales: bool = False         # fp8 per-tensor scales
    swizzle: str = "IdentitySwizzle1"
    family: str = ""

    @property
    def layout_names(self):
        return tuple(LAYOUT[ch] for ch in self.layouts)

    @property
    def fp8_in(self):
        return self.a in FP8

    @property
    def fp8_out(self):
        return self.out in FP8

    @property
    def is_int(self):
        return self.a == "s8"

    @property
    def aux_element(self):
        return self.aux_el or self.out

    @property
    def bias_element(self):
        return self.bias_el or self.out

    @property
    def cooperative(self):
        return self.schedule == COOP or (self.schedule == "Auto" and (
            self.scheduler == "StreamK" or self.tile[0] >= 128))

    def dim_multiples(self):
        """(mM, mN, mK): TMA copies each operand's contiguous extent in 16-byte vectors, so that
        extent must be a multiple of the operand's alignment (row-major A: K, column-major A:
        M, row-major B: N, column-major B: K, row-major D (and aux): N, column-major: M)."""
        mult = {"M": 1, "N": 1, "K": 1}
        la, lb, lc = self.layouts

        def need(dim, align):
            mult[dim] = max(mult[dim], align)

        need("K" if la == "r" else "M", alignment(self.a))
        need("N" if lb == "r" else "K", alignment(self.b))
        need("N" if lc == "r" else "M", alignment(self.out))
        if self.aux:
            need("N" if lc == "r" else "M", alignment(self.aux_element))
        return mult["M"], mult["N"], mult["K"]


KERNELS = {}


def _add(base, key, **changes):
    assert key not in KERNELS, key
    KERNELS[key] = replace(base, key=key, **changes)
    return key


# ---- 1. element types x majorness: cooperative, cluster 1x1, plain LinearCombination ---------
F16 = Sm90Spec("", "f16", "f16", "f32", "f16", "rcr", (64, 128, 16), (128, 128, 64),
               family="dtype")
_add(F16, "f16_rcr")
_add(F16, "f16_rrr", layouts="rrr")
_add(F16, "f16_crr", layouts="crr")
_add(F16, "f16_ccr_f32out", layouts="ccr", out="f32")
_add(F16, "f16acc_rcr", acc="f16")
BF16 = replace(F16, a="bf16", b="bf16", out="bf16")
_add(BF16, "bf16_rcr")
_add(BF16, "bf16_rrr", layouts="rrr")
_add(BF16, "bf16_crr", layouts="crr")
_add(BF16, "bf16_ccc", layouts="ccc")
TF32 = replace(F16, a="tf32", b="tf32", out="f32", inst=(64, 128, 8), tile=(128, 128, 32))
_add(TF32, "tf32_rcr")
_add(TF32, "f32tc_rcc", a="f32", b="f32", layouts="rcc")   # f32 math element: runs as tf32
FP8_BASE = replace(F16, a="e4m3", b="e4m3", out="bf16", inst=(64, 128, 32), tile=(128, 128, 128),
                   scales=True)
_add(FP8_BASE, "e4m3_rcr_bf16")
_add(FP8_BASE, "e5m2e4m3_rcr_f16", a="e5m2", out="f16")
_add(FP8_BASE, "e4m3_rcr_e4m3", out="e4m3")               # D = scale_d * Z in fp8
_add(FP8_BASE, "e4m3fast_rcr_bf16", math="multiply_add_fast_accum")
I8 = replace(F16, a="s8", b="s8", acc="s32", out="s32", compute="s32", inst=(64, 128, 32),
             tile=(128, 128, 128))
_add(I8, "i8_rcr_s32")
_add(I8, "i8_rcr_s8", out="s8", compute="f32")
_add(I8, "i8_rcc_f32", layouts="rcc", out="f32", compute="f32")

# ---- 2. schedules, clusters, stages, tile K, tile schedulers, swizzles (bf16) --------------
# A few rows also vary the operand majorness, so cluster multicast meets MN-major operands.
S = replace(BF16, family="schedule")
_add(S, "pp_64x128", schedule=PINGPONG, tile=(64, 128, 64))
_add(S, "pp_128x128_c2x1", schedule=PINGPONG, cluster=(2, 1, 1), layouts="crr")
_add(S, "ws_128x128", schedule=WS, layouts="ccc")
_add(S, "coop_256x128_c2x1", tile=(256, 128, 64), cluster=(2, 1, 1), layouts="rrr")
_add(S, "coop_128x256_c1x2", tile=(128, 256, 64), inst=(64, 256, 16), cluster=(1, 2, 1))
_add(S, "coop_128x128_c2x2", cluster=(2, 2, 1))
_add(S, "pp_64x128_c4x1", schedule=PINGPONG, tile=(64, 128, 64), cluster=(4, 1, 1))
_add(S, "coop_128x128_c1x4", cluster=(1, 4, 1), layouts="crc")
_add(S, "coop_streamk", scheduler="StreamK")
_add(S, "coop_stages4", stages=4)
_add(S, "coop_k32", tile=(128, 128, 32))
_add(S, "coop_k128", tile=(128, 128, 128))
_add(S, "auto_128_swz4", schedule="Auto", swizzle="IdentitySwizzle4")     # -> cooperative
_add(S, "auto_64_hswz", schedule="Auto", tile=(64, 128, 64), swizzle="HorizontalSwizzle",
     layouts="rrr")                                                        # -> pingpong

# ---- 3. epilogues: the nine activations, bias, aux, fp8 with bias (cooperative 128x128) -----
E = replace(BF16, family="epilogue")
for _act in ACTIVATIONS:
    _changes = {"sigmoid": dict(out="f32"),                         # f32 D
                "silu": dict(a="f16", b="f16", out="f16", layouts="crr"),
                "hardswish": dict(layouts="rcc")}.get(_act, {})   # column-major D
    _add(E, f"act_{_act}", activation=_act, **_changes)
_add(E, "bias_row_f32", a="f16", b="f16", out="f16", bias="row", bias_el="f32")
_add(E, "bias_col_bf16", bias="column", bias_el="bf16")
_add(E, "bias_col_gelu", bias="column", bias_el="bf16", activation="gelu")
_add(E, "aux_gelu_brow", activation="gelu", bias="row", bias_el="bf16", aux=True,
     aux_el="bf16")
_add(E, "aux_relu", a="f16", b="f16", out="f16", layouts="rcc", activation="relu", aux=True)
_add(FP8_BASE, "fp8_bcol_relu", activation="relu", bias="column", bias_el="bf16",
     family="epilogue")

# ---- groups used by the tests ---------------------------------------------------------------
DTYPE_KEYS = tuple(k for k, s in KERNELS.items() if s.family == "dtype")
SCHEDULE_KEYS = tuple(k for k, s in KERNELS.items() if s.family == "schedule")
EPILOGUE_KEYS = tuple(k for k, s in KERNELS.items() if s.family == "epilogue")
ACTIVATION_KEYS = tuple(f"act_{a}" for a in ACTIVATIONS)
BIAS_KEYS = tuple(k for k, s in KERNELS.items() if s.bias)
AUX_KEYS = tuple(k for k, s in KERNELS.items() if s.aux)
FP8_KEYS = tuple(k for k, s in KERNELS.items() if s.fp8_in)
INT8_KEYS = tuple(k for k, s in KERNELS.items() if s.is_int)
STREAMK_KEYS = tuple(k for k, s in KERNELS.items() if s.scheduler == "StreamK")
# Kernels whose A, B, C and D numpy / cupy can hold (no bf16 or fp8 there).
HOST_TYPES = {"f16", "f32", "tf32", "s8", "s32"}
HOST_FRIENDLY = tuple(k for k, s in KERNELS.items()
                      if {s.a, s.b, s.out} <= HOST_TYPES
                      and (not s.bias or s.bias_element in HOST_TYPES)
                      and (not s.aux or s.aux_element in HOST_TYPES))


def _check_table():
    for key, s in KERNELS.items():
        assert s.tile[1] % s.inst[1] == 0 and s.tile[2] % s.inst[2] == 0, key
        rows = s.tile[0] // (2 if s.cooperative else 1)
        assert rows * s.tile[1] // 128 <= 128, f"{key}: too many accumulator registers"
        if s.scheduler == "StreamK":
            assert s.cooperative, key
        if ELEMENTS[s.a][2] != 16:
            assert s.layouts[:2] == "rc", f"{key}: {s.a} is TN only"
    assert {KERNELS[k].activation for k in ACTIVATION_KEYS} == set(ACTIVATIONS)
    assert {s.bias for s in KERNELS.values()} >= {"row", "column"}
    assert STREAMK_KEYS and AUX_KEYS and FP8_KEYS and INT8_KEYS and HOST_FRIENDLY


_check_table()
