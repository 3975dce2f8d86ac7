// A convolution through the C++ API alone (seed 002's Conv2dOperation): an fprop with asymmetric
// padding, a stride and a dilation on a CUTLASS 2.x ImplicitGemmConvolution kernel (SIMT f32,
// which takes any channel count); host tensors are staged to the GPU and y comes back in sync().
// Checked against a float64 reference. Without a GPU it compiles the kernel and says there is
// nothing to run it on.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "tilecraft/tilecraft.hpp"

namespace tc = tilecraft;

int main() {
  using tc::DataType;
  auto math = tc::MathInstruction::make({1, 1, 1}, DataType::f32, DataType::f32, DataType::f32,
                                        tc::OpClass::Simt, tc::MathOperation::multiply_add)
                  .value();
  auto tile = tc::TileDescription::make({128, 128, 8}, 4, {4, 2, 1}, math).value();
  auto nhwc = tc::TensorDescription::make(DataType::f32, tc::Layout::TensorNHWC, 1).value();
  auto epilogue =
      tc::EpilogueFunctor::linear_combination(DataType::f32, 1, DataType::f32, DataType::f32)
          .value();
  auto description =
      tc::GemmDescription::make_conv2d(tc::ConvKind::Fprop, tc::IteratorAlgorithm::Optimized, 80,
                                       tile, nhwc, nhwc, nhwc, tc::StrideSupport::Strided, epilogue,
                                       tc::Swizzle::IdentitySwizzle1)
          .value();
  auto operation = tc::GemmOperation::make(description).value();
  std::printf("operation: %s\n", operation->procedural_name().c_str());
  tc::throw_if_error(tc::compile_operations({operation}));
  std::printf("compiled (cache: %s)\n", tc::settings().cache_dir.c_str());
  if (tc::Status gpu = tc::cuda_device_available(); !gpu) {
    std::printf(
        "no GPU here (%s): the kernel is compiled and cached, but there is nothing to run "
        "it on.\n",
        gpu.message().c_str());
    return 0;
  }

  // x (N, H, W, C), w (K, R, S, C), padding (top, bottom, left, right), stride, dilation.
  const int N = 3, H = 19, W = 14, C = 13, K = 21, R = 3, S = 5;
  const int top = 2, bottom = 0, left = 1, right = 3, sh = 2, sw = 1, dh = 1, dw = 2;
  auto size = tc::Conv2dProblemSize::make({N, H, W, C}, {K, R, S, C}, {top, bottom, left, right},
                                          {sh, sw}, {dh, dw})
                  .value();
  const int P = size.p, Q = size.q;
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> value(-4, 4);
  auto filled = [&](size_t count) {
    std::vector<float> v(count);
    for (float& x : v) x = float(value(rng));
    return v;
  };
  std::vector<float> x = filled(size_t(N) * H * W * C), w = filled(size_t(K) * R * S * C);
  std::vector<float> c = filled(size_t(N) * P * Q * K), y(c.size(), std::nanf(""));

  tc::Conv2dProblem problem;
  problem.problem_size = size;
  problem.A = tc::TensorView::host_contiguous(x.data(), DataType::f32, {N, H, W, C});
  problem.B = tc::TensorView::host_contiguous(w.data(), DataType::f32, {K, R, S, C});
  problem.C = tc::TensorView::host_contiguous(c.data(), DataType::f32, {N, P, Q, K});
  problem.D = tc::TensorView::host_contiguous(y.data(), DataType::f32, {N, P, Q, K});
  const double alpha = 1.0, beta = 0.5;
  problem.output_op = operation->epilogue_type(alpha, beta).value();
  auto arguments = tc::Conv2dArguments::make(*operation, problem).value();
  tc::throw_if_error(operation->run(*arguments));
  tc::throw_if_error(arguments->sync());

  long mismatches = 0;
  for (int n = 0; n < N; ++n) {
    for (int p = 0; p < P; ++p) {
      for (int q = 0; q < Q; ++q) {
        for (int k = 0; k < K; ++k) {
          double acc = 0;
          for (int r = 0; r < R; ++r) {
            for (int s = 0; s < S; ++s) {
              const int h = p * sh - top + r * dh, ww = q * sw - left + s * dw;
              if (h < 0 || h >= H || ww < 0 || ww >= W) continue;
              for (int ch = 0; ch < C; ++ch) {
                acc += double(x[((size_t(n) * H + h) * W + ww) * C + ch]) *
                       w[((size_t(k) * R + r) * S + s) * C + ch];
              }
            }
          }
          const size_t at = ((size_t(n) * P + p) * Q + q) * K + k;
          if (double(y[at]) != alpha * acc + beta * c[at]) ++mismatches;
        }
      }
    }
  }
  std::printf(
      "conv2d fprop %s on %s: %ld mismatches of %zu elements against the float64 "
      "reference\n",
      size.to_string().c_str(), tc::current_device_info()->name.c_str(), mismatches, y.size());
  return mismatches == 0 ? 0 : 1;
}
