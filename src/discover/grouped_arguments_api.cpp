// tilecraft::api::GroupedGemmArguments: what the caller's lists (or stacked tensors) say about
// the grouped GEMM they want.
#include <algorithm>
#include <string>

#include "discover/operand_rules.hpp"
#include "discover/prepared_by_kernel.hpp"
#include "discover/tensor_facts.hpp"
#include "tilecraft/core/extents.hpp"
#include "tilecraft/discover/grouped_api.hpp"
#include "tilecraft/runtime/grouped_gemm_arguments.hpp"
#include "tilecraft/runtime/index_limits.hpp"

namespace tilecraft::api {
namespace {

std::string at(const char* name, size_t g) {
  return std::string(name) + "[" + std::to_string(g) + "]";
}

}  // namespace

double GroupedGemmArguments::flops() const {
  double total = 0;
  for (const GemmCoord& s : problem_.problem_sizes) total += 2.0 * s.m * double(s.n) * s.k;
  return total;
}

Result<GroupedGemmArguments> GroupedGemmArguments::from_problem(
    GroupedGemmProblem problem, DataType accumulator_type,
    const GroupedEpilogueArguments& epilogue) {
  TILECRAFT_RETURN_IF_ERROR(check_accumulator_type(accumulator_type));
  const GroupedEpilogueArguments& e = epilogue;
  TILECRAFT_RETURN_IF_ERROR(check_finite(
      {{"alpha", e.alpha}, {"beta", e.beta}, {"scale_a", e.scale_a}, {"scale_b", e.scale_b}}));
  TILECRAFT_RETURN_IF_ERROR(check_beta_has_c(e.beta, !problem.C.empty(), "C"));
  TILECRAFT_RETURN_IF_ERROR(check_activation_args(e.activation, e.activation_args));
  const size_t count = problem.problem_sizes.size();
  if (count == 0) return Status::invalid("A: expected at least one problem, got none");
  if (count > tilecraft::detail::kMaxGroupedProblems) {
    return Status::invalid("A: at most " + std::to_string(tilecraft::detail::kMaxGroupedProblems) +
                           " problems in one launch, got " + std::to_string(count));
  }
  GroupedGemmArguments args;
  args.accumulator_ = accumulator_type;
  args.epilogue_ = epilogue;
  const std::vector<TensorView>* lists[3] = {&problem.A, &problem.B, &problem.D};
  const char* names[3] = {"A", "B", "out"};
  bool have_layout[3] = {false, false, false};
  int first_device = -1;
  for (size_t g = 0; g < count; ++g) {
    const GemmCoord& s = problem.problem_sizes[g];
    for (int w = 0; w < 3; ++w) {
      const TensorView& t = (*lists[w])[g];
      const std::string who = at(names[w], g);
      if (t.device != DeviceKind::kCuda) {
        return Status::invalid(who + ": expected a CUDA tensor, got one on the host");
      }
      if (first_device < 0) first_device = t.device_id;
      if (t.device_id != first_device) {
        return Status::invalid(who + ": expected a tensor on cuda:" + std::to_string(first_device) +
                               " like A[0], got cuda:" + std::to_string(t.device_id));
      }
      if (g == 0) {
        args.dtype_[w] = t.dtype;
      } else if (t.dtype != args.dtype_[w]) {
        return Status::invalid(who + ": expected element type " + dsl_name(args.dtype_[w]) +
                               " like " + names[w] + "[0], got " + dsl_name(t.dtype));
      }
      if (t.rank != 2) {
        return Status::invalid(who + ": expected a 2-D tensor, got " + t.describe());
      }
      if (s.m == 0 || s.n == 0) continue;  // an empty problem says nothing about layouts
      auto layout = detail::layout_of(who.c_str(), t);
      if (!layout) return layout.status();
      const int alignment = detail::alignment_of(t, *layout);
      if (!have_layout[w]) {
        args.layout_[w] = *layout;
        args.alignment_[w] = alignment;
        have_layout[w] = true;
      } else if (*layout != args.layout_[w]) {
        return Status::invalid(who + ": expected " + std::string(to_string(args.layout_[w])) +
                               " like the other problems' " + names[w] + ", got " +
                               std::string(to_string(*layout)) + " (" + t.describe() + ")");
      }
      args.alignment_[w] = std::min(args.alignment_[w], alignment);
    }
  }
  for (size_t g = 0; g < problem.C.size(); ++g) {
    const TensorView& c = problem.C[g];
    if (c.dtype != args.dtype_[2]) {
      return Status::invalid(at("C", g) + ": expected element type " + dsl_name(args.dtype_[2]) +
                             " like out, got " + dsl_name(c.dtype));
    }
    const GemmCoord& s = problem.problem_sizes[g];
    if (s.m == 0 || s.n == 0) continue;
    auto layout = detail::layout_of(at("C", g).c_str(), c);
    if (!layout) return layout.status();
    if (*layout != args.layout_[2]) {
      return Status::invalid(at("C", g) + ": expected " + std::string(to_string(args.layout_[2])) +
                             " like out, got " + std::string(to_string(*layout)));
    }
    args.alignment_[2] = std::min(args.alignment_[2], detail::alignment_of(c, *layout));
  }
  if (!problem.bias.empty()) {
    if (problem.bias.size() != count) {
      return Status::invalid("bias: expected one vector per problem (" + std::to_string(count) +
                             "), got " + std::to_string(problem.bias.size()));
    }
    const DataType dtype = problem.bias[0].dtype;
    for (size_t g = 0; g < count; ++g) {
      const TensorView& b = problem.bias[g];
      if (b.dtype != dtype) {
        return Status::invalid(at("bias", g) + ": expected element type " + dsl_name(dtype) +
                               " like bias[0], got " + dsl_name(b.dtype));
      }
      if (b.device != DeviceKind::kCuda || b.device_id != first_device) {
        return Status::invalid(at("bias", g) + ": expected a tensor on cuda:" +
                               std::to_string(first_device) + " like A[0], got " + b.describe());
      }
    }
    if (!is_bias_type(dtype)) {
      return Status::invalid("bias: expected Float32, Float16 or BFloat16, got " + dsl_name(dtype));
    }
    args.bias_dtype_ = dtype;
  }
  problem.scale_a = epilogue.scale_a;
  problem.scale_b = epilogue.scale_b;
  args.problem_ = std::move(problem);
  args.prepared_ = std::make_shared<detail::PreparedByKernel>();
  return args;
}

Result<GroupedGemmArguments> GroupedGemmArguments::make(std::vector<TensorView> A,
                                                        std::vector<TensorView> B,
                                                        std::vector<TensorView> out,
                                                        DataType accumulator_type,
                                                        std::vector<TensorView> C,
                                                        const GroupedEpilogueArguments& epilogue) {
  const size_t count = A.size();
  if (B.size() != count || out.size() != count || (!C.empty() && C.size() != count)) {
    const char* name = B.size() != count ? "B" : out.size() != count ? "out" : "C";
    const size_t got = B.size() != count ? B.size() : out.size() != count ? out.size() : C.size();
    return Status::invalid(std::string(name) + ": expected one tensor per problem (" +
                           std::to_string(count) + " in A), got " + std::to_string(got));
  }
  GroupedGemmProblem problem;
  for (size_t g = 0; g < count; ++g) {
    for (const auto& [name, t] :
         {std::pair{"A", &A[g]}, std::pair{"B", &B[g]}, std::pair{"out", &out[g]}}) {
      TILECRAFT_RETURN_IF_ERROR(check_tensor_extents(at(name, g), *t).status());
      if (t->rank != 2) {
        return Status::invalid(at(name, g) + ": expected a 2-D tensor, got " + t->describe());
      }
    }
    if (!C.empty()) TILECRAFT_RETURN_IF_ERROR(check_tensor_extents(at("C", g), C[g]).status());
    if (B[g].shape[0] != A[g].shape[1]) {
      return Status::invalid(at("B", g) + ": expected K = " + std::to_string(A[g].shape[1]) +
                             " rows to match " + at("A", g) + ", got " + B[g].describe());
    }
    if (out[g].shape[0] != A[g].shape[0] || out[g].shape[1] != B[g].shape[1]) {
      return Status::invalid(at("out", g) + ": expected (" + std::to_string(A[g].shape[0]) + ", " +
                             std::to_string(B[g].shape[1]) + ") from " + at("A", g) + " and " +
                             at("B", g) + ", got " + out[g].describe());
    }
    // What no kernel can index: an extent above 32 bits (never truncated).
    TILECRAFT_RETURN_IF_ERROR(check_index32(at("A", g), 0, A[g].shape[0], "M"));
    TILECRAFT_RETURN_IF_ERROR(check_index32(at("A", g), 1, A[g].shape[1], "K"));
    TILECRAFT_RETURN_IF_ERROR(check_index32(at("B", g), 1, B[g].shape[1], "N"));
    problem.problem_sizes.push_back({static_cast<int>(A[g].shape[0]),
                                     static_cast<int>(B[g].shape[1]),
                                     static_cast<int>(A[g].shape[1])});
  }
  problem.A = std::move(A);
  problem.B = std::move(B);
  problem.D = std::move(out);
  problem.C = std::move(C);
  problem.bias = epilogue.bias;
  for (size_t g = 0; g < problem.bias.size(); ++g) {
    TILECRAFT_RETURN_IF_ERROR(check_tensor_extents(at("bias", g), problem.bias[g]).status());
  }
  return from_problem(std::move(problem), accumulator_type, epilogue);
}

Result<GroupedGemmArguments> GroupedGemmArguments::make_stacked(
    const TensorView& A, const TensorView& B, const TensorView& out, const TensorView& offsets,
    DataType accumulator_type, const TensorView& C, const GroupedEpilogueArguments& epilogue,
    const TensorView& bias, bool offsets_on_device) {
  // Named as the caller gave them (the per-problem views below would be named A[0], ...).
  for (const auto& [name, t] : {std::pair{"A", &A}, {"B", &B}, {"out", &out}}) {
    if (t->data != nullptr && t->device != DeviceKind::kCuda) {
      return Status::invalid(std::string(name) + ": expected a CUDA tensor, got one on the host");
    }
  }
  StackedGroupedGemmProblem stacked;
  stacked.bias = bias;
  stacked.A = A;
  stacked.B = B;
  stacked.D = out;
  stacked.C = C;
  stacked.offsets = offsets;
  stacked.expand_on_device = offsets_on_device || B.rank == 2;
  auto problem = stacked.expand_on_device ? stacked.representative("out") : stacked.split("out");
  if (!problem) return problem.status();
  auto made = from_problem(std::move(*problem), accumulator_type, epilogue);
  if (made && stacked.expand_on_device) {
    // A group may start at any stacked row: a kernel reads it as aligned as the rows' stride.
    const bool rows_are_k = B.rank == 2;
    const std::pair<const TensorView*, int> steps[3] = {
        {&A, rows_are_k ? 1 : 0}, {rows_are_k ? &B : nullptr, 0}, {rows_are_k ? nullptr : &out, 0}};
    for (int w = 0; w < 3; ++w) {
      const auto [t, dimension] = steps[w];
      if (t == nullptr || t->rank != 2 || t->shape[dimension] <= 1) continue;
      int& alignment = made->alignment_[w];
      while (alignment > 1 && t->strides[dimension] % alignment != 0) alignment /= 2;
    }
    stacked.scale_a = epilogue.scale_a;
    stacked.scale_b = epilogue.scale_b;
    made->stacked_on_device_ = std::move(stacked);
  }
  return made;
}

}  // namespace tilecraft::api
