// api::Kernel for grouped GEMMs, and get_kernels(GroupedGemmArguments): each design of the GEMM
// spaces in its grouped variant, ranked by the performance model on the problems' padded tiles.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "discover/kernel_state.hpp"
#include "discover/operand_rules.hpp"
#include "discover/prepared_by_kernel.hpp"
#include "tilecraft/discover/grouped_api.hpp"
#include "tilecraft/runtime/grouped_gemm_arguments.hpp"
#include "tilecraft/runtime/index_limits.hpp"

namespace tilecraft::api {
namespace {

Status check_operand(const char* name, const OperandMetadata& kernel, DataType dtype, Layout layout,
                     int alignment) {
  TILECRAFT_RETURN_IF_ERROR(check_element(name, kernel.dtype, dtype));
  TILECRAFT_RETURN_IF_ERROR(check_layout(name, kernel.layout, layout));
  return check_alignment(name, kernel.alignment, alignment,
                         " in every problem, the tensors allow ");
}

bool operands_match(const discover::GemmOperands& o, const GroupedGemmArguments& args) {
  return element_matches(o.a, args.dtype_a()) && element_matches(o.b, args.dtype_b()) &&
         o.out == args.dtype_out() && o.accumulator == args.accumulator_type() &&
         o.layout_a == args.layout_a() && o.layout_b == args.layout_b() &&
         o.layout_out == args.layout_out() && args.alignment_a() % o.alignment_a == 0 &&
         args.alignment_b() % o.alignment_b == 0 && args.alignment_out() % o.alignment_out == 0 &&
         !o.fast_accum;
}

// The problems as kernels index them: their extents, and each operand's widest stride (read by
// SM90 kernels through TMA), named by its problem and dimension. Allocates nothing.
tilecraft::detail::GroupedIndexing indexing_of(const GroupedGemmArguments& args) {
  tilecraft::detail::GroupedIndexing out;
  out.names = {"A", "B", "out"};
  const tilecraft::GroupedGemmProblem& p = args.problem();
  out.problems = p.problem_sizes;
  const std::pair<const char*, const std::vector<TensorView>*> lists[] = {
      {"A", &p.A}, {"B", &p.B}, {"C", &p.C}, {"out", &p.D}};
  for (const auto& [name, list] : lists) {
    tilecraft::detail::NamedStride widest;
    bool any = false;
    for (size_t g = 0; g < list->size(); ++g) {
      const TensorView& t = (*list)[g];
      for (int i = 0; i < t.rank; ++i) {
        if (t.shape[i] <= 1 || (any && t.strides[i] <= widest.elements)) continue;
        widest = {t.strides[i], storage_bytes(t.dtype), "", name, i, static_cast<int64_t>(g)};
        any = true;
      }
    }
    if (any) out.strides.add(widest);
  }
  return out;
}

// Problems of one (n, k), by row count, for the model.
using ShapeClasses = std::map<std::pair<int64_t, int64_t>, std::map<int64_t, int64_t>>;

ShapeClasses classes_of(const GroupedGemmArguments& args) {
  ShapeClasses classes;
  for (const GemmCoord& s : args.problem().problem_sizes) {
    if (s.m == 0 || s.n == 0) continue;
    ++classes[{s.n, s.k}][s.m];
  }
  return classes;
}

// A persistent grouped kernel runs the tiles of all problems over one grid: modelled as one GEMM
// per (n, k) whose rows are the problems' rows padded to whole tiles; useful over padded work
// scales the estimate down for small problems. That GEMM reads one K x N matrix where the
// problems read one each: no kernel runs faster than DRAM delivers every problem's matrix (with
// many small problems, as in mixture-of-experts decoding, that bound is the time). The bound is
// the same for every kernel; a thousandth of the modelled compute time is added to the larger of
// the two, so that kernels it binds still rank by their compute (the ranking is the compute
// model's: only the estimate changes).
discover::PerformanceEstimate estimate_grouped(const GemmDescription& d,
                                               const ShapeClasses& classes,
                                               const discover::DeviceTraits& traits) {
  const int64_t tile_m = d.tile.threadblock_shape[0];
  const double b_bytes = storage_bytes(d.B.element);
  double seconds = 0, useful = 0, weight_seconds = 0;
  discover::PerformanceEstimate last{};
  for (const auto& [nk, rows] : classes) {
    int64_t padded = 0, problems = 0;
    for (const auto& [m, count] : rows) {
      padded += (m + tile_m - 1) / tile_m * tile_m * count;
      problems += count;
      useful += 2.0 * double(m) * double(count) * double(nk.first) * double(nk.second);
    }
    last = discover::estimate(d, {padded, nk.first, nk.second, 1}, traits);
    if (last.score <= 0) return last;
    seconds += 2.0 * double(padded) * double(nk.first) * double(nk.second) / (last.score * 1e12);
    weight_seconds += double(problems) * double(nk.first) * double(nk.second) * b_bytes /
                      (traits.dram_bandwidth_gbps * 1e9);
  }
  seconds = std::max(seconds, weight_seconds) + 1e-3 * seconds;
  if (seconds > 0) {
    last.score = useful / seconds / 1e12;
    last.seconds = seconds;
  }
  return last;
}

Result<tilecraft::GroupedGemmProblem> problem_for(const GroupedGemmArguments& args,
                                                  const GemmOperation& operation) {
  const GroupedEpilogueArguments& e = args.epilogue();
  auto output_op = operation.epilogue_type(e.alpha, e.beta, e.activation_args);
  if (!output_op) return output_op.status();
  tilecraft::GroupedGemmProblem p = args.problem();
  p.output_op = *output_op;
  return p;
}

}  // namespace

Status GroupedGemmArguments::check(const Kernel& kernel) const {
  const GroupedGemmArguments& args = *this;
  const KernelMetadata& m = kernel.metadata();
  if (m.kernel_class.find("Grouped") == std::string::npos) {
    return Status::invalid("Kernel is unsupported: " + m.kernel_name +
                           " runs single GEMMs; get_kernels(GroupedGemmArguments) lists grouped "
                           "kernels");
  }
  TILECRAFT_RETURN_IF_ERROR(
      check_operand("A", m.operands.A, args.dtype_a(), args.layout_a(), args.alignment_a()));
  TILECRAFT_RETURN_IF_ERROR(
      check_operand("B", m.operands.B, args.dtype_b(), args.layout_b(), args.alignment_b()));
  TILECRAFT_RETURN_IF_ERROR(check_operand("out", m.operands.out, args.dtype_out(),
                                          args.layout_out(), args.alignment_out()));
  TILECRAFT_RETURN_IF_ERROR(check_accumulator(m.operands.accumulator, args.accumulator_type()));
  TILECRAFT_RETURN_IF_ERROR(check_activation(m.epilogue.activation, args.epilogue().activation));
  const BiasKind wanted = args.bias_dtype() ? BiasKind::per_column : BiasKind::none;
  if (m.epilogue.bias != wanted ||
      (wanted != BiasKind::none && m.epilogue.bias_dtype != *args.bias_dtype())) {
    return unsupported_epilogue(
        m.epilogue.bias == BiasKind::none
            ? "no bias"
            : "a bias of " + dsl_name(m.epilogue.bias_dtype) + " per problem",
        wanted == BiasKind::none ? "none" : "a " + dsl_name(*args.bias_dtype()) + " bias");
  }
  const bool scaled = args.epilogue().scale_a != 1.0 || args.epilogue().scale_b != 1.0;
  if (scaled && !m.epilogue.per_tensor_scales) {
    return Status::invalid(
        "Epilogue is unsupported: Expected no per-tensor scales (only fp8 kernels take them)");
  }
  if (m.operands.fast_accum) {
    return Status::invalid(
        "Accumulation is unsupported: grouped arguments take no fast accumulation; this fp8 "
        "kernel accumulates without promoting to f32");
  }
  return tilecraft::detail::check_grouped_indexes(kernel.description(), indexing_of(args));
}

Result<std::unique_ptr<PreparedLaunch>> GroupedGemmArguments::prepare(
    const Kernel&, const GemmOperation& operation, void* workspace, size_t workspace_bytes) const {
  if (stacked_on_device_) {
    auto output_op =
        operation.epilogue_type(epilogue_.alpha, epilogue_.beta, epilogue_.activation_args);
    if (!output_op) return output_op.status();
    tilecraft::StackedGroupedGemmProblem stacked = *stacked_on_device_;
    stacked.output_op = *output_op;
    return detail::prepared_launch<tilecraft::GroupedGemmArguments>(
        operation, Result<tilecraft::StackedGroupedGemmProblem>(std::move(stacked)), workspace,
        workspace_bytes);
  }
  return detail::prepared_launch<tilecraft::GroupedGemmArguments>(
      operation, problem_for(*this, operation), workspace, workspace_bytes);
}

Status GroupedGemmArguments::launch(const Kernel& kernel, const GemmOperation& operation,
                                    void* stream, void* workspace, size_t workspace_bytes) const {
  return prepared_->run(kernel.metadata().kernel_name, operation, stream, workspace,
                        workspace_bytes,
                        [&] { return prepare(kernel, operation, workspace, workspace_bytes); });
}

std::vector<Kernel> GroupedGemmArguments::kernels(const MetadataFilter& metadata_filter,
                                                  std::optional<int> cc) const {
  return get_kernels(*this, metadata_filter, cc);
}

std::vector<Kernel> get_kernels(const GroupedGemmArguments& args,
                                const MetadataFilter& metadata_filter, std::optional<int> cc) {
  const ShapeClasses classes = classes_of(args);
  const tilecraft::detail::GroupedIndexing indexing = indexing_of(args);
  const discover::GemmEpilogue fusion =
      detail::fusion_for(args.epilogue().activation, args.bias_dtype());
  const bool scaled = args.epilogue().scale_a != 1.0 || args.epilogue().scale_b != 1.0;
  return detail::ranked_kernels(
      cc, args.device(), metadata_filter,
      [&](const discover::GemmOperands& operands) {
        return operands_match(operands, args) && (!scaled || operands.scaled);
      },
      [&](const discover::GemmSpace& space, const discover::DeviceTraits& traits,
          const discover::GemmOperands&, uint32_t instance, auto add) {
        Result<GemmDescription> fused = detail::fused_description(space, instance, fusion);
        if (!fused) return;
        // 2.x grouped kernels visit tiles through their problem visitor, not the threadblock
        // swizzle: swizzled variants would be the same kernel under another name.
        if (space.arch() == 80 && fused->swizzle != Swizzle::IdentitySwizzle1) return;
        GemmDescription grouped = *fused;
        grouped.kind = GemmKind::Grouped;
        grouped.scheduler_mode = SchedulerMode::Device;
        if (!grouped.validate()) return;  // not a design grouped kernels take
        // A kernel that cannot index the problems (supports() says why) is not listed.
        if (!tilecraft::detail::check_grouped_indexes(grouped, indexing)) return;
        const auto estimate = estimate_grouped(grouped, classes, traits);
        add(Kernel::listed(space.arch(), instance, estimate.score, estimate.explain(),
                           std::move(grouped)));
      });
}

}  // namespace tilecraft::api
