// Split-K candidates on the CPU: which problems get them, how they are named and ranked, and how
// many of them the tuner measures. TensorViews point at fake device addresses.
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

// f16 operands, an f32 output (it holds the f32 accumulator's partial sums) unless `out` says.
GemmArguments args_of(int64_t m, int64_t n, int64_t k, int64_t batch = 1, DataType out = f32) {
  if (batch == 1) {
    return GemmArguments::make(cuda(f16, {m, k}), cuda(f16, {k, n}), cuda(out, {m, n}), f32)
        .value();
  }
  return GemmArguments::make(cuda(f16, {batch, m, k}), cuda(f16, {batch, k, n}),
                             cuda(out, {batch, m, n}), f32)
      .value();
}

int split_of(const Kernel& kernel) { return kernel.metadata().design.split_k_slices; }

TEST(SplitK, SmallOutputsWithLongKGetSplitVariantsOfSm80Kernels) {
  for (const auto& [m, n, k] :
       {std::tuple{777, 333, 4099}, std::tuple{64, 64, 65536}, std::tuple{1023, 1023, 1023}}) {
    const GemmArguments args = args_of(m, n, k);
    std::set<int> seen;
    for (const Kernel& kernel : get_kernels(&args, {}, 90)) {
      const int splits = split_of(kernel);
      if (splits == 1) continue;
      seen.insert(splits);
      const std::string& name = kernel.metadata().kernel_name;
      const DesignMetadata& design = kernel.metadata().design;
      EXPECT_TRUE(design.arch == 80 || design.tile_scheduler == TileScheduler::StreamK) << name;
      EXPECT_TRUE(splits >= 2 && splits <= discover::kMaxSplitK && (splits & (splits - 1)) == 0)
          << name;
      EXPECT_TRUE(name.starts_with(kernel.description().procedural_name() + "_splitk" +
                                   std::to_string(splits)))
          << name;
      EXPECT_GT(kernel.metadata().score, 0) << name;
      EXPECT_TRUE(kernel.supports(args)) << name;
    }
    EXPECT_FALSE(seen.empty()) << m << "x" << n << "x" << k;
  }
}

TEST(SplitK, NotForOutputsThatFillTheGpuNorForBatches) {
  for (const GemmArguments& args : {args_of(4096, 4096, 4096), args_of(64, 64, 65536, 2)}) {
    for (const Kernel& kernel : get_kernels(&args, {}, 90)) {
      EXPECT_EQ(split_of(kernel), 1) << kernel.metadata().kernel_name;
    }
  }
}

TEST(SplitK, SlicesMeetExactly) {
  // f16 partial sums of an f32 accumulation met in the output were 1-5% off (H100, 2026-11-27):
  // SM80 kernels with an output narrower than the accumulator split in parallel, into f32 slices
  // a second kernel sums; SM90 ones split only on stream-K, reduced in an f32 workspace.
  for (const GemmArguments& args :
       {args_of(777, 333, 4099, 1, f16), args_of(777, 333, 4099, 1, f32),
        args_of(512, 512, 16384, 1, f16), args_of(512, 512, 16384, 1, f32)}) {
    std::set<int> arches;
    for (const Kernel& kernel : get_kernels(&args, {}, 90)) {
      if (split_of(kernel) == 1) continue;
      const DesignMetadata& design = kernel.metadata().design;
      const std::string& name = kernel.metadata().kernel_name;
      arches.insert(design.arch);
      const bool parallel = design.arch == 80 && args.out().dtype == f16;
      EXPECT_EQ(design.split_k_parallel, parallel) << name;
      EXPECT_EQ(name.ends_with("_parallel"), parallel) << name;
      if (design.arch == 90) {
        EXPECT_EQ(design.tile_scheduler, TileScheduler::StreamK) << name;
      }
      EXPECT_TRUE(kernel.supports(args)) << name;
    }
    EXPECT_TRUE(arches.count(80)) << "an SM80 split for every output type";
  }
}

TEST(SplitK, TheModelCountsTheSlices) {
  const GemmArguments args = args_of(64, 64, 65536);
  const discover::GemmShape shape{64, 64, 65536, 1};
  const discover::DeviceTraits h100;
  for (const Kernel& kernel : get_kernels(&args, {}, 90)) {
    if (split_of(kernel) == 1) continue;
    const GemmDescription& d = kernel.description();
    EXPECT_EQ(discover::estimate_split_k(d, shape, 1, h100).score,
              discover::estimate(d, shape, h100).score);
    EXPECT_GT(discover::estimate_split_k(d, shape, split_of(kernel), h100).score,
              discover::estimate(d, shape, h100).score)
        << "one tile over 65536 of K: slices fill more SMs";
    return;
  }
  FAIL() << "no split-K kernel listed";
}

TEST(SplitK, TheTunerMeasuresAtMostHalfItsCandidatesAsSplits) {
  const GemmArguments args = args_of(777, 333, 4099);
  for (int max : {1, 4, 6}) {
    tune::TuningOptions options;
    options.max_candidates = max;
    int splits = 0, whole = 0;
    for (const Kernel& kernel : tune::tuning_candidates(args, options, 90)) {
      (split_of(kernel) > 1 ? splits : whole) += 1;
    }
    EXPECT_EQ(splits + whole, max);
    EXPECT_LE(splits, (max + 1) / 2);
    EXPECT_GE(splits, 1) << "the model ranks a split first for this problem";
  }
}

TEST(SplitK, TheTunerSpreadsItsPlacesOverTileShapes) {
  // The model ranks a tile's cluster and swizzle variants side by side (1536^3: twelve 128x192
  // variants first); the tuner measures at most two of a tile and schedule while other tiles wait.
  const GemmArguments args = args_of(1536, 1536, 1536, 1, f16);
  tune::TuningOptions options;
  options.max_candidates = 8;
  std::map<std::string, int> per_tile;
  for (const Kernel& kernel : tune::tuning_candidates(args, options, 90)) {
    const TileDescription& t = kernel.description().tile;
    const std::string tile = std::to_string(t.threadblock_shape[0]) + "x" +
                             std::to_string(t.threadblock_shape[1]) + "x" +
                             std::to_string(t.threadblock_shape[2]) + "/" +
                             std::to_string(static_cast<int>(t.kernel_schedule)) + "/" +
                             std::to_string(split_of(kernel));
    EXPECT_LE(++per_tile[tile], 2) << kernel.metadata().kernel_name;
  }
  EXPECT_GE(per_tile.size(), 4u);
}

TEST(SplitK, TheTunerTakesEachDesignOnceAtItsWidestAccess) {
  // Aligned operands: every design is listed at alignments 8, 4, 2 (and 1); the twins compute
  // alike and the widest access is the fastest, so a narrower twin would waste a place.
  const GemmArguments args = args_of(1024, 1024, 1024);
  tune::TuningOptions options;
  options.max_candidates = 16;
  std::set<std::string> designs;
  for (const Kernel& kernel : tune::tuning_candidates(args, options, 90)) {
    GemmDescription d = kernel.description();
    EXPECT_EQ(d.A.alignment, 8) << kernel.metadata().kernel_name;
    d.A.alignment = d.B.alignment = d.C.alignment = 1;
    EXPECT_TRUE(designs.insert(d.procedural_name() + "/" + std::to_string(split_of(kernel))).second)
        << "a design twice: " << kernel.metadata().kernel_name;
  }
  EXPECT_EQ(designs.size(), 16u);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::api
