#include "describe/grouped_gemm_rules.hpp"

#include <string>

#include "describe/checks.hpp"

namespace tilecraft {
namespace {

Status check_common(const GemmDescription& d) {
  TILECRAFT_RETURN_IF_ERROR(
      describe::check_enumerator("", "precompute_mode", "SchedulerMode", d.scheduler_mode));
  for (const auto& [which, operand] :
       {std::pair{"A", &d.A}, std::pair{"B", &d.B}, std::pair{"C", &d.C}}) {
    if (is_interleaved(operand->layout)) {
      return Status::unsupported(std::string(which) +
                                 ": grouped GEMMs take RowMajor or ColumnMajor operands, got " +
                                 std::string(to_string(operand->layout)));
    }
  }
  if (d.swizzle == Swizzle::HorizontalSwizzle || d.swizzle == Swizzle::BatchedIdentitySwizzle) {
    return Status::unsupported(
        "swizzling_functor: grouped GEMMs visit their problems' tiles in order; they take "
        "IdentitySwizzle1, 2, 4 or 8, got " +
        std::string(to_string(d.swizzle)));
  }
  return Status::ok();
}

Status check_sm90(const GemmDescription& d) {
  if (d.scheduler_mode != SchedulerMode::Device) {
    return Status::unsupported(
        "precompute_mode: SM90 grouped kernels schedule their tiles on the device "
        "(SchedulerMode.Device); SchedulerMode.Host is for arch 80 kernels");
  }
  const KernelSchedule schedule = d.tile.kernel_schedule;
  if (schedule != KernelSchedule::TmaWarpSpecializedCooperative &&
      schedule != KernelSchedule::TmaWarpSpecializedPingpong) {
    return Status::unsupported(
        "tile_description: SM90 grouped kernels are persistent: kernel_schedule "
        "TmaWarpSpecializedCooperative or TmaWarpSpecializedPingpong, got " +
        std::string(to_string(schedule)));
  }
  if (d.tile.tile_scheduler != TileScheduler::Persistent) {
    return Status::unsupported(
        "tile_description: SM90 grouped kernels run on CUTLASS's group tile scheduler; "
        "tile_scheduler StreamK is for single problems");
  }
  const EpilogueFusion& fusion = d.epilogue.fusion;
  if (fusion.aux_output) {
    return Status::unsupported(
        "epilogue_functor: SM90 grouped kernels write no aux output (they take LinearCombination, "
        "an activation and a per-column bias)");
  }
  if (fusion.bias == BiasKind::per_row) {
    return Status::unsupported(
        "epilogue_functor: SM90 grouped kernels add a bias of N values per problem (per_column, a "
        "bias per expert); a per-row (M) bias is not offered for grouped GEMMs");
  }
  if (fusion.bias != BiasKind::none) {
    if (fusion.per_tensor_scales) {
      return Status::unsupported(
          "epilogue_functor: grouped fp8 kernels (scales folded into alpha and beta) add no bias");
    }
    if (activation_argument_count(d.epilogue.activation) > 0) {
      return Status::unsupported(
          "epilogue_functor: grouped kernels with a bias take activations without arguments (relu, "
          "gelu, silu, ...), not " +
          std::string(to_string(d.epilogue.activation)));
    }
  }
  if (fusion.per_tensor_scales) {
    if (d.epilogue.activation != Activation::identity) {
      return Status::unsupported(
          "epilogue_functor: grouped fp8 kernels take LinearCombination with scales (the scales "
          "fold into alpha and beta), not an activation");
    }
    if (size_in_bits(d.C.element) == 8) {
      return Status::unsupported("C: grouped fp8 kernels write float16, bfloat16 or float32, got " +
                                 spelled(d.C.element));
    }
  }
  return Status::ok();
}

}  // namespace

Status validate_grouped_gemm(const GemmDescription& d) {
  TILECRAFT_RETURN_IF_ERROR(check_common(d));
  if (d.arch == 90) return check_sm90(d);
  return Status::ok();
}

}  // namespace tilecraft
