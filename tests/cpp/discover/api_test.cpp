// The arguments-first API on the CPU: argument checks, supports() texts, listing and ranking.
// TensorViews here point at fake device addresses: nothing is launched or dereferenced.
#include "tilecraft/discover/api.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "fake_device_views.hpp"

namespace tilecraft::api {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;

using testing::cuda;
using testing::transposed;

std::string error_of(const Result<GemmArguments>& r) {
  return r ? std::string("(no error)") : r.status().message();
}

GemmArguments seed_args(DataType a = f16) {
  return GemmArguments::make(cuda(a, {2, 128, 64}), cuda(f16, {2, 64, 256}),
                             cuda(f32, {2, 128, 256}), f32)
      .value();
}

TEST(ApiGemmArguments, DerivesShapeLayoutsAndAlignments) {
  const GemmArguments args = seed_args();
  EXPECT_EQ(args.m(), 128);
  EXPECT_EQ(args.n(), 256);
  EXPECT_EQ(args.k(), 64);
  EXPECT_EQ(args.batch(), 2);
  EXPECT_EQ(args.layout_a(), Layout::RowMajor);
  EXPECT_EQ(args.layout_b(), Layout::RowMajor);
  EXPECT_EQ(args.alignment_a(), 8);
  EXPECT_EQ(args.alignment_out(), 4);
  const auto column_b = GemmArguments::make(cuda(f16, {64, 40}), transposed(cuda(f16, {30, 40})),
                                            cuda(f16, {64, 30}), f32)
                            .value();
  EXPECT_EQ(column_b.layout_b(), Layout::ColumnMajor);
  EXPECT_EQ(column_b.alignment_b(), 8);
  EXPECT_EQ(column_b.alignment_out(), 2);  // N = 30: f16 rows of 60 bytes
}

struct BadArguments {
  const char* name;
  TensorView a, b, out;
  DataType accumulator;
  const char* expected;
};

class ApiBadArguments : public ::testing::TestWithParam<BadArguments> {};

TEST_P(ApiBadArguments, AreRefusedWithTheArgumentNamed) {
  const BadArguments& p = GetParam();
  const std::string error = error_of(GemmArguments::make(p.a, p.b, p.out, p.accumulator));
  EXPECT_NE(error.find(p.expected), std::string::npos) << error;
}

TensorView strided_inner() {
  TensorView t = cuda(f16, {64, 64});
  t.strides = {128, 2};
  return t;
}

TensorView on_cpu() {
  TensorView t = cuda(f16, {64, 32});
  t.device = DeviceKind::kCpu;
  return t;
}

INSTANTIATE_TEST_SUITE_P(
    Api, ApiBadArguments,
    ::testing::Values(
        BadArguments{"rank1_a", cuda(f16, {64}), cuda(f16, {64, 32}), cuda(f16, {1, 32}), f32,
                     "A: expected rank 2 (M, K) or 3 with a leading batch dimension L, got rank 1"},
        BadArguments{"rank4_out", cuda(f16, {64, 64}), cuda(f16, {64, 32}),
                     cuda(f16, {1, 1, 64, 32}), f32, "out: expected rank 2 (M, N) or 3"},
        BadArguments{"ranks_differ", cuda(f16, {2, 64, 64}), cuda(f16, {64, 32}),
                     cuda(f16, {2, 64, 32}), f32,
                     "B: expected rank 3 like A (2, 64, 64), got rank 2"},
        BadArguments{"batch_b", cuda(f16, {2, 64, 64}), cuda(f16, {3, 64, 32}),
                     cuda(f16, {2, 64, 32}), f32, "B: expected batch dimension L = 2 like A"},
        BadArguments{"batch_out", cuda(f16, {2, 64, 64}), cuda(f16, {2, 64, 32}),
                     cuda(f16, {4, 64, 32}), f32, "out: expected batch dimension L = 2"},
        BadArguments{"k_mismatch", cuda(f16, {64, 64}), cuda(f16, {48, 32}), cuda(f16, {64, 32}),
                     f32, "B: expected K = 64 rows to match A (64, 64), got (48, 32)"},
        BadArguments{"out_shape", cuda(f16, {64, 64}), cuda(f16, {64, 32}), cuda(f16, {64, 16}),
                     f32, "out: expected (M, N) = (64, 32)"},
        BadArguments{"inner_not_contiguous", strided_inner(), cuda(f16, {64, 32}),
                     cuda(f16, {64, 32}), f32,
                     "Operand `A`: expected one of its last two dimensions to be contiguous"},
        BadArguments{"device_mismatch", cuda(f16, {64, 64}), cuda(f16, {64, 32}, 1),
                     cuda(f16, {64, 32}), f32,
                     "B: expected a tensor on cuda:0 like A, got one on cuda:1"},
        BadArguments{"host_tensor", cuda(f16, {64, 64}), on_cpu(), cuda(f16, {64, 32}), f32,
                     "B: expected a CUDA tensor, got one on cpu"},
        BadArguments{"accumulator_bf16", cuda(f16, {64, 64}), cuda(f16, {64, 32}),
                     cuda(f16, {64, 32}), bf16,
                     "accumulator_type: expected Float32, Float16, Int32 or Float64, got BFloat16"},
        BadArguments{"empty_k", cuda(f16, {64, 0}), cuda(f16, {0, 32}), cuda(f16, {64, 32}), f32,
                     "expected every extent >= 1"}),
    [](const auto& test) { return std::string(test.param.name); });

TEST(ApiKernel, SupportsNamesTheFirstRequirementMissed) {
  const GemmArguments args = seed_args();
  const auto kernels = get_kernels(&args, {}, 90);
  ASSERT_FALSE(kernels.empty());
  const Kernel& kernel = kernels.front();
  EXPECT_TRUE(kernel.supports(args));
  const Status bf16_a = kernel.supports(seed_args(bf16));
  EXPECT_EQ(bf16_a.message(),
            "Operand `A` is unsupported: Expected element type Float16, got BFloat16");

  const auto f16_out = GemmArguments::make(cuda(f16, {2, 128, 64}), cuda(f16, {2, 64, 256}),
                                           cuda(f16, {2, 128, 256}), f32)
                           .value();
  EXPECT_EQ(kernel.supports(f16_out).message(),
            "Operand `out` is unsupported: Expected element type Float32, got Float16");
  const auto column_a = GemmArguments::make(transposed(cuda(f16, {2, 64, 128})),
                                            cuda(f16, {2, 64, 256}), cuda(f32, {2, 128, 256}), f32)
                            .value();
  if (kernel.metadata().operands.A.layout == Layout::RowMajor) {
    EXPECT_NE(kernel.supports(column_a).message().find(
                  "Operand `A` is unsupported: Expected layout RowMajor, got ColumnMajor"),
              std::string::npos);
  }
  const auto f16_acc = GemmArguments::make(cuda(f16, {2, 128, 64}), cuda(f16, {2, 64, 256}),
                                           cuda(f32, {2, 128, 256}), f16)
                           .value();
  EXPECT_EQ(kernel.supports(f16_acc).message(),
            "Accumulator type is unsupported: Expected Float32, got Float16");
}

TEST(ApiKernel, NarrowAlignmentIsNamed) {
  // K = 62: rows of A are 124 bytes, so only 2-element accesses fit; SM90 kernels need 8.
  const auto args =
      GemmArguments::make(cuda(f16, {128, 62}), cuda(f16, {62, 256}), cuda(f16, {128, 256}), f32)
          .value();
  EXPECT_EQ(args.alignment_a(), 2);
  const auto aligned =
      GemmArguments::make(cuda(f16, {128, 64}), cuda(f16, {64, 256}), cuda(f16, {128, 256}), f32)
          .value();
  const auto sm90 = get_kernels(&aligned, {}, 90);
  ASSERT_FALSE(sm90.empty());
  for (const Kernel& k : sm90) {
    if (k.metadata().design.arch != 90) continue;
    EXPECT_NE(k.supports(args).message().find("Operand `A` is unsupported: Expected alignment 8 "
                                              "elements"),
              std::string::npos);
    break;
  }
  for (const Kernel& k : get_kernels(&args, {}, 90)) {
    EXPECT_TRUE(k.supports(args)) << k.metadata().kernel_name;
    EXPECT_EQ(k.metadata().design.arch, 80) << "SM90 kernels need 16-byte alignment";
  }
}

TEST(ApiGetKernels, ListsBothArchitecturesAndRanksWithArguments) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto all90 = get_kernels(nullptr, {}, 90);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("get_kernels(cc=90): %zu kernels in %.3f s\n", all90.size(), seconds);
  EXPECT_GE(all90.size(), 10000u);
  const auto only80 = get_kernels(nullptr, {}, 80);
  for (const Kernel& k : only80) ASSERT_EQ(k.metadata().min_cc, 80);

  const GemmArguments args = seed_args();
  const auto ranked = get_kernels(&args, {}, 90);
  ASSERT_GE(ranked.size(), 2u);
  for (size_t i = 1; i < ranked.size(); ++i) {
    EXPECT_GE(ranked[i - 1].metadata().score, ranked[i].metadata().score);
  }
  for (const Kernel& k : ranked) EXPECT_TRUE(k.supports(args)) << k.metadata().kernel_name;
  EXPECT_GT(ranked.front().metadata().score, 0.0);
  EXPECT_FALSE(ranked.front().metadata().score_explain.empty());

  const auto filtered = get_kernels(
      &args, [](const KernelMetadata& m) { return m.design.tile_shape[0] == 128; }, 90);
  ASSERT_FALSE(filtered.empty());
  for (const Kernel& k : filtered) EXPECT_EQ(k.metadata().design.tile_shape[0], 128);
  EXPECT_LT(filtered.size(), ranked.size());
}

TEST(ApiDevice, CcCheckSaysWhyWithoutAGpu) {
  const Status status = is_device_cc_supported({90});
  if (status) GTEST_SKIP() << "a compute capability 9.0 device is present";
  EXPECT_FALSE(status.message().empty());
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::api
