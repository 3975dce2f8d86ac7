// What the kernel APIs of every family ask of a caller's operand types.
#pragma once

#include <string>

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/types.hpp"

namespace tilecraft::api {

// A tf32 kernel reads f32 tensors; every other kernel reads its own element type.
inline bool element_matches(DataType kernel, DataType tensor) {
  return kernel == tensor || (kernel == DataType::tf32 && tensor == DataType::f32);
}

inline Status unsupported_operand(const char* operand, const std::string& what) {
  return Status::invalid(std::string("Operand `") + operand + "` is unsupported: " + what);
}

inline bool is_accumulator_type(DataType type) {
  return type == DataType::f32 || type == DataType::f16 || type == DataType::s32 ||
         type == DataType::f64;
}

}  // namespace tilecraft::api
