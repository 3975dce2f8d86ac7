// MathInstruction: the instruction the GPU's cores execute (seed 002, "Math Instruction").
#pragma once

#include <array>
#include <string>
#include <vector>

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/types.hpp"

namespace tilecraft {

struct MathInstruction {
  std::array<int, 3> instruction_shape{};
  DataType element_a = DataType::f32;
  DataType element_b = DataType::f32;
  DataType element_accumulator = DataType::f32;
  OpClass opcode_class = OpClass::Simt;
  MathOperation math_operation = MathOperation::multiply_add;

  // Checks the combination against the seed's table of valid instructions.
  static Result<MathInstruction> make(std::array<int, 3> instruction_shape, DataType element_a,
                                      DataType element_b, DataType element_accumulator,
                                      OpClass opcode_class, MathOperation math_operation);
  Status validate() const;

  // SM90 warpgroup MMA (wgmma): shape [64, N, K], K = 256 bits of the operand type.
  bool is_wgmma() const { return instruction_shape[0] == 64; }

  // "16816", "1688", "884", "" for SIMT: the shape part of CUTLASS's procedural names.
  std::string shape_name() const;
  friend bool operator==(const MathInstruction&, const MathInstruction&) = default;
};

// One row of the table of valid combinations, for documentation and enumeration.
struct MathInstructionRule {
  OpClass opcode_class;
  std::array<int, 3> instruction_shape;
  DataType element_ab;
  DataType element_accumulator;
  MathOperation math_operation;
};
// Every valid (op class, shape, A/B type, accumulator, math operation) the SM80 emitters take.
const std::vector<MathInstructionRule>& math_instruction_rules();

// The SM90 wgmma instructions: element types and math operations; the shape is [64, N, K] with
// N a multiple of 8 up to 256 and K = 256 / bits of the operand type.
struct WgmmaRule {
  DataType element_a;
  DataType element_b;
  DataType element_accumulator;
  MathOperation math_operation;
};
const std::vector<WgmmaRule>& wgmma_rules();

}  // namespace tilecraft
