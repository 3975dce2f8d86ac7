// GemmArguments: a GEMM's tensors and scalars, validated against an operation and packed for the
// module ABI once, so that run() is argument hand-off and one launch.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tilecraft/abi/gemm_args.h"
#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/describe/epilogue.hpp"
#include "tilecraft/describe/gemm_operation.hpp"
#include "tilecraft/runtime/memory_pool.hpp"
#include "tilecraft/runtime/prepared_launch.hpp"
#include "tilecraft/runtime/scale_argument.hpp"

namespace tilecraft {

class GemmOperation;

// The operands of a custom epilogue (an operation described with an epilogue graph), by the
// graph's names. Input tensors: M x N laid out like D (or (batch, M, N), or (M, N) shared by every
// batch), row-broadcast ones M values, column-broadcast ones N values (or (batch, length)).
// Outputs other than D: stores shaped like D; row / column reductions M / N float32 values, a
// whole-tensor reduction one (per batch: (batch, length) or (batch,)). Scalars: finite numbers.
struct EpilogueOperands {
  std::map<std::string, TensorView> tensors;
  std::map<std::string, double> scalars;
};

struct GemmProblem {
  GemmCoord problem_size;
  TensorView A, B, C, D;  // C may have data == nullptr when beta == 0 (D is read as C then)
  EpilogueParams output_op;
  GemmMode mode = GemmMode::Gemm;
  int split_k_slices = 1;
  int batch = 1;
  // SM90 epilogue fusions (data == nullptr: not given). bias: M values (per_row) or N values
  // (per_column), 1-D, or 2-D (batch, length) for one vector per batch. aux: shaped like D.
  TensorView bias, aux;
  ScaleArgument scale_a, scale_b, scale_c, scale_d;
  // A custom epilogue's tensors and scalars (its D is `D` above; C and output_op are unused).
  EpilogueOperands epilogue;
  // SM90 stream-K and split-K: false lets the partial sums meet in any order (faster, results
  // not bitwise reproducible run to run). Other kernels reduce in a fixed order regardless.
  bool deterministic = true;
  // SM90: launch with programmatic dependent launch (the kernel's prologue overlaps the end of
  // the previous kernel on the stream; its memory accesses still wait for that kernel to finish).
  // SM80 kernels always launch plainly.
  bool launch_with_pdl = true;
  // A device buffer of the caller's for the kernel's workspace (otherwise one is allocated from
  // the pool when the kernel needs it). Must hold at least the kernel's workspace size.
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

// Checks a custom epilogue's operands against its graph for an M x N problem of `batch` batches
// (1: not batched) whose D has layout `layout_d`: every name given, nothing unknown, types,
// shapes, strides and alignment. GemmArguments::make does this too; the arguments-first API
// calls it when the arguments are stated.
Status check_epilogue_operands(const EpilogueGraph& graph, const EpilogueOperands& operands,
                               int64_t m, int64_t n, int batch, Layout layout_d);

class GemmArguments : public PreparedLaunchOf<tc_gemm_args, TC_FAMILY_GEMM, TC_GEMM_ARGS_VERSION> {
 public:
  // Validates every tensor against the operation's description and the problem size, stages host
  // tensors to the device, and sizes the workspace. Nothing is launched. Fails with a Status
  // naming the argument, what was expected and what was given.
  static Result<std::unique_ptr<GemmArguments>> make(const GemmOperation& operation,
                                                     const GemmProblem& problem);

  // Points the prepared arguments at other device buffers of the same shapes, strides and types
  // (the cheap path for repeated calls). Refused, changing nothing, when the arguments staged
  // host tensors or hold Array-mode pointer arrays, when a pointer is null where the prepared one
  // is not (or the reverse), or when a pointer misses the alignment its operand's description
  // needs; the caller then prepares afresh with make(). An operation with an epilogue graph takes
  // its operands too (`epilogue`: the same names, shapes and strides as prepared, each tensor
  // aligned as its prepared one was modulo 16 bytes; scalars may change).
  Status retarget(const void* A, const void* B, const void* C, void* D, const void* bias,
                  const EpilogueOperands* epilogue = nullptr);

  GemmMode mode() const { return problem_.mode; }
  const GemmProblem& problem() const { return problem_; }

 private:
  GemmArguments() = default;
  GemmProblem problem_;
  const GemmOperation* operation_ = nullptr;
  std::vector<tc_epilogue_tensor> epilogue_tensors_;  // args_ points into these
  std::vector<double> epilogue_scalars_;
};

}  // namespace tilecraft
