// Conv2dArguments (seed 002, "Conv2d Arguments"): a convolution's tensors and scalars, validated
// against a Conv2dOperation and packed for the module ABI once, so that run() is one launch (two
// with parallel split-K).
#pragma once

#include <memory>
#include <vector>

#include "tilecraft/abi/conv_args.h"
#include "tilecraft/core/conv_problem_size.hpp"
#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/describe/epilogue.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/prepared_launch.hpp"

namespace tilecraft {

class GemmOperation;

// A, B, C and D are the implicit GEMM's operands, as in CUTLASS: fprop A = x (N,H,W,C), B = w
// (K,R,S,C/groups), C/D = y (N,P,Q,K); dgrad A = dy (N,P,Q,K), B = w, C/D = dx (N,H,W,C); wgrad
// A = dy, B = x, C/D = dw (K,R,S,C). Each is packed in the operation's layout: a flat tensor of
// that many elements, a 4-D tensor of those extents, or (channels-last layouts) a 4-D tensor in
// torch's (N, C, H, W) order with channels-last strides. C may instead hold one value per output
// channel (a 1-D tensor of D's channel count, or a 4-D one with stride 0 everywhere but the
// channels), added to every output position: a fused bias. C may be absent when beta is 0.
struct Conv2dProblem {
  Conv2dProblemSize problem_size;
  TensorView A, B, C, D;
  // SM90 kernels whose epilogue adds a bias (bias="column"): one value per output channel, a
  // contiguous 1-D tensor of element_bias (data == nullptr: not given).
  TensorView bias;
  EpilogueParams output_op;
  // A custom epilogue's tensors and scalars (an operation described with an epilogue graph; its
  // D is `D` above, and C, bias and output_op are unused). The graph sees the implicit GEMM's
  // (M, N) output: M its positions (fprop y: N*P*Q, dgrad dx: N*H*W, wgrad dw: K), N its
  // channels (fprop K, dgrad C, wgrad R*S*C). Tensors shaped like D are given as D is (packed in
  // its layout, flat, channels-last torch, or 2-D (M, N)); row inputs and reductions hold M
  // values, column ones N values (one per output channel for fprop and dgrad).
  EpilogueOperands epilogue;
  SplitKMode split_k_mode = SplitKMode::Serial;
  void* workspace = nullptr;  // the caller's, at least the kernel's workspace size
  size_t workspace_bytes = 0;
};

class Conv2dArguments
    : public PreparedLaunchOf<tc_conv_args, TC_FAMILY_CONV, TC_CONV_ARGS_VERSION> {
 public:
  // Validates every tensor against the operation and the problem size, stages host tensors to
  // the device, and sizes the workspace. Nothing is launched. A failure names the argument, what
  // was expected and what was given.
  static Result<std::unique_ptr<Conv2dArguments>> make(const GemmOperation& operation,
                                                       const Conv2dProblem& problem);

  const Conv2dProblem& problem() const { return problem_; }

 private:
  Conv2dArguments() = default;
  Conv2dProblem problem_;
  std::vector<tc_epilogue_tensor> epilogue_tensors_;  // args_ points into these
  std::vector<double> epilogue_scalars_;
};

}  // namespace tilecraft
