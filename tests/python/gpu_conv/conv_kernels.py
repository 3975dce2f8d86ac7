"""The table of every convolution kernel the conv GPU suite compiles (pure Python: no torch, no
tilecraft import).

Each row is a ConvSpec; tests refer to rows by key, and the module fixture of test_gpu_conv.py
compiles the operations of every key the selected tests use in ONE ``compiler.add_module``.
Each row is one nvcc job: keep the table near 40 rows.

Key naming: <element>_<kind>_<algorithm>[_<stride support>][_extra], algorithm an (analytic),
opt (optimized), fixed (fixed_channels), few (few_channels); stride support st (strided) or un
(unity).
"""

from dataclasses import dataclass, replace

SEED_TYPE = {"f16": "float16", "bf16": "bfloat16", "tf32": "tfloat32", "f32": "float32",
             "f64": "float64", "s8": "int8", "s32": "int32"}
TORCH_TYPE = {"f16": "float16", "bf16": "bfloat16", "tf32": "float32", "f32": "float32",
              "f64": "float64", "s8": "int8", "s32": "int32"}
ALGORITHMS = {"an": "analytic", "opt": "optimized", "fixed": "fixed_channels",
              "few": "few_channels", "direct": "direct"}
STRIDES = {"st": "Strided", "un": "Unity"}
KINDS = ("fprop", "dgrad", "wgrad")


@dataclass(frozen=True)
class ConvSpec:
    key: str
    kind: str                 # "fprop" | "dgrad" | "wgrad"
    algorithm: str            # key of ALGORITHMS
    stride: str               # key of STRIDES
    opclass: str              # "TensorOp" | "Simt"
    inst: tuple
    element: str              # A and B element
    acc: str
    math: str
    tile: tuple
    stages: int
    warps: tuple
    align_a: int
    align_b: int
    out: str                  # C / D element
    align_c: int
    compute: str
    epilogue: str = "LinearCombination"
    activation: str = None
    interleaved: bool = False  # int8 TensorNC32HW32 / TensorC32RSK32
    swizzle: str = "IdentitySwizzle1"
    arch: int = 80             # 90: CUTLASS 3.x ConvUniversal (TMA im2col, wgmma)
    cluster: tuple = (1, 1, 1)
    bias: bool = False         # SM90 epilogue bias of one value per output channel
    group_mode: str = "NoneGroup"  # conv.GroupMode: SingleGroup, MultipleGroup, Depthwise
    spatial_dims: int = 2      # 3: a Conv3d kernel (TensorNDHWC)
    # SM90 kernel schedule: TmaWarpSpecialized (CUTLASS's ConvUniversal), or the persistent
    # TmaWarpSpecializedCooperative / TmaWarpSpecializedPingpong (tilecraft's)
    schedule: str = "TmaWarpSpecialized"
    scheduler: str = "Persistent"  # SM90 tile scheduler: Persistent, or StreamK (cooperative)
    graph: str = None          # a custom epilogue: a key of conv_graphs.GRAPHS (persistent SM90)

    @property
    def persistent(self):
        return self.arch == 90 and self.schedule != "TmaWarpSpecialized"

    @property
    def clamps(self):
        return self.epilogue in ("LinearCombinationClamp", "FastLinearCombinationClamp")

    def channel_multiples(self):
        """(multiple of C, multiple of K) the operands' alignments need of a problem: the
        contiguous extent of each operand (channels) must be a multiple of its alignment."""
        if self.interleaved:
            return 32, 32
        if self.kind == "fprop":   # x: C, w: C, y: K
            return max(self.align_a, self.align_b), self.align_c
        if self.kind == "dgrad":   # dy: K, w: C, dx: C
            return max(self.align_b, self.align_c), self.align_a
        return max(self.align_b, self.align_c), self.align_a  # wgrad: dy: K, x: C, dw: C


KERNELS = {}


def _add(base, key, **changes):
    assert key not in KERNELS, key
    KERNELS[key] = replace(base, key=key, **changes)
    return key


def _name(spec_kind, algorithm, stride):
    return f"{spec_kind}_{algorithm}" + ("" if stride is None else f"_{stride}")


# ---- f16 operands, f32 accumulation, f16 output, [16, 8, 16], 128x128x32, 3 stages ----------
F16 = ConvSpec("", "fprop", "opt", "st", "TensorOp", (16, 8, 16), "f16", "f32", "multiply_add",
               (128, 128, 32), 3, (2, 2, 1), 8, 8, "f16", 8, "f32")
