"""`import tilecraft` is cheap and exports the seed's names."""

import subprocess
import sys


# The import's speed (a warm process reaches its first launch within 100 ms of it) is measured by
# bench/bench_warm_start.py; here, that it does no CUDA work and loads no framework, and a bound
# that only a compile or a device initialization at import would pass (0.1 s on the GPU machine,
# over 2 s on a loaded two-core one).
def test_import_is_fast_and_does_no_cuda_work():
    code = ("import time, sys; t = time.perf_counter(); import tilecraft; "
            "print(time.perf_counter() - t); "
            "print(any(m in sys.modules for m in ('torch', 'cupy', 'numpy'))); "
            "print(any('libcuda.so' in line for line in open('/proc/self/maps')))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(3)]
    best = min(float(out[0]) for out in runs)
    assert best < 10, f"import tilecraft took {best:.3f} s"
    assert runs[0][1] == "False", "import tilecraft must not import torch, cupy or numpy"
    assert runs[0][2] == "False", "import tilecraft loaded the CUDA driver (libcuda.so)"


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
