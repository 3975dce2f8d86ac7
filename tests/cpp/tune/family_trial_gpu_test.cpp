// The tuner's trials of grouped GEMMs and convolutions on a GPU: a listed kernel's output on the
// trial's own operands passes the float64 check, and a wrong or unwritten element is caught and
// named. Skipped, with the reason, where no CUDA device is usable.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
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

TEST_F(FamilyTrialGpu, SignaturesBucketWhatMayShareAWinnerAndSplitWhatMayNot) {
  // Grouped, in the MoE form's lists: rows per group in buckets, N and K too.
  auto grouped = [&](std::vector<int64_t> rows, int64_t n, int64_t k) {
    std::vector<TensorView> A, B, out;
    for (int64_t m : rows) {
      A.push_back(TensorView::cuda_contiguous(buffer(m * k + 1), DataType::f16, {m, k}));
      B.push_back(TensorView::cuda_contiguous(buffer(k * n), DataType::f16, {k, n}));
      out.push_back(TensorView::cuda_contiguous(buffer(m * n + 1), DataType::f16, {m, n}));
    }
    auto args = api::GroupedGemmArguments::make(A, B, out, DataType::f32);
    EXPECT_TRUE(args) << args.status().message();
    auto signature = tune::signature_of(*args);
    EXPECT_TRUE(signature) << signature.status().message();
    return signature->text();
  };
  const std::string moe = grouped({100, 120, 90, 110}, 256, 512);
  EXPECT_EQ(moe.rfind("grouped;", 0), 0u) << moe;
  EXPECT_EQ(grouped({101, 119, 91, 109}, 256, 512), moe);  // the same buckets
  EXPECT_NE(grouped({100, 120, 90, 110}, 512, 512), moe);  // another N
  EXPECT_NE(grouped({100, 0, 0, 330}, 256, 512), moe);     // empty groups, a larger largest
  // Convolutions: the layer exactly, the batch in buckets.
  auto conv = [&](int64_t n, int64_t c) {
    api::Conv2dGeometry geometry;
    geometry.padding = {1, 1, 1, 1};
    auto args = api::Conv2dArguments::make(ConvKind::Fprop, activation(n, c, 14, 14),
                                           activation(32, c, 3, 3), activation(n, 32, 14, 14),
                                           DataType::f32, geometry);
    EXPECT_TRUE(args) << args.status().message();
    auto signature = tune::signature_of(*args);
    EXPECT_TRUE(signature) << signature.status().message();
    return signature->text();
  };
  const std::string layer = conv(30, 16);
  EXPECT_EQ(layer.rfind("conv;fprop;", 0), 0u) << layer;
  EXPECT_EQ(conv(32, 16), layer);  // 30 and 32 share a bucket
  EXPECT_NE(conv(64, 16), layer);
  EXPECT_NE(conv(32, 24), layer);  // another layer
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
