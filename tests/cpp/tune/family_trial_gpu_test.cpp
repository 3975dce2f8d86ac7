// The tuner's trials of grouped GEMMs and convolutions on a GPU: a listed kernel's output on the
// trial's own operands passes the float64 check, and a wrong or unwritten element is caught and
// named. Skipped, with the reason, where no CUDA device is usable.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tilecraft/tilecraft.hpp"
#include "tune/trial.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

class FamilyTrialGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Status status = cuda_device_available(); !status) {
      GTEST_SKIP() << "no GPU: " << status.message();
    }
  }
  void TearDown() override {
    for (void* p : buffers_) cudaFree(p);
  }
  // A device buffer of `elements` f16 values (their contents are never read: trials make their
  // own operands).
  void* buffer(int64_t elements) {
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, elements * 2), cudaSuccess);
    buffers_.push_back(p);
    return p;
  }
  // A channels-last f16 view in logical order (N, C, H, W).
  TensorView activation(int64_t n, int64_t c, int64_t h, int64_t w) {
    TensorView t;
    t.data = buffer(n * c * h * w);
    t.dtype = DataType::f16;
    t.rank = 4;
    t.shape = {n, c, h, w};
    t.strides = {h * w * c, 1, w * c, c};
    return t;
  }
  // Overwrites the element at `offset` of `view` with `bits`, after saving what was there.
  static uint16_t overwrite(const TensorView& view, int64_t offset, uint16_t bits) {
    uint16_t was = 0;
    auto* at = static_cast<uint16_t*>(view.data) + offset;
    cudaMemcpy(&was, at, 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(at, &bits, 2, cudaMemcpyHostToDevice);
    return was;
  }
  // Runs the first kernel listed for the trial's arguments on them; the check passes, then catches
  // a changed element
  // (`wrong`, expected in the message) and a poisoned one (`unwritten`).
  static void expect_check_catches(const tune::Trial& trial, const TensorView& out,
                                   int64_t wrong_at, const std::string& wrong, int64_t unwritten_at,
                                   const std::string& unwritten) {
    auto kernels = api::get_kernels(trial.arguments());
    ASSERT_FALSE(kernels.empty());
    ASSERT_TRUE(trial.poison_output(nullptr));
    Status ran = kernels.front().run(trial.arguments());
    ASSERT_TRUE(ran) << ran.message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    Status good = trial.check_output(kernels.front().metadata());
    ASSERT_TRUE(good) << good.message();
    const uint16_t was = overwrite(out, wrong_at, 0x5000);  // 32.0: far off any value here
    Status caught = trial.check_output(kernels.front().metadata());
    ASSERT_FALSE(caught);
    EXPECT_NE(caught.message().find(wrong), std::string::npos) << caught.message();
    overwrite(out, wrong_at, was);
    overwrite(out, unwritten_at, 0xFFFF);
    Status missed = trial.check_output(kernels.front().metadata());
    ASSERT_FALSE(missed);
    EXPECT_NE(missed.message().find(unwritten), std::string::npos) << missed.message();
  }

 private:
  std::vector<void*> buffers_;
};

TEST_F(FamilyTrialGpu, AConvolutionTrialCatchesWrongAndUnwrittenElements) {
  api::Conv2dGeometry geometry;
  geometry.padding = {1, 1, 1, 1};
  const TensorView x = activation(2, 16, 9, 7), y = activation(2, 24, 9, 7);
  const TensorView w = activation(24, 16, 3, 3);
  auto args = api::Conv2dArguments::make(ConvKind::Fprop, x, w, y, DataType::f32, geometry);
  ASSERT_TRUE(args) << args.status().message();
  auto trial = tune::make_trial(*args, 3);
  ASSERT_TRUE(trial);
  // The trial's own output: (1, 5, 3, 2) sits at 1 * 9*7*24 + 5 + 3 * 7*24 + 2 * 24.
  const auto& trial_args = static_cast<const api::Conv2dArguments&>((*trial)->arguments());
  EXPECT_NE(trial_args.out().data, y.data);
  expect_check_catches(**trial, trial_args.out(), 0, "output element (0, 0, 0, 0) is",
                       1512 + 5 + 504 + 48, "output element (1, 5, 3, 2) was never written");
}

TEST_F(FamilyTrialGpu, AGroupedTrialCatchesWrongAndUnwrittenElementsByProblem) {
  std::vector<TensorView> A, B, out;
  for (int64_t m : {33, 0, 17}) {
    A.push_back(TensorView::cuda_contiguous(buffer(m * 24 + 1), DataType::f16, {m, 24}));
    B.push_back(TensorView::cuda_contiguous(buffer(24 * 40), DataType::f16, {24, 40}));
    out.push_back(TensorView::cuda_contiguous(buffer(m * 40 + 1), DataType::f16, {m, 40}));
  }
  auto args = api::GroupedGemmArguments::make(A, B, out, DataType::f32);
  ASSERT_TRUE(args) << args.status().message();
  auto trial = tune::make_trial(*args, 3);
  ASSERT_TRUE(trial) << trial.status().message();
  const auto& trial_args = static_cast<const api::GroupedGemmArguments&>((*trial)->arguments());
  const TensorView& last = trial_args.problem().D[2];
  EXPECT_NE(last.data, out[2].data);
  expect_check_catches(**trial, last, 0, "problem 2: output element (0, 0, 0) is", 5 * 40 + 7,
                       "problem 2: output element (0, 5, 7) was never written");
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
