#include <array>
#include <string>

#include "emit/sm80_gemm_parts.hpp"

namespace tilecraft::emit {
namespace {

std::string shape_text(const std::array<int, 3>& shape) {
  return std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" + std::to_string(shape[2]);
}

void add(std::string& out, std::string_view key, std::string_view value) {
  if (!out.empty()) out += ';';
  out += key;
  out += '=';
  out += value;
}

}  // namespace

std::string gemm_metadata(const GemmEntry& entry) {
  const GemmDescription& d = entry.description;
  const MathInstruction& math = d.tile.math_instruction;
  std::string out;
  add(out, "kind",
      d.is_grouped()
          ? "grouped"
          : (entry.kind == GemmEntryKind::kUniversal ? "universal" : "split_k_parallel"));
  if (d.is_grouped()) add(out, "scheduler_mode", to_string(d.scheduler_mode));
  if (d.is_conv()) {
    add(out, "conv_kind", to_string(d.conv.kind));
    add(out, "iterator_algorithm", to_string(d.conv.iterator_algorithm));
    add(out, "stride_support", to_string(d.conv.stride_support));
    if (d.conv.group_mode != GroupMode::None) add(out, "group_mode", to_string(d.conv.group_mode));
  }
  add(out, "arch", std::to_string(d.arch));
  add(out, "op_class", to_string(math.opcode_class));
  add(out, "inst_shape", shape_text(math.instruction_shape));
  add(out, "math_operation", to_string(math.math_operation));
  add(out, "element_a", short_name(d.A.element));
  add(out, "element_b", short_name(d.B.element));
  add(out, "element_c", short_name(d.C.element));
  add(out, "element_accumulator", short_name(math.element_accumulator));
  add(out, "layout_a", to_string(d.A.layout));
  add(out, "layout_b", to_string(d.B.layout));
  add(out, "layout_c", to_string(d.C.layout));
  add(out, "alignment_a", std::to_string(d.A.alignment));
  add(out, "alignment_b", std::to_string(d.B.alignment));
  add(out, "alignment_c", std::to_string(d.C.alignment));
  add(out, "tile", shape_text(d.tile.threadblock_shape));
  add(out, "stages", std::to_string(d.tile.stages));
  add(out, "warps", shape_text(d.tile.warp_count));
  add(out, "epilogue", to_string(d.epilogue.kind));
  add(out, "element_epilogue", short_name(d.epilogue.element_epilogue));
  add(out, "epilogue_vector", std::to_string(d.epilogue.elements_per_access));
  add(out, "activation", to_string(d.epilogue.activation));
  add(out, "swizzle", to_string(d.swizzle));
  if (d.tile.is_sm90()) {
    add(out, "cluster", shape_text(d.tile.cluster_shape));
    add(out, "kernel_schedule", to_string(d.tile.kernel_schedule));
    add(out, "epilogue_schedule", to_string(d.tile.epilogue_schedule));
    add(out, "tile_scheduler", to_string(d.tile.tile_scheduler));
    const EpilogueFusion& f = d.epilogue.fusion;
    add(out, "bias", to_string(f.bias));
    if (f.bias != BiasKind::none) add(out, "element_bias", short_name(f.element_bias));
    add(out, "aux", f.aux_output ? short_name(f.element_aux) : "none");
    add(out, "scales", f.per_tensor_scales ? "per_tensor" : "none");
  }
  return out;
}

}  // namespace tilecraft::emit
