"""The table of every kernel the GPU suite compiles (pure Python: no torch, no tilecraft import).

Each row is a KernelSpec; tests refer to rows by key and the session fixture in conftest.py
builds the operations of every key the selected tests use and compiles them in ONE
``compiler.add_module`` call. Keep the table at about 60-90 rows: each row is one nvcc job.

Key naming: <family>_<A><B><C>[_extra], with r = RowMajor and c = ColumnMajor for A, B, C.
"""

from dataclasses import dataclass, field, replace

# Seed spelling of each element type (``cutlass.<name>``) and its torch / numpy dtype name.
SEED_TYPE = {"f16": "float16", "bf16": "bfloat16", "tf32": "tfloat32", "f32": "float32",
             "f64": "float64", "s8": "int8", "s32": "int32"}
TORCH_TYPE = {"f16": "float16", "bf16": "bfloat16", "tf32": "float32", "f32": "float32",
              "f64": "float64", "s8": "int8", "s32": "int32"}
LAYOUT = {"r": "RowMajor", "c": "ColumnMajor"}
INTERLEAVED = ("ColumnMajorInterleaved32", "RowMajorInterleaved32", "ColumnMajorInterleaved32")

ACTIVATIONS = ("relu", "leaky_relu", "tanh", "sigmoid", "silu", "hardswish", "gelu")
SWIZZLES = ("IdentitySwizzle1", "IdentitySwizzle2", "IdentitySwizzle4", "IdentitySwizzle8",
            "HorizontalSwizzle", "BatchedIdentitySwizzle")


@dataclass(frozen=True)
class KernelSpec:
    key: str
    opclass: str                 # "TensorOp" | "Simt"
    inst: tuple                  # instruction shape
    element: str                 # A and B element ("f16", "bf16", "tf32", "f32", "f64", "s8")
    acc: str                     # accumulator element
    math: str                    # MathOperation member name
    tile: tuple                  # threadblock shape
    stages: int
    warps: tuple
    layouts: str                 # "rcr", ... or "interleaved"
    align_ab: int
    out: str                     # C / D element
    align_c: int
    compute: str                 # epilogue compute element
    epilogue: str = "LinearCombination"
    activation: str = None       # for LinearCombinationGeneric
    swizzle: str = "IdentitySwizzle1"
    tags: tuple = field(default=())

    @property
    def interleaved(self):
        return self.layouts == "interleaved"

    @property
    def layout_names(self):
        if self.interleaved:
            return INTERLEAVED
        return tuple(LAYOUT[ch] for ch in self.layouts)

    @property
    def is_int(self):
        return self.element == "s8"

    @property
    def clamps(self):
        return self.epilogue in ("LinearCombinationClamp", "FastLinearCombinationClamp")

    @property
    def half_compute(self):
        """The epilogue (and accumulator) compute in f16: every intermediate must be exact."""
        return self.compute == "f16"

    def dim_multiples(self):
        """(mM, mN, mK): what M, N and K must be multiples of, from the operands' alignment
        (CUTLASS checks the contiguous extent of each operand; a packed leading dimension
        equals that extent)."""
        if self.interleaved:
            return 1, 32, 32  # A n32 and B t32 need K % 32, C n32 needs N % 32
        mult = {"M": 1, "N": 1, "K": 1}
        la, lb, lc = self.layouts
        a, c = self.align_ab, self.align_c
        mult["K" if la == "r" else "M"] = max(mult["K" if la == "r" else "M"], a)
        mult["N" if lb == "r" else "K"] = max(mult["N" if lb == "r" else "K"], a)
        mult["N" if lc == "r" else "M"] = max(mult["N" if lc == "r" else "M"], c)
        return mult["M"], mult["N"], mult["K"]


KERNELS = {}


def _add(base, key, **changes):
    assert key not in KERNELS, key
    KERNELS[key] = replace(base, key=key, **changes)
    return key


ALL_LAYOUTS = ("rrr", "rrc", "rcr", "rcc", "crr", "crc", "ccr", "ccc")