for _kind in KINDS:
    for _alg in ("an", "opt"):
        for _st in ("st", "un"):
            _add(F16, "f16_" + _name(_kind, _alg, _st), kind=_kind, algorithm=_alg, stride=_st)
_add(F16, "f16_fprop_fixed", algorithm="fixed", align_a=4, align_b=4, tile=(128, 64, 32),
     warps=(2, 2, 1))
_add(F16, "f16_fprop_few", algorithm="few", align_a=2, align_b=2, tile=(128, 64, 32),
     warps=(2, 2, 1))
_add(F16, "f16_fprop_opt_align2", align_a=2, align_b=2, align_c=2)
_add(F16, "f16_dgrad_opt_un_align4", kind="dgrad", stride="un", align_a=4, align_b=4, align_c=4)
_add(F16, "f16_wgrad_opt_align2", kind="wgrad", align_a=2, align_b=2, align_c=2)
_add(F16, "f16_fprop_opt_f32out", out="f32", align_c=4)
_add(F16, "f16_fprop_opt_relu", epilogue="LinearCombinationGeneric", activation="relu")
_add(F16, "f16_fprop_opt_gelu", epilogue="LinearCombinationGeneric", activation="gelu",
     tile=(64, 64, 64), stages=4, swizzle="IdentitySwizzle2")
_add(F16, "f16_dgrad_opt_st_silu", kind="dgrad", epilogue="LinearCombinationGeneric",
     activation="silu", swizzle="IdentitySwizzle4")
_add(F16, "f16_fprop_an_clamp", algorithm="an", epilogue="LinearCombinationClamp")

# ---- f16 operands, f16 accumulation -------------------------------------------------------
F16ACC = replace(F16, acc="f16", compute="f16")
_add(F16ACC, "f16acc_fprop_opt")

# ---- bf16, [16, 8, 16] --------------------------------------------------------------------
BF16 = replace(F16, element="bf16", out="bf16")
for _kind in KINDS:
    _add(BF16, f"bf16_{_kind}_opt", kind=_kind)
_add(BF16, "bf16_dgrad_an_un", kind="dgrad", algorithm="an", stride="un")
_add(BF16, "bf16_fprop_few", algorithm="few", align_a=4, align_b=4, tile=(128, 64, 32))

# ---- tf32 (f32 tensors), [16, 8, 8], 128x128x16, 4 stages ---------------------------------
TF32 = replace(F16, inst=(16, 8, 8), element="tf32", out="f32", tile=(128, 128, 16), stages=4,
               align_a=4, align_b=4, align_c=4)
for _kind in KINDS:
    _add(TF32, f"tf32_{_kind}_opt", kind=_kind)
_add(TF32, "tf32_wgrad_an", kind="wgrad", algorithm="an")
_add(TF32, "tf32_fprop_fixed", algorithm="fixed", align_a=4, align_b=4)
F32X3 = replace(TF32, element="f32", math="multiply_add_fast_f32")
_add(F32X3, "f32x3_fprop_opt")

# ---- f64 tensor op, [8, 8, 4] -------------------------------------------------------------
F64 = replace(F16, inst=(8, 8, 4), element="f64", acc="f64", out="f64", compute="f64",
              tile=(64, 64, 16), stages=4, warps=(2, 2, 1), align_a=1, align_b=1, align_c=1)
for _kind in KINDS:
    _add(F64, f"f64_{_kind}_opt", kind=_kind)

# ---- SIMT f32 and f64, [1, 1, 1] ----------------------------------------------------------
SIMT32 = replace(F16, opclass="Simt", inst=(1, 1, 1), element="f32", acc="f32", out="f32",
                 compute="f32", tile=(128, 128, 8), stages=4, warps=(4, 2, 1), align_a=1,
                 align_b=1, align_c=1)
for _kind in KINDS:
    for _alg in ("an", "opt"):
        _add(SIMT32, f"simt32_{_kind}_{_alg}", kind=_kind, algorithm=_alg)
_add(SIMT32, "simt32_dgrad_opt_un", kind="dgrad", stride="un")
_add(SIMT32, "simt32_fprop_opt_tanh", epilogue="LinearCombinationGeneric", activation="tanh")
SIMT64 = replace(SIMT32, element="f64", acc="f64", out="f64", compute="f64", tile=(64, 64, 8),
                 warps=(2, 2, 1))
