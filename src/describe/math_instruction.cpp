#include "tilecraft/describe/math_instruction.hpp"

#include "describe/checks.hpp"

namespace tilecraft {
namespace {

using describe::triple_text;

// Appends `entry` to the list that `text` holds from `list` on: " a" first, then ", b". With
// `once`, an entry the text already holds anywhere is left out.
void append_entry(std::string& text, size_t list, const std::string& entry, bool once = true) {
  if (once && text.find(entry) != std::string::npos) return;
  text += (text.size() == list ? " " : ", ") + entry;
}

std::vector<MathInstructionRule> build_rules() {
  using enum DataType;
  using enum MathOperation;
  std::vector<MathInstructionRule> rules = {
      {OpClass::TensorOp, {8, 8, 4}, f64, f64, multiply_add},
      {OpClass::TensorOp, {16, 8, 8}, tf32, f32, multiply_add},
      {OpClass::TensorOp, {16, 8, 8}, f16, f32, multiply_add},
      {OpClass::TensorOp, {16, 8, 8}, bf16, f32, multiply_add},
      {OpClass::TensorOp, {16, 8, 16}, f16, f16, multiply_add},
      {OpClass::TensorOp, {16, 8, 16}, f16, f32, multiply_add},
      {OpClass::TensorOp, {16, 8, 16}, bf16, f32, multiply_add},
      {OpClass::TensorOp, {16, 8, 32}, s8, s32, multiply_add_saturate},
      {OpClass::Simt, {1, 1, 1}, f64, f64, multiply_add},
      {OpClass::Simt, {1, 1, 1}, f32, f32, multiply_add},
      // CUTLASS's "hgemm" on CUDA cores (its depthwise convolutions are built on it).
      {OpClass::Simt, {1, 1, 1}, f16, f16, multiply_add},
      // Half-precision operands into float accumulators: tilecraft's direct convolution only.
      {OpClass::Simt, {1, 1, 1}, f16, f32, multiply_add},
      {OpClass::Simt, {1, 1, 1}, bf16, f32, multiply_add},
  };
  // f32 operands on tensor cores: rounded to tf32 (multiply_add), 3xTF32 (fast_f32), or
  // converted to f16 / bf16 (fast_f16 / fast_bf16).
  for (MathOperation op :
       {multiply_add, multiply_add_fast_f32, multiply_add_fast_f16, multiply_add_fast_bf16}) {
    rules.push_back({OpClass::TensorOp, {16, 8, 8}, f32, f32, op});
  }
  return rules;
}

std::vector<WgmmaRule> build_wgmma_rules() {
  using enum DataType;
  using enum MathOperation;
  std::vector<WgmmaRule> rules = {
      {f16, f16, f32, multiply_add},   {f16, f16, f16, multiply_add},
      {bf16, bf16, f32, multiply_add}, {tf32, tf32, f32, multiply_add},
      {f32, f32, f32, multiply_add},  // f32 operands run as tf32
      {s8, s8, s32, multiply_add},     {s8, s8, s32, multiply_add_saturate},
  };
  for (DataType a : {e4m3, e5m2}) {
    for (DataType b : {e4m3, e5m2}) {
      rules.push_back({a, b, f32, multiply_add});
      rules.push_back({a, b, f32, multiply_add_fast_accum});
    }
  }
  return rules;
}

Status validate_wgmma(const MathInstruction& inst) {
  const std::string who =
      "MathInstruction (SM90 wgmma " + triple_text(inst.instruction_shape) + "): ";
  if (inst.opcode_class != OpClass::TensorOp) {
    return Status::invalid(who +
                           "a [64, N, K] shape is a warpgroup tensor-op instruction; opcode_class "
                           "must be TensorOp, got " +
                           std::string(to_string(inst.opcode_class)));
  }
  const int n = inst.instruction_shape[1];
  if (n < 8 || n > 256 || n % 8 != 0) {
    return Status::invalid(who + "instruction_shape: N must be a multiple of 8 in [8, 256], got " +
                           std::to_string(n));
  }
  const int k = 256 / size_in_bits(inst.element_a);
  if (inst.instruction_shape[2] != k) {
    return Status::invalid(who + "instruction_shape: K must be " + std::to_string(k) + " for " +
                           spelled(inst.element_a) + " operands (32 bytes), got " +
                           std::to_string(inst.instruction_shape[2]));
  }
  bool types_match = false;
  for (const WgmmaRule& rule : wgmma_rules()) {
    if (rule.element_a != inst.element_a || rule.element_b != inst.element_b ||
        rule.element_accumulator != inst.element_accumulator) {
      continue;
    }
    types_match = true;
    if (rule.math_operation == inst.math_operation) return Status::ok();
  }
  std::string text = who;
  if (!types_match) {
    text += "element_a, element_b, element_accumulator: no wgmma takes " + spelled(inst.element_a) +
            " x " + spelled(inst.element_b) + " with a " + spelled(inst.element_accumulator) +
            " accumulator; valid (A, B, accumulator):";
    const size_t list = text.size();
    for (const WgmmaRule& rule : wgmma_rules()) {
      append_entry(text, list,
                   "(" + spelled(rule.element_a) + ", " + spelled(rule.element_b) + ", " +
                       spelled(rule.element_accumulator) + ")");
    }
  } else {
    text += "math_operation " + std::string(to_string(inst.math_operation)) +
            " is not valid for these types; expected one of";
    const size_t list = text.size();
    for (const WgmmaRule& rule : wgmma_rules()) {
      if (rule.element_a == inst.element_a && rule.element_b == inst.element_b &&
          rule.element_accumulator == inst.element_accumulator) {
        append_entry(text, list, std::string(to_string(rule.math_operation)), false);
      }
    }
  }
  return Status::invalid(text);
}

}  // namespace

const std::vector<WgmmaRule>& wgmma_rules() {
  static const std::vector<WgmmaRule> rules = build_wgmma_rules();
  return rules;
}

const std::vector<MathInstructionRule>& math_instruction_rules() {
  static const std::vector<MathInstructionRule> rules = build_rules();
  return rules;
}

Result<MathInstruction> MathInstruction::make(std::array<int, 3> instruction_shape,
                                              DataType element_a, DataType element_b,
                                              DataType element_accumulator, OpClass opcode_class,
                                              MathOperation math_operation) {
  MathInstruction inst{instruction_shape,   element_a,    element_b,
                       element_accumulator, opcode_class, math_operation};
  if (Status status = inst.validate(); !status) return status;
  return inst;
}

Status MathInstruction::validate() const {
  // Enumerators first: the rules below look types up and divide by their sizes.
  using describe::check_enumerator;
  const char* who = "MathInstruction: ";
  TILECRAFT_RETURN_IF_ERROR(check_enumerator(who, "element_a", "DataType", element_a));
  TILECRAFT_RETURN_IF_ERROR(check_enumerator(who, "element_b", "DataType", element_b));
  TILECRAFT_RETURN_IF_ERROR(
      check_enumerator(who, "element_accumulator", "DataType", element_accumulator));
  TILECRAFT_RETURN_IF_ERROR(check_enumerator(who, "opcode_class", "OpClass", opcode_class));
  TILECRAFT_RETURN_IF_ERROR(
      check_enumerator(who, "math_operation", "MathOperation", math_operation));
  if (is_wgmma()) return validate_wgmma(*this);
  if (element_a != element_b) {
    return Status::invalid("MathInstruction: element_a and element_b must be the same type, got " +
                           spelled(element_a) + " and " + spelled(element_b));
  }
  bool class_and_shape_match = false;
  bool types_match = false;
  for (const MathInstructionRule& rule : math_instruction_rules()) {
    if (rule.opcode_class != opcode_class || rule.instruction_shape != instruction_shape) continue;
    class_and_shape_match = true;
    if (rule.element_ab != element_a || rule.element_accumulator != element_accumulator) continue;
    types_match = true;
    if (rule.math_operation == math_operation) return Status::ok();
  }
  std::string text = "MathInstruction: ";
  if (!class_and_shape_match) {
    text += "instruction_shape " + triple_text(instruction_shape) + " is not a " +
            std::string(to_string(opcode_class)) + " instruction; expected one of";
    const size_t list = text.size();
    for (const auto& rule : math_instruction_rules()) {
      if (rule.opcode_class == opcode_class) {
        append_entry(text, list, triple_text(rule.instruction_shape));
      }
    }
  } else if (!types_match) {
    text += "element_a, element_accumulator: no " + std::string(to_string(opcode_class)) + " " +
            triple_text(instruction_shape) + " instruction takes " + spelled(element_a) +
            " operands with a " + spelled(element_accumulator) +
            " accumulator; valid (operands, accumulator):";
    const size_t list = text.size();
    for (const auto& rule : math_instruction_rules()) {
      if (rule.opcode_class == opcode_class && rule.instruction_shape == instruction_shape) {
        append_entry(
            text, list,
            "(" + spelled(rule.element_ab) + ", " + spelled(rule.element_accumulator) + ")");
      }
    }
  } else {
    text += "math_operation " + std::string(to_string(math_operation)) + " is not valid for " +
            spelled(element_a) + " -> " + spelled(element_accumulator) + " on " +
            std::string(to_string(opcode_class)) + " " + triple_text(instruction_shape) +
            "; expected one of";
    const size_t list = text.size();
    for (const auto& rule : math_instruction_rules()) {
      if (rule.opcode_class == opcode_class && rule.instruction_shape == instruction_shape &&
          rule.element_ab == element_a && rule.element_accumulator == element_accumulator) {
        append_entry(text, list, std::string(to_string(rule.math_operation)), false);
      }
    }
  }
  return Status::invalid(text);
}

std::string MathInstruction::shape_name() const {
  if (opcode_class == OpClass::Simt) return "";
  return std::to_string(instruction_shape[0]) + std::to_string(instruction_shape[1]) +
         std::to_string(instruction_shape[2]);
}

}  // namespace tilecraft