# ---- f16 operands, f32 accumulation, [16, 8, 16] ------------------------------------------
F16 = KernelSpec("", "TensorOp", (16, 8, 16), "f16", "f32", "multiply_add", (128, 128, 32), 3,
                 (2, 2, 1), "rcr", 8, "f16", 8, "f32")
for _l in ALL_LAYOUTS:
    _add(F16, f"f16_{_l}", layouts=_l)
_add(F16, "f16_rcr_clamp", epilogue="LinearCombinationClamp")
for _act, _l in zip(ACTIVATIONS, ("rrr", "rcr", "crr", "ccr", "rrc", "rcc", "crc")):
    _add(F16, f"f16_{_act}", layouts=_l, epilogue="LinearCombinationGeneric", activation=_act)
for _swz, _l in zip(SWIZZLES[1:], ("rcr", "crr", "rrr", "ccc", "rcc")):
    _add(F16, f"f16_{_swz}", layouts=_l, swizzle=_swz)
_add(F16, "f16_rcc_f32out", layouts="rcc", out="f32", align_c=4)
_add(F16, "f16_rrr_t64x64x64", layouts="rrr", tile=(64, 64, 64), stages=5)
_add(F16, "f16_rcr_align2", align_ab=2, align_c=2)
# The two-stage mainloop (loads through registers): any alignment, for odd extents.
_add(F16, "f16_rcr_align1_s2", stages=2, align_ab=1, align_c=1)
_add(F16, "f16_crc_align1_s2", layouts="crc", tile=(256, 128, 32), warps=(4, 2, 1), stages=2,
     align_ab=1, align_c=1)
_add(F16, "f16_ccr_s2", layouts="ccr", stages=2)

# ---- f16 operands, f32 accumulation, [16, 8, 8] -------------------------------------------
F16_K8 = replace(F16, inst=(16, 8, 8))
_add(F16_K8, "f16k8_rrr", layouts="rrr")
_add(F16_K8, "f16k8_ccc_f32out", layouts="ccc", out="f32", align_c=4)

# ---- f16 operands, f16 accumulation and f16 epilogue, [16, 8, 16] -------------------------
F16ACC = replace(F16, acc="f16", compute="f16", tags=("f16acc",))
_add(F16ACC, "f16acc_rcr", layouts="rcr")
_add(F16ACC, "f16acc_crr", layouts="crr")
_add(F16ACC, "f16acc_rrc_relu", layouts="rrc", epilogue="LinearCombinationGeneric",
     activation="relu")

# ---- bf16 operands, f32 accumulation, [16, 8, 16] and [16, 8, 8] --------------------------
BF16 = replace(F16, element="bf16", out="bf16")
for _l in ("rrr", "rcr", "crc", "ccc"):
    _add(BF16, f"bf16_{_l}", layouts=_l)
_add(BF16, "bf16_rrr_align1_s2", layouts="rrr", tile=(64, 128, 32), stages=2, align_ab=1,
     align_c=1)
_add(BF16, "bf16_silu", layouts="rcr", epilogue="LinearCombinationGeneric", activation="silu")
_add(BF16, "bf16_gelu", layouts="crr", epilogue="LinearCombinationGeneric", activation="gelu")
BF16_K8 = replace(BF16, inst=(16, 8, 8))
_add(BF16_K8, "bf16k8_rcr", layouts="rcr")
_add(BF16_K8, "bf16k8_crr_f32out", layouts="crr", out="f32", align_c=4)

# ---- tf32 operands (f32 tensors), f32 accumulation, [16, 8, 8] ----------------------------
TF32 = KernelSpec("", "TensorOp", (16, 8, 8), "tf32", "f32", "multiply_add", (128, 128, 16), 4,
                  (2, 2, 1), "rcr", 4, "f32", 4, "f32")
for _l in ("rrr", "rcr", "crc", "ccc"):
    _add(TF32, f"tf32_{_l}", layouts=_l)
_add(TF32, "tf32_rrc_align1", layouts="rrc", align_ab=1, align_c=1)

