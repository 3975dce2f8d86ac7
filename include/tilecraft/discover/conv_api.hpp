// The arguments-first API for 2-D convolutions: say which convolution (fprop, dgrad or wgrad) to
// compute on which channels-last tensors, with what stride, padding and dilation; get_kernels
// lists the implicit-GEMM kernels that can (each GEMM design of the spaces in its convolution
// variant), ranked by the performance model on the implicit GEMM; api::Kernel checks, compiles
// and runs them, as for GEMMs.
#pragma once

#include <array>
#include <memory>
#include <optional>

#include "tilecraft/core/conv_problem_size.hpp"
#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/discover/api.hpp"

namespace tilecraft::api {

// Stride, padding and dilation of a convolution; groups (1: every output channel sees every
// input channel; more: a grouped fprop, C == K == groups a depthwise one).
struct Conv2dGeometry {
  std::array<int, 2> stride{1, 1};         // rows, columns
  std::array<int, 4> padding{0, 0, 0, 0};  // top, bottom, left, right
  std::array<int, 2> dilation{1, 1};       // rows, columns
  int groups = 1;
  ConvMode mode = ConvMode::CrossCorrelation;
  // Depth, for 5-D tensors (a 3-D convolution).
  int stride_d = 1;
  std::array<int, 2> padding_d{0, 0};  // front, back
  int dilation_d = 1;
};

// The tensors are in torch's logical order and channels-last memory (torch.channels_last):
// activations (N, C, H, W) and (N, K, P, Q), filters (K, C / groups, R, S), each with unit stride
// on the channels. 5-D tensors (torch.channels_last_3d) make a 3-D convolution: (N, C, D, H, W),
// (N, K, Z, P, Q), (K, C, T, R, S), with the geometry's depth fields. The three operands of a kind
// (as CUTLASS names them):
//   fprop: A = x (N, C, H, W), B = w (K, C, R, S), out = y  (N, K, P, Q)
//   dgrad: A = dy (N, K, P, Q), B = w (K, C, R, S), out = dx (N, C, H, W)
//   wgrad: A = dy (N, K, P, Q), B = x (N, C, H, W), out = dw (K, C, R, S)
// epilogue: out = activation(alpha * conv + beta * C + bias), C shaped like out, bias one value
// per output channel (SM90 kernels fuse it in the epilogue; SM80 kernels read it as a C of one
// value per channel, so it does not combine with a C there). Scales and per-row bias are GEMM
// fusions and are refused.
class Conv2dArguments : public KernelArguments {
 public:
  static Result<Conv2dArguments> make(ConvKind kind, const TensorView& A, const TensorView& B,
                                      const TensorView& out, DataType accumulator_type,
                                      const Conv2dGeometry& geometry = {},
                                      const EpilogueArguments& epilogue = {});

  ConvKind kind() const { return kind_; }
  const Conv2dProblemSize& problem_size() const { return size_; }
  const TensorView& A() const { return a_; }
  const TensorView& B() const { return b_; }
  const TensorView& out() const { return out_; }
  // The CUDA device every operand is on (they are checked to share one).
  int device() const { return out_.device_id; }
  const EpilogueArguments& epilogue() const { return epilogue_; }
  DataType accumulator_type() const { return accumulator_; }
  // The widest access (elements, a power of two up to 16 bytes) each operand's channels and
  // data pointer admit: its contiguous extent is its channel count.
  int alignment_a() const { return alignment_[0]; }
  int alignment_b() const { return alignment_[1]; }
  int alignment_out() const { return alignment_[2]; }
  int alignment_c() const { return alignment_c_; }
  // The implicit GEMM: fprop M = N*P*Q, N = K, K = C*R*S; dgrad M = N*H*W, N = C, K = K*R*S;
  // wgrad M = K, N = C*R*S, K = N*P*Q.
  std::array<int64_t, 3> gemm_mnk() const;
  double flops() const;

 private:
  Status check(const Kernel& kernel) const override;
  Result<std::unique_ptr<PreparedLaunch>> prepare(const Kernel& kernel,
                                                  const GemmOperation& operation, void* workspace,
                                                  size_t workspace_bytes) const override;
  Status launch(const Kernel& kernel, const GemmOperation& operation, void* stream, void* workspace,
                size_t workspace_bytes) const override;
  std::vector<Kernel> kernels(const MetadataFilter& metadata_filter,
                              std::optional<int> cc) const override;
  // Arguments prepared for the ABI by kernel (shared by copies of these arguments).
  std::shared_ptr<detail::PreparedByKernel> prepared_;
  ConvKind kind_ = ConvKind::Fprop;
  Conv2dProblemSize size_;
  TensorView a_, b_, out_;
  EpilogueArguments epilogue_;
  DataType accumulator_ = DataType::f32;
  std::array<int, 3> alignment_{1, 1, 1};
  int alignment_c_ = 1;
};

// The convolution kernels that can run `args`, best first by the performance model on the
// implicit GEMM (metadata().score is TFLOP/s), filtered by `metadata_filter`.
std::vector<Kernel> get_kernels(const Conv2dArguments& args,
                                const MetadataFilter& metadata_filter = {},
                                std::optional<int> cc = std::nullopt);

}  // namespace tilecraft::api
