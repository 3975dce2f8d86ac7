#include "tilecraft/describe/tile_description.hpp"

#include <algorithm>

#include "describe/checks.hpp"
#include "describe/sm90_tile_rules.hpp"

namespace tilecraft {
namespace {

using describe::check_enumerator;
using describe::check_extents;
using describe::saturating_product;

// The registers one thread can have (sm_80, sm_90): the register file's per-thread limit.
constexpr int64_t kMaxRegistersPerThread = 255;

// The enums of a tile (SM80 or SM90) hold enumerators.
Status check_tile_enumerators(const TileDescription& tile, const std::string& who) {
  TILECRAFT_RETURN_IF_ERROR(
      check_enumerator(who, "kernel_schedule", "KernelSchedule", tile.kernel_schedule));
  TILECRAFT_RETURN_IF_ERROR(
      check_enumerator(who, "epilogue_schedule", "EpilogueSchedule", tile.epilogue_schedule));
  return check_enumerator(who, "tile_scheduler", "TileScheduler", tile.tile_scheduler);
}

}  // namespace

Result<TileDescription> TileDescription::make(std::array<int, 3> threadblock_shape, int stages,
                                              std::array<int, 3> warp_count,
                                              const MathInstruction& math) {
  TileDescription tile{threadblock_shape, stages, warp_count, math};
  if (Status status = tile.validate(); !status) return status;
  return tile;
}

Result<TileDescription> TileDescription::make_sm90(std::array<int, 3> threadblock_shape, int stages,
                                                   std::array<int, 3> cluster_shape,
                                                   const MathInstruction& math,
                                                   KernelSchedule kernel_schedule,
                                                   EpilogueSchedule epilogue_schedule,
                                                   TileScheduler tile_scheduler) {
  if (!math.is_wgmma()) {
    return Status::invalid(
        "TileDescription: math_instruction: an SM90 tile needs a wgmma instruction, "
        "instruction_shape [64, N, K]; got " +
        describe::triple_text(math.instruction_shape));
  }
  TileDescription tile{threadblock_shape, stages,          {0, 0, 0},         math,
                       cluster_shape,     kernel_schedule, epilogue_schedule, tile_scheduler};
  tile.kernel_schedule = resolve_kernel_schedule(tile);
  if (tile.epilogue_schedule == EpilogueSchedule::Auto) {
    tile.epilogue_schedule = matching_epilogue_schedule(tile.kernel_schedule);
  }
  if (Status status = tile.validate(); !status) return status;
  return tile;
}

std::array<int, 3> TileDescription::warp_shape() const {
  return {threadblock_shape[0] / warp_count[0], threadblock_shape[1] / warp_count[1],
          threadblock_shape[2] / warp_count[2]};
}

int64_t TileDescription::threads() const {
  return saturating_product({32, warp_count[0], warp_count[1], warp_count[2]});
}

int64_t TileDescription::mainloop_shared_memory_bytes() const {
  const int64_t bytes_a = size_in_bits(math_instruction.element_a) / 8;
  const int64_t bytes_b = size_in_bits(math_instruction.element_b) / 8;
  // Each term is at most 2^31 * 8: their sum fits; the product saturates.
  return saturating_product({stages, threadblock_shape[2],
                             threadblock_shape[0] * bytes_a + threadblock_shape[1] * bytes_b});
}

Status TileDescription::validate() const {
  const std::string who = is_sm90() ? "TileDescription (SM90): " : "TileDescription: ";
  TILECRAFT_RETURN_IF_ERROR(check_tile_enumerators(*this, who));
  if (is_sm90()) return validate_sm90_tile(*this);
  TILECRAFT_RETURN_IF_ERROR(math_instruction.validate());
  if (cluster_shape != std::array<int, 3>{1, 1, 1} || kernel_schedule != KernelSchedule::Auto ||
      epilogue_schedule != EpilogueSchedule::Auto || tile_scheduler != TileScheduler::Persistent ||
      mma_promotion_interval != 0) {
    return Status::invalid(
        "TileDescription: cluster_shape, kernel_schedule, epilogue_schedule, tile_scheduler and "
        "mma_promotion_interval are SM90 settings; this tile's math instruction is an SM80 "
        "mma.sync shape (SM90 tiles use a wgmma shape [64, N, K])");
  }
  // Bounds first: every size computed below is then small.
  TILECRAFT_RETURN_IF_ERROR(
      check_extents(who, "threadblock_shape", threadblock_shape, 1, kMaxThreadblockExtent));
  TILECRAFT_RETURN_IF_ERROR(check_extents(who, "warp_count", warp_count, 1, kMaxWarpCount,
                                          "a threadblock holds at most 1024 threads, 32 warps"));
  if (stages < 2 || stages > kMaxStagesSm80) {
    return Status::invalid("TileDescription: stages must be in [2, " +
                           std::to_string(kMaxStagesSm80) + "], got " + std::to_string(stages));
  }
  const char* dims = "MNK";
  for (int i = 0; i < 3; ++i) {
    if (threadblock_shape[i] % warp_count[i] != 0) {
      return Status::invalid(
          std::string("TileDescription: warp_count ") + describe::triple_text(warp_count) +
          " does not divide threadblock_shape " + describe::triple_text(threadblock_shape) +
          " in " + dims[i] + " (" + std::to_string(threadblock_shape[i]) + " % " +
          std::to_string(warp_count[i]) + " != 0)");
    }
  }
  if (warp_count[2] != 1) {
    return Status::unsupported("TileDescription: warp_count " + describe::triple_text(warp_count) +
                               ": the SM80 multistage mainloop partitions warps over M and N only; "
                               "expected warp_count[2] == 1");
  }
  if (threads() > kMaxThreadsPerBlock) {
    return Status::invalid("TileDescription: warp_count " + describe::triple_text(warp_count) +
                           " makes " + std::to_string(threads()) +
                           " threads; a threadblock holds at most 1024");
  }
  const auto warp = warp_shape();
  const auto& inst = math_instruction.instruction_shape;
  for (int i = 0; i < 3; ++i) {
    if (warp[i] % inst[i] != 0) {
      return Status::invalid(
          std::string("TileDescription: the warp tile ") + describe::triple_text(warp) +
          " (threadblock_shape / warp_count) is not a multiple of the instruction shape " +
          describe::triple_text(inst) + " in " + dims[i]);
    }
  }
  const bool sixteen_bit = size_in_bits(math_instruction.element_a) == 16 &&
                           size_in_bits(math_instruction.element_b) == 16;
  if (math_instruction.opcode_class == OpClass::TensorOp && stages < 3 &&
      !(stages == 2 && sixteen_bit)) {
    return Status::unsupported(
        "TileDescription: SM80 tensor-op kernels use the multistage (cp.async) mainloop, stages "
        ">= 3, or for 16-bit operands the two-stage mainloop, stages = 2; got stages " +
        std::to_string(stages) + " with " + spelled(math_instruction.element_a) + " operands");
  }
  if (math_instruction.opcode_class == OpClass::Simt) {
    // CUTLASS's SM80 SIMT mainloop (default_mma_core_sm80.h) spreads a warp's 32 threads 4 x 8
    // over the warp tile; each thread computes its part in lanes of up to 128 bits.
    if (warp[0] % 4 != 0 || warp[1] % 8 != 0) {
      return Status::invalid("TileDescription: the SIMT warp tile " + describe::triple_text(warp) +
                             " (threadblock_shape / warp_count) must be a multiple of 4 in M and "
                             "of 8 in N (a warp's 32 threads, 4 x 8)");
    }
    const int thread_m = warp[0] / 4, thread_n = warp[1] / 8;
    const int lane_m = std::min(128 / size_in_bits(math_instruction.element_a), thread_m);
    const int lane_n = std::min(128 / size_in_bits(math_instruction.element_b), thread_n);
    if (thread_m % lane_m != 0 || thread_n % lane_n != 0) {
      return Status::invalid("TileDescription: the SIMT warp tile " + describe::triple_text(warp) +
                             " (threadblock_shape / warp_count) gives each thread a " +
                             std::to_string(thread_m) + " x " + std::to_string(thread_n) +
                             " tile, not a whole number of its " + std::to_string(lane_m) + " x " +
                             std::to_string(lane_n) + " lanes of 128 bits");
    }
  } else {
    // The warp tiles CUTLASS's generator instantiates and its epilogues are built for: below
    // these, the epilogue's thread map of the warp tile comes out empty (a zero-sized array).
    const int unit = size_in_bits(math_instruction.element_a) == 64 ? 16 : 32;
    if (warp[0] % unit != 0 || warp[1] % unit != 0) {
      return Status::unsupported(
          "TileDescription: the warp tile " + describe::triple_text(warp) +
          " (threadblock_shape / warp_count): SM80 tensor-op warp tiles are multiples of " +
          std::to_string(unit) + " in M and N" +
          (unit == 16 ? " for float64" : " (16 for float64)") +
          ", as CUTLASS's generator builds them: use fewer warps or a larger tile");
    }
  }
  const int64_t smem = mainloop_shared_memory_bytes();
  if (smem > kMaxSharedMemoryBytesSm80) {
    return Status::invalid(
        "TileDescription: threadblock_shape " + describe::triple_text(threadblock_shape) +
        " with " + std::to_string(stages) + " stages needs " + std::to_string(smem / 1024) +
        " KiB of shared memory; SM80 allows " + std::to_string(kMaxSharedMemoryBytesSm80 / 1024) +
        " KiB: use fewer stages or a smaller tile");
  }
  // Each of a warp's 32 threads holds its share of the warp tile's accumulators in registers for
  // the whole mainloop; a thread has at most 255 registers (sm_80 and sm_90), so a tile whose
  // accumulators alone need more cannot be held at all (CUTLASS's generator stays at 128).
  const int64_t accumulators = int64_t{warp[0]} * warp[1] / 32;
  const int64_t registers =
      (accumulators * size_in_bits(math_instruction.element_accumulator) + 31) / 32;
  if (registers > kMaxRegistersPerThread) {
    return Status::invalid("TileDescription: the warp tile " + describe::triple_text(warp) +
                           " (threadblock_shape / warp_count) gives each of a warp's 32 threads " +
                           std::to_string(accumulators) + " " +
                           spelled(math_instruction.element_accumulator) + " accumulators, " +
                           std::to_string(registers) + " 32-bit registers; a thread has at most " +
                           std::to_string(kMaxRegistersPerThread) +
                           " (the rule: warp tile M x N / 32 accumulators per thread must fit its "
                           "registers): use more warps or a smaller threadblock_shape");
  }
  return Status::ok();
}

std::string TileDescription::procedural_name() const {
  const auto joined = [](const std::array<int, 3>& v) {
    return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
  };
  if (!is_sm90()) {
    return std::to_string(threadblock_shape[0]) + "x" + std::to_string(threadblock_shape[1]) + "_" +
           std::to_string(threadblock_shape[2]) + "x" + std::to_string(stages) + "_w" +
           joined(warp_count);
  }
  std::string name =
      joined(threadblock_shape) + "_c" + joined(cluster_shape) + "_s" + std::to_string(stages);
  name += kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative ? "_coop"
          : kernel_schedule == KernelSchedule::TmaWarpSpecializedPingpong  ? "_pingpong"
                                                                           : "_ws";
  if (tile_scheduler == TileScheduler::StreamK) name += "_streamk";
  if (mma_promotion_interval > 0) name += "_promo" + std::to_string(mma_promotion_interval);
  return name;
}

}  // namespace tilecraft