# ---- f32 operands on tensor cores: the four math operations, [16, 8, 8] -------------------
F32TC = replace(TF32, element="f32")
_add(F32TC, "f32tc_rcr", layouts="rcr")
_add(F32TC, "f32tc_crr", layouts="crr")
for _l in ("rrr", "ccr", "rcc"):
    _add(F32TC, f"f32x3_{_l}", layouts=_l, math="multiply_add_fast_f32")
_add(F32TC, "f32x3_crc_align1", layouts="crc", math="multiply_add_fast_f32", align_ab=1,
     align_c=1)
for _l in ("rrr", "ccc"):
    _add(F32TC, f"f32h_{_l}", layouts=_l, math="multiply_add_fast_f16")
for _l in ("rcr", "crc"):
    _add(F32TC, f"f32b_{_l}", layouts=_l, math="multiply_add_fast_bf16")

# ---- f64 tensor op, [8, 8, 4] -------------------------------------------------------------
F64 = KernelSpec("", "TensorOp", (8, 8, 4), "f64", "f64", "multiply_add", (64, 64, 16), 4,
                 (2, 2, 1), "rcr", 1, "f64", 1, "f64")
for _l in ("rrr", "ccc", "rcr", "crc", "rcc"):
    _add(F64, f"f64_{_l}", layouts=_l)
_add(F64, "f64_hardswish", layouts="crr", epilogue="LinearCombinationGeneric",
     activation="hardswish")
_add(F64, "f64_gelu", layouts="rrc", epilogue="LinearCombinationGeneric", activation="gelu")

# ---- SIMT f32 (the seed example's tile) and SIMT f64, [1, 1, 1] ---------------------------
SIMT32 = KernelSpec("", "Simt", (1, 1, 1), "f32", "f32", "multiply_add", (128, 128, 8), 4,
                    (2, 4, 1), "rrr", 1, "f32", 1, "f32")
for _l in ALL_LAYOUTS:
    _add(SIMT32, f"simt32_{_l}", layouts=_l)
_add(SIMT32, "simt32_tanh", layouts="rcr", epilogue="LinearCombinationGeneric", activation="tanh")
_add(SIMT32, "simt32_leaky_relu", layouts="crc", epilogue="LinearCombinationGeneric",
     activation="leaky_relu")
_add(SIMT32, "simt32_HorizontalSwizzle", layouts="rrr", swizzle="HorizontalSwizzle")
_add(SIMT32, "simt32_BatchedIdentitySwizzle", layouts="ccc", swizzle="BatchedIdentitySwizzle")
SIMT64 = replace(SIMT32, element="f64", acc="f64", out="f64", compute="f64", tile=(64, 64, 8),
                 warps=(2, 2, 1))
for _l in ("rrr", "crc", "rcc"):
    _add(SIMT64, f"simt64_{_l}", layouts=_l)

# ---- int8 operands, int32 accumulation (saturating), [16, 8, 32] --------------------------
# Tensor-core int8 needs K-contiguous operands (A RowMajor, B ColumnMajor) or the interleaved
# triple; C may be row- or column-major.
I8 = KernelSpec("", "TensorOp", (16, 8, 32), "s8", "s32", "multiply_add_saturate", (128, 128, 64),
                3, (2, 2, 1), "rcr", 16, "s8", 16, "f32", epilogue="LinearCombinationClamp")
_add(I8, "i8_rcr_clamp", layouts="rcr")
_add(I8, "i8_rcc_clamp", layouts="rcc")
_add(I8, "i8_rcr_fastclamp", layouts="rcr", epilogue="FastLinearCombinationClamp")
_add(I8, "i8_rcr_s32", layouts="rcr", out="s32", align_c=4, epilogue="LinearCombination")
_add(I8, "i8_rcr_align4_clamp", layouts="rcr", align_ab=4, align_c=4)
_add(I8, "i8_interleaved", layouts="interleaved", align_c=8)

