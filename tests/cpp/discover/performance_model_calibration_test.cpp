// The performance model against measurements: among the 17 bf16 TN candidates of
// bench/sm90_candidates.py, the kernel the model ranks first must be within 15% of the fastest
// one measured, on each of the GEMM suite's 10 shapes. The figures are the H100 run recorded in
// bench/RESULTS.md (SM90 section with programmatic dependent launch, commit 2210425); re-measure
// and update them when the kernels change.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "tilecraft/discover/gemm_space.hpp"
#include "tilecraft/discover/performance_model.hpp"

namespace tilecraft::discover {
namespace {

struct Candidate {
  const char* id;
  std::array<int, 3> tile_mn_kbytes;
  std::array<int, 3> cluster;
  KernelSchedule schedule;
  TileScheduler scheduler;
  Swizzle swizzle;
};

constexpr KernelSchedule kCoop = KernelSchedule::TmaWarpSpecializedCooperative;
constexpr KernelSchedule kPingpong = KernelSchedule::TmaWarpSpecializedPingpong;
constexpr TileScheduler kPersistent = TileScheduler::Persistent;
constexpr TileScheduler kStreamK = TileScheduler::StreamK;
constexpr Swizzle kSwizzle1 = Swizzle::IdentitySwizzle1;
constexpr Swizzle kSwizzle8 = Swizzle::IdentitySwizzle8;

// bench/sm90_candidates.py's gemm_candidates(), tile K in bytes of bf16.
const std::vector<Candidate>& candidates() {
  static const std::vector<Candidate> list = {
      {"k1", {128, 256, 128}, {2, 1, 1}, kCoop, kPersistent, kSwizzle1},
      {"k2", {256, 128, 128}, {2, 1, 1}, kCoop, kPersistent, kSwizzle1},
      {"k3", {128, 256, 128}, {1, 2, 1}, kCoop, kPersistent, kSwizzle1},
      {"k4", {128, 128, 128}, {1, 1, 1}, kPingpong, kPersistent, kSwizzle1},
      {"k5", {128, 128, 128}, {2, 1, 1}, kPingpong, kPersistent, kSwizzle1},
      {"k6", {64, 128, 128}, {1, 1, 1}, kPingpong, kPersistent, kSwizzle1},
      {"k7", {64, 256, 128}, {1, 1, 1}, kPingpong, kPersistent, kSwizzle1},
      {"k8", {128, 128, 128}, {1, 1, 1}, kCoop, kStreamK, kSwizzle1},
      {"k9", {128, 256, 128}, {2, 1, 1}, kCoop, kPersistent, kSwizzle8},
      {"k10", {128, 256, 128}, {2, 1, 1}, kCoop, kStreamK, kSwizzle1},
      {"k11", {64, 32, 256}, {1, 1, 1}, kPingpong, kPersistent, kSwizzle1},
      {"k12", {128, 128, 128}, {2, 1, 1}, kCoop, kPersistent, kSwizzle1},
      {"k13", {64, 64, 256}, {1, 1, 1}, kPingpong, kPersistent, kSwizzle1},
      {"k14", {128, 64, 128}, {1, 1, 1}, kCoop, kStreamK, kSwizzle1},
      {"k15", {128, 64, 128}, {1, 1, 1}, kCoop, kPersistent, kSwizzle1},
      {"k16", {128, 64, 256}, {1, 1, 1}, kCoop, kStreamK, kSwizzle1},
      {"k17", {256, 128, 128}, {2, 1, 1}, kCoop, kPersistent, kSwizzle8},
  };
  return list;
}

struct Measured {
  GemmShape shape;
  std::array<double, 17> tflops;  // k1 .. k17, split 1, deterministic, launched with PDL
};

const std::vector<Measured>& h100_run() {
  static const std::vector<Measured> runs = {
      {{8192, 8192, 8192},
       {762, 667, 676, 493, 618, 288, 383, 504, 619, 650, 114, 611, 213, 290, 289, 285, 612}},
      {{4096, 4096, 4096},
       {754, 747, 743, 606, 707, 361, 414, 608, 731, 734, 182, 703, 301, 371, 372, 377, 740}},
      {{2048, 2048, 2048},
       {687, 688, 690, 613, 690, 379, 471, 541, 688, 654, 187, 632, 312, 360, 372, 360, 250}},
      {{8192, 28672, 4096},
       {687, 672, 688, 503, 594, 323, 225, 495, 726, 637, 164, 485, 247, 296, 303, 330, 610}},
      {{4096, 14336, 4096},
       {730, 628, 698, 600, 652, 421, 290, 607, 674, 705, 176, 656, 287, 360, 362, 369, 631}},
      {{128, 8192, 8192},
       {203, 169, 216, 310, 239, 331, 293, 275, 159, 242, 246, 246, 312, 323, 333, 320, 71}},
      {{16, 4096, 4096}, {13, 13, 13, 23, 23, 34, 23, 19, 13, 16, 29, 22, 29, 17, 19, 16, 8}},
      {{1000, 1000, 1000},
       {149, 150, 148, 201, 220, 192, 174, 123, 149, 106, 105, 224, 149, 172, 190, 170, 123}},
      {{3000, 5000, 7000},
       {644, 519, 506, 332, 454, 214, 258, 341, 377, 643, 117, 455, 175, 227, 223, 231, 367}},
      {{512, 512, 16384},
       {57, 57, 56, 110, 109, 206, 112, 238, 56, 119, 205, 112, 262, 254, 210, 252, 57}},
  };
  return runs;
}

GemmDescription bf16_tn(const Candidate& c) {
  GemmOperands o;
  o.a = o.b = o.out = DataType::bf16;
  o.accumulator = DataType::f32;
  GemmDesign d;
  d.tile_mn_kbytes = c.tile_mn_kbytes;
  d.cluster_shape = c.cluster;
  d.kernel_schedule = c.schedule;
  d.tile_scheduler = c.scheduler;
  d.swizzle = c.swizzle;
  return make_description(90, o, d).value();
}

TEST(PerformanceModelCalibration, FirstPickWithin15PercentOfTheMeasuredBestOnTheH100) {
  const DeviceTraits h100;
  for (const Measured& run : h100_run()) {
    size_t pick = 0;
    double best_score = -1, best_measured = 0;
    for (size_t i = 0; i < candidates().size(); ++i) {
      const double score = estimate(bf16_tn(candidates()[i]), run.shape, h100).score;
      if (score > best_score) {
        best_score = score;
        pick = i;
      }
      best_measured = std::max(best_measured, run.tflops[i]);
    }
    const std::string shape = std::to_string(run.shape.m) + "x" + std::to_string(run.shape.n) +
                              "x" + std::to_string(run.shape.k);
    EXPECT_GE(run.tflops[pick], 0.85 * best_measured)
        << shape << ": the model picks " << candidates()[pick].id << " (measured "
        << run.tflops[pick] << " TFLOP/s), the best measured " << best_measured;
  }
}

}  // namespace
}  // namespace tilecraft::discover