_add(SIMT64, "simt64_fprop_opt")
_add(SIMT64, "simt64_wgrad_an", kind="wgrad", algorithm="an")

# ---- int8, int32 accumulation, [16, 8, 32], 128x128x64 --------------------------------------
I8 = replace(F16, inst=(16, 8, 32), element="s8", acc="s32", math="multiply_add_saturate",
             tile=(128, 128, 64), stages=3, align_a=16, align_b=16, out="s8", align_c=16,
             compute="f32", epilogue="LinearCombinationClamp")
_add(I8, "i8_fprop_opt_clamp")
_add(I8, "i8_fprop_an_s32", algorithm="an", out="s32", align_c=4, epilogue="LinearCombination")
_add(I8, "i8_fprop_opt_interleaved", interleaved=True, align_c=8, tile=(128, 128, 64))
_add(I8, "i8_fprop_an_fastclamp", algorithm="an", epilogue="FastLinearCombinationClamp")

# ---- SM90: CUTLASS 3.x ConvUniversal, TmaWarpSpecialized, 16-byte TMA operands ---------------
# (dgrad takes unit strides only; no split-K; tf32 is fprop only.)
S90 = replace(F16, arch=90, inst=(64, 128, 16), tile=(128, 128, 64), stages=0, warps=None)
_add(S90, "s90_f16_fprop")
_add(S90, "s90_f16_fprop_64x64_f32out", tile=(64, 64, 64), inst=(64, 64, 16), out="f32",
     align_c=4)
_add(S90, "s90_bf16_fprop_c2", element="bf16", out="bf16", cluster=(2, 1, 1))
_add(S90, "s90_f16_dgrad", kind="dgrad", stride="un")
_add(S90, "s90_bf16_dgrad_c2", kind="dgrad", stride="un", element="bf16", out="bf16",
     cluster=(1, 2, 1))
_add(S90, "s90_f16_wgrad", kind="wgrad")
_add(S90, "s90_bf16_wgrad", kind="wgrad", element="bf16", out="bf16", tile=(128, 64, 64),
     inst=(64, 64, 16))
_add(S90, "s90_tf32_fprop", element="tf32", inst=(64, 128, 8), tile=(128, 128, 32), out="f32",
     align_a=4, align_b=4, align_c=4)
_add(S90, "s90_f16_fprop_bias_relu", bias=True, epilogue="LinearCombinationGeneric",
     activation="relu")
_add(S90, "s90_bf16_fprop_bias_silu", element="bf16", out="bf16", bias=True,
     epilogue="LinearCombinationGeneric", activation="silu")
_add(S90, "s90_f16_dgrad_gelu", kind="dgrad", stride="un", epilogue="LinearCombinationGeneric",
     activation="gelu")
# tilecraft's persistent SM90 convolutions (CUTLASS's persistent GEMM kernels over the conv
# mainloop); a persistent wgrad's tile N divides C (shape_for picks C so)
COOP, PP = "TmaWarpSpecializedCooperative", "TmaWarpSpecializedPingpong"
_add(S90, "s90_f16_fprop_coop", schedule=COOP)
_add(S90, "s90_bf16_fprop_coop_c2", element="bf16", out="bf16", cluster=(2, 1, 1), schedule=COOP)
_add(S90, "s90_f16_fprop_pp_bias_relu", tile=(64, 128, 64), bias=True,
     epilogue="LinearCombinationGeneric", activation="relu", schedule=PP)
_add(S90, "s90_f16_fprop_coop_sk", schedule=COOP, scheduler="StreamK")
_add(S90, "s90_f16_dgrad_coop", kind="dgrad", stride="un", schedule=COOP)
_add(S90, "s90_f16_dgrad_pp_silu", kind="dgrad", stride="un", tile=(64, 128, 64), schedule=PP,
     epilogue="LinearCombinationGeneric", activation="silu")
_add(S90, "s90_f16_wgrad_coop_sk", kind="wgrad", tile=(128, 64, 64), inst=(64, 64, 16),
     schedule=COOP, scheduler="StreamK")
_add(S90, "s90_bf16_wgrad_pp", kind="wgrad", element="bf16", out="bf16", tile=(64, 64, 64),
     inst=(64, 64, 16), schedule=PP)
_add(S90, "s90_f16_wgrad_coop_sk_c2", kind="wgrad", tile=(128, 64, 64), inst=(64, 64, 16),
     schedule=COOP, scheduler="StreamK", cluster=(2, 1, 1))
