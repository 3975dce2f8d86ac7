#include "tilecraft/core/types.hpp"

namespace tilecraft {

std::string_view short_name(DataType type) {
  switch (type) {
    case DataType::f64:
      return "f64";
    case DataType::f32:
      return "f32";
    case DataType::tf32:
      return "tf32";
    case DataType::f16:
      return "f16";
    case DataType::bf16:
      return "bf16";
    case DataType::s8:
      return "s8";
    case DataType::u8:
      return "u8";
    case DataType::s32:
      return "s32";
    case DataType::e4m3:
      return "e4m3";
    case DataType::e5m2:
      return "e5m2";
  }
  return "?";
}

std::string_view long_name(DataType type) {
  switch (type) {
    case DataType::f64:
      return "float64";
    case DataType::f32:
      return "float32";
    case DataType::tf32:
      return "tfloat32";
    case DataType::f16:
      return "float16";
    case DataType::bf16:
      return "bfloat16";
    case DataType::s8:
      return "int8";
    case DataType::u8:
      return "uint8";
    case DataType::s32:
      return "int32";
    case DataType::e4m3:
      return "float8_e4m3";
    case DataType::e5m2:
      return "float8_e5m2";
  }
  return "?";
}

int size_in_bits(DataType type) {
  switch (type) {
    case DataType::f64:
      return 64;
    case DataType::f32:
    case DataType::tf32:
    case DataType::s32:
      return 32;
    case DataType::f16:
    case DataType::bf16:
      return 16;
    case DataType::s8:
    case DataType::u8:
    case DataType::e4m3:
    case DataType::e5m2:
      return 8;
  }
  return 0;
}

bool is_integer(DataType type) {
  return type == DataType::s8 || type == DataType::u8 || type == DataType::s32;
}
bool is_float(DataType type) { return !is_integer(type); }

std::optional<DataType> data_type_from_name(std::string_view name) {
  for (DataType type : kAllDataTypes) {
    if (name == short_name(type) || name == long_name(type)) return type;
  }
  return std::nullopt;
}

std::string_view to_string(Layout layout) {
  switch (layout) {
    case Layout::RowMajor:
      return "RowMajor";
    case Layout::ColumnMajor:
      return "ColumnMajor";
    case Layout::RowMajorInterleaved32:
      return "RowMajorInterleaved32";
    case Layout::ColumnMajorInterleaved32:
      return "ColumnMajorInterleaved32";
    case Layout::TensorNHWC:
      return "TensorNHWC";
    case Layout::TensorNC32HW32:
      return "TensorNC32HW32";
    case Layout::TensorC32RSK32:
      return "TensorC32RSK32";
    case Layout::TensorNDHWC:
      return "TensorNDHWC";
  }
  return "?";
}

std::string_view short_name(Layout layout) {
  switch (layout) {
    case Layout::RowMajor:
      return "t";
    case Layout::ColumnMajor:
      return "n";
    case Layout::RowMajorInterleaved32:
      return "t32";
    case Layout::ColumnMajorInterleaved32:
      return "n32";
    case Layout::TensorNHWC:
      return "nhwc";
    case Layout::TensorNC32HW32:
      return "nc32hw32";
    case Layout::TensorC32RSK32:
      return "c32rsk32";
    case Layout::TensorNDHWC:
      return "ndhwc";
  }
  return "?";
}

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

std::string_view to_string(MathOperation op) {
  switch (op) {
    case MathOperation::multiply_add:
      return "multiply_add";
    case MathOperation::multiply_add_saturate:
      return "multiply_add_saturate";
    case MathOperation::multiply_add_fast_f32:
      return "multiply_add_fast_f32";
    case MathOperation::multiply_add_fast_f16:
      return "multiply_add_fast_f16";
    case MathOperation::multiply_add_fast_bf16:
      return "multiply_add_fast_bf16";
    case MathOperation::multiply_add_fast_accum:
      return "multiply_add_fast_accum";
  }
  return "?";
}

std::string to_string(const GemmCoord& coord) {
  return std::to_string(coord.m) + "x" + std::to_string(coord.n) + "x" + std::to_string(coord.k);
}

std::string_view to_string(KernelSchedule schedule) {
  switch (schedule) {
    case KernelSchedule::Auto:
      return "Auto";
    case KernelSchedule::TmaWarpSpecialized:
      return "TmaWarpSpecialized";
    case KernelSchedule::TmaWarpSpecializedPingpong:
      return "TmaWarpSpecializedPingpong";
    case KernelSchedule::TmaWarpSpecializedCooperative:
      return "TmaWarpSpecializedCooperative";
  }
  return "?";
}

std::string_view to_string(EpilogueSchedule schedule) {
  switch (schedule) {
    case EpilogueSchedule::Auto:
      return "Auto";
    case EpilogueSchedule::TmaWarpSpecialized:
      return "TmaWarpSpecialized";
    case EpilogueSchedule::TmaWarpSpecializedCooperative:
      return "TmaWarpSpecializedCooperative";
  }
  return "?";
}

std::string_view to_string(TileScheduler scheduler) {
  switch (scheduler) {
    case TileScheduler::Persistent:
      return "Persistent";
    case TileScheduler::StreamK:
      return "StreamK";
  }
  return "?";
}

// Each to_string lists every enumerator and answers "?" for anything else.
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
