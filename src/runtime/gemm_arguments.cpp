#include "tilecraft/runtime/gemm_arguments.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "epilogue_graph_operands.hpp"
#include "epilogue_operands.hpp"
#include "operand_check.hpp"
#include "tilecraft/core/extents.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/runtime/index_limits.hpp"

namespace tilecraft {
namespace {

using detail::OperandPlacement;
using detail::place_operand;

// Calls f(name, tensor) for every tensor given (data != nullptr), a custom epilogue's as
// "epilogue.<name>", and returns the first failure.
template <typename F>
Status for_each_given(const GemmProblem& p, F&& f) {
  const std::pair<const char*, const TensorView*> tensors[] = {{"A", &p.A},
                                                               {"B", &p.B},
                                                               {"C", &p.C},
                                                               {"D", &p.D},
                                                               {"bias", &p.bias},
                                                               {"aux", &p.aux},
                                                               {"scale_a", &p.scale_a.tensor},
                                                               {"scale_b", &p.scale_b.tensor},
                                                               {"scale_c", &p.scale_c.tensor},
                                                               {"scale_d", &p.scale_d.tensor}};
  for (const auto& [name, t] : tensors) {
    if (t->data) TILECRAFT_RETURN_IF_ERROR(f(name, *t));
  }
  for (const auto& [name, t] : p.epilogue.tensors) {
    if (t.data) TILECRAFT_RETURN_IF_ERROR(f("epilogue." + name, t));
  }
  return Status::ok();
}

// The problem as this kernel indexes it (what the module's can_implement and CUDA's grid limits
// would refuse later, refused here by name): the tile-padded extents, the grid, and the strides
// SM90 kernels read through TMA.
detail::IndexedProblem indexing_of(const GemmProblem& p, const OperandPlacement& A,
                                   const OperandPlacement& B, const OperandPlacement& C,
                                   const OperandPlacement& D, const OperandPlacement* aux,
                                   const detail::GraphOperands& graph, const GemmDescription& d) {
  const GemmCoord& s = p.problem_size;
  detail::IndexedProblem out;
  out.mnk = {{{s.m, "problem_size", "M"}, {s.n, "problem_size", "N"}, {s.k, "problem_size", "K"}}};
  const bool batched = p.mode == GemmMode::Batched || p.mode == GemmMode::Array;
  out.grid_z = batched ? detail::NamedExtent{p.batch, "batch", ""}
                       : detail::NamedExtent{p.split_k_slices, "split_k_slices", ""};
  const auto add = [&](std::string_view prefix, std::string_view name,
                       const OperandPlacement& placed, DataType element) {
    const int bytes = storage_bytes(element);
    out.strides.add({placed.ld, bytes, prefix, name, -1});
    if (batched && p.batch > 1) out.strides.add({placed.batch_stride, bytes, prefix, name, -2});
  };
  add("", "A", A, d.A.element);
  add("", "B", B, d.B.element);
  if (p.C.data) add("", "C", C, d.C.element);
  add("", "D", D, d.C.element);
  if (aux) add("", "aux", *aux, p.aux.dtype);
  if (d.epilogue_graph) {
    const std::vector<int> nodes = d.epilogue_graph->operand_nodes();
    for (size_t i = 0; i < graph.tensors.size() && i < nodes.size(); ++i) {
      add("epilogue.", d.epilogue_graph->nodes()[nodes[i]].name, graph.tensors[i].placement,
          graph.tensors[i].tensor->dtype);
    }
  }
  return out;
}

Status check_modes(const GemmProblem& p, const GemmDescription& d) {
  const GemmCoord& s = p.problem_size;
  if (s.m < 1 || s.n < 1 || s.k < 1) {
    return Status::invalid("problem_size: M, N and K must be >= 1, got " + to_string(s));
  }
  if (p.split_k_slices < 1) {
    return Status::invalid("split_k_slices: expected >= 1, got " +
                           std::to_string(p.split_k_slices));
  }
  if (p.batch < 1) return Status::invalid("batch: expected >= 1, got " + std::to_string(p.batch));
  const bool batched = p.mode == GemmMode::Batched || p.mode == GemmMode::Array;
  if (!batched && p.batch != 1) {
    return Status::invalid("batch: only Batched and Array modes take a batch; gemm_mode " +
                           std::string(to_string(p.mode)) +
                           " got batch=" + std::to_string(p.batch));
  }
  if (batched && p.split_k_slices != 1) {
    return Status::invalid("split_k_slices: gemm_mode " + std::string(to_string(p.mode)) +
                           " does not split K; expected 1, got " +
                           std::to_string(p.split_k_slices));
  }
  if (p.split_k_slices > s.k) {
    return Status::invalid("split_k_slices: " + std::to_string(p.split_k_slices) +
                           " slices of K=" + std::to_string(s.k) + " leave empty slices");
  }
  if (d.epilogue.kind == EpilogueKind::FastLinearCombinationClamp &&
      s.k > kFastLinearCombinationClampMaxK) {
    return Status::invalid("problem_size: FastLinearCombinationClamp is exact only for K <= " +
                           std::to_string(kFastLinearCombinationClampMaxK) +
                           ", got K=" + std::to_string(s.k) + "; use LinearCombinationClamp");
  }
  if (p.mode == GemmMode::Array && is_interleaved(d.A.layout)) {
    return Status::unsupported("gemm_mode: Array mode takes RowMajor/ColumnMajor operands");
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<GemmArguments>> GemmArguments::make(const GemmOperation& operation,
                                                           const GemmProblem& problem) {
  const GemmDescription& d = operation.description();
  if (d.is_grouped()) {
    return Status::invalid("operation: " + operation.procedural_name() +
                           " is a grouped GEMM; it takes GemmGroupedArguments");
  }
  if (d.is_conv()) {
    return Status::invalid("operation: " + operation.procedural_name() +
                           " is a convolution; it takes Conv2dArguments");
  }
  TILECRAFT_RETURN_IF_ERROR(
      for_each_given(problem, [](const std::string& name, const TensorView& t) {
        return check_tensor_extents(name, t).status();
      }));
  TILECRAFT_RETURN_IF_ERROR(check_modes(problem, d));
  if (d.arch == 90) TILECRAFT_RETURN_IF_ERROR(detail::check_sm90_problem(problem, d));
  TILECRAFT_RETURN_IF_ERROR(detail::check_sm80_graph_problem(problem, d));
  TILECRAFT_RETURN_IF_ERROR(validate_epilogue_params(d.epilogue, problem.output_op));
  TILECRAFT_RETURN_IF_ERROR(detail::check_epilogue_extras(problem, d));
  auto graph = detail::place_graph_operands(problem, d);
  if (!graph) return graph.status();
  if (d.epilogue_graph && problem.C.data) {
    return Status::invalid(
        "C: the operation's epilogue graph reads its own inputs; pass C as one of its operands (by "
        "the graph's name for it), not as C");
  }

  const GemmCoord& s = problem.problem_size;
  const int batch = problem.batch;
  const bool has_C = problem.C.data != nullptr;
  TILECRAFT_RETURN_IF_ERROR(detail::check_beta_without_c(has_C, problem.output_op.beta));
  auto A = place_operand("A", problem.A, d.A, s.m, s.k, batch, true);
  if (!A) return A.status();
  auto B = place_operand("B", problem.B, d.B, s.k, s.n, batch, true);
  if (!B) return B.status();
  auto D = place_operand("D", problem.D, d.C, s.m, s.n, batch, false);
  if (!D) return D.status();
  Result<OperandPlacement> C = *D;
  if (has_C) {
    C = place_operand("C", problem.C, d.C, s.m, s.n, batch, true);
    if (!C) return C.status();
  }
  detail::VectorPlacement bias;
  if (problem.bias.data) {
    auto placed = detail::place_bias(problem, d);
    if (!placed) return placed.status();
    bias = *placed;
  }
  OperandPlacement aux;
  if (problem.aux.data) {
    auto placed =
        place_operand("aux", problem.aux, detail::aux_description(d), s.m, s.n, batch, false);
    if (!placed) return placed.status();
    aux = *placed;
  }
  TILECRAFT_RETURN_IF_ERROR(detail::check_kernel_indexes(
      d, indexing_of(problem, *A, *B, *C, *D, problem.aux.data ? &aux : nullptr, *graph, d)));
  int device = -1;
  TILECRAFT_RETURN_IF_ERROR(
      for_each_given(problem, [&](const std::string& name, const TensorView& t) {
        return detail::check_same_device(name, t, &device);
      }));
  // Prepared on the operands' device, whichever is current.
  DeviceScope on_device(device);
  TILECRAFT_RETURN_IF_ERROR(on_device.status());
  TILECRAFT_RETURN_IF_ERROR(detail::check_device_runs(d.arch, operation.procedural_name()));

  auto entry = operation.entry(problem.mode);
  if (!entry) return entry.status();

  std::unique_ptr<GemmArguments> out(new GemmArguments());
  out->problem_ = problem;
  out->operation_ = &operation;
  out->device_ = device;
  out->entry_ = *entry;

  // Host tensors travel to the device now; D comes back in sync().
  tc_gemm_args& a = out->args_;
  const void* dev_D = nullptr;
  TILECRAFT_RETURN_IF_ERROR(out->stage(problem.A, A->span_elements, true, false, &a.A));
  TILECRAFT_RETURN_IF_ERROR(out->stage(problem.B, B->span_elements, true, false, &a.B));
  TILECRAFT_RETURN_IF_ERROR(out->stage(problem.D, D->span_elements, !has_C, true, &dev_D));
  a.D = const_cast<void*>(dev_D);
  if (has_C) {
    TILECRAFT_RETURN_IF_ERROR(out->stage(problem.C, C->span_elements, true, false, &a.C));
  } else {
    a.C = a.D;
  }
  if (problem.bias.data) {
    TILECRAFT_RETURN_IF_ERROR(out->stage(problem.bias, bias.span_elements, true, false, &a.bias));
    a.batch_stride_bias = bias.batch_stride;
  }
  if (problem.aux.data) {
    const void* dev_aux = nullptr;
    TILECRAFT_RETURN_IF_ERROR(out->stage(problem.aux, aux.span_elements, false, true, &dev_aux));
    a.aux = const_cast<void*>(dev_aux);
    a.ldaux = aux.ld;
    a.batch_stride_aux = aux.batch_stride;
  }
  TILECRAFT_RETURN_IF_ERROR(detail::stage_graph_operands(
      *graph,
      [&](const TensorView& t, int64_t span, bool copy_in, bool copy_back, const void** data) {
        return out->stage(t, span, copy_in, copy_back, data);
      },
      &out->epilogue_tensors_, &out->epilogue_scalars_, &a.header));
  const ScaleArgument* scales[] = {&problem.scale_a, &problem.scale_b, &problem.scale_c,
                                   &problem.scale_d};
  double* scale_values[] = {&a.scale_a, &a.scale_b, &a.scale_c, &a.scale_d};
  const float** scale_pointers[] = {&a.scale_a_ptr, &a.scale_b_ptr, &a.scale_c_ptr, &a.scale_d_ptr};
  for (int i = 0; i < 4; ++i) {
    *scale_values[i] = scales[i]->given ? scales[i]->value : 1.0;
    *scale_pointers[i] = static_cast<const float*>(scales[i]->tensor.data);
  }

  a.mode = static_cast<int32_t>(problem.mode);
  a.m = s.m;
  a.n = s.n;
  a.k = s.k;
  a.batch_count = (problem.mode == GemmMode::Batched || problem.mode == GemmMode::Array)
                      ? batch
                      : problem.split_k_slices;
  a.lda = A->ld;
  a.ldb = B->ld;
  a.ldc = C->ld;
  a.ldd = D->ld;
  a.batch_stride_A = A->batch_stride;
  a.batch_stride_B = B->batch_stride;
  a.batch_stride_C = C->batch_stride;
  a.batch_stride_D = D->batch_stride;
  detail::set_output_op(a.header, problem.output_op);
  a.header.nondeterministic_reduction = problem.deterministic ? 0 : 1;
  a.header.launch_with_pdl = problem.launch_with_pdl ? 1 : 0;

  if (problem.mode == GemmMode::Array) {
    std::vector<const void*> pointers(4 * static_cast<size_t>(batch));
    const void* bases[4] = {a.A, a.B, a.C, a.D};
    const int64_t strides[4] = {a.batch_stride_A, a.batch_stride_B, a.batch_stride_C,
                                a.batch_stride_D};
    const int element_bytes[4] = {storage_bytes(d.A.element), storage_bytes(d.B.element),
                                  storage_bytes(d.C.element), storage_bytes(d.C.element)};
    for (int which = 0; which < 4; ++which) {
      for (int i = 0; i < batch; ++i) {
        pointers[which * batch + i] =
            static_cast<const char*>(bases[which]) +
            static_cast<int64_t>(i) * strides[which] * element_bytes[which];
      }
    }
    auto arrays = out->upload(pointers.data(), pointers.size() * sizeof(void*),
                              "copying Array-mode pointer arrays");
    if (!arrays) return arrays.status();
    auto* base = static_cast<void**>(*arrays);
    a.A_array = const_cast<const void* const*>(base);
    a.B_array = const_cast<const void* const*>(base + batch);
    a.C_array = const_cast<const void* const*>(base + 2 * batch);
    a.D_array = base + 3 * batch;
  }

  TILECRAFT_RETURN_IF_ERROR(
      out->finish(operation.procedural_name(), problem.workspace, problem.workspace_bytes));
  return out;
}

namespace {

// The epilogue graph's new tensor pointers (in the ABI's order) and scalars, checked against
// what `prepared` was made with; nothing is changed here.
Status retarget_graph_operands(const EpilogueGraph& graph, const EpilogueOperands& prepared,
                               const EpilogueOperands& given, std::vector<void*>* tensors,
                               std::vector<double>* scalars) {
  for (int node : graph.operand_nodes()) {
    const std::string& name = graph.nodes()[node].name;
    auto it = given.tensors.find(name);
    if (it == given.tensors.end() || it->second.data == nullptr) {
      return Status::invalid("retarget: epilogue." + name + " is missing");
    }
    const auto was = reinterpret_cast<uintptr_t>(prepared.tensors.at(name).data);
    if (reinterpret_cast<uintptr_t>(it->second.data) % 16 != was % 16) {
      return Status::invalid("retarget: epilogue." + name +
                             " is aligned unlike the prepared one (modulo 16 bytes)");
    }
    tensors->push_back(it->second.data);
  }
  for (int node : graph.scalar_nodes()) {
    const std::string& name = graph.nodes()[node].name;
    auto it = given.scalars.find(name);
    if (it == given.scalars.end() || !std::isfinite(it->second)) {
      return Status::invalid("retarget: epilogue." + name + " is missing or not finite");
    }
    scalars->push_back(it->second);
  }
  return Status::ok();
}

}  // namespace

Status GemmArguments::retarget(const void* A, const void* B, const void* C, void* D,
                               const void* bias, const EpilogueOperands* epilogue) {
  if (!staged_.empty() || staged_host_tensors() || problem_.mode == GemmMode::Array) {
    return Status::invalid("retarget: these arguments staged host tensors or hold pointer arrays");
  }
  const GemmDescription& d = operation_->description();
  std::vector<void*> graph_tensors;
  std::vector<double> graph_scalars;
  if (d.epilogue_graph) {
    if (epilogue == nullptr) {
      return Status::invalid("retarget: the operation's epilogue graph needs its operands");
    }
    TILECRAFT_RETURN_IF_ERROR(retarget_graph_operands(*d.epilogue_graph, problem_.epilogue,
                                                      *epilogue, &graph_tensors, &graph_scalars));
  } else if (epilogue != nullptr && (!epilogue->tensors.empty() || !epilogue->scalars.empty())) {
    return Status::invalid("retarget: the operation has no epilogue graph; it takes no operands");
  }
  struct Operand {
    const char* name;
    const void* given;
    const void* prepared;
    int alignment_bytes;
  };
  const bool has_C = problem_.C.data != nullptr;
  const Operand operands[] = {
      {"A", A, args_.A, d.A.alignment * storage_bytes(d.A.element)},
      {"B", B, args_.B, d.B.alignment * storage_bytes(d.B.element)},
      {"C", C, has_C ? args_.C : nullptr, d.C.alignment * storage_bytes(d.C.element)},
      {"D", D, args_.D, d.C.alignment * storage_bytes(d.C.element)},
      {"bias", bias, args_.bias, storage_bytes(d.epilogue.fusion.element_bias)},
  };
  for (const Operand& o : operands) {
    if ((o.given == nullptr) != (o.prepared == nullptr)) {
      return Status::invalid(std::string("retarget: ") + o.name +
                             (o.given ? " was not prepared" : " is missing"));
    }
    if (o.given && reinterpret_cast<uintptr_t>(o.given) % o.alignment_bytes != 0) {
      return Status::invalid(std::string("retarget: ") + o.name + " is not " +
                             std::to_string(o.alignment_bytes) + "-byte aligned");
    }
  }
  args_.A = A;
  args_.B = B;
  args_.D = D;
  args_.C = has_C ? C : D;
  args_.bias = bias;
  problem_.A.data = const_cast<void*>(A);
  problem_.B.data = const_cast<void*>(B);
  if (has_C) problem_.C.data = const_cast<void*>(C);
  problem_.D.data = D;
  problem_.bias.data = const_cast<void*>(bias);
  if (d.epilogue_graph) {
    const std::vector<int> nodes = d.epilogue_graph->operand_nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
      epilogue_tensors_[i].data = graph_tensors[i];
      problem_.epilogue.tensors[d.epilogue_graph->nodes()[nodes[i]].name].data = graph_tensors[i];
    }
    const std::vector<int> scalar_nodes = d.epilogue_graph->scalar_nodes();
    for (size_t i = 0; i < scalar_nodes.size(); ++i) {
      problem_.epilogue.scalars[d.epilogue_graph->nodes()[scalar_nodes[i]].name] = graph_scalars[i];
    }
    // In place: args_ points into these vectors.
    std::copy(graph_scalars.begin(), graph_scalars.end(), epilogue_scalars_.begin());
  }
  return Status::ok();
}

}  // namespace tilecraft
