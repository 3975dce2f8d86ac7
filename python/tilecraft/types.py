"""The seed's spellings of element types, layouts and swizzles: ``cutlass.float16``,
``cutlass.Float16``, ``cutlass.RowMajor``, ``cutlass.IdentitySwizzle1``, ..."""

from tilecraft._core import (BiasKind, DataType, EpilogueScheduleType, KernelScheduleType, Layout,
                             Swizzle, TileSchedulerType)

float64 = Float64 = DataType.f64
float32 = Float32 = DataType.f32
tfloat32 = TFloat32 = DataType.tf32
float16 = Float16 = DataType.f16
bfloat16 = BFloat16 = DataType.bf16
int8 = Int8 = DataType.s8
uint8 = Uint8 = UInt8 = DataType.u8
int32 = Int32 = DataType.s32
float8_e4m3 = Float8E4M3 = e4m3 = DataType.e4m3
float8_e5m2 = Float8E5M2 = e5m2 = DataType.e5m2

RowMajor = Layout.RowMajor
ColumnMajor = Layout.ColumnMajor
RowMajorInterleaved32 = Layout.RowMajorInterleaved32
ColumnMajorInterleaved32 = Layout.ColumnMajorInterleaved32
TensorNHWC = Layout.TensorNHWC
TensorNDHWC = Layout.TensorNDHWC
TensorNC32HW32 = Layout.TensorNC32HW32
TensorC32RSK32 = Layout.TensorC32RSK32

IdentitySwizzle1 = Swizzle.IdentitySwizzle1
IdentitySwizzle2 = Swizzle.IdentitySwizzle2
IdentitySwizzle4 = Swizzle.IdentitySwizzle4
IdentitySwizzle8 = Swizzle.IdentitySwizzle8
HorizontalSwizzle = Swizzle.HorizontalSwizzle
BatchedIdentitySwizzle = Swizzle.BatchedIdentitySwizzle

__all__ = [
    "Swizzle", "KernelScheduleType", "EpilogueScheduleType", "TileSchedulerType", "BiasKind",
    "float64", "Float64", "float32", "Float32", "tfloat32", "TFloat32", "float16", "Float16",
    "bfloat16", "BFloat16", "int8", "Int8", "uint8", "Uint8", "UInt8", "int32", "Int32",
    "float8_e4m3", "Float8E4M3", "e4m3", "float8_e5m2", "Float8E5M2", "e5m2",
    "RowMajor", "ColumnMajor", "RowMajorInterleaved32", "ColumnMajorInterleaved32",
    "TensorNHWC", "TensorNDHWC", "TensorNC32HW32", "TensorC32RSK32",
    "IdentitySwizzle1", "IdentitySwizzle2", "IdentitySwizzle4", "IdentitySwizzle8",
    "HorizontalSwizzle", "BatchedIdentitySwizzle",
]
