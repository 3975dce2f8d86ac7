// The autotuner, plans and the one-call gemm on a GPU, with CUDA-core f32 kernels (they compile
// fastest). Every output element is checked against a float64 reference, outputs poisoned first.
// Skipped, with the reason, where no CUDA device is usable.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "tilecraft/tilecraft.hpp"
#include "tune/scratch_problem.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

// A row-major f32 device matrix with its host copy.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<float> host;
  float* device = nullptr;

  Matrix(int64_t r, int64_t c, std::mt19937& rng, bool poison = false) : rows(r), cols(c) {
    std::uniform_real_distribution<float> values(-1, 1);
    host.resize(r * c);
    for (float& x : host) x = poison ? std::nanf("") : values(rng);
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&device), host.size() * 4), cudaSuccess);
    upload();
  }
  ~Matrix() { cudaFree(device); }
  void upload() { cudaMemcpy(device, host.data(), host.size() * 4, cudaMemcpyHostToDevice); }
  void download() { cudaMemcpy(host.data(), device, host.size() * 4, cudaMemcpyDeviceToHost); }
  TensorView view() const {
    return TensorView::cuda_contiguous(device, DataType::f32, {rows, cols});
  }
};

// Mismatches of out against alpha * A @ B + beta * C in float64 (f32 products and sums).
int mismatches(const Matrix& A, const Matrix& B, const Matrix* C, Matrix& out, double alpha,
               double beta) {
  out.download();
  int bad = 0;
  for (int64_t i = 0; i < out.rows; ++i) {
    for (int64_t j = 0; j < out.cols; ++j) {
      double ref = 0, magnitude = 0;
      for (int64_t k = 0; k < A.cols; ++k) {
        const double p = double(A.host[i * A.cols + k]) * B.host[k * B.cols + j];
        ref += p;
        magnitude += std::fabs(p);
      }
      ref = alpha * ref + (C ? beta * C->host[i * C->cols + j] : 0.0);
      const double got = out.host[i * out.cols + j];
      if (!(std::fabs(got - ref) <= 1e-5 * (magnitude + std::fabs(ref)) + 1e-6)) ++bad;
    }
  }
  return bad;
}

tune::TuningOptions f32_options(tune::TuningMode mode) {
  tune::TuningOptions options;
  options.mode = mode;
  options.max_candidates = 2;
  options.repeats = 5;
  options.allow_tf32 = false;  // CUDA-core f32 kernels only
  return options;
}

class TunerGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Status status = cuda_device_available(); !status) {
      GTEST_SKIP() << "no GPU: " << status.message();
    }
    ASSERT_TRUE(tune::clear_tuning_cache());
  }
  std::mt19937 rng{std::random_device{}()};
};

TEST_F(TunerGpu, TuningStoresAVerifiedWinnerThatPlansUse) {
  Matrix A(200, 96, rng), B(96, 136, rng), out(200, 136, rng, true);
  auto args = api::GemmArguments::make(A.view(), B.view(), out.view(), DataType::f32);
  ASSERT_TRUE(args) << args.status().message();
  auto report = tune::tune_gemm(*args, f32_options(tune::TuningMode::force));
  ASSERT_TRUE(report) << report.status().message();
  ASSERT_TRUE(report->winner);
  EXPECT_TRUE(report->stored);
  EXPECT_EQ(report->candidates.size(), 2u);
  for (const auto& c : report->candidates) {
    EXPECT_EQ(c.outcome, tune::Outcome::measured) << c.kernel_name << ": " << c.reason;
    EXPECT_GT(c.tflops, 0);
    EXPECT_GE(c.repeats, 1);
  }
  auto signature = tune::signature_of(*args, false);
  ASSERT_TRUE(signature);
  auto found = tune::find_tuned(*signature);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kernel_name, report->candidates[*report->winner].kernel_name);
  // The tuner used its own operands: the caller's output is untouched.
  out.download();
  EXPECT_TRUE(std::isnan(out.host[0]));

  // A plan for a nearby shape (same buckets, same epilogue form) goes straight to the winner.
  Matrix A2(198, 96, rng), out2(198, 136, rng, true);
  GemmOptions options;
  options.alpha = 1.5;
  options.tuning = f32_options(tune::TuningMode::automatic);
  auto plan = plan_gemm(A2.view(), B.view(), out2.view(), options);
  ASSERT_TRUE(plan) << plan.status().message();
  const PlanState state = (*plan)->state();
  EXPECT_TRUE(state.tuned);
  EXPECT_FALSE(state.tuning);
  EXPECT_EQ(state.kernel_name, found->kernel_name);
  EXPECT_NE(state.reason.find("tuning cache"), std::string::npos) << state.reason;
  ASSERT_TRUE(gemm(A2.view(), B.view(), out2.view(), options));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(mismatches(A2, B, nullptr, out2, 1.5, 0.0), 0);
}

