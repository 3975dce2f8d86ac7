// The rules an SM90 (CUTLASS 3.x) tile must meet: the collective builders' static_asserts and the
// kernels' documented limits, stated before anything is compiled.
#include "describe/sm90_tile_rules.hpp"

#include "describe/checks.hpp"

namespace tilecraft {
namespace {

bool is_power_of_two_up_to_4(int v) { return v == 1 || v == 2 || v == 4; }

}  // namespace

KernelSchedule resolve_kernel_schedule(const TileDescription& tile) {
  if (tile.kernel_schedule != KernelSchedule::Auto) return tile.kernel_schedule;
  if (tile.tile_scheduler == TileScheduler::StreamK || tile.threadblock_shape[0] >= 128) {
    return KernelSchedule::TmaWarpSpecializedCooperative;
  }
  return KernelSchedule::TmaWarpSpecializedPingpong;
}

EpilogueSchedule matching_epilogue_schedule(KernelSchedule kernel) {
  return kernel == KernelSchedule::TmaWarpSpecializedCooperative
             ? EpilogueSchedule::TmaWarpSpecializedCooperative
             : EpilogueSchedule::TmaWarpSpecialized;
}

int64_t sm90_epilogue_reserve_bytes(const TileDescription& tile, int bytes_c, int bytes_d) {
  const bool cooperative = tile.kernel_schedule == KernelSchedule::TmaWarpSpecializedCooperative;
  const int64_t epilogue_m = std::min(tile.threadblock_shape[0], cooperative ? 128 : 64);
  const int64_t epilogue_n = std::min(tile.threadblock_shape[1], 32);
  // Two C stages and two D stages of the epilogue subtile, and the pipelines' barriers.
  return epilogue_m * epilogue_n * 2 * (bytes_c + bytes_d) + 1024;
}

Status validate_sm90_tile(const TileDescription& tile) {
  TILECRAFT_RETURN_IF_ERROR(tile.math_instruction.validate());
  const MathInstruction& math = tile.math_instruction;
  const auto& shape = tile.threadblock_shape;
  const std::string who = "TileDescription (SM90): ";
  const int64_t bits_a = size_in_bits(math.element_a);
  // Bounds first: every size computed below is then small.
  TILECRAFT_RETURN_IF_ERROR(
      describe::check_extents(who, "threadblock_shape", shape, 1, kMaxThreadblockExtent));
  if (tile.stages != 0 && (tile.stages < 2 || tile.stages > kMaxStagesSm90)) {
    return Status::invalid(who + "stages must be 0 (as many as fit) or in [2, " +
                           std::to_string(kMaxStagesSm90) + "], got " +
                           std::to_string(tile.stages));
  }
  if (shape[0] != 64 && shape[0] != 128 && shape[0] != 256) {
    return Status::invalid(who + "threadblock_shape " + describe::triple_text(shape) +
                           ": M must be 64, 128 or 256 (multiples of the 64-row wgmma)");
  }
  if (shape[1] < 16 || shape[1] > 256 || shape[1] % 16 != 0) {
    return Status::invalid(who + "threadblock_shape " + describe::triple_text(shape) +
                           ": N must be a multiple of 16 in [16, 256]");
  }
  const int64_t k_bytes = shape[2] * bits_a / 8;
  if (shape[2] % math.instruction_shape[2] != 0 || k_bytes < 32 || k_bytes > 256) {
    return Status::invalid(
        who + "threadblock_shape " + describe::triple_text(shape) + ": K must be a multiple of " +
        std::to_string(math.instruction_shape[2]) + " (the wgmma K for " + spelled(math.element_a) +
        ") between " + std::to_string(256 / bits_a) + " and " + std::to_string(2048 / bits_a));
  }
  if (shape[1] % math.instruction_shape[1] != 0) {
    return Status::invalid(who + "threadblock_shape N " + std::to_string(shape[1]) +
                           " is not a multiple of the instruction's N " +
                           std::to_string(math.instruction_shape[1]));
  }
  const auto& cluster = tile.cluster_shape;
  if (!is_power_of_two_up_to_4(cluster[0]) || !is_power_of_two_up_to_4(cluster[1]) ||
      cluster[2] != 1 || cluster[0] * cluster[1] > 4) {
    return Status::invalid(
        who + "cluster_shape " + describe::triple_text(cluster) +
        ": expected [1|2|4, 1|2|4, 1] with at most 4 CTAs (1x1 to 2x2, 4x1, 1x4)");
  }
  if (tile.kernel_schedule == KernelSchedule::Auto ||
      tile.epilogue_schedule == EpilogueSchedule::Auto) {
    return Status::invalid(
        who +
        (tile.kernel_schedule == KernelSchedule::Auto ? "kernel_schedule" : "epilogue_schedule") +
        ": Auto is resolved when the tile is made; build SM90 tiles with "
        "TileDescription::make_sm90");
  }
  const KernelSchedule kernel = tile.kernel_schedule;
  const bool cooperative = kernel == KernelSchedule::TmaWarpSpecializedCooperative;
  if (tile.tile_scheduler == TileScheduler::StreamK && shape[0] % 128 != 0) {
    return Status::invalid(who +
                           "tile_scheduler StreamK runs with the cooperative schedule, whose two "
                           "consumer warpgroups need threadblock M 128 or 256; got " +
                           std::to_string(shape[0]));
  }
  if (cooperative && shape[0] % 128 != 0) {
    return Status::invalid(
        who +
        "kernel_schedule TmaWarpSpecializedCooperative splits the tile's M over two consumer "
        "warpgroups of 64 rows; threadblock M must be 128 or 256, got " +
        std::to_string(shape[0]));
  }
  if (tile.epilogue_schedule != matching_epilogue_schedule(kernel)) {
    return Status::invalid(
        who + "epilogue_schedule " + std::string(to_string(tile.epilogue_schedule)) +
        " does not fit kernel_schedule " + std::string(to_string(kernel)) + "; expected " +
        std::string(to_string(matching_epilogue_schedule(kernel))) + " (or Auto)");
  }
  if (tile.tile_scheduler == TileScheduler::StreamK && !cooperative) {
    return Status::unsupported(who +
                               "tile_scheduler StreamK runs only with kernel_schedule "
                               "TmaWarpSpecializedCooperative, got " +
                               std::string(to_string(kernel)));
  }
  // Accumulators live in the consumer warpgroups' registers: at most 128 32-bit registers each.
  const int64_t rows_per_warpgroup = cooperative ? shape[0] / 2 : shape[0];
  const int64_t acc_bits = size_in_bits(math.element_accumulator);
  const int64_t acc_registers = rows_per_warpgroup * shape[1] / 128 * acc_bits / 32;
  if (acc_registers > 128) {
    return Status::invalid(
        who + "threadblock_shape " + describe::triple_text(shape) + " with " +
        std::string(to_string(kernel)) + " needs " + std::to_string(acc_registers) +
        " accumulator registers per thread; at most 128 fit: use a smaller tile" +
        (cooperative ? std::string() : std::string(" or the cooperative schedule")));
  }
  if (tile.stages != 0) {
    const int64_t bytes_b = size_in_bits(math.element_b) / 8;
    const int64_t mainloop = tile.stages * shape[2] * (shape[0] * bits_a / 8 + shape[1] * bytes_b);
    if (mainloop > kMaxSharedMemoryBytesSm90 - 8 * 1024) {
      return Status::invalid(
          who + "threadblock_shape " + describe::triple_text(shape) + " with " +
          std::to_string(tile.stages) + " stages needs " + std::to_string(mainloop / 1024) +
          " KiB of shared memory for A and B; with the epilogue's share, SM90 allows " +
          std::to_string(kMaxSharedMemoryBytesSm90 / 1024) + " KiB: use fewer stages or stages=0");
    }
  }
  return Status::ok();
}

}  // namespace tilecraft
