// A small SM80 kernel the runtime tests compile with nvcc (SIMT f32, 64x64x8 tile), and the
// reason such a test must skip on this machine.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "tilecraft/tilecraft.hpp"

namespace tilecraft::runtime_test {

inline std::shared_ptr<GemmOperation> simt_f32(Layout layout_b = Layout::RowMajor, int stages = 4) {
  using enum DataType;
  auto math =
      MathInstruction::make({1, 1, 1}, f32, f32, f32, OpClass::Simt, MathOperation::multiply_add)
          .value();
  auto tile = TileDescription::make({64, 64, 8}, stages, {2, 2, 1}, math).value();
  auto row = TensorDescription::make(f32, Layout::RowMajor, 1).value();
  auto b = TensorDescription::make(f32, layout_b, 1).value();
  auto epilogue = EpilogueFunctor::linear_combination(f32, 1, f32, f32).value();
  return GemmOperation::make(80, tile, row, b, row, epilogue, Swizzle::IdentitySwizzle1).value();
}

// Empty when nvcc and the CUTLASS headers are there; otherwise what is missing.
inline std::string missing_toolchain() {
  if (access(settings().nvcc.c_str(), X_OK) != 0) return "no nvcc at '" + settings().nvcc + "'";
  if (!std::filesystem::exists(std::filesystem::path(settings().cutlass_dir) /
                               "include/cutlass/cutlass.h")) {
    return "no CUTLASS headers under '" + settings().cutlass_dir + "'";
  }
  return "";
}

}  // namespace tilecraft::runtime_test