# ---- groups used by the tests -------------------------------------------------------------
# Every math-instruction row of the seed's table is covered by at least one key above:
MATH_ROWS = {
    "TensorOp f64 [8,8,4] multiply_add": "f64_rrr",
    "TensorOp tf32 -> f32 [16,8,8] multiply_add": "tf32_rrr",
    "TensorOp f16 -> f32 [16,8,8] multiply_add": "f16k8_rrr",
    "TensorOp bf16 -> f32 [16,8,8] multiply_add": "bf16k8_rcr",
    "TensorOp f32 -> f32 [16,8,8] multiply_add": "f32tc_rcr",
    "TensorOp f32 -> f32 [16,8,8] multiply_add_fast_f32": "f32x3_rrr",
    "TensorOp f32 -> f32 [16,8,8] multiply_add_fast_f16": "f32h_rrr",
    "TensorOp f32 -> f32 [16,8,8] multiply_add_fast_bf16": "f32b_rcr",
    "TensorOp f16 -> f16 [16,8,16] multiply_add": "f16acc_rcr",
    "TensorOp f16 -> f32 [16,8,16] multiply_add": "f16_rcr",
    "TensorOp bf16 -> f32 [16,8,16] multiply_add": "bf16_rcr",
    "TensorOp s8 -> s32 [16,8,32] multiply_add_saturate": "i8_rcr_clamp",
    "Simt f64 [1,1,1] multiply_add": "simt64_rrr",
    "Simt f32 [1,1,1] multiply_add": "simt32_rrr",
}

# The linear, non-clamping kernels whose serial split-K result stays exact (checked in tests).
SERIAL_SPLIT_K = ("f16_rcc_f32out", "f16_rcr", "f16acc_crr", "f16k8_ccc_f32out",
                  "bf16k8_crr_f32out", "tf32_crc", "f32x3_ccr", "f32h_ccc", "f64_rcc",
                  "simt32_rrr", "simt32_ccr", "simt64_crc", "i8_rcr_s32",
                  "f16_IdentitySwizzle2", "f16_HorizontalSwizzle", "simt32_HorizontalSwizzle")
# Parallel split-K compiles a companion module per operation on first use: keep this short.
PARALLEL_SPLIT_K = ("f16_rcc", "i8_rcr_clamp", "simt32_rrr", "f16_crc_align1_s2")
BATCHED = ("f16_rcr", "f16_ccc", "f16_BatchedIdentitySwizzle", "f16_IdentitySwizzle4",
           "f16acc_crr", "bf16_rrr", "tf32_crc", "f32x3_rcc", "f64_rcc", "simt32_rrr",
           "simt32_BatchedIdentitySwizzle", "simt64_rrr", "i8_rcr_clamp", "i8_rcc_clamp",
           "f16_relu")
ARRAY = ("f16_crr", "f16_BatchedIdentitySwizzle", "bf16_ccc", "tf32_rcr", "f64_crc",
         "simt32_rcc", "simt32_BatchedIdentitySwizzle", "simt64_rcc", "i8_rcr_clamp",
         "f16_IdentitySwizzle8")
ALIGN1 = tuple(k for k, s in KERNELS.items() if s.align_ab == 1 and s.align_c == 1
               and s.epilogue == "LinearCombination")
FLOAT_DATA = tuple(k for k, s in KERNELS.items()
                   if s.element in ("tf32", "f32", "f64") and s.epilogue == "LinearCombination")
SWIZZLE_KERNELS = ("f16_rcr", "simt32_rrr") + tuple(
    k for k, s in KERNELS.items() if s.swizzle != "IdentitySwizzle1")
ACTIVATION_KERNELS = tuple(k for k, s in KERNELS.items()
                           if s.epilogue == "LinearCombinationGeneric")
CLAMP_KERNELS = tuple(k for k, s in KERNELS.items() if s.clamps)


def _check_table():
    for group in (SERIAL_SPLIT_K, PARALLEL_SPLIT_K, BATCHED, ARRAY, MATH_ROWS.values(),
                  SWIZZLE_KERNELS):
        for key in group:
            assert key in KERNELS, key
    assert {KERNELS[k].swizzle for k in SWIZZLE_KERNELS} == set(SWIZZLES)
    assert {KERNELS[k].activation for k in ACTIVATION_KERNELS} == set(ACTIVATIONS)
    for key in SERIAL_SPLIT_K:  # serial split-K re-reads D: only linear epilogues stay exact
        assert KERNELS[key].epilogue == "LinearCombination", key


_check_table()
