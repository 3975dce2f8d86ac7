#include "tilecraft/core/types.hpp"

#include <iterator>

namespace tilecraft {
namespace {

// table[value]: tables list an enum's values in order; `outside` for a value outside the enum.
template <class Enum, class T, size_t N>
T entry_of(Enum value, const T (&table)[N], T outside) {
  const auto index = static_cast<size_t>(value);
  return index < N ? table[index] : outside;
}

template <class Enum, size_t N>
std::string_view name_of(Enum value, const std::string_view (&names)[N]) {
  return entry_of(value, names, std::string_view("?"));
}

constexpr std::string_view kDataTypeShortNames[] = {"f64", "f32", "tf32", "f16",  "bf16",
                                                    "s8",  "u8",  "s32",  "e4m3", "e5m2"};
constexpr std::string_view kDataTypeLongNames[] = {
    "float64", "float32", "tfloat32", "float16",     "bfloat16",
    "int8",    "uint8",   "int32",    "float8_e4m3", "float8_e5m2"};
constexpr int kDataTypeBits[] = {64, 32, 32, 16, 16, 8, 8, 32, 8, 8};  // tf32 in 32 bits
static_assert(std::size(kDataTypeShortNames) == std::size(kAllDataTypes));
static_assert(std::size(kDataTypeLongNames) == std::size(kAllDataTypes));
static_assert(std::size(kDataTypeBits) == std::size(kAllDataTypes));

constexpr std::string_view kLayoutNames[] = {
    "RowMajor",   "ColumnMajor",    "RowMajorInterleaved32", "ColumnMajorInterleaved32",
    "TensorNHWC", "TensorNC32HW32", "TensorC32RSK32",        "TensorNDHWC"};
constexpr std::string_view kLayoutShortNames[] = {"t",    "n",        "t32",      "n32",
                                                  "nhwc", "nc32hw32", "c32rsk32", "ndhwc"};
static_assert(std::size(kLayoutNames) == std::size(kAllLayouts));
static_assert(std::size(kLayoutShortNames) == std::size(kAllLayouts));

constexpr std::string_view kMathOperationNames[] = {
    "multiply_add",          "multiply_add_saturate",  "multiply_add_fast_f32",
    "multiply_add_fast_f16", "multiply_add_fast_bf16", "multiply_add_fast_accum"};
static_assert(std::size(kMathOperationNames) ==
              static_cast<size_t>(MathOperation::multiply_add_fast_accum) + 1);

constexpr std::string_view kKernelScheduleNames[] = {
    "Auto", "TmaWarpSpecialized", "TmaWarpSpecializedPingpong", "TmaWarpSpecializedCooperative"};
static_assert(std::size(kKernelScheduleNames) ==
              static_cast<size_t>(KernelSchedule::TmaWarpSpecializedCooperative) + 1);

constexpr std::string_view kEpilogueScheduleNames[] = {"Auto", "TmaWarpSpecialized",
                                                       "TmaWarpSpecializedCooperative"};
static_assert(std::size(kEpilogueScheduleNames) ==
              static_cast<size_t>(EpilogueSchedule::TmaWarpSpecializedCooperative) + 1);

constexpr std::string_view kTileSchedulerNames[] = {"Persistent", "StreamK"};
static_assert(std::size(kTileSchedulerNames) == static_cast<size_t>(TileScheduler::StreamK) + 1);

}  // namespace

std::string_view short_name(DataType type) { return name_of(type, kDataTypeShortNames); }
std::string_view long_name(DataType type) { return name_of(type, kDataTypeLongNames); }

int size_in_bits(DataType type) { return entry_of(type, kDataTypeBits, 0); }

bool is_integer(DataType type) {
  return type == DataType::s8 || type == DataType::u8 || type == DataType::s32;
}
bool is_float(DataType type) { return !is_integer(type); }

std::string_view to_string(Layout layout) { return name_of(layout, kLayoutNames); }
std::string_view short_name(Layout layout) { return name_of(layout, kLayoutShortNames); }

bool is_matrix_layout(Layout layout) {
  return layout == Layout::RowMajor || layout == Layout::ColumnMajor ||
         layout == Layout::RowMajorInterleaved32 || layout == Layout::ColumnMajorInterleaved32;
}

bool is_interleaved(Layout layout) {
  return layout == Layout::RowMajorInterleaved32 || layout == Layout::ColumnMajorInterleaved32 ||
         layout == Layout::TensorNC32HW32 || layout == Layout::TensorC32RSK32;
}

std::string_view to_string(OpClass op_class) {
  return op_class == OpClass::Simt ? "Simt" : "TensorOp";
}

std::string_view to_string(MathOperation op) { return name_of(op, kMathOperationNames); }

std::string to_string(const GemmCoord& coord) {
  return std::to_string(coord.m) + "x" + std::to_string(coord.n) + "x" + std::to_string(coord.k);
}

std::string_view to_string(KernelSchedule schedule) {
  return name_of(schedule, kKernelScheduleNames);
}
std::string_view to_string(EpilogueSchedule schedule) {
  return name_of(schedule, kEpilogueScheduleNames);
}
std::string_view to_string(TileScheduler scheduler) {
  return name_of(scheduler, kTileSchedulerNames);
}

// Each name table lists every enumerator and answers "?" for anything else.
bool is_valid(DataType type) { return short_name(type) != "?"; }
bool is_valid(Layout layout) { return to_string(layout) != "?"; }
bool is_valid(OpClass op_class) {
  return op_class == OpClass::Simt || op_class == OpClass::TensorOp;
}
bool is_valid(MathOperation op) { return to_string(op) != "?"; }
bool is_valid(KernelSchedule schedule) { return to_string(schedule) != "?"; }
bool is_valid(EpilogueSchedule schedule) { return to_string(schedule) != "?"; }
bool is_valid(TileScheduler scheduler) { return to_string(scheduler) != "?"; }

}  // namespace tilecraft
