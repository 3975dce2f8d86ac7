// SM90 tiles fitted to the problem's N on the CPU: where get_kernels derives them, that they are
// valid descriptions in steps of 16, that the first pick stays a tile of the space, and that the
// tuner measures them.
#include <gtest/gtest.h>

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

GemmArguments bf16_tn(int64_t m, int64_t n, int64_t k) {
  return GemmArguments::make(cuda(bf16, {m, k}), transposed(cuda(bf16, {n, k})), cuda(bf16, {m, n}),
                             f32)
      .value();
}

bool fitted(const Kernel& k) {
  return k.metadata().design.arch == 90 &&
         !discover::is_space_tile_n(k.metadata().design.tile_shape[1]);
}

TEST(FittedTiles, AnNThatNoTileDividesGetsNarrowedTilesTheTunerMeasures) {
  // N = 1000: 128x256 tiles leave 79 x 4 = 316 of them (2.4 waves of 132 SMs); 208 columns make
  // 395 (3.0 waves).
  const GemmArguments args = bf16_tn(10000, 1000, 1000);
  const std::vector<Kernel> kernels = get_kernels(&args, {}, 90);
  ASSERT_FALSE(kernels.empty());
  EXPECT_FALSE(fitted(kernels.front())) << kernels.front().metadata().kernel_name;
  std::set<int> widths;
  for (const Kernel& k : kernels) {
    if (!fitted(k)) continue;
    const int n = k.metadata().design.tile_shape[1];
    widths.insert(n);
    EXPECT_EQ(n % 16, 0) << k.metadata().kernel_name;
    EXPECT_TRUE(k.description().validate()) << k.metadata().kernel_name;
    EXPECT_EQ(k.description().tile.math_instruction.instruction_shape[1], n);
  }
  EXPECT_TRUE(widths.count(208)) << "no 208-wide tile";
  tune::TuningOptions options;
  options.max_candidates = 8;
  int measured = 0;
  for (const Kernel& k : tune::tuning_candidates(args, options, 90)) measured += fitted(k);
  EXPECT_GE(measured, 1);
}

TEST(FittedTiles, ExtentsTheSpaceTilesDivideGetNone) {
  for (const auto& [m, n, k] : {std::tuple{4096, 4096, 4096}, std::tuple{2048, 384, 1024},
                                std::tuple{1024, 300, 512}}) {  // 300: fewer than two 192 tiles
    const GemmArguments args = bf16_tn(m, n, k);
    for (const Kernel& kernel : get_kernels(&args, {}, 90)) {
      EXPECT_FALSE(fitted(kernel)) << n << ": " << kernel.metadata().kernel_name;
    }
  }
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::api
