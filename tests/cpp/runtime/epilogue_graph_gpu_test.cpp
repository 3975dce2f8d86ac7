// A custom epilogue built directly in C++ (EpilogueGraph), compiled as an SM90 visitor tree and
// run through GemmOperation: every element of D and of the reductions against a double
// reference. Skipped, with the reason, without a compute capability 9.0 device.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tilecraft/tilecraft.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

// D = relu(alpha * acc + bias[n]) (f16); rowmax[m] = max over n of D; total = sum of D.
EpilogueGraph relu_bias_graph() {
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int alpha = g.scalar("alpha");
  const int scaled = g.mul(alpha, acc);
  const int bias = g.tensor("bias", DataType::f32, Broadcast::column);
  const int z = g.add(scaled, bias);
  const int d = g.activation(Activation::relu, z);
  g.store(d, "D", DataType::f16);
  g.reduce(d, ReduceOp::max, ReduceAxis::row, "rowmax", DataType::f32);
  g.reduce(d, ReduceOp::sum, ReduceAxis::all, "total", DataType::f32);
  return g;
}

template <class T>
struct DeviceBuffer {
  T* data = nullptr;
  explicit DeviceBuffer(const std::vector<T>& host) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&data), host.size() * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  ~DeviceBuffer() { cudaFree(data); }
  std::vector<T> read(size_t n) const {
    std::vector<T> out(n);
    EXPECT_EQ(cudaMemcpy(out.data(), data, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }
};

TEST(EpilogueGraphGpu, GraphBuiltInCppRunsOnSm90) {
  auto info = current_device_info();
  if (!info) GTEST_SKIP() << "no GPU: " << info.status().message();
  if (info->compute_capability != 90) {
    GTEST_SKIP() << "needs compute capability 9.0, the device has " << info->compute_capability;
  }
  using enum DataType;
  auto math = MathInstruction::make({64, 128, 16}, f16, f16, f32, OpClass::TensorOp,
                                    MathOperation::multiply_add)
                  .value();
  auto tile = TileDescription::make_sm90({128, 128, 64}, 0, {1, 1, 1}, math,
                                         KernelSchedule::TmaWarpSpecializedCooperative,
                                         EpilogueSchedule::Auto, TileScheduler::Persistent)
                  .value();
  auto row = TensorDescription::make(f16, Layout::RowMajor, 8).value();
  auto column = TensorDescription::make(f16, Layout::ColumnMajor, 8).value();
  auto op = GemmOperation::make_with_epilogue_graph(90, tile, row, column, row, relu_bias_graph(),
                                                    Swizzle::IdentitySwizzle1);
  ASSERT_TRUE(op) << op.status().message();

  // Small integers: the accumulator and D are exact, so every element must match.
  const int m = 200, n = 136, k = 64;
  std::mt19937 rng(std::random_device{}());
  std::uniform_int_distribution<int> values(-3, 3);
  std::vector<float> a(m * k), b(n * k), bias(n);
  for (auto* v : {&a, &b, &bias}) {
    for (float& x : *v) x = static_cast<float>(values(rng));
  }
  std::vector<__half> a16(a.size()), b16(b.size());
  for (size_t i = 0; i < a.size(); ++i) a16[i] = __float2half(a[i]);
  for (size_t i = 0; i < b.size(); ++i) b16[i] = __float2half(b[i]);
  DeviceBuffer<__half> dA(a16), dB(b16), dD(std::vector<__half>(m * n, __float2half(NAN)));
  DeviceBuffer<float> dBias(bias), dRowmax(std::vector<float>(m, NAN)),
      dTotal(std::vector<float>(1, NAN));

  GemmProblem problem;
  problem.problem_size = {m, n, k};
  problem.A = TensorView::cuda_contiguous(dA.data, f16, {m, k});
  problem.B = TensorView::cuda_contiguous(dB.data, f16, {int64_t(n) * k});  // K x N, column-major
  problem.D = TensorView::cuda_contiguous(dD.data, f16, {m, n});
  problem.epilogue.scalars["alpha"] = 0.5;
  problem.epilogue.tensors["bias"] = TensorView::cuda_contiguous(dBias.data, f32, {n});
  problem.epilogue.tensors["rowmax"] = TensorView::cuda_contiguous(dRowmax.data, f32, {m});
  problem.epilogue.tensors["total"] = TensorView::cuda_contiguous(dTotal.data, f32, {1});
  auto args = GemmArguments::make(**op, problem);
  ASSERT_TRUE(args) << args.status().message();
  for (int launch = 0; launch < 2; ++launch) {  // reductions start afresh each launch
    ASSERT_TRUE((*op)->run(**args));
  }
  ASSERT_TRUE((*args)->sync());

  // Every element of D and rowmax exact, total within float32 atomics' rounding.
  auto expect_results = [&](const DeviceBuffer<__half>& out, const DeviceBuffer<float>& out_rowmax,
                            const DeviceBuffer<float>& out_total, double alpha,
                            const std::vector<float>& bias_values) {
    const std::vector<__half> d = out.read(m * n);
    const std::vector<float> rowmax = out_rowmax.read(m), total = out_total.read(1);
    int mismatches = 0;
    double reference_total = 0;
    for (int i = 0; i < m; ++i) {
      double reference_rowmax = -INFINITY;
      for (int j = 0; j < n; ++j) {
        double acc = 0;
        for (int kk = 0; kk < k; ++kk) acc += double(a[i * k + kk]) * b[j * k + kk];
        const double value = std::max(alpha * acc + bias_values[j], 0.0);
        reference_rowmax = std::max(reference_rowmax, value);
        reference_total += value;
        if (double(__half2float(d[i * n + j])) != value) ++mismatches;
      }
      if (double(rowmax[i]) != reference_rowmax) ++mismatches;
    }
    EXPECT_EQ(mismatches, 0);
    // Float32 atomics in any order: exact up to 2^22 with halves, rounded beyond.
    EXPECT_NEAR(double(total[0]), reference_total, 1e-6 * std::abs(reference_total));
  };
  expect_results(dD, dRowmax, dTotal, 0.5, bias);

  // The prepared arguments retargeted to other buffers and another alpha (the cheap path of
  // repeated calls): refused, changing nothing, without the graph's operands or with a tensor
  // aligned unlike the prepared one; then the new buffers are written and the old ones are not.
  std::vector<float> bias2(n);
  for (float& x : bias2) x = static_cast<float>(values(rng));
  DeviceBuffer<__half> dD2(std::vector<__half>(m * n, __float2half(NAN)));
  DeviceBuffer<float> dBias2(bias2), dRowmax2(std::vector<float>(m, NAN)),
      dTotal2(std::vector<float>(4, NAN));
  EpilogueOperands operands;
  operands.scalars["alpha"] = 0.25;
  operands.tensors["bias"] = TensorView::cuda_contiguous(dBias2.data, f32, {n});
  operands.tensors["rowmax"] = TensorView::cuda_contiguous(dRowmax2.data, f32, {m});
  operands.tensors["total"] = TensorView::cuda_contiguous(dTotal2.data + 1, f32, {1});
  Status refused = (*args)->retarget(dA.data, dB.data, nullptr, dD2.data, nullptr);
  EXPECT_NE(refused.message().find("epilogue graph needs its operands"), std::string::npos)
      << refused.message();
  refused = (*args)->retarget(dA.data, dB.data, nullptr, dD2.data, nullptr, &operands);
  EXPECT_NE(refused.message().find("epilogue.total is aligned unlike the prepared one"),
            std::string::npos)
      << refused.message();
  operands.tensors["total"] = TensorView::cuda_contiguous(dTotal2.data, f32, {1});
  ASSERT_TRUE((*args)->retarget(dA.data, dB.data, nullptr, dD2.data, nullptr, &operands));
  ASSERT_TRUE((*op)->run(**args));
  ASSERT_TRUE((*args)->sync());
  expect_results(dD2, dRowmax2, dTotal2, 0.25, bias2);
  expect_results(dD, dRowmax, dTotal, 0.5, bias);  // the first launch's outputs, untouched
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