# custom epilogues (epilogue graphs, conv_graphs.py) on the persistent kernels
_add(S90, "s90_f16_fprop_coop_evt", schedule=COOP, graph="bias_gelu_residual_colsum")
_add(S90, "s90_f16_dgrad_pp_evt", kind="dgrad", stride="un", tile=(64, 128, 64), schedule=PP,
     graph="silu_scale_amax")
_add(S90, "s90_f16_wgrad_coop_sk_evt", kind="wgrad", tile=(128, 64, 64), inst=(64, 64, 16),
     schedule=COOP, scheduler="StreamK", graph="accumulate_rowsum")

# ---- grouped fprop (arch 80): DefaultConv2dGroupFprop and DefaultDepthwiseFprop --------------
GROUPED = replace(F16, tile=(64, 64, 32), warps=(2, 2, 1), stages=3)
_add(GROUPED, "f16_fprop_opt_sg", group_mode="SingleGroup")
_add(GROUPED, "f16_fprop_an_sg", algorithm="an", group_mode="SingleGroup")
_add(GROUPED, "f16_fprop_an_mg", algorithm="an", group_mode="MultipleGroup")
_add(GROUPED, "bf16_fprop_an_mg_align4", algorithm="an", group_mode="MultipleGroup",
     element="bf16", out="bf16", align_a=4, align_b=4, align_c=4)
# tiles 32 output channels wide (get_kernels' narrowed designs for 8 to 32 channels per group)
_add(GROUPED, "f16_fprop_opt_sg_n32", group_mode="SingleGroup", tile=(256, 32, 32),
     warps=(4, 1, 1), stages=5)
_add(GROUPED, "f16_fprop_an_mg_n32", algorithm="an", group_mode="MultipleGroup",
     tile=(256, 32, 32), warps=(4, 1, 1), stages=3)
_add(SIMT32, "simt32_fprop_an_dw", algorithm="an", group_mode="Depthwise", tile=(64, 64, 8),
     warps=(2, 2, 1), stages=2)
_add(SIMT32, "simt16_fprop_an_dw", algorithm="an", group_mode="Depthwise", tile=(64, 64, 8),
     warps=(2, 2, 1), stages=2, element="f16", acc="f16", out="f16", compute="f16")

# ---- tilecraft's direct grouped / depthwise fprop (CUDA cores, float accumulators) -----------
# tile = [output pixels, output channels, 1] per CTA over warps [w, 1, 1]; A and C of one access.
DIRECT = replace(SIMT32, algorithm="direct", element="f16", acc="f32", out="f16", compute="f32",
                 tile=(64, 64, 1), warps=(8, 1, 1), stages=2, align_a=8, align_b=1, align_c=8,
                 group_mode="Depthwise")
_add(DIRECT, "f16_fprop_direct_dw")
_add(DIRECT, "bf16_fprop_direct_dw_relu", element="bf16", out="bf16", align_a=4, align_c=4,
     tile=(128, 32, 1), warps=(4, 1, 1), epilogue="LinearCombinationGeneric", activation="relu")
_add(DIRECT, "f32_fprop_direct_dw", element="f32", out="f32", align_a=4, align_c=4,
     tile=(128, 32, 1), warps=(4, 1, 1))
_add(DIRECT, "f16_fprop_direct_dw_v1", align_a=1, align_c=1, tile=(32, 32, 1))
_add(DIRECT, "f16_fprop_direct_mg", group_mode="MultipleGroup", tile=(128, 64, 1))
_add(DIRECT, "f16_fprop_direct_mg_v4", group_mode="MultipleGroup", align_a=4, align_c=4,
     tile=(128, 32, 1))
_add(DIRECT, "f32_fprop_direct_mg_v1", group_mode="MultipleGroup", element="f32", out="f32",
     align_a=1, align_c=1, tile=(32, 32, 1))

# ---- 3-D (CUTLASS 2.x Conv3d, TensorNDHWC): 128-bit accesses on tensor cores ------------------
# (dgrad: analytic strided or optimized unity; wgrad strided)
_add(F16, "f16_fprop3d_opt", spatial_dims=3)
_add(F16, "f16_fprop3d_an", algorithm="an", spatial_dims=3)
_add(F16, "f16_dgrad3d_opt_un", kind="dgrad", stride="un", spatial_dims=3)
_add(F16, "f16_dgrad3d_an_st", kind="dgrad", algorithm="an", spatial_dims=3)
_add(F16, "f16_wgrad3d_opt", kind="wgrad", spatial_dims=3)
_add(BF16, "bf16_fprop3d_opt_relu", spatial_dims=3, epilogue="LinearCombinationGeneric",
     activation="relu")