TEST_F(TunerGpu, ANewShapeOfACompiledFamilyServesAtOnceAndTheWinnerTakesOver) {
  // Compile one kernel of the family through a plan with tuning off.
  Matrix A(64, 32, rng), B(32, 48, rng), out(64, 48, rng, true);
  GemmOptions off;
  off.tuning = f32_options(tune::TuningMode::off);
  ASSERT_TRUE(gemm(A.view(), B.view(), out.view(), off));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(mismatches(A, B, nullptr, out, 1, 0), 0);

  Matrix A2(300, 72, rng), B2(72, 40, rng), out2(300, 40, rng, true);
  GemmOptions automatic;
  automatic.tuning = f32_options(tune::TuningMode::automatic);
  auto plan = plan_gemm(A2.view(), B2.view(), out2.view(), automatic);
  ASSERT_TRUE(plan) << plan.status().message();
  PlanState first = (*plan)->state();
  EXPECT_FALSE(first.tuned);
  EXPECT_NE(first.reason.find("compiled earlier for this problem family"), std::string::npos)
      << first.reason;
  ASSERT_TRUE((*plan)->launch(A2.device, B2.device, nullptr, out2.device, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(mismatches(A2, B2, nullptr, out2, 1, 0), 0);

  ASSERT_TRUE((*plan)->wait_for_tuning(600));
  std::fill(out2.host.begin(), out2.host.end(), std::nanf(""));
  out2.upload();
  ASSERT_TRUE((*plan)->launch(A2.device, B2.device, nullptr, out2.device, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const PlanState after = (*plan)->state();
  EXPECT_TRUE(after.tuned) << after.reason << " / " << after.tuning_error;
  EXPECT_NE(after.reason.find("background"), std::string::npos) << after.reason;
  EXPECT_EQ(after.calls, 2u);
  EXPECT_EQ(mismatches(A2, B2, nullptr, out2, 1, 0), 0);
}

TEST_F(TunerGpu, BadInputLaunchesNothing) {
  Matrix A(64, 32, rng), B(32, 48, rng), wrong(64, 40, rng, true);
  GemmOptions off;
  off.tuning = f32_options(tune::TuningMode::off);
  Status refused = gemm(A.view(), B.view(), wrong.view(), off);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("out"), std::string::npos) << refused.message();
  wrong.download();
  for (float x : wrong.host) ASSERT_TRUE(std::isnan(x));
  tune::TuningOptions budget = f32_options(tune::TuningMode::off);
  budget.max_candidates = -1;
  off.tuning = budget;
  Matrix out(64, 48, rng, true);
  Status negative = gemm(A.view(), B.view(), out.view(), off);
  EXPECT_EQ(negative.message(), "max_candidates: expected an integer from 1 to 64, got -1");
}

TEST_F(TunerGpu, TheCandidateCheckCatchesWrongAndUnwrittenElements) {
  Matrix A(40, 24, rng), B(24, 56, rng), out(40, 56, rng, true);
  auto args = api::GemmArguments::make(A.view(), B.view(), out.view(), DataType::f32);
  ASSERT_TRUE(args);
  auto scratch = tune::ScratchProblem::make(*args, 3);
  ASSERT_TRUE(scratch) << scratch.status().message();
  auto kernels = api::get_kernels(&(*scratch)->args());
  ASSERT_FALSE(kernels.empty());
  const api::Kernel* simt = nullptr;
  for (const auto& k : kernels) {
    if (k.metadata().operands.A.dtype == DataType::f32) simt = &k;
  }
  ASSERT_NE(simt, nullptr);
  ASSERT_TRUE((*scratch)->poison_output(nullptr));
  ASSERT_TRUE(simt->run((*scratch)->args()));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Status good = (*scratch)->check_output(simt->metadata());
  ASSERT_TRUE(good) << good.message();
  // A wrong corner element, then one never written.
  float* corner = static_cast<float*>((*scratch)->args().out().data);
  float value = 0;
  cudaMemcpy(&value, corner, 4, cudaMemcpyDeviceToHost);
  const float wrong = value + 1.0f;
  cudaMemcpy(corner, &wrong, 4, cudaMemcpyHostToDevice);
  Status caught = (*scratch)->check_output(simt->metadata());
  ASSERT_FALSE(caught);
  EXPECT_NE(caught.message().find("output element (0, 0, 0)"), std::string::npos)
      << caught.message();
  const uint32_t poison = 0xFFFFFFFFu;
  cudaMemcpy(corner + 17, &poison, 4, cudaMemcpyHostToDevice);
  cudaMemcpy(corner, &value, 4, cudaMemcpyHostToDevice);
  Status unwritten = (*scratch)->check_output(simt->metadata());
  ASSERT_FALSE(unwritten);
  EXPECT_NE(unwritten.message().find("(0, 0, 17) was never written"), std::string::npos)
      << unwritten.message();
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
