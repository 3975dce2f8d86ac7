// tilecraft::api::Kernel and get_kernels: the configuration spaces seen through arguments.
#include <algorithm>
#include <mutex>
#include <set>
#include <string>

#include "discover/kernel_state.hpp"
#include "discover/operand_rules.hpp"
#include "discover/prepared_by_kernel.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/discover/gemm_space.hpp"
#include "tilecraft/discover/kernel_problem.hpp"
#include "tilecraft/discover/performance_model.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/runtime/index_limits.hpp"

namespace tilecraft::api {

KernelMetadata metadata_of(const GemmDescription& d) {
  KernelMetadata m;
  m.kernel_name = d.procedural_name();
  m.kernel_class =
      std::string(d.arch == 90 ? "Sm90" : "Sm80") + (d.is_grouped() ? "GroupedGemmKernel"
                                                     : d.is_conv()  ? "ConvKernel"
                                                                    : "GemmKernel");
  if (d.is_conv()) m.conv = d.conv;
  m.min_cc = d.arch;
  m.operands.A = {d.A.element, d.A.layout, d.A.alignment};
  m.operands.B = {d.B.element, d.B.layout, d.B.alignment};
  m.operands.out = {d.C.element, d.C.layout, d.C.alignment};
  m.operands.accumulator = d.tile.math_instruction.element_accumulator;
  m.operands.fast_accum =
      d.tile.math_instruction.math_operation == MathOperation::multiply_add_fast_accum;
  m.design.arch = d.arch;
  m.design.tile_shape = d.tile.threadblock_shape;
  m.design.cluster_shape = d.tile.cluster_shape;
  m.design.warp_count = d.tile.warp_count;
  m.design.instruction_shape = d.tile.math_instruction.instruction_shape;
  m.design.stages = d.tile.stages;
  m.design.kernel_schedule = d.tile.kernel_schedule;
  m.design.epilogue_schedule = d.tile.epilogue_schedule;
  m.design.tile_scheduler = d.tile.tile_scheduler;
  m.design.mma_promotion_interval = d.tile.mma_promotion_interval;
  m.design.swizzle = d.swizzle;
  m.epilogue.kind = d.epilogue.kind;
  m.epilogue.activation = d.epilogue.activation;
  m.epilogue.compute = d.epilogue.element_epilogue;
  m.epilogue.per_tensor_scales = d.epilogue.fusion.per_tensor_scales;
  m.epilogue.bias = d.epilogue.fusion.bias;
  m.epilogue.bias_dtype = d.epilogue.fusion.element_bias;
  if (d.epilogue_graph) m.epilogue.epilogue_graph = d.epilogue_graph->key();
  return m;
}

namespace detail {

bool same_layout(const TensorView& a, const TensorView& b) {
  return (a.data == nullptr) == (b.data == nullptr) && a.dtype == b.dtype && a.rank == b.rank &&
         a.shape == b.shape && a.strides == b.strides && a.device == b.device &&
         a.device_id == b.device_id;
}

bool same_scale(const ScaleArgument& a, const ScaleArgument& b) {
  return a.given == b.given && a.value == b.value && a.tensor.data == b.tensor.data &&
         same_layout(a.tensor, b.tensor);
}

// A custom epilogue's operands by name, shape and stride (pointers and scalar values are
// retargeted).
bool same_operands(const EpilogueOperands& a, const EpilogueOperands& b) {
  if (a.scalars.size() != b.scalars.size() || a.tensors.size() != b.tensors.size()) return false;
  for (auto x = a.scalars.begin(), y = b.scalars.begin(); x != a.scalars.end(); ++x, ++y) {
    if (x->first != y->first) return false;
  }
  for (auto x = a.tensors.begin(), y = b.tensors.begin(); x != a.tensors.end(); ++x, ++y) {
    if (x->first != y->first || !same_layout(x->second, y->second)) return false;
  }
  return true;
}

bool same_but_pointers(const GemmArguments& a, const GemmArguments& b) {
  const EpilogueArguments& x = a.epilogue();
  const EpilogueArguments& y = b.epilogue();
  return x.graph == y.graph && same_operands(x.operands, y.operands) && same_layout(a.A(), b.A()) &&
         same_layout(a.B(), b.B()) && same_layout(a.out(), b.out()) && same_layout(x.C, y.C) &&
         same_layout(x.bias, y.bias) && a.accumulator_type() == b.accumulator_type() &&
         x.alpha == y.alpha && x.beta == y.beta && x.activation == y.activation &&
         x.activation_args == y.activation_args && x.bias_per_row == y.bias_per_row &&
         same_scale(x.scale_a, y.scale_a) && same_scale(x.scale_b, y.scale_b) &&
         a.use_fast_accum() == b.use_fast_accum();
}

}  // namespace detail

const KernelMetadata& Kernel::metadata() const {
  state_->describe();
  return state_->metadata;
}

const GemmDescription& Kernel::description() const {
  state_->describe();
  return state_->description;
}

namespace {

Status check_operand(const char* name, const OperandMetadata& kernel, const TensorView& tensor,
                     Layout layout, int alignment) {
  TILECRAFT_RETURN_IF_ERROR(check_element(name, kernel.dtype, tensor.dtype));
  TILECRAFT_RETURN_IF_ERROR(check_layout(name, kernel.layout, layout, &tensor));
  return check_alignment(name, kernel.alignment, alignment,
                         " (pointer, leading dimension, batch stride and contiguous extent), the "
                         "tensor allows ",
                         &tensor);
}

std::string bias_text(BiasKind kind, DataType dtype) {
  if (kind == BiasKind::none) return "no bias";
  return std::string(kind == BiasKind::per_row ? "a per-row (M) " : "a per-column (N) ") +
         dsl_name(dtype) + " bias";
}

Status check_epilogue(const EpilogueMetadata& kernel, const EpilogueArguments& e) {
  TILECRAFT_RETURN_IF_ERROR(check_activation(kernel.activation, e.activation));
  const BiasKind wanted = !e.bias.data     ? BiasKind::none
                          : e.bias_per_row ? BiasKind::per_row
                                           : BiasKind::per_column;
  if (kernel.bias != wanted || (wanted != BiasKind::none && kernel.bias_dtype != e.bias.dtype)) {
    return unsupported_epilogue(bias_text(kernel.bias, kernel.bias_dtype),
                                bias_text(wanted, e.bias.dtype));
  }
  if (!kernel.per_tensor_scales && (e.scale_a.given || e.scale_b.given)) {
    return unsupported_epilogue("no per-tensor scales (only fp8 kernels take them)",
                                e.scale_a.given ? "scale_a" : "scale_b");
  }
  return Status::ok();
}

}  // namespace

namespace detail {

// The problem as kernels index it: M, N, K named by the tensor dimensions they come from, the
// batch, and the widest stride of each tensor an SM90 kernel reads through TMA. Allocates nothing
// (supports() runs before every launch) unless a custom epilogue brings many operands.
tilecraft::detail::IndexedProblem indexing_of(const GemmArguments& args) {
  const int r = args.A().rank - 2;
  tilecraft::detail::IndexedProblem p;
  p.mnk = {{{args.m(), "A", "M", r}, {args.n(), "B", "N", r + 1}, {args.k(), "A", "K", r + 1}}};
  p.grid_z = {args.batch(), "A", "batch L", 0};
  p.strides.add_widest("", "A", args.A());
  p.strides.add_widest("", "B", args.B());
  p.strides.add_widest("", "out", args.out());
  const EpilogueArguments& e = args.epilogue();
  if (e.C.data) p.strides.add_widest("epilogue.", "C", e.C);
  for (const auto& [name, tensor] : e.operands.tensors) {
    p.strides.add_widest("epilogue.", name, tensor);
  }
  return p;
}

Result<GemmProblem> problem_for(const GemmArguments& args, const GemmOperation& operation,
                                int split_k) {
  const EpilogueArguments& e = args.epilogue();
  auto output_op = operation.epilogue_type(e.alpha, e.beta, e.activation_args);
  if (!output_op) return output_op.status();
  GemmProblem p;
  p.problem_size = {static_cast<int>(args.m()), static_cast<int>(args.n()),
                    static_cast<int>(args.k())};
  p.A = args.A();
  p.B = args.B();
  p.C = e.C;
  p.D = args.out();
  p.bias = e.bias;
  p.output_op = *output_op;
  p.epilogue = e.operands;
  p.batch = static_cast<int>(args.batch());
  p.mode = args.batch() > 1 ? GemmMode::Batched
           : split_k > 1 && discover::split_k_parallel(operation.description())
               ? GemmMode::GemmSplitKParallel
               : GemmMode::Gemm;
  p.split_k_slices = split_k;
  if (operation.description().epilogue.fusion.per_tensor_scales) {
    for (ScaleArgument* scale : {&p.scale_a, &p.scale_b, &p.scale_c, &p.scale_d}) {
      scale->given = true;
      scale->value = 1.0;
    }
    if (e.scale_a.given) p.scale_a = e.scale_a;
    if (e.scale_b.given) p.scale_b = e.scale_b;
  }
  return p;
}

}  // namespace detail

Status GemmArguments::check(const Kernel& kernel) const {
  const GemmArguments& args = *this;
  const KernelMetadata& m = kernel.metadata();
  TILECRAFT_RETURN_IF_ERROR(
      check_operand("A", m.operands.A, args.A(), args.layout_a(), args.alignment_a()));
  TILECRAFT_RETURN_IF_ERROR(
      check_operand("B", m.operands.B, args.B(), args.layout_b(), args.alignment_b()));
  TILECRAFT_RETURN_IF_ERROR(
      check_operand("out", m.operands.out, args.out(), args.layout_out(), args.alignment_out()));
  TILECRAFT_RETURN_IF_ERROR(check_accumulator(m.operands.accumulator, args.accumulator_type()));
  // Fast accumulation is the caller's choice: a kernel that skips the f32 promotion never runs
  // arguments that did not allow it (get_kernels lists it only for those that do).
  if (m.operands.fast_accum && !args.use_fast_accum()) {
    return Status::invalid(
        "Accumulation is unsupported: Expected arguments that allow fast accumulation "
        "(use_fast_accum=True) for this fp8 kernel, which accumulates without promoting to f32; "
        "got use_fast_accum=False");
  }
  if (args.epilogue().C.data) {
    TILECRAFT_RETURN_IF_ERROR(
        check_operand("C", m.operands.out, args.epilogue().C, args.layout_c(), args.alignment_c()));
  }
  // The graphs themselves are compared (their keys hash their text: only for the message).
  const std::optional<EpilogueGraph>& wanted = args.epilogue().graph;
  if (kernel.description().epilogue_graph != wanted) {
    return unsupported_epilogue(m.epilogue.epilogue_graph.empty()
                                    ? "no epilogue graph"
                                    : "the epilogue graph " + m.epilogue.epilogue_graph,
                                wanted ? "the epilogue graph " + wanted->key() : "none");
  }
  TILECRAFT_RETURN_IF_ERROR(check_epilogue(m.epilogue, args.epilogue()));
  return tilecraft::detail::check_kernel_indexes(kernel.description(), detail::indexing_of(args));
}

Result<std::unique_ptr<PreparedLaunch>> GemmArguments::prepare(const Kernel& kernel,
                                                               const GemmOperation& operation,
                                                               void* workspace,
                                                               size_t workspace_bytes) const {
  return detail::prepared_launch<tilecraft::GemmArguments>(
      operation, detail::problem_for(*this, operation, kernel.metadata().design.split_k_slices),
      workspace, workspace_bytes);
}

// GEMM arguments are values made anew for each call: the kernel keeps the launch it prepared last
// and retargets it to the new tensors' pointers where nothing else differs.
Status GemmArguments::launch(const Kernel& kernel, const GemmOperation& operation, void* stream,
                             void* workspace, size_t workspace_bytes) const {
  std::lock_guard lock(kernel.state_->prepared_mutex);
  Kernel::State::Prepared& prepared = kernel.state_->prepared;
  if (prepared.abi && prepared.stream == stream && prepared.workspace == workspace &&
      prepared.workspace_bytes == workspace_bytes &&
      detail::same_but_pointers(*prepared.made_for, *this)) {
    const EpilogueArguments& e = epilogue();
    if (prepared.abi->retarget(A().data, B().data, e.C.data, out().data, e.bias.data,
                               &e.operands)) {
      prepared.made_for = *this;
      return operation.run(*prepared.abi, stream);
    }
  }
  LaunchStreamScope launching_on(stream);
  auto made = detail::make_prepared<tilecraft::GemmArguments>(
      operation, detail::problem_for(*this, operation, kernel.metadata().design.split_k_slices),
      workspace, workspace_bytes);
  if (!made) return made.status();
  if ((*made)->allocated_in_capture()) return operation.run(**made, stream);  // not kept
  prepared = {*this, std::move(*made), stream, workspace, workspace_bytes};
  return operation.run(*prepared.abi, stream);
}

std::vector<Kernel> GemmArguments::kernels(const MetadataFilter& metadata_filter,
                                           std::optional<int> cc) const {
  return get_kernels(this, metadata_filter, cc);
}

Status Kernel::supports(const KernelArguments& args) const { return args.check(*this); }

Result<CompiledArtifact> Kernel::compile(const KernelArguments& args) const {
  TILECRAFT_RETURN_IF_ERROR(supports(args));
  return state_->artifact();
}

Result<size_t> Kernel::get_workspace_size(const KernelArguments& args) const {
  TILECRAFT_RETURN_IF_ERROR(supports(args));
  auto operation = state_->get_operation();
  if (!operation) return operation.status();
  auto prepared = args.prepare(*this, **operation, nullptr, 0);
  if (!prepared) return prepared.status();
  return (*prepared)->workspace_bytes();
}

Result<std::shared_ptr<GemmOperation>> Kernel::operation() const { return state_->get_operation(); }

Status Kernel::run(const KernelArguments& args, const CompiledArtifact* compiled_artifact,
                   void* stream, bool assume_supported_args, void* workspace,
                   size_t workspace_bytes) const {
  if (!assume_supported_args) TILECRAFT_RETURN_IF_ERROR(supports(args));
  state_->describe();
  auto operation = state_->operation_using(compiled_artifact);
  if (!operation) return operation.status();
  return args.launch(*this, **operation, stream, workspace, workspace_bytes);
}

std::vector<Kernel> get_kernels(const KernelArguments& args, const MetadataFilter& metadata_filter,
                                std::optional<int> cc) {
  return args.kernels(metadata_filter, cc);
}

namespace {

// A custom epilogue writes out in its own type: any output set of the operands serves.
bool operands_match(const discover::GemmOperands& o, const GemmArguments& args) {
  const bool graph = args.epilogue().graph.has_value();
  return element_matches(o.a, args.A().dtype) && element_matches(o.b, args.B().dtype) &&
         (graph || o.out == args.out().dtype) && o.accumulator == args.accumulator_type() &&
         o.layout_a == args.layout_a() && o.layout_b == args.layout_b() &&
         o.layout_out == args.layout_out() && args.alignment_a() % o.alignment_a == 0 &&
         args.alignment_b() % o.alignment_b == 0 && args.alignment_out() % o.alignment_out == 0 &&
         o.layout_out == args.layout_c() && args.alignment_c() % o.alignment_out == 0 &&
         (o.scaled || !args.scales_given()) && (!o.fast_accum || args.use_fast_accum());
}

// A listed kernel with a custom epilogue in place of its own: D of out's type (16-byte TMA
// accesses on SM90), a plain linear combination under the graph.
Result<GemmDescription> with_graph(GemmDescription d, const GemmArguments& args) {
  const DataType out = args.out().dtype;
  if (d.C.element != out) {
    if (d.arch != 90) return Status::unsupported("output type differs");
    d.C.element = out;
    d.C.alignment = 128 / size_in_bits(out);
  }
  if (args.alignment_out() % d.C.alignment != 0) return Status::unsupported("alignment");
  auto functor = EpilogueFunctor::linear_combination(
      out, d.C.alignment, d.tile.math_instruction.element_accumulator, DataType::f32);
  if (!functor) return functor.status();
  d.epilogue = *functor;
  return d.with_epilogue_graph(*args.epilogue().graph);
}

}  // namespace

std::vector<Kernel> get_kernels(const GemmArguments* args, const MetadataFilter& metadata_filter,
                                std::optional<int> cc) {
  if (args == nullptr) {
    std::vector<Kernel> kernels;
    for (int arch : detail::architectures_for(cc)) {
      for (uint32_t i : discover::GemmSpace::of(arch).all_instances()) {
        Kernel kernel = Kernel::listed(arch, i, 0.0, {}, {});
        if (!metadata_filter || metadata_filter(kernel.metadata()))
          kernels.push_back(std::move(kernel));
      }
    }
    return kernels;
  }
  const discover::GemmShape shape{args->m(), args->n(), args->k(), args->batch()};
  const tilecraft::detail::IndexedProblem indexing = detail::indexing_of(*args);
  const EpilogueArguments& e = args->epilogue();
  const discover::GemmEpilogue fusion =
      detail::fusion_for(e.activation, e.bias.data ? std::optional(e.bias.dtype) : std::nullopt,
                         e.bias_per_row ? BiasKind::per_row : BiasKind::per_column);
  std::set<std::string> graph_names;
  std::vector<Kernel> kernels = detail::ranked_kernels(
      cc, args->device(), metadata_filter,
      [&](const discover::GemmOperands& operands) { return operands_match(operands, *args); },
      [&](const discover::GemmSpace& space, const discover::DeviceTraits& traits,
          const discover::GemmOperands&, uint32_t instance, auto add) {
        Result<GemmDescription> fused = detail::fused_description(space, instance, fusion);
        if (fused && args->epilogue().graph) {
          fused = with_graph(std::move(*fused), *args);
          // Output sets that differ only in out's type give one kernel.
          if (fused && !graph_names.insert(fused->procedural_name()).second) return;
        }
        if (!fused) return;  // this kernel cannot fuse what the arguments ask for
        // A kernel that cannot index the problem (supports() says why) is not listed.
        if (!tilecraft::detail::check_kernel_indexes(*fused, indexing)) return;
        for (int splits : discover::split_k_choices(*fused, shape, traits)) {
          const auto split = discover::estimate_split_k(*fused, shape, splits, traits);
          add(Kernel::listed(space.arch(), instance, split.score, split.explain(), *fused, splits));
        }
        const auto estimate = discover::estimate(*fused, shape, traits);
        // Tiles fitted to N, where the model expects them faster than the tile they narrow.
        for (auto& fitted : discover::fitted_n_kernels(*fused, estimate, shape, traits)) {
          add(Kernel::listed(space.arch(), instance, fitted.estimate.score,
                             fitted.estimate.explain(), std::move(fitted.description)));
        }
        // Longer fp8 promotion intervals rank by their own estimate (fewer promotions): on the
        // H100 every 16 k-blocks ran 4-9% faster than CUTLASS's 4 on all four fp8 shapes of
        // issue 29, its largest error at most 13% above cuBLAS's (bench/RESULTS.md).
        for (int interval : discover::promotion_interval_choices(*fused)) {
          GemmDescription promoted = *fused;
          promoted.tile.mma_promotion_interval = interval;
          const auto promoted_estimate = discover::estimate(promoted, shape, traits);
          add(Kernel::listed(space.arch(), instance, promoted_estimate.score,
                             promoted_estimate.explain(), std::move(promoted)));
        }
        add(Kernel::listed(space.arch(), instance, estimate.score, estimate.explain(),
                           std::move(*fused)));
      });
  // The first pick (what serves untuned) is a tile of the space; fitted tiles are measured
  // by the tuner before they serve.
  const auto of_space = std::ranges::find_if(kernels, [](const Kernel& k) {
    return k.metadata().design.arch != 90 ||
           discover::is_space_tile_n(k.metadata().design.tile_shape[1]);
  });
  if (of_space != kernels.end()) std::rotate(kernels.begin(), of_space, of_space + 1);
  return kernels;
}

Status compile_kernels(const std::vector<Kernel>& kernels) {
  std::vector<std::shared_ptr<GemmOperation>> operations;
  operations.reserve(kernels.size());
  for (const Kernel& kernel : kernels) {
    auto operation = kernel.state_->get_operation();
    if (!operation) return operation.status();
    operations.push_back(*operation);
  }
  return compile_operations(operations);
}

Status is_device_cc_supported(const std::set<int>& ccs) {
  auto info = current_device_info();
  if (!info) {
    return Status::unsupported("no usable CUDA device: " + info.status().message());
  }
  if (ccs.count(info->compute_capability) == 0) {
    std::string wanted;
    for (int cc : ccs) wanted += (wanted.empty() ? "" : ", ") + std::to_string(cc);
    return Status::unsupported("the device (" + info->name + ") has compute capability " +
                               std::to_string(info->compute_capability) + "; expected one of {" +
                               wanted + "}");
  }
  return Status::ok();
}

}  // namespace tilecraft::api
