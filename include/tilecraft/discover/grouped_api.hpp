// The arguments-first API for grouped GEMMs: many problems of their own sizes in one launch,
// given as lists of tensors or in the mixture-of-experts form torch._grouped_mm takes. Kernels
// come from the same spaces as GEMM kernels (each GEMM design in its grouped variant), are ranked
// by the same performance model and run through the same api::Kernel.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/runtime/grouped_gemm_arguments.hpp"

namespace tilecraft::api {

// out[g] = activation(alpha * scale_a * scale_b * (A[g] @ B[g]) + beta * C[g] + bias[g]).
struct GroupedEpilogueArguments {
  double alpha = 1.0;
  double beta = 0.0;
  // Lists: one vector of N_g values per problem (empty: no bias). The stacked form takes a
  // (groups, N) tensor in make_stacked instead. Selects SM90 kernels that fuse the bias.
  std::vector<TensorView> bias;
  Activation activation = Activation::identity;
  std::vector<double> activation_args;
  double scale_a = 1.0, scale_b = 1.0;  // fp8 per-tensor scales
};

class GroupedGemmArguments : public KernelArguments {
 public:
  // Lists: A[g] (M_g, K_g), B[g] (K_g, N_g), out[g] (M_g, N_g), C (empty, or one per problem,
  // shaped like out). Every non-empty problem's operands must share dtype and layout.
  static Result<GroupedGemmArguments> make(std::vector<TensorView> A, std::vector<TensorView> B,
                                           std::vector<TensorView> out, DataType accumulator_type,
                                           std::vector<TensorView> C = {},
                                           const GroupedEpilogueArguments& epilogue = {});
  // Mixture of experts: A (total_rows, K), B (groups, K, N), out (total_rows, N), optional C
  // like out, offsets: int32 end rows per group (read back to the host once, here), optional
  // bias (groups, N): one per group. offsets_on_device: the offsets (a CUDA tensor) are never
  // read on the host: each launch reads them on its stream (so a CUDA graph can capture it and
  // replay it with new offsets), each end raised to the previous group's end and lowered to
  // total_rows (groups never overlap nor leave the tensors); kernels are checked and ranked for
  // total_rows / groups rows a group. The weight gradient of that form: A (M, total_rows),
  // B 2-D (total_rows, N), out (groups, M, N), group g summing over its rows (a zero matrix for a
  // group with none); no C nor bias; its offsets are always read on the device.
  static Result<GroupedGemmArguments> make_stacked(const TensorView& A, const TensorView& B,
                                                   const TensorView& out, const TensorView& offsets,
                                                   DataType accumulator_type,
                                                   const TensorView& C = {},
                                                   const GroupedEpilogueArguments& epilogue = {},
                                                   const TensorView& bias = {},
                                                   bool offsets_on_device = false);
  // Whether the offsets are read on the device at each launch (make_stacked's offsets_on_device,
  // or a 2-D B).
  bool offsets_on_device() const { return stacked_on_device_.has_value(); }

  // The per-problem form (output_op is filled per kernel when it runs).
  const GroupedGemmProblem& problem() const { return problem_; }
  const GroupedEpilogueArguments& epilogue() const { return epilogue_; }
  DataType accumulator_type() const { return accumulator_; }
  DataType dtype_a() const { return dtype_[0]; }
  DataType dtype_b() const { return dtype_[1]; }
  DataType dtype_out() const { return dtype_[2]; }
  // The bias's element type, when there is one.
  std::optional<DataType> bias_dtype() const { return bias_dtype_; }
  Layout layout_a() const { return layout_[0]; }
  Layout layout_b() const { return layout_[1]; }
  Layout layout_out() const { return layout_[2]; }
  // The widest access every non-empty problem's tensor admits (1 when none is non-empty).
  int alignment_a() const { return alignment_[0]; }
  int alignment_b() const { return alignment_[1]; }
  int alignment_out() const { return alignment_[2]; }
  // The CUDA device every operand is on (they are checked to share one).
  int device() const { return problem_.A.empty() ? -1 : problem_.A.front().device_id; }
  int problem_count() const { return static_cast<int>(problem_.problem_sizes.size()); }
  double flops() const;

 private:
  static Result<GroupedGemmArguments> from_problem(GroupedGemmProblem problem,
                                                   DataType accumulator_type,
                                                   const GroupedEpilogueArguments& epilogue);
  Status check(const Kernel& kernel) const override;
  Result<std::unique_ptr<PreparedLaunch>> prepare(const Kernel& kernel,
                                                  const GemmOperation& operation, void* workspace,
                                                  size_t workspace_bytes) const override;
  Status launch(const Kernel& kernel, const GemmOperation& operation, void* stream, void* workspace,
                size_t workspace_bytes) const override;
  std::vector<Kernel> kernels(const MetadataFilter& metadata_filter,
                              std::optional<int> cc) const override;
  // Problems prepared for the ABI by kernel (shared by copies of these arguments).
  std::shared_ptr<detail::PreparedByKernel> prepared_;
  GroupedGemmProblem problem_;  // with offsets on the device: the representative problems
  std::optional<tilecraft::StackedGroupedGemmProblem> stacked_on_device_;
  GroupedEpilogueArguments epilogue_;
  DataType accumulator_ = DataType::f32;
  std::array<DataType, 3> dtype_{};
  std::array<Layout, 3> layout_{};
  std::array<int, 3> alignment_{1, 1, 1};
  std::optional<DataType> bias_dtype_;
};

// The grouped kernels that can run `args`, best first by the performance model (applied to each
// problem's padded tiles; metadata().score is TFLOP/s), filtered by `metadata_filter`.
std::vector<Kernel> get_kernels(const GroupedGemmArguments& args,
                                const MetadataFilter& metadata_filter = {},
                                std::optional<int> cc = std::nullopt);

}  // namespace tilecraft::api
