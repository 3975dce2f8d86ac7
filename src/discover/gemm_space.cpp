#include "tilecraft/discover/gemm_space.hpp"

#include <algorithm>
#include <memory>
#include <mutex>

namespace tilecraft::discover {
namespace {

using enum DataType;

constexpr Layout kRow = Layout::RowMajor;
constexpr Layout kColumn = Layout::ColumnMajor;

// The element types a kernel family takes: inputs, accumulator and the outputs it may write.
struct TypeFamily {
  DataType a, b, accumulator;
  std::vector<DataType> outputs;
  bool all_majorness;  // false: A row-major and B column-major only (K-major, "TN")
  bool scaled;
  MathFamily math = MathFamily::tensor_op;
  bool fast_accum = false;
};

int max_alignment(DataType type) { return 128 / size_in_bits(type); }

std::vector<TypeFamily> type_families(int arch) {
  if (arch == 90) {
    std::vector<TypeFamily> families = {
        {f16, f16, f32, {f16, f32, bf16}, true, false},   {f16, f16, f16, {f16}, true, false},
        {bf16, bf16, f32, {bf16, f32, f16}, true, false}, {tf32, tf32, f32, {f32}, false, false},
        {s8, s8, s32, {s32, s8, f32}, false, false},
    };
    for (DataType a : {e4m3, e5m2}) {
      for (DataType b : {e4m3, e5m2}) {
        for (bool fast_accum : {false, true}) {
          families.push_back(
              {a, b, f32, {bf16, f16, f32}, false, true, MathFamily::tensor_op, fast_accum});
        }
      }
    }
    return families;
  }
  return {
      {f16, f16, f32, {f16, f32}, true, false},
      {f16, f16, f16, {f16}, true, false},
      {bf16, bf16, f32, {bf16, f32}, true, false},
      {tf32, tf32, f32, {f32}, true, false},
      {s8, s8, s32, {s32}, false, false},
      {f64, f64, f64, {f64}, true, false, MathFamily::tensor_op_f64},
      {f32, f32, f32, {f32}, true, false, MathFamily::simt},
      {f64, f64, f64, {f64}, true, false, MathFamily::simt},
  };
}

// SM90 operands need 16-byte alignment (TMA); SM80 kernels also come in narrower accesses, for
// extents that are not multiples of 16 bytes: down to the 32 bits their cp.async mainloops copy
// at least, and for 16-bit types down to one element (the two-stage mainloop).
std::vector<int> alignments(int arch, const TypeFamily& family) {
  const DataType a = family.a;
  // CUDA-core and f64 kernels load one element at a time (CUTLASS's generator lists alignment 1).
  if (family.math != MathFamily::tensor_op) return {1};
  const int narrowest = arch == 90              ? max_alignment(a)
                        : size_in_bits(a) == 16 ? 1
                                                : std::max(1, 32 / size_in_bits(a));
  std::vector<int> out;
  for (int alignment = max_alignment(a); alignment >= narrowest; alignment /= 2) {
    out.push_back(alignment);
  }
  return out;
}

std::vector<GemmOperands> all_operand_sets(int arch) {
  std::vector<GemmOperands> sets;
  for (const TypeFamily& family : type_families(arch)) {
    std::vector<std::pair<Layout, Layout>> ab = {{kRow, kColumn}};
    if (family.all_majorness)
      ab = {{kRow, kColumn}, {kRow, kRow}, {kColumn, kColumn}, {kColumn, kRow}};
    for (DataType out : family.outputs) {
      for (const auto& [layout_a, layout_b] : ab) {
        for (Layout layout_out : {kRow, kColumn}) {
          for (int alignment : alignments(arch, family)) {
            GemmOperands o;
            o.a = family.a;
            o.b = family.b;
            o.out = out;
            o.accumulator = family.accumulator;
            o.layout_a = layout_a;
            o.layout_b = layout_b;
            o.layout_out = layout_out;
            o.alignment_a = alignment;
            o.alignment_b = alignment * size_in_bits(family.a) / size_in_bits(family.b);
            o.alignment_out = std::min(max_alignment(out), alignment);
            o.scaled = family.scaled;
            o.math = family.math;
            o.fast_accum = family.fast_accum;
            sets.push_back(o);
          }
        }
      }
    }
  }
  return sets;
}

std::vector<GemmDesign> sm90_designs() {
  std::vector<GemmDesign> designs;
  const std::array<int, 3> clusters[] = {{1, 1, 1}, {2, 1, 1}, {1, 2, 1}, {2, 2, 1}};
  for (int m : {64, 128, 256}) {
    for (int n : {16, 32, 64, 128, 192, 256}) {
      for (int k_bytes : {64, 128}) {
        for (const auto& cluster : clusters) {
          for (Swizzle swizzle : {Swizzle::IdentitySwizzle1, Swizzle::IdentitySwizzle8}) {
            GemmDesign d;
            d.tile_mn_kbytes = {m, n, k_bytes};
            d.cluster_shape = cluster;
            d.swizzle = swizzle;
            if (m <= 128) {
              d.kernel_schedule = KernelSchedule::TmaWarpSpecializedPingpong;
              designs.push_back(d);
            }
            if (m >= 128) {
              d.kernel_schedule = KernelSchedule::TmaWarpSpecializedCooperative;
              designs.push_back(d);
              if (swizzle == Swizzle::IdentitySwizzle1) {
                d.tile_scheduler = TileScheduler::StreamK;
                designs.push_back(d);
              }
            }
          }
        }
      }
    }
  }
  return designs;
}

// CUTLASS's SM80 tensor-op tiles (its generator's list): threadblock shape and warp counts.
std::vector<GemmDesign> sm80_designs() {
  struct Shape {
    int m, n;
    std::array<int, 3> warps;
  };
  const Shape shapes[] = {{256, 128, {4, 2, 1}}, {128, 256, {2, 4, 1}}, {256, 64, {4, 1, 1}},
                          {64, 256, {1, 4, 1}},  {128, 128, {2, 2, 1}}, {128, 64, {2, 2, 1}},
                          {64, 128, {2, 2, 1}},  {64, 64, {2, 2, 1}}};
  std::vector<GemmDesign> designs;
  // f64 tensor cores and CUDA cores: the tiles and stages of CUTLASS's generator (K in bytes:
  // 16 doubles; 8 floats or doubles).
  struct Listed {
    int m, n, k_bytes, stages;
    std::array<int, 3> warps;
    MathFamily math;
  };
  using enum MathFamily;
  const Listed listed[] = {
      {128, 128, 128, 3, {4, 2, 1}, tensor_op_f64},
      {64, 128, 128, 3, {2, 2, 1}, tensor_op_f64},
      {128, 64, 128, 3, {2, 2, 1}, tensor_op_f64},
      {64, 64, 128, 4, {2, 2, 1}, tensor_op_f64},
      {64, 32, 128, 4, {2, 2, 1}, tensor_op_f64},
      {32, 64, 128, 4, {2, 2, 1}, tensor_op_f64},
      {32, 32, 128, 5, {2, 2, 1}, tensor_op_f64},
      {16, 32, 128, 5, {1, 2, 1}, tensor_op_f64},
      {32, 16, 128, 5, {2, 1, 1}, tensor_op_f64},
      {256, 128, 32, 5, {4, 2, 1}, simt},
      {128, 256, 32, 5, {2, 4, 1}, simt},
      {128, 128, 32, 5, {4, 2, 1}, simt},
      {256, 128, 32, 4, {4, 2, 1}, simt},
      {128, 256, 32, 4, {2, 4, 1}, simt},
      {128, 128, 32, 4, {4, 2, 1}, simt},
      {128, 64, 32, 5, {2, 2, 1}, simt},
      {64, 128, 32, 5, {2, 2, 1}, simt},
      {64, 64, 32, 5, {2, 1, 1}, simt},
      {128, 32, 32, 5, {2, 1, 1}, simt},
      {32, 128, 32, 5, {1, 2, 1}, simt},
      {128, 128, 64, 3, {4, 2, 1}, simt},
      {128, 64, 64, 4, {2, 2, 1}, simt},
      {64, 128, 64, 4, {2, 2, 1}, simt},
      {64, 64, 64, 5, {2, 1, 1}, simt},
      {128, 32, 64, 5, {2, 1, 1}, simt},
      {32, 128, 64, 5, {1, 2, 1}, simt},
  };
  for (const Listed& l : listed) {
    for (Swizzle swizzle : {Swizzle::IdentitySwizzle1, Swizzle::IdentitySwizzle8}) {
      GemmDesign d;
      d.tile_mn_kbytes = {l.m, l.n, l.k_bytes};
      d.warp_count = l.warps;
      d.stages = l.stages;
      d.swizzle = swizzle;
      d.math = l.math;
      designs.push_back(d);
    }
  }
  for (const Shape& s : shapes) {
    for (int k_bytes : {64, 128}) {
      for (int stages : {2, 3, 4, 5}) {
        if (stages == 2 && k_bytes != 64) continue;  // the two-stage tiles of CUTLASS's generator
        for (Swizzle swizzle : {Swizzle::IdentitySwizzle1, Swizzle::IdentitySwizzle8}) {
          GemmDesign d;
          d.tile_mn_kbytes = {s.m, s.n, k_bytes};
          d.warp_count = s.warps;
          d.stages = stages;
          d.swizzle = swizzle;
          designs.push_back(d);
        }
      }
    }
  }
  return designs;
}

std::array<int, 3> sm80_instruction_shape(DataType a) {
  switch (size_in_bits(a)) {
    case 8:
      return {16, 8, 32};
    case 32:
      return {16, 8, 8};
    default:
      return {16, 8, 16};
  }
}

EpilogueFunctor epilogue_functor(int arch, const GemmOperands& o, const GemmEpilogue& fused) {
  EpilogueFunctor e;
  e.kind = fused.activation == Activation::identity ? EpilogueKind::LinearCombination
                                                    : EpilogueKind::LinearCombinationGeneric;
  e.activation = fused.activation;
  e.fusion.bias = fused.bias;
  if (fused.bias != BiasKind::none) e.fusion.element_bias = fused.element_bias;
  e.element_output = o.out;
  e.elements_per_access = o.alignment_out;
  e.element_accumulator = o.accumulator;
  // SM90 epilogues compute in f32 (s32 for s32 outputs); SM80 ones in the accumulator's type.
  e.element_epilogue = o.out == s32                           ? s32
                       : o.accumulator == f64                 ? f64
                       : (arch == 80 && o.accumulator == f16) ? f16
                                                              : f32;
  if (o.scaled) e.fusion.per_tensor_scales = true;
  return e;
}

}  // namespace

Result<GemmDescription> make_description(int arch, const GemmOperands& o, const GemmDesign& d,
                                         const GemmEpilogue& fused) {
  if (o.math != d.math) {
    return Status::invalid("the design is made for another family of math instructions");
  }
  const int k = d.tile_mn_kbytes[2] * 8 / size_in_bits(o.a);
  if (o.math == MathFamily::simt && k != 8) {
    return Status::invalid("CUDA-core tiles take 8 elements of K (CUTLASS's generator)");
  }
  if (arch == 80 && o.math == MathFamily::tensor_op && o.narrow_accesses() != (d.stages == 2)) {
    return Status::invalid(
        "the two-stage mainloop is in the space for accesses narrower than 32 bits only");
  }
  TileDescription tile;
  if (arch == 90 && o.a == tf32 && d.tile_mn_kbytes[1] < 32) {
    // CUTLASS 4.2's SM90 mainloop does not compile a tf32 B tile of 16 columns with the stage
    // count that fills shared memory (a "Shape Divisibility Condition" static assert, H100 run of
    // 2026-11-25): such kernels would only fail in the compiler.
    return Status::invalid("SM90 tf32 tiles need N >= 32 (CUTLASS 4.2)");
  }
  if (arch == 90) {
    auto math = MathInstruction::make(
        {64, d.tile_mn_kbytes[1], 256 / size_in_bits(o.a)}, o.a, o.b, o.accumulator,
        OpClass::TensorOp,
        o.fast_accum ? MathOperation::multiply_add_fast_accum : MathOperation::multiply_add);
    if (!math) return math.status();
    auto made = TileDescription::make_sm90({d.tile_mn_kbytes[0], d.tile_mn_kbytes[1], k}, d.stages,
                                           d.cluster_shape, *math, d.kernel_schedule,
                                           EpilogueSchedule::Auto, d.tile_scheduler);
    if (!made) return made.status();
    tile = *made;
  } else {
    const MathOperation op =
        o.a == s8 ? MathOperation::multiply_add_saturate : MathOperation::multiply_add;
    const bool simt = o.math == MathFamily::simt;
    const std::array<int, 3> shape = simt ? std::array{1, 1, 1}
                                     : o.math == MathFamily::tensor_op_f64
                                         ? std::array{8, 8, 4}
                                         : sm80_instruction_shape(o.a);
    auto math = MathInstruction::make(shape, o.a, o.b, o.accumulator,
                                      simt ? OpClass::Simt : OpClass::TensorOp, op);
    if (!math) return math.status();
    auto made = TileDescription::make({d.tile_mn_kbytes[0], d.tile_mn_kbytes[1], k}, d.stages,
                                      d.warp_count, *math);
    if (!made) return made.status();
    tile = *made;
  }
  return GemmDescription::make(
      arch, tile, {o.a, o.layout_a, o.alignment_a}, {o.b, o.layout_b, o.alignment_b},
      {o.out, o.layout_out, o.alignment_out}, epilogue_functor(arch, o, fused), d.swizzle);
}

GemmSpace::GemmSpace(int arch) : arch_(arch) {
  operands_ = all_operand_sets(arch);
  designs_ = arch == 90 ? sm90_designs() : sm80_designs();
  found_ = std::make_unique<std::once_flag[]>(operands_.size());
  by_operand_set_.resize(operands_.size());
}

const GemmSpace& GemmSpace::of(int arch) {
  static std::once_flag once80, once90;
  static std::unique_ptr<GemmSpace> space80, space90;
  if (arch == 90) {
    std::call_once(once90, [] { space90.reset(new GemmSpace(90)); });
    return *space90;
  }
  if (arch != 80)
    throw Error(Status::invalid("arch: expected 80 or 90, got " + std::to_string(arch)));
  std::call_once(once80, [] { space80.reset(new GemmSpace(80)); });
  return *space80;
}

size_t GemmSpace::set_of(size_t instance) const {
  const size_t set = instance / designs_.size();
  if (set >= operands_.size()) {
    throw Error(Status::invalid("instance: expected one of the space's instances, got " +
                                std::to_string(instance)));
  }
  return set;
}

size_t GemmSpace::design_index_of(size_t instance) const {
  set_of(instance);
  return instance % designs_.size();
}

const GemmOperands& GemmSpace::operands_of(size_t instance) const {
  return operands_[set_of(instance)];
}

const GemmDesign& GemmSpace::design_of(size_t instance) const {
  return designs_[design_index_of(instance)];
}

GemmDescription GemmSpace::description(size_t instance) const {
  return make_description(arch_, operands_of(instance), design_of(instance)).value();
}

Result<GemmDescription> GemmSpace::description(size_t instance,
                                               const GemmEpilogue& epilogue) const {
  return make_description(arch_, operands_of(instance), design_of(instance), epilogue);
}

const std::vector<uint32_t>& GemmSpace::instances_of(size_t operand_set) const {
  if (operand_set >= operands_.size()) {
    throw Error(Status::invalid("operand_set: expected one of the space's " +
                                std::to_string(operands_.size()) + ", got " +
                                std::to_string(operand_set)));
  }
  std::call_once(found_[operand_set], [&] {
    for (size_t d = 0; d < designs_.size(); ++d) {
      if (!make_description(arch_, operands_[operand_set], designs_[d])) continue;
      by_operand_set_[operand_set].push_back(
          static_cast<uint32_t>(operand_set * designs_.size() + d));
    }
  });
  return by_operand_set_[operand_set];
}

const std::vector<uint32_t>& GemmSpace::all_instances() const {
  std::call_once(all_found_, [&] {
    for (size_t set = 0; set < operands_.size(); ++set) {
      const std::vector<uint32_t>& found = instances_of(set);
      all_.insert(all_.end(), found.begin(), found.end());
    }
  });
  return all_;
}

}  // namespace tilecraft::discover
