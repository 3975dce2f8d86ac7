// One-call GEMM (issue 12): tilecraft::gemm(A, B, out, options) picks, compiles, tunes and runs;
// a GemmPlan holds the pick for repeated calls at the lowest host cost.
//
// Where the kernel comes from (TuningOptions::mode, TILECRAFT_TUNING):
//  - a winner stored in the tuning cache for the problem's signature: used at once;
//  - automatic: a kernel of the same family already compiled (in this process or the artifact
//    cache) serves at once, else the ranked first pick is compiled; meanwhile the top candidates
//    tune on a background thread, and the winner takes over once stored;
//  - blocking / force: tuned before the first run; off: the ranked first pick.
// state() says which kernel serves and why.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/tune/tuning.hpp"

namespace tilecraft {

struct PlanState {
  std::string kernel_name;   // the kernel that serves the next call
  std::string reason;        // why it does
  bool tuned = false;        // it is a measured winner
  bool tuning = false;       // a background tuning run for this signature is queued or running
  std::string tuning_error;  // why the last background tuning run found no winner, if it did not
  uint64_t calls = 0;
  // What making the plan cost, in milliseconds: listing and ranking the kernels, and making the
  // serving kernel ready (its module found in the cache and loaded, or compiled; or a tuning run
  // in blocking and force modes).
  double rank_ms = 0;
  double ready_ms = 0;
};

class GemmPlan {
 public:
  // Picks (and compiles) the kernel for arguments like `args`; see the header comment.
  static Result<std::shared_ptr<GemmPlan>> make(const api::GemmArguments& args,
                                                const tune::TuningOptions& options);

  // Runs on arguments of the same shapes, strides, types, device and scalars as those the plan
  // was made for (the data pointers may differ).
  Status run(const api::GemmArguments& args, void* stream = nullptr);
  // The cheapest call: the same problem on other buffers (null where the plan's arguments had
  // no such tensor). A pointer that misses the kernel's alignment is refused.
  Status launch(const void* A, const void* B, const void* C, void* out, const void* bias,
                void* stream = nullptr);

  PlanState state() const;
  const tune::ProblemSignature& signature() const { return signature_; }
  // Waits until background tuning for this plan's signature has ended (true) or timeout_seconds
  // passed (false); the next call then runs the winner.
  bool wait_for_tuning(double timeout_seconds) const;

  struct Impl;
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;
  ~GemmPlan();

 private:
  GemmPlan();
  tune::ProblemSignature signature_;
  std::unique_ptr<Impl> impl_;
};

// What gemm() computes beyond out = A @ B:
//   out = activation(alpha * scale_a * scale_b * (A @ B) + beta * C + bias)
struct GemmOptions {
  TensorView C;  // data == nullptr: none
  double alpha = 1.0;
  double beta = 0.0;
  TensorView bias;  // N values (M with bias_per_row), or (L, N)
  bool bias_per_row = false;
  Activation activation = Activation::identity;
  std::vector<double> activation_args;
  // Default: f32 for floating-point operands (f64 for f64), s32 for int8.
  std::optional<DataType> accumulator_type;
  ScaleArgument scale_a, scale_b;  // fp8 per-tensor scales
  bool use_fast_accum = false;     // fp8: allow unpromoted accumulation (api::GemmArguments)
  // nullopt: tune::tuning_options_from_environment().
  std::optional<tune::TuningOptions> tuning;
  void* stream = nullptr;  // a cudaStream_t; nullptr: the default stream
};

// out = A @ B (with an optional leading batch dimension on all three) through a plan made on the
// first call with these shapes, strides, types and scalars and kept for the process.
Status gemm(const TensorView& A, const TensorView& B, const TensorView& out,
            const GemmOptions& options = {});

// The plan gemm() would use for these tensors and options (made if needed).
Result<std::shared_ptr<GemmPlan>> plan_gemm(const TensorView& A, const TensorView& B,
                                            const TensorView& out, const GemmOptions& options = {});

// The accumulator gemm() uses for operands of `type`.
DataType default_accumulator(DataType type);

}  // namespace tilecraft
