// KernelFacts for ranking: the compiler's when known, else a prediction from the tile.
#include <algorithm>

#include "discover/register_file.hpp"
#include "tilecraft/discover/performance_model.hpp"

namespace tilecraft::discover {
namespace {

constexpr int kRegisterAllocationUnit = 8;
// setmaxnreg budget of the consumer (MMA) warpgroups of CUTLASS's warp-specialized SM90 kernels.
constexpr int kSm90ConsumerRegisters = 232;
// What a thread of an SM90 kernel holds beside its accumulators: less than on SM80, as operands
// stay in shared memory (wgmma reads them there).
constexpr int kSm90RegistersBesideAccumulators = 24;

int64_t sm90_consumer_threads(const TileDescription& tile) {
  switch (tile.kernel_schedule) {
    case KernelSchedule::TmaWarpSpecializedCooperative:
    case KernelSchedule::Auto:
      return 256;  // two warpgroups share a tile
    case KernelSchedule::TmaWarpSpecializedPingpong:
    case KernelSchedule::TmaWarpSpecialized:
      return 128;  // one warpgroup holds a whole tile
  }
  return 128;
}

int64_t sm90_launch_threads(const TileDescription& tile) {
  return tile.kernel_schedule == KernelSchedule::TmaWarpSpecialized ? 256 : 384;
}

KernelFacts predict(const GemmDescription& d) {
  const TileDescription& tile = d.tile;
  const MathInstruction& math = tile.math_instruction;
  const auto& s = tile.threadblock_shape;
  const int64_t accumulator_words = size_in_bits(math.element_accumulator) / 32;
  KernelFacts facts;
  facts.source = KernelFacts::Source::predicted;
  int64_t needed = 0;
  int64_t budget = kMaxRegistersPerThread;
  if (tile.is_sm90()) {
    const bool promotes =
        is_fp8(math.element_a) && math.math_operation != MathOperation::multiply_add_fast_accum;
    const int64_t accumulators =
        int64_t{s[0]} * s[1] / sm90_consumer_threads(tile) * accumulator_words * (promotes ? 2 : 1);
    needed = accumulators + kSm90RegistersBesideAccumulators;
    if (tile.kernel_schedule != KernelSchedule::TmaWarpSpecialized) budget = kSm90ConsumerRegisters;
  } else {
    const int64_t accumulators =
        int64_t{s[0]} * s[1] / std::max<int64_t>(1, tile.threads()) * accumulator_words;
    needed = accumulators + kSm80RegistersBesideAccumulators;
  }
  facts.registers = static_cast<int>(std::min<int64_t>(needed, budget));
  const int spilled_words = static_cast<int>(std::max<int64_t>(0, needed - budget));
  facts.spill_store_bytes = facts.spill_load_bytes = 4 * spilled_words;
  facts.stack_bytes = 4 * spilled_words;
  facts.static_smem_bytes = -1;
  return facts;
}

int register_limited_ctas(int registers, int64_t threads) {
  if (registers <= 0 || threads <= 0) return -1;
  const int64_t per_thread =
      (registers + kRegisterAllocationUnit - 1) / kRegisterAllocationUnit * kRegisterAllocationUnit;
  return static_cast<int>(std::max<int64_t>(1, kRegistersPerSm / (per_thread * threads)));
}

}  // namespace

KernelFacts kernel_facts(const GemmDescription& d, const std::string& kernel_name,
                         const DeviceTraits& device) {
  const int model_ctas = model_ctas_per_sm(d.tile, device);
  if (auto compiled = compiled_kernel_facts(kernel_name)) {
    KernelFacts facts = *compiled;
    const int64_t threads = d.tile.is_sm90() ? sm90_launch_threads(d.tile) : d.tile.threads();
    const int by_registers = register_limited_ctas(facts.registers, threads);
    facts.max_ctas_per_sm = by_registers < 0 ? model_ctas : std::min(model_ctas, by_registers);
    return facts;
  }
  KernelFacts facts = predict(d);
  facts.max_ctas_per_sm = model_ctas;
  return facts;
}

}  // namespace tilecraft::discover
