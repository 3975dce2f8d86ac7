// tilecraft::api epilogue options: alpha/beta/C, activations, bias and fp8 scales in
// GemmArguments; get_kernels deriving fused kernels from them; supports() naming what a kernel
// lacks. TensorViews point at fake device addresses: nothing is launched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>

#include "fake_device_views.hpp"
#include "tilecraft/discover/api.hpp"

namespace tilecraft::api {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;

using testing::cuda;
using testing::transposed;

// bf16 TN, 256 x 512 x 128: out = A @ w.t().
Result<GemmArguments> bf16_tn(const EpilogueArguments& epilogue = {}) {
  return GemmArguments::make(cuda(bf16, {256, 128}), transposed(cuda(bf16, {512, 128})),
                             cuda(bf16, {256, 512}), f32, epilogue);
}

std::string error_of(const Result<GemmArguments>& r) {
  return r ? std::string("(no error)") : r.status().message();
}

struct BadEpilogue {
  const char* name;
  EpilogueArguments epilogue;
  const char* expected;
};

EpilogueArguments with(auto&& change) {
  EpilogueArguments e;
  change(e);
  return e;
}

class ApiBadEpilogue : public ::testing::TestWithParam<BadEpilogue> {};

TEST_P(ApiBadEpilogue, IsRefusedWithTheArgumentNamed) {
  const std::string error = error_of(bf16_tn(GetParam().epilogue));
  EXPECT_NE(error.find(GetParam().expected), std::string::npos) << error;
}

INSTANTIATE_TEST_SUITE_P(
    Api, ApiBadEpilogue,
    ::testing::Values(
        BadEpilogue{"beta_without_c", with([](auto& e) { e.beta = 0.5; }),
                    "epilogue.C: required when beta != 0"},
        BadEpilogue{"c_shape", with([](auto& e) {
                      e.C = cuda(bf16, {256, 256});
                    }),
                    "epilogue.C: expected the shape of out (256, 512), got (256, 256)"},
        BadEpilogue{"c_dtype", with([](auto& e) {
                      e.C = cuda(f32, {256, 512});
                    }),
                    "epilogue.C: expected element type BFloat16 like out, got Float32"},
        BadEpilogue{"c_inner_strided", with([](auto& e) {
                      e.C = cuda(bf16, {256, 1024});
                      e.C.shape[1] = 512;
                      e.C.strides = {1024, 2};
                    }),
                    "Operand `C`: expected one of its last two dimensions to be contiguous"},
        BadEpilogue{"c_device", with([](auto& e) {
                      e.C = cuda(bf16, {256, 512}, 1);
                    }),
                    "epilogue.C: expected a tensor on cuda:0 like out, got one on cuda:1"},
        BadEpilogue{"alpha_nan", with([](auto& e) { e.alpha = std::nan(""); }),
                    "epilogue.alpha: expected a finite number"},
        BadEpilogue{"activation_args", with([](auto& e) { e.activation = Activation::leaky_relu; }),
                    "epilogue.activation_args: leaky_relu takes 1, got 0"},
        BadEpilogue{"bias_length", with([](auto& e) { e.bias = cuda(f32, {256}); }),
                    "epilogue.bias: expected a vector of N = 512 values"},
        BadEpilogue{"bias_dtype", with([](auto& e) { e.bias = cuda(s32, {512}); }),
                    "epilogue.bias: expected Float32, Float16 or BFloat16, got Int32"}),
    [](const ::testing::TestParamInfo<BadEpilogue>& p) { return std::string(p.param.name); });

TEST(ApiEpilogue, AlphaBetaAndCRunOnEveryPlainKernel) {
  const auto plain = bf16_tn().value();
  const auto scaled = bf16_tn(with([](auto& e) {
                        e.alpha = 0.5;
                        e.beta = -2;
                        e.C = cuda(bf16, {256, 512});
                      })).value();
  const auto plain_kernels = get_kernels(&plain, {}, 90);
  const auto scaled_kernels = get_kernels(&scaled, {}, 90);
  ASSERT_FALSE(plain_kernels.empty());
  EXPECT_EQ(plain_kernels.size(), scaled_kernels.size());
  for (const Kernel& k : scaled_kernels)
    EXPECT_TRUE(k.supports(scaled)) << k.metadata().kernel_name;
}

TEST(ApiEpilogue, CInAnotherLayoutSelectsNoKernelAndIsNamed) {
  const auto args = bf16_tn(with([](auto& e) {
                      e.beta = 1;
                      e.C = transposed(cuda(bf16, {512, 256}));
                    })).value();
  EXPECT_TRUE(get_kernels(&args, {}, 90).empty());
  const auto plain = bf16_tn().value();
  const Status status = get_kernels(&plain, {}, 90).front().supports(args);
  EXPECT_NE(status.message().find("Operand `C` is unsupported: Expected layout RowMajor, got "
                                  "ColumnMajor"),
            std::string::npos)
      << status.message();
}

TEST(ApiEpilogue, BiasAndGeluDeriveFusedSm90Kernels) {
  const auto args = bf16_tn(with([](auto& e) {
                      e.activation = Activation::gelu;
                      e.bias = cuda(bf16, {512});
                    })).value();
  const auto kernels = get_kernels(&args, {}, 90);
  ASSERT_FALSE(kernels.empty());
  for (const Kernel& k : kernels) {
    const KernelMetadata& m = k.metadata();
    EXPECT_EQ(m.min_cc, 90) << m.kernel_name;  // SM80 kernels add no bias
    EXPECT_EQ(m.epilogue.activation, Activation::gelu) << m.kernel_name;
    EXPECT_EQ(m.epilogue.bias, BiasKind::per_column) << m.kernel_name;
    EXPECT_EQ(m.epilogue.bias_dtype, bf16) << m.kernel_name;
    EXPECT_TRUE(k.supports(args)) << m.kernel_name;
    EXPECT_GT(m.score, 0) << m.kernel_name;
  }
  // The plain kernels are not among them, and say why they cannot run these arguments.
  const auto plain = bf16_tn().value();
  const Status status = get_kernels(&plain, {}, 90).front().supports(args);
  EXPECT_EQ(status.message(), "Epilogue is unsupported: Expected activation identity, got gelu");
}

TEST(ApiEpilogue, ActivationsWithoutBiasAlsoRunOnSm80Kernels) {
  const auto relu = bf16_tn(with([](auto& e) { e.activation = Activation::relu; })).value();
  size_t sm80 = 0;
  for (const Kernel& k : get_kernels(&relu, {}, 90)) sm80 += k.metadata().min_cc == 80;
  EXPECT_GT(sm80, 0u);
  const auto tanh_gelu =
      bf16_tn(with([](auto& e) { e.activation = Activation::gelu_tanh; })).value();
  for (const Kernel& k : get_kernels(&tanh_gelu, {}, 90)) {
    EXPECT_EQ(k.metadata().min_cc, 90) << k.metadata().kernel_name;
  }
}

TEST(ApiEpilogue, BiasKindAndTypeMismatchesAreNamed) {
  const auto per_column = bf16_tn(with([](auto& e) { e.bias = cuda(f32, {512}); })).value();
  const Kernel fused = get_kernels(&per_column, {}, 90).front();
  const auto per_row = bf16_tn(with([](auto& e) {
                         e.bias = cuda(f32, {256});
                         e.bias_per_row = true;
                       })).value();
  EXPECT_EQ(fused.supports(per_row).message(),
            "Epilogue is unsupported: Expected a per-column (N) Float32 bias, got a per-row (M) "
            "Float32 bias");
  const auto bf16_bias = bf16_tn(with([](auto& e) { e.bias = cuda(bf16, {512}); })).value();
  EXPECT_EQ(fused.supports(bf16_bias).message(),
            "Epilogue is unsupported: Expected a per-column (N) Float32 bias, got a per-column "
            "(N) BFloat16 bias");
}

TEST(ApiEpilogue, ScalesSelectFp8KernelsOnly) {
  const auto scaled = bf16_tn(with([](auto& e) { e.scale_a.given = true; })).value();
  EXPECT_TRUE(get_kernels(&scaled, {}, 90).empty());
  const auto plain = bf16_tn().value();
  EXPECT_EQ(get_kernels(&plain, {}, 90).front().supports(scaled).message(),
            "Epilogue is unsupported: Expected no per-tensor scales (only fp8 kernels take "
            "them), got scale_a");
  const auto fp8 = GemmArguments::make(cuda(e4m3, {256, 128}), transposed(cuda(e4m3, {512, 128})),
                                       cuda(bf16, {256, 512}), f32, with([](auto& e) {
                                         e.scale_a.given = true;
                                         e.scale_a.value = 0.5;
                                       }))
                       .value();
  const auto kernels = get_kernels(&fp8, {}, 90);
  ASSERT_FALSE(kernels.empty());
  for (const Kernel& k : kernels) EXPECT_TRUE(k.metadata().epilogue.per_tensor_scales);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::api
