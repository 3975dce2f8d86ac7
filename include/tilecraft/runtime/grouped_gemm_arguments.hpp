// GroupedGemmArguments: the problems of a grouped GEMM (seed 002's GemmGroupedArguments), checked
// against a grouped operation and packed for the module ABI once: problem sizes, pointer and
// leading-dimension arrays live on the device, so run() is one launch.
#pragma once

#include <memory>
#include <vector>

#include "tilecraft/abi/grouped_args.h"
#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/describe/epilogue.hpp"
#include "tilecraft/runtime/prepared_launch.hpp"
#include "tilecraft/runtime/scale_argument.hpp"

namespace tilecraft {

class GemmOperation;

// One tensor per problem. Problem g multiplies A[g] (M x K) by B[g] (K x N) into D[g] (M x N),
// D = alpha * A B + beta * C[g]; C may be empty (beta == 0). A problem with M = 0 or N = 0 is
// empty: its tensors may hold no data.
struct GroupedGemmProblem {
  std::vector<GemmCoord> problem_sizes;
  std::vector<TensorView> A, B, C, D;
  // Kernels that add a bias (an SM90 per-column bias): one contiguous vector of N values per
  // problem, 16-byte aligned, of the epilogue's element_bias.
  std::vector<TensorView> bias;
  EpilogueParams output_op;
  // fp8 kernels: per-tensor scales, as numbers (folded into alpha and beta).
  double scale_a = 1.0, scale_b = 1.0, scale_c = 1.0, scale_d = 1.0;
  void* workspace = nullptr;  // the caller's, at least the kernel's workspace size
  size_t workspace_bytes = 0;
};

// The forms torch._grouped_mm takes (mixture-of-experts layers), with one int32 end row per group
// in `offsets`. B 3-D: problem g is rows [offsets[g-1], offsets[g]) of a stacked A
// (total_rows x K) and D (total_rows x N), times the g-th matrix of B (groups x K x N, each row-
// or column-major by its strides). B 2-D (the weight gradient of the first form): problem g is
// columns [offsets[g-1], offsets[g]) of A (M x total_rows) times those rows of B
// (total_rows x N), into matrix g of D (groups x M x N, row-major); a group with no rows gets a
// zero matrix. This form takes neither C nor bias, and reads its offsets on the device only.
struct StackedGroupedGemmProblem {
  TensorView A, B, C, D;  // C optional, shaped like D
  TensorView offsets;     // int32, one end row per group, on the host or the device
  TensorView bias;        // optional: (groups, N), one bias per group (per expert)
  EpilogueParams output_op;
  double scale_a = 1.0, scale_b = 1.0, scale_c = 1.0, scale_d = 1.0;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  // The offsets stay on the device: the module reads them on the stream, each end raised to the
  // previous group's end and lowered to the rows (groups never overlap nor leave the tensors), so
  // that nothing is read on the host (a CUDA graph can capture the launch). Else split() serves.
  bool expand_on_device = false;

  // The per-problem form of the same work. Offsets on the device are copied to the host (one
  // synchronization); they are checked to be non-negative, non-decreasing and within A's rows.
  // Every tensor is checked in 64 bits first, and each group's rows, N and K must fit the
  // kernels' 32-bit index. `out_name` is D's name in messages ("out" in the api). The first
  // form only.
  Result<GroupedGemmProblem> split(const char* out_name = "D") const;
  // What split() checks, without reading the offsets (a 1-D int32 CUDA tensor), and problems of
  // total_rows / groups rows each, all starting at row 0: views for checks and for ranking
  // kernels when the offsets stay on the device.
  Result<GroupedGemmProblem> representative(const char* out_name = "D") const;
};

class GroupedGemmArguments
    : public PreparedLaunchOf<tc_grouped_args, TC_FAMILY_GROUPED, TC_GROUPED_ARGS_VERSION> {
 public:
  // Checks every problem's tensors against the operation's description (naming the problem,
  // e.g. "A[3]: expected bfloat16 ..."), stages host tensors, uploads the arrays and sizes the
  // workspace. Nothing is launched; on failure nothing was written.
  static Result<std::unique_ptr<GroupedGemmArguments>> make(const GemmOperation& operation,
                                                            const GroupedGemmProblem& problem);
  static Result<std::unique_ptr<GroupedGemmArguments>> make(
      const GemmOperation& operation, const StackedGroupedGemmProblem& problem);

  int problem_count() const { return static_cast<int>(sizes_.size() / 3); }
  // (m, n, k) per problem, as launched.
  const std::vector<int32_t>& host_problem_sizes() const { return sizes_; }
  // Multiply-adds of all problems.
  double flops() const;

 private:
  GroupedGemmArguments() = default;
  // The epilogue and scales into the header, then finish() with the problem's workspace.
  template <class Problem>
  Status finish_problem(const GemmOperation& operation, const Problem& problem);
  std::vector<int32_t> sizes_;  // host copy the Host scheduler reads at each launch
};

}  // namespace tilecraft
