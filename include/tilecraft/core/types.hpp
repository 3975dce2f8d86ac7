// The vocabulary every layer shares: element types, layouts, op classes, math operations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tilecraft {

enum class DataType : uint8_t { f64, f32, tf32, f16, bf16, s8, u8, s32, e4m3, e5m2 };
inline constexpr DataType kAllDataTypes[] = {
    DataType::f64, DataType::f32, DataType::tf32, DataType::f16,  DataType::bf16,
    DataType::s8,  DataType::u8,  DataType::s32,  DataType::e4m3, DataType::e5m2};

// Short name used in kernel names ("f16"), and the seed's spelling ("float16").
std::string_view short_name(DataType type);
std::string_view long_name(DataType type);
int size_in_bits(DataType type);
bool is_integer(DataType type);
bool is_float(DataType type);
// Bits a memory element occupies; tf32 is stored as a 32-bit float.
inline int storage_bytes(DataType type) { return size_in_bits(type) / 8; }
inline bool is_fp8(DataType type) { return type == DataType::e4m3 || type == DataType::e5m2; }

enum class Layout : uint8_t {
  RowMajor,
  ColumnMajor,
  RowMajorInterleaved32,
  ColumnMajorInterleaved32,
  TensorNHWC,
  TensorNC32HW32,
  TensorC32RSK32,
  TensorNDHWC,  // 3-D convolutions: N x D x H x W x C (filters K x T x R x S x C)
};
inline constexpr Layout kAllLayouts[] = {Layout::RowMajor,
                                         Layout::ColumnMajor,
                                         Layout::RowMajorInterleaved32,
                                         Layout::ColumnMajorInterleaved32,
                                         Layout::TensorNHWC,
                                         Layout::TensorNC32HW32,
                                         Layout::TensorC32RSK32,
                                         Layout::TensorNDHWC};

std::string_view to_string(Layout layout);

// The spellings error messages use: "float16", "RowMajor".
inline std::string spelled(DataType type) { return std::string(long_name(type)); }
inline std::string spelled(Layout layout) { return std::string(to_string(layout)); }
// CUTLASS's one-letter tag: t (row-major, "transposed"), n (column-major), and so on.
std::string_view short_name(Layout layout);
bool is_matrix_layout(Layout layout);
bool is_interleaved(Layout layout);

enum class OpClass : uint8_t { Simt, TensorOp };
std::string_view to_string(OpClass op_class);

enum class MathOperation : uint8_t {
  multiply_add,
  multiply_add_saturate,
  multiply_add_fast_f32,
  multiply_add_fast_f16,
  multiply_add_fast_bf16,
  multiply_add_fast_accum,  // SM90 fp8: accumulate in the tensor core's fast (less exact) mode
};
std::string_view to_string(MathOperation op);

// SM90 (CUTLASS 3.x) kernel structure. Auto lets tilecraft choose from the tile shape.
enum class KernelSchedule : uint8_t {
  Auto,
  TmaWarpSpecialized,             // one consumer warpgroup per tile, not persistent
  TmaWarpSpecializedPingpong,     // persistent; two consumer warpgroups alternate tiles
  TmaWarpSpecializedCooperative,  // persistent; two consumer warpgroups share a tile
};
std::string_view to_string(KernelSchedule schedule);

enum class EpilogueSchedule : uint8_t {
  Auto,  // the one that matches the kernel schedule
  TmaWarpSpecialized,
  TmaWarpSpecializedCooperative,
};
std::string_view to_string(EpilogueSchedule schedule);

enum class TileScheduler : uint8_t {
  Persistent,  // data-parallel tiles over a persistent grid
  StreamK,     // stream-K, and split-K when the arguments ask for split-K slices
};
std::string_view to_string(TileScheduler scheduler);

struct GemmCoord {
  int m = 0, n = 0, k = 0;
  friend bool operator==(const GemmCoord&, const GemmCoord&) = default;
};

struct MatrixCoord {
  int row = 0, column = 0;
  friend bool operator==(const MatrixCoord&, const MatrixCoord&) = default;
};

struct Tensor4DCoord {
  int n = 0, h = 0, w = 0, c = 0;
  friend bool operator==(const Tensor4DCoord&, const Tensor4DCoord&) = default;
};

std::string to_string(const GemmCoord& coord);

// Whether a value is one of its type's enumerators: a C++ caller can cast any byte to an enum,
// so validation checks this before it looks a value up or divides by its size.
bool is_valid(DataType type);
bool is_valid(Layout layout);
bool is_valid(OpClass op_class);
bool is_valid(MathOperation op);
bool is_valid(KernelSchedule schedule);
bool is_valid(EpilogueSchedule schedule);
bool is_valid(TileScheduler scheduler);

}  // namespace tilecraft