_add(TF32, "tf32_wgrad3d_an", kind="wgrad", algorithm="an", spatial_dims=3)
_add(SIMT32, "simt32_fprop3d_an", algorithm="an", spatial_dims=3)
# SM90 3-D (TMA im2col over 5-D tensors): CUTLASS's ConvUniversal and tilecraft's persistent form
_add(S90, "s90_f16_fprop3d", spatial_dims=3)
_add(S90, "s90_f16_fprop3d_coop", spatial_dims=3, schedule=COOP)
_add(S90, "s90_f16_dgrad3d_pp", kind="dgrad", stride="un", tile=(64, 128, 64), schedule=PP,
     spatial_dims=3)
_add(S90, "s90_bf16_wgrad3d", kind="wgrad", element="bf16", out="bf16", spatial_dims=3)
_add(S90, "s90_f16_wgrad3d_coop_sk", kind="wgrad", tile=(128, 64, 64), inst=(64, 64, 16),
     schedule=COOP, scheduler="StreamK", spatial_dims=3)
_add(SIMT32, "simt32_dgrad3d_opt_un", kind="dgrad", stride="un", spatial_dims=3)

# ---- groups the tests use -------------------------------------------------------------------
# Linear epilogues whose serial split-K result stays exact with small-integer data. Serial
# split-K keeps each slice's running sum in D's element: bf16 (8 significant bits) would round
# it between slices, so the bf16 kernels are not in this list.
# The SM90 stream-K kernels reduce their slices in f32 workspace, whatever D's element.
SERIAL_SPLIT_K = ("f16_fprop_opt_st", "f16_dgrad_opt_un", "f16_wgrad_opt_st", "f16_fprop_an_st",
                  "f16_dgrad_an_st", "tf32_dgrad_opt", "simt32_wgrad_opt", "f64_fprop_opt",
                  "f16_fprop_opt_f32out", "tf32_wgrad_an", "s90_f16_fprop_coop_sk",
                  "s90_f16_wgrad_coop_sk", "s90_f16_wgrad_coop_sk_c2")
# CUTLASS's strided dgrad kernel has no parallel split-K (refused: see test_gpu_conv.py).
PARALLEL_SPLIT_K = ("f16_fprop_opt_st", "f16_wgrad_opt_st", "f16_dgrad_opt_un",
                    "simt32_wgrad_an", "f16_dgrad_an_un", "bf16_fprop_opt")
ACTIVATION_KERNELS = tuple(k for k, s in KERNELS.items()
                           if s.activation and s.spatial_dims == 2 and s.group_mode == "NoneGroup")
CLAMP_KERNELS = tuple(k for k, s in KERNELS.items() if s.clamps)
# Every (kind, algorithm, stride support) of the matrix, with one key each at least.
MATRIX = tuple(k for k, s in KERNELS.items()
               if s.epilogue == "LinearCombination" and not s.interleaved and not s.bias
               and s.group_mode == "NoneGroup" and s.spatial_dims == 2 and s.graph is None)
CONV3D = tuple(k for k, s in KERNELS.items() if s.spatial_dims == 3)
GROUPED_KERNELS = tuple(k for k, s in KERNELS.items() if s.group_mode != "NoneGroup")
SM90 = tuple(k for k, s in KERNELS.items()
             if s.arch == 90 and s.spatial_dims == 2 and s.graph is None)
GRAPH_KERNELS = tuple(k for k, s in KERNELS.items() if s.graph is not None)
BIAS_KERNELS = tuple(k for k, s in KERNELS.items() if s.bias)


def _check_table():
    for group in (SERIAL_SPLIT_K, PARALLEL_SPLIT_K):
        for key in group:
            assert key in KERNELS, key
    for key in SERIAL_SPLIT_K:  # serial split-K re-reads D: only linear epilogues stay exact
        assert KERNELS[key].epilogue == "LinearCombination", key
    seen = {(s.kind, s.algorithm, s.stride) for s in KERNELS.values()
            if s.arch == 80 and s.group_mode == "NoneGroup" and s.spatial_dims == 2}
    for kind in KINDS:
        for alg in ("an", "opt"):
            for st in ("st", "un"):
                assert (kind, alg, st) in seen, (kind, alg, st)


_check_table()
