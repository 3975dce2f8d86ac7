// The performance model against measurements: bench/bench_api_ranking.py timed the 20 kernels
// the model ranked best for each of the GEMM suite's 10 bf16 TN shapes (H100, launched with PDL,
// bench/RESULTS.md "Ranking"). Among those 200 measured kernels, the one the model now ranks
// first must be within 15% of the fastest measured on at least 9 of the 10 shapes (512x512x16384,
// where the model prefers a 128x128 stream-K tile to the faster 128x64 one, is the known miss).
// Re-measure and update the table when the kernels or the model change.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fake_device_views.hpp"
#include "tilecraft/discover/api.hpp"

namespace tilecraft::api {
namespace {
namespace TILECRAFT_TEST_FILE {

struct Timed {
  const char* design;  // the kernel name after "tilecraft_sm90_tensorop_gemm_bf16bf16_f32acc_bf16_"
  double tflops;
};

struct MeasuredShape {
  std::array<int64_t, 3> mnk;
  std::vector<Timed> kernels;
};

// bench_api_ranking.py --json at commit e3ae664 (H100 SXM, 2026-11-22), model ranks 0..19.
const std::vector<MeasuredShape>& h100_runs() {
  static const std::vector<MeasuredShape> runs = {
      {{8192, 8192, 8192},
       {
           {"128x256x64_c2x1x1_s0_coop_tnt_align8x8x8", 772},
           {"128x256x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 788},
           {"128x256x64_c1x2x1_s0_coop_tnt_align8x8x8", 742},
           {"128x256x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 710},
           {"256x128x64_c2x1x1_s0_coop_tnt_align8x8x8", 699},
           {"256x128x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 701},
           {"256x128x64_c1x2x1_s0_coop_tnt_align8x8x8", 715},
           {"256x128x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 751},
           {"128x256x64_c2x2x1_s0_coop_tnt_align8x8x8", 689},
           {"128x256x64_c2x2x1_s0_coop_tnt_align8x8x8_swz8", 694},
           {"256x128x64_c2x2x1_s0_coop_tnt_align8x8x8", 693},
           {"256x128x64_c2x2x1_s0_coop_tnt_align8x8x8_swz8", 672},
           {"128x192x64_c2x1x1_s0_coop_tnt_align8x8x8", 682},
           {"128x192x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 566},
           {"128x256x64_c1x1x1_s0_coop_tnt_align8x8x8", 706},
           {"128x256x64_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 663},
           {"256x128x64_c1x1x1_s0_coop_tnt_align8x8x8", 693},
           {"256x128x64_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 692},
           {"128x256x32_c2x1x1_s0_coop_tnt_align8x8x8", 594},
           {"128x256x32_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 619},
       }},
      {{4096, 4096, 4096},
       {
           {"128x256x64_c2x1x1_s0_coop_tnt_align8x8x8", 645},
           {"128x256x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 714},
           {"128x256x64_c1x2x1_s0_coop_tnt_align8x8x8", 764},
           {"128x256x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 749},
           {"256x128x64_c2x1x1_s0_coop_tnt_align8x8x8", 757},
           {"256x128x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 758},
           {"256x128x64_c1x2x1_s0_coop_tnt_align8x8x8", 777},
           {"256x128x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 776},
           {"128x256x64_c2x2x1_s0_coop_tnt_align8x8x8", 646},
           {"128x256x64_c2x2x1_s0_coop_tnt_align8x8x8_swz8", 654},
           {"256x128x64_c2x2x1_s0_coop_tnt_align8x8x8", 650},
           {"256x128x64_c2x2x1_s0_coop_tnt_align8x8x8_swz8", 650},
           {"128x256x64_c1x1x1_s0_coop_tnt_align8x8x8", 753},
           {"128x256x64_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 777},
           {"256x128x64_c1x1x1_s0_coop_tnt_align8x8x8", 750},
           {"256x128x64_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 751},
           {"128x256x32_c2x1x1_s0_coop_tnt_align8x8x8", 759},
           {"128x256x32_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 763},
           {"128x256x32_c1x2x1_s0_coop_tnt_align8x8x8", 702},
           {"128x256x32_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 687},
       }},
      {{2048, 2048, 2048},
       {
           {"128x256x64_c1x1x1_s0_coop_tnt_align8x8x8", 679},
           {"128x256x64_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 682},
           {"128x256x64_c2x1x1_s0_coop_tnt_align8x8x8", 695},
           {"128x256x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 693},
           {"128x256x64_c1x2x1_s0_coop_tnt_align8x8x8", 693},
           {"128x256x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 287},
           {"128x256x64_c2x2x1_s0_coop_tnt_align8x8x8", 390},
           {"128x256x64_c2x2x1_s0_coop_tnt_align8x8x8_swz8", 205},
           {"256x128x64_c1x1x1_s0_coop_tnt_align8x8x8", 705},
           {"256x128x64_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 710},
           {"256x128x64_c2x1x1_s0_coop_tnt_align8x8x8", 696},
           {"256x128x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 243},
           {"256x128x64_c1x2x1_s0_coop_tnt_align8x8x8", 698},
           {"256x128x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 695},
           {"256x128x64_c2x2x1_s0_coop_tnt_align8x8x8", 391},
           {"256x128x64_c2x2x1_s0_coop_tnt_align8x8x8_swz8", 219},
           {"128x256x32_c1x1x1_s0_coop_tnt_align8x8x8", 640},
           {"128x256x32_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 654},
           {"128x256x32_c2x1x1_s0_coop_tnt_align8x8x8", 702},
           {"128x256x32_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 699},
       }},
      {{8192, 28672, 4096},
       {
           {"128x256x64_c2x1x1_s0_coop_tnt_align8x8x8", 735},
           {"128x256x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 689},
           {"128x256x64_c1x2x1_s0_coop_tnt_align8x8x8", 700},
           {"128x256x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 676},
           {"256x128x64_c2x1x1_s0_coop_tnt_align8x8x8", 687},
           {"256x128x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 656},
           {"256x128x64_c1x2x1_s0_coop_tnt_align8x8x8", 667},
           {"256x128x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 692},
           {"128x256x64_c2x2x1_s0_coop_tnt_align8x8x8", 632},
           {"128x256x64_c2x2x1_s0_coop_tnt_align8x8x8_swz8", 692},
           {"256x128x64_c2x2x1_s0_coop_tnt_align8x8x8", 667},
           {"256x128x64_c2x2x1_s0_coop_tnt_align8x8x8_swz8", 670},
           {"128x256x64_c1x1x1_s0_coop_tnt_align8x8x8", 734},
           {"128x256x64_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 659},
           {"256x128x64_c1x1x1_s0_coop_tnt_align8x8x8", 633},
           {"256x128x64_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 603},
           {"128x192x64_c2x1x1_s0_coop_tnt_align8x8x8", 629},
           {"128x192x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 627},
           {"128x192x64_c1x2x1_s0_coop_tnt_align8x8x8", 661},
           {"128x192x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 645},
       }},
      {{4096, 14336, 4096},
       {
           {"128x256x64_c2x1x1_s0_coop_tnt_align8x8x8", 752},
           {"128x256x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 765},
           {"128x256x64_c1x2x1_s0_coop_tnt_align8x8x8", 756},
           {"128x256x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 585},
           {"256x128x64_c2x1x1_s0_coop_tnt_align8x8x8", 749},
           {"256x128x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 741},
           {"256x128x64_c1x2x1_s0_coop_tnt_align8x8x8", 677},
           {"256x128x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 753},
           {"128x256x64_c2x2x1_s0_coop_tnt_align8x8x8", 686},
           {"128x256x64_c2x2x1_s0_coop_tnt_align8x8x8_swz8", 587},
           {"256x128x64_c2x2x1_s0_coop_tnt_align8x8x8", 706},
           {"256x128x64_c2x2x1_s0_coop_tnt_align8x8x8_swz8", 709},
           {"128x256x64_c1x1x1_s0_coop_tnt_align8x8x8", 772},
           {"128x256x64_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 767},
           {"256x128x64_c1x1x1_s0_coop_tnt_align8x8x8", 717},
           {"256x128x64_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 741},
           {"128x256x32_c2x1x1_s0_coop_tnt_align8x8x8", 743},
           {"128x256x32_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 748},
           {"128x256x32_c1x2x1_s0_coop_tnt_align8x8x8", 732},
           {"128x256x32_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 556},
       }},
      {{128, 8192, 8192},
       {
           {"64x128x32_c1x1x1_s0_pingpong_tnt_align8x8x8", 287},
           {"64x128x32_c1x1x1_s0_pingpong_tnt_align8x8x8_swz8", 280},
           {"64x128x32_c2x1x1_s0_pingpong_tnt_align8x8x8", 321},
           {"64x128x32_c2x1x1_s0_pingpong_tnt_align8x8x8_swz8", 171},
           {"64x128x32_c1x2x1_s0_pingpong_tnt_align8x8x8", 295},
           {"64x128x32_c1x2x1_s0_pingpong_tnt_align8x8x8_swz8", 291},
           {"64x128x32_c2x2x1_s0_pingpong_tnt_align8x8x8", 239},
           {"64x128x32_c2x2x1_s0_pingpong_tnt_align8x8x8_swz8", 135},
           {"64x128x64_c1x1x1_s0_pingpong_tnt_align8x8x8", 333},
           {"64x128x64_c1x1x1_s0_pingpong_tnt_align8x8x8_swz8", 320},
           {"64x128x64_c2x1x1_s0_pingpong_tnt_align8x8x8", 338},
           {"64x128x64_c2x1x1_s0_pingpong_tnt_align8x8x8_swz8", 199},
           {"64x128x64_c1x2x1_s0_pingpong_tnt_align8x8x8", 320},
           {"64x128x64_c1x2x1_s0_pingpong_tnt_align8x8x8_swz8", 318},
           {"64x128x64_c2x2x1_s0_pingpong_tnt_align8x8x8", 266},
           {"64x128x64_c2x2x1_s0_pingpong_tnt_align8x8x8_swz8", 174},
           {"64x192x32_c1x1x1_s0_pingpong_tnt_align8x8x8", 237},
           {"64x192x32_c1x1x1_s0_pingpong_tnt_align8x8x8_swz8", 206},
           {"64x192x32_c2x1x1_s0_pingpong_tnt_align8x8x8", 275},
           {"64x192x32_c2x1x1_s0_pingpong_tnt_align8x8x8_swz8", 157},
       }},
      {{16, 4096, 4096},
       {
           {"64x64x64_c1x1x1_s0_pingpong_tnt_align8x8x8", 30},
           {"64x64x64_c1x1x1_s0_pingpong_tnt_align8x8x8_swz8", 30},
           {"64x64x64_c2x1x1_s0_pingpong_tnt_align8x8x8", 31},
           {"64x64x64_c2x1x1_s0_pingpong_tnt_align8x8x8_swz8", 17},
           {"64x64x64_c1x2x1_s0_pingpong_tnt_align8x8x8", 35},
           {"64x64x64_c1x2x1_s0_pingpong_tnt_align8x8x8_swz8", 35},
           {"64x64x64_c2x2x1_s0_pingpong_tnt_align8x8x8", 20},
           {"64x64x64_c2x2x1_s0_pingpong_tnt_align8x8x8_swz8", 11},
           {"64x32x64_c1x1x1_s0_pingpong_tnt_align8x8x8", 30},
           {"64x32x64_c1x1x1_s0_pingpong_tnt_align8x8x8_swz8", 29},
           {"64x32x64_c1x2x1_s0_pingpong_tnt_align8x8x8", 30},
           {"64x32x64_c1x2x1_s0_pingpong_tnt_align8x8x8_swz8", 30},
           {"64x64x32_c1x1x1_s0_pingpong_tnt_align8x8x8", 26},
           {"64x64x32_c1x1x1_s0_pingpong_tnt_align8x8x8_swz8", 26},
           {"64x64x32_c2x1x1_s0_pingpong_tnt_align8x8x8", 27},
           {"64x64x32_c2x1x1_s0_pingpong_tnt_align8x8x8_swz8", 12},
           {"64x64x32_c1x2x1_s0_pingpong_tnt_align8x8x8", 29},
           {"64x64x32_c1x2x1_s0_pingpong_tnt_align8x8x8_swz8", 29},
           {"64x64x32_c2x2x1_s0_pingpong_tnt_align8x8x8", 14},
           {"64x64x32_c2x2x1_s0_pingpong_tnt_align8x8x8_swz8", 8},
       }},
      {{1000, 1000, 1000},
       {
           {"64x128x64_c1x1x1_s0_pingpong_tnt_align8x8x8", 187},
           {"64x128x64_c1x1x1_s0_pingpong_tnt_align8x8x8_swz8", 184},
           {"64x128x64_c2x1x1_s0_pingpong_tnt_align8x8x8", 234},
           {"64x128x64_c2x1x1_s0_pingpong_tnt_align8x8x8_swz8", 228},
           {"64x128x64_c1x2x1_s0_pingpong_tnt_align8x8x8", 211},
           {"64x128x64_c1x2x1_s0_pingpong_tnt_align8x8x8_swz8", 115},
           {"64x128x64_c2x2x1_s0_pingpong_tnt_align8x8x8", 195},
           {"64x128x64_c2x2x1_s0_pingpong_tnt_align8x8x8_swz8", 103},
           {"128x64x64_c1x1x1_s0_pingpong_tnt_align8x8x8", 190},
           {"128x64x64_c1x1x1_s0_coop_tnt_align8x8x8", 188},
           {"128x64x64_c1x1x1_s0_pingpong_tnt_align8x8x8_swz8", 194},
           {"128x64x64_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 193},
           {"128x64x64_c2x1x1_s0_pingpong_tnt_align8x8x8", 213},
           {"128x64x64_c2x1x1_s0_coop_tnt_align8x8x8", 211},
           {"128x64x64_c2x1x1_s0_pingpong_tnt_align8x8x8_swz8", 114},
           {"128x64x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 112},
           {"128x64x64_c1x2x1_s0_pingpong_tnt_align8x8x8", 235},
           {"128x64x64_c1x2x1_s0_coop_tnt_align8x8x8", 229},
           {"128x64x64_c1x2x1_s0_pingpong_tnt_align8x8x8_swz8", 233},
           {"128x64x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 232},
       }},
      {{3000, 5000, 7000},
       {
           {"128x192x64_c2x1x1_s0_coop_tnt_align8x8x8", 591},
           {"128x192x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 319},
           {"128x256x64_c2x1x1_s0_coop_tnt_align8x8x8", 652},
           {"128x256x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 339},
           {"128x256x64_c1x2x1_s0_coop_tnt_align8x8x8", 508},
           {"128x256x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 327},
           {"256x128x64_c2x1x1_s0_coop_tnt_align8x8x8", 533},
           {"256x128x64_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 364},
           {"256x128x64_c1x2x1_s0_coop_tnt_align8x8x8", 650},
           {"256x128x64_c1x2x1_s0_coop_tnt_align8x8x8_swz8", 310},
           {"128x192x64_c1x1x1_s0_coop_tnt_align8x8x8", 399},
           {"128x192x64_c1x1x1_s0_coop_tnt_align8x8x8_swz8", 336},
           {"128x256x64_c2x2x1_s0_coop_tnt_align8x8x8", 579},
           {"128x256x64_c2x2x1_s0_coop_tnt_align8x8x8_swz8", 223},
           {"256x128x64_c2x2x1_s0_coop_tnt_align8x8x8", 581},
           {"256x128x64_c2x2x1_s0_coop_tnt_align8x8x8_swz8", 354},
           {"128x192x32_c2x1x1_s0_coop_tnt_align8x8x8", 411},
           {"128x192x32_c2x1x1_s0_coop_tnt_align8x8x8_swz8", 241},
           {"128x256x64_c2x1x1_s0_coop_streamk_tnt_align8x8x8", 643},
           {"128x256x64_c1x2x1_s0_coop_streamk_tnt_align8x8x8", 508},
       }},
      {{512, 512, 16384},
       {
           {"128x128x64_c1x1x1_s0_coop_streamk_tnt_align8x8x8", 228},
           {"128x128x64_c2x1x1_s0_coop_streamk_tnt_align8x8x8", 226},
           {"128x128x64_c1x2x1_s0_coop_streamk_tnt_align8x8x8", 224},
           {"128x128x64_c2x2x1_s0_coop_streamk_tnt_align8x8x8", 250},
           {"256x64x64_c1x1x1_s0_coop_streamk_tnt_align8x8x8", 192},
           {"256x64x64_c2x1x1_s0_coop_streamk_tnt_align8x8x8", 193},
           {"256x64x64_c1x2x1_s0_coop_streamk_tnt_align8x8x8", 220},
           {"256x64x64_c2x2x1_s0_coop_streamk_tnt_align8x8x8", 235},
           {"128x64x64_c1x1x1_s0_coop_streamk_tnt_align8x8x8", 242},
           {"128x64x64_c2x1x1_s0_coop_streamk_tnt_align8x8x8", 243},
           {"128x64x64_c1x2x1_s0_coop_streamk_tnt_align8x8x8", 272},
           {"128x64x64_c2x2x1_s0_coop_streamk_tnt_align8x8x8", 301},
           {"128x64x32_c1x1x1_s0_coop_streamk_tnt_align8x8x8", 217},
           {"128x64x32_c2x1x1_s0_coop_streamk_tnt_align8x8x8", 227},
           {"128x64x32_c1x2x1_s0_coop_streamk_tnt_align8x8x8", 253},
           {"128x64x32_c2x2x1_s0_coop_streamk_tnt_align8x8x8", 263},
           {"128x128x32_c1x1x1_s0_coop_streamk_tnt_align8x8x8", 206},
           {"128x128x32_c2x1x1_s0_coop_streamk_tnt_align8x8x8", 208},
           {"128x128x32_c1x2x1_s0_coop_streamk_tnt_align8x8x8", 211},
           {"128x128x32_c2x2x1_s0_coop_streamk_tnt_align8x8x8", 236},
       }},
  };
  return runs;
}

constexpr const char* kPrefix = "tilecraft_sm90_tensorop_gemm_bf16bf16_f32acc_bf16_";

TEST(PerformanceModelCalibration, FirstPickAmongMeasuredWithin15PercentOfTheBestOnTheH100) {
  int within = 0;
  for (const MeasuredShape& run : h100_runs()) {
    const auto [m, n, k] = run.mnk;
    // B = w.t(): column-major (K, N).
    auto args = GemmArguments::make(testing::cuda(DataType::bf16, {m, k}),
                                    testing::transposed(testing::cuda(DataType::bf16, {n, k})),
                                    testing::cuda(DataType::bf16, {m, n}), DataType::f32);
    ASSERT_TRUE(args) << args.status().message();
    std::map<std::string, double> measured;
    double best = 0;
    for (const Timed& t : run.kernels) {
      measured[std::string(kPrefix) + t.design] = t.tflops;
      best = std::max(best, t.tflops);
    }
    double first = -1;
    std::string first_name;
    for (const Kernel& kernel : get_kernels(&args.value(), {}, 90)) {
      auto it = measured.find(kernel.metadata().kernel_name);
      if (it == measured.end()) continue;
      first = it->second;
      first_name = it->first;
      break;
    }
    ASSERT_GT(first, 0) << "none of the measured kernels is listed for " << m << "x" << n << "x"
                        << k;
    within += first >= 0.85 * best;
    std::printf("%ldx%ldx%ld: first measured pick %s at %.0f TFLOP/s, best %.0f (%.2f)\n",
                static_cast<long>(m), static_cast<long>(n), static_cast<long>(k),
                first_name.c_str() + std::string(kPrefix).size(), first, best, first / best);
  }
  EXPECT_GE(within, 9);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::api
