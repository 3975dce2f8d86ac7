// fp8 promotion intervals (mma_promotion_interval) on the CPU: what descriptions take, how the
// variants are named, listed and ranked, and that the tuner measures them beside the default.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "fake_device_views.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/discover/performance_model.hpp"
#include "tilecraft/tune/tuning.hpp"

namespace tilecraft::api {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;

using testing::cuda;
using testing::transposed;

GemmArguments fp8_args(int64_t m, int64_t n, int64_t k, bool fast_accum) {
  EpilogueArguments e;
  e.scale_a.given = true;
  e.scale_a.value = 0.5;
  return GemmArguments::make(cuda(e4m3, {m, k}), transposed(cuda(e4m3, {n, k})), cuda(bf16, {m, n}),
                             f32, e, fast_accum)
      .value();
}

int interval_of(const Kernel& k) { return k.metadata().design.mma_promotion_interval; }

TEST(PromotionInterval, Fp8KernelsThatPromoteRankLongerIntervalsByTheirEstimate) {
  // Fewer promotions cost less (measured on the H100: every 16 k-blocks 4-9% faster than
  // CUTLASS's 4 on four fp8 shapes), so a design's longer intervals rank ahead of its default.
  const GemmArguments args = fp8_args(4096, 4096, 4096, false);
  const std::vector<Kernel> kernels = get_kernels(&args, {}, 90);
  ASSERT_FALSE(kernels.empty());
  EXPECT_EQ(interval_of(kernels.front()), 16) << kernels.front().metadata().kernel_name;
  std::set<int> seen;
  std::map<int, double> score_of_front_design;
  const std::string front = kernels.front().description().procedural_name();
  for (const Kernel& k : kernels) {
    const int interval = interval_of(k);
    GemmDescription base = k.description();
    base.tile.mma_promotion_interval = 0;
    GemmDescription front_base = kernels.front().description();
    front_base.tile.mma_promotion_interval = 0;
    if (base.procedural_name() == front_base.procedural_name()) {
      score_of_front_design[interval] = k.metadata().score;
    }
    if (interval == 0) continue;
    seen.insert(interval);
    const std::string& name = k.metadata().kernel_name;
    EXPECT_NE(name.find("_promo" + std::to_string(interval) + "_"), std::string::npos) << name;
    EXPECT_EQ(k.metadata().design.arch, 90) << name;
    EXPECT_TRUE(k.description().validate()) << name;
  }
  EXPECT_EQ(seen, (std::set<int>{8, 16}));
  ASSERT_EQ(score_of_front_design.size(), 3u) << front;
  EXPECT_GT(score_of_front_design[16], score_of_front_design[8]);
  EXPECT_GT(score_of_front_design[8], score_of_front_design[0]);
}

TEST(PromotionInterval, FastAccumulationAndOtherTypesHaveNone) {
  // Arguments that allow fast accumulation also list the kernels that promote (more accurate
  // than asked): only those carry intervals.
  const GemmArguments fast = fp8_args(1024, 1024, 1024, true);
  for (const Kernel& k : get_kernels(&fast, {}, 90)) {
    if (interval_of(k) == 0) continue;
    EXPECT_NE(k.description().tile.math_instruction.math_operation,
              MathOperation::multiply_add_fast_accum)
        << k.metadata().kernel_name;
    EXPECT_FALSE(k.metadata().operands.fast_accum) << k.metadata().kernel_name;
  }
  const GemmArguments bf16_args =
      GemmArguments::make(cuda(bf16, {1024, 1024}), transposed(cuda(bf16, {1024, 1024})),
                          cuda(bf16, {1024, 1024}), f32)
          .value();
  for (const Kernel& k : get_kernels(&bf16_args, {}, 90)) {
    EXPECT_EQ(interval_of(k), 0) << k.metadata().kernel_name;
  }
}

TEST(PromotionInterval, DescriptionsRefuseIntervalsThatCannotBe) {
  const GemmArguments args = fp8_args(4096, 4096, 4096, false);
  GemmDescription d = get_kernels(&args, {}, 90).front().description();
  const int blocks = d.tile.threadblock_shape[2] / d.tile.math_instruction.instruction_shape[2];
  d.tile.mma_promotion_interval = blocks * 2 + 1;
  const Status odd = d.validate();
  ASSERT_FALSE(odd);
  EXPECT_NE(odd.message().find("mma_promotion_interval " + std::to_string(blocks * 2 + 1) +
                               ": expected a multiple of the " + std::to_string(blocks) +
                               " wgmma k-blocks"),
            std::string::npos)
      << odd.message();
  d.tile.mma_promotion_interval = 128;
  EXPECT_FALSE(d.validate());
  const GemmArguments fast = fp8_args(1024, 1024, 1024, true);
  GemmDescription f = get_kernels(&fast, {}, 90).front().description();
  f.tile.mma_promotion_interval = 8;
  const Status fast_refused = f.validate();
  ASSERT_FALSE(fast_refused);
  EXPECT_NE(fast_refused.message().find("with fast accumulation"), std::string::npos)
      << fast_refused.message();
}

TEST(PromotionInterval, TheTunerMeasuresLongerIntervalsBesideTheDefault) {
  const GemmArguments args = fp8_args(4096, 4096, 4096, false);
  tune::TuningOptions options;
  options.max_candidates = 8;
  std::set<int> intervals;
  for (const Kernel& k : tune::tuning_candidates(args, options, 90))
    intervals.insert(interval_of(k));
  EXPECT_EQ(intervals, (std::set<int>{0, 8, 16}));
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::api
