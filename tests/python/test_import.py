"""`import tilecraft` is cheap and exports the seed's names."""

import subprocess
import sys
import time


def test_import_is_fast_and_does_no_cuda_work():
    code = ("import time, sys; t = time.perf_counter(); import tilecraft; "
            "print(time.perf_counter() - t); "
            "print(any(m in sys.modules for m in ('torch', 'cupy', 'numpy')))")
    best = min(
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout.split()[0])
        for _ in range(3))
    assert best < 0.3, f"import tilecraft took {best:.3f} s"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[1] == "False", "import tilecraft must not import torch, cupy or numpy"


def test_seed_spellings():
    import tilecraft as cutlass

    assert cutlass.float16 == cutlass.Float16 == cutlass.DataType.f16
    assert cutlass.bfloat16 == cutlass.BFloat16
    assert cutlass.float32 == cutlass.Float32 and cutlass.float64 == cutlass.Float64
    assert cutlass.tfloat32 == cutlass.TFloat32 and cutlass.int8 == cutlass.Int8
    assert cutlass.uint8 == cutlass.UInt8 and cutlass.int32 == cutlass.Int32
    assert cutlass.float8_e4m3 == cutlass.Float8E4M3 and cutlass.float8_e5m2 == cutlass.Float8E5M2
    for name in ("RowMajor", "ColumnMajor", "RowMajorInterleaved32", "ColumnMajorInterleaved32",
                 "TensorNHWC", "TensorNC32HW32", "TensorC32RSK32", "IdentitySwizzle1",
                 "IdentitySwizzle2", "IdentitySwizzle4", "IdentitySwizzle8", "HorizontalSwizzle",
                 "BatchedIdentitySwizzle"):
        assert hasattr(cutlass, name), name
    assert cutlass.OpClass.Simt != cutlass.OpClass.TensorOp
    for op in ("multiply_add", "multiply_add_saturate", "multiply_add_fast_f32",
               "multiply_add_fast_f16", "multiply_add_fast_bf16"):
        assert hasattr(cutlass.MathOperation, op)
    for mode in ("Gemm", "GemmSplitKParallel", "Batched", "Array"):
        assert hasattr(cutlass.gemm.Mode, mode)
    coord = cutlass.gemm.GemmCoord(512, 256, 128)
    assert (coord.m(), coord.n(), coord.k()) == (512, 256, 128)
    assert cutlass.MatrixCoord(3, 4).column() == 4
    assert cutlass.Tensor4DCoord(1, 2, 3, 4).c() == 4


def test_star_import_gives_seed_names():
    namespace = {}
    exec("from tilecraft import *", namespace)
    for name in ("MathInstruction", "TileDescription", "TensorDescription", "LinearCombination",
                 "LinearCombinationClamp", "FastLinearCombinationClamp",
                 "LinearCombinationGeneric", "GemmOperationUniversal", "GemmArguments",
                 "MathOperation", "relu", "gelu", "get_memory_pool", "compiler", "gemm"):
        assert name in namespace, name
