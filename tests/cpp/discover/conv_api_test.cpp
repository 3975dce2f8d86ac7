// The arguments-first convolution API on the CPU: argument checks, listing, ranking and
// supports() texts. TensorViews point at fake device addresses: nothing is launched.
#include "tilecraft/discover/conv_api.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fake_device_views.hpp"

namespace tilecraft::api {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;

// A (N, C, H, W) view in torch.channels_last memory (strides H*W*C, 1, W*C, C).
TensorView channels_last(DataType type, int64_t n, int64_t c, int64_t h, int64_t w) {
  TensorView t = testing::cuda(type, {n, h, w, c});
  t.shape = {n, c, h, w};
  t.strides = {h * w * c, 1, w * c, c};
  return t;
}

Conv2dGeometry pad1() {
  Conv2dGeometry g;
  g.padding = {1, 1, 1, 1};
  return g;
}

Conv2dArguments fprop(DataType type = f16, EpilogueArguments e = {}) {
  return Conv2dArguments::make(ConvKind::Fprop, channels_last(type, 2, 64, 14, 14),
                               channels_last(type, 128, 64, 3, 3),
                               channels_last(type, 2, 128, 14, 14), f32, pad1(), e)
      .value();
}

std::string error_of(const Result<Conv2dArguments>& r) {
  return r ? std::string("(no error)") : r.status().message();
}

TEST(ApiConv2dArguments, DerivesTheProblemAndTheImplicitGemm) {
  const Conv2dArguments args = fprop();
  EXPECT_EQ(args.problem_size().p, 14);
  EXPECT_EQ(args.problem_size().k, 128);
  EXPECT_EQ(args.alignment_a(), 8);
  EXPECT_EQ(args.alignment_out(), 8);
  const auto mnk = args.gemm_mnk();
  EXPECT_EQ(mnk[0], 2 * 14 * 14);
  EXPECT_EQ(mnk[1], 128);
  EXPECT_EQ(mnk[2], 64 * 9);
}

TEST(ApiConv2dArguments, RefusesWhatDoesNotFit) {
  const TensorView x = channels_last(f16, 2, 64, 14, 14), w = channels_last(f16, 128, 64, 3, 3);
  EXPECT_NE(error_of(Conv2dArguments::make(ConvKind::Fprop, x, w,
                                           channels_last(f16, 2, 128, 12, 12), f32, pad1()))
                .find("out (y): expected (2, 128, 14, 14)"),
            std::string::npos);
  TensorView first = testing::cuda(f16, {2, 64, 14, 14});  // contiguous (N, C, H, W)
  EXPECT_NE(error_of(Conv2dArguments::make(ConvKind::Fprop, first, w,
                                           channels_last(f16, 2, 128, 14, 14), f32, pad1()))
                .find("channels-first: call .contiguous(memory_format=torch.channels_last)"),
            std::string::npos);
  EXPECT_NE(error_of(Conv2dArguments::make(ConvKind::Fprop, x, channels_last(f16, 128, 32, 3, 3),
                                           channels_last(f16, 2, 128, 14, 14), f32, pad1()))
                .find("B (w): expected 64 channels per filter"),
            std::string::npos);
  EpilogueArguments bias_per_row;
  bias_per_row.bias = testing::cuda(f16, {128});
  bias_per_row.bias_per_row = true;
  EXPECT_NE(
      error_of(Conv2dArguments::make(ConvKind::Fprop, x, w, channels_last(f16, 2, 128, 14, 14), f32,
                                     pad1(), bias_per_row))
          .find("one value per output channel"),
      std::string::npos);
}

TEST(ApiConv2dArguments, RefusesMixedTypesDevicesAndMisshapenEpilogueTensors) {
  const TensorView x = channels_last(f16, 2, 64, 14, 14), w = channels_last(f16, 128, 64, 3, 3);
  const TensorView y = channels_last(f16, 2, 128, 14, 14);
  EXPECT_NE(error_of(Conv2dArguments::make(ConvKind::Fprop, x, channels_last(bf16, 128, 64, 3, 3),
                                           y, f32, pad1()))
                .find("B: expected Float16 like A, got BFloat16"),
            std::string::npos);
  TensorView elsewhere = y;
  elsewhere.device_id = 1;
  EXPECT_NE(error_of(Conv2dArguments::make(ConvKind::Fprop, x, w, elsewhere, f32, pad1()))
                .find("out: expected a tensor on cuda:0 like A"),
            std::string::npos);
  EpilogueArguments short_bias;
  short_bias.bias = testing::cuda(f16, {64});
  EXPECT_NE(error_of(Conv2dArguments::make(ConvKind::Fprop, x, w, y, f32, pad1(), short_bias))
                .find("epilogue.bias: expected a contiguous tensor of 128 values"),
            std::string::npos);
  EpilogueArguments small_c;
  small_c.C = channels_last(f16, 2, 128, 7, 7);
  small_c.beta = 1.0;
  EXPECT_NE(error_of(Conv2dArguments::make(ConvKind::Fprop, x, w, y, f32, pad1(), small_c))
                .find("C: expected a Float16 tensor shaped like out (2, 128, 14, 14)"),
            std::string::npos);
  EpilogueArguments beta_without_c;
  beta_without_c.beta = 0.5;
  EXPECT_NE(error_of(Conv2dArguments::make(ConvKind::Fprop, x, w, y, f32, pad1(), beta_without_c))
                .find("C: required when beta != 0"),
            std::string::npos);
  EXPECT_NE(error_of(Conv2dArguments::make(ConvKind::Fprop, x, w, y, s8, pad1()))
                .find("accumulator_type: expected Float32, Float16, Int32 or Float64"),
            std::string::npos);
  EpilogueArguments with_graph;
  with_graph.graph = EpilogueGraph{};
  with_graph.graph->store(with_graph.graph->accumulator(), "D", f16);
  EXPECT_NE(error_of(Conv2dArguments::make(ConvKind::Fprop, x, w, y, f32, pad1(), with_graph))
                .find("epilogue.graph: get_kernels lists no convolution with a custom epilogue"),
            std::string::npos);
}

TEST(ApiConv2dKernels, SupportsNamesAnAlignmentTheChannelsDoNotAllow) {
  const Kernel aligned8 =
      get_kernels(
          fprop(), [](const KernelMetadata& m) { return m.operands.A.alignment == 8; }, 90)
          .front();
  auto odd = Conv2dArguments::make(ConvKind::Fprop, channels_last(f16, 2, 60, 14, 14),
                                   channels_last(f16, 128, 60, 3, 3),
                                   channels_last(f16, 2, 128, 14, 14), f32, pad1());
  ASSERT_TRUE(odd) << odd.status().message();
  EXPECT_EQ(odd->alignment_a(), 4);
  EXPECT_NE(aligned8.supports(*odd).message().find("Operand `A` is unsupported: Expected "
                                                   "alignment 8 elements"),
            std::string::npos);
  for (const Kernel& k : get_kernels(*odd, {}, 90)) {
    EXPECT_LE(k.metadata().operands.A.alignment, 4) << k.metadata().kernel_name;
  }
}

TEST(ApiConv2dKernels, ListsBothArchitecturesRankedAndEveryKernelSupportsTheArguments) {
  const Conv2dArguments args = fprop();
  const std::vector<Kernel> kernels = get_kernels(args, {}, 90);
  ASSERT_FALSE(kernels.empty());
  std::set<std::string> classes;
  double previous = 1e30;
  for (const Kernel& k : kernels) {
    const KernelMetadata& m = k.metadata();
    classes.insert(m.kernel_class);
    ASSERT_TRUE(m.conv.has_value()) << m.kernel_name;
    EXPECT_EQ(m.conv->kind, ConvKind::Fprop);
    EXPECT_TRUE(k.supports(args)) << m.kernel_name << ": " << k.supports(args).message();
    if (!m.facts.spills()) {
      EXPECT_LE(m.score, previous + 1e-9) << m.kernel_name;
      previous = m.score;
    }
  }
  EXPECT_TRUE(classes.count("Sm80ConvKernel"));
  EXPECT_TRUE(classes.count("Sm90ConvKernel"));
  EXPECT_GT(kernels.front().metadata().score, 0.0);
}

TEST(ApiConv2dKernels, StridedDgradListsNoUnitStrideOrSm90Kernels) {
  Conv2dGeometry g = pad1();
  g.stride = {2, 2};
  auto args = Conv2dArguments::make(ConvKind::Dgrad, channels_last(f16, 2, 128, 7, 7),
                                    channels_last(f16, 128, 64, 3, 3),
                                    channels_last(f16, 2, 64, 14, 14), f32, g);
  ASSERT_TRUE(args) << args.status().message();
  const std::vector<Kernel> kernels = get_kernels(*args, {}, 90);
  ASSERT_FALSE(kernels.empty());
  for (const Kernel& k : kernels) {
    EXPECT_EQ(k.metadata().kernel_class, "Sm80ConvKernel");
    EXPECT_EQ(k.metadata().conv->stride_support, StrideSupport::Strided);
  }
}

TEST(ApiConv2dKernels, ABiasIsFusedOnSm90AndReadAsCOnSm80) {
  EpilogueArguments e;
  e.bias = testing::cuda(f16, {128});
  e.activation = Activation::relu;
  const Conv2dArguments args = fprop(f16, e);
  const std::vector<Kernel> kernels = get_kernels(args, {}, 90);
  ASSERT_FALSE(kernels.empty());
  for (const Kernel& k : kernels) {
    const KernelMetadata& m = k.metadata();
    EXPECT_EQ(m.epilogue.activation, Activation::relu);
    EXPECT_EQ(m.epilogue.bias, m.design.arch == 90 ? BiasKind::per_column : BiasKind::none)
        << m.kernel_name;
  }
  const Kernel plain = get_kernels(fprop(), {}, 90).front();
  EXPECT_NE(plain.supports(args).message().find("Epilogue is unsupported: Expected activation "
                                                "identity, got relu"),
            std::string::npos);
}

TEST(ApiConv2dKernels, SupportsNamesTheFirstRequirementMissed) {
  const Kernel kernel = get_kernels(fprop(), {}, 90).front();
  EXPECT_NE(kernel.supports(fprop(bf16))
                .message()
                .find("Expected element type Float16, got "
                      "BFloat16"),
            std::string::npos);
  auto dgrad = Conv2dArguments::make(ConvKind::Dgrad, channels_last(f16, 2, 128, 14, 14),
                                     channels_last(f16, 128, 64, 3, 3),
                                     channels_last(f16, 2, 64, 14, 14), f32, pad1());
  ASSERT_TRUE(dgrad);
  EXPECT_NE(kernel.supports(*dgrad).message().find("Expected a dgrad kernel, this one computes "
                                                   "fprop"),
            std::string::npos);
  Conv2dGeometry grouped = pad1();
  grouped.groups = 2;
  auto two_groups = Conv2dArguments::make(ConvKind::Fprop, channels_last(f16, 2, 64, 14, 14),
                                          channels_last(f16, 128, 32, 3, 3),
                                          channels_last(f16, 2, 128, 14, 14), f32, grouped);
  ASSERT_TRUE(two_groups) << two_groups.status().message();
  EXPECT_NE(kernel.supports(*two_groups)
                .message()
                .find("Groups is unsupported: Expected 1 for an ungrouped kernel"),
            std::string::npos);
  const Kernel gemm = get_kernels(nullptr, {}, 90).front();
  EXPECT_NE(gemm.supports(fprop()).message().find("is not a convolution"), std::string::npos);
}

Conv2dArguments grouped_fprop(DataType type, int c, int k, int groups) {
  Conv2dGeometry g = pad1();
  g.groups = groups;
  auto args = Conv2dArguments::make(ConvKind::Fprop, channels_last(type, 2, c, 14, 14),
                                    channels_last(type, k, c / groups, 3, 3),
                                    channels_last(type, 2, k, 14, 14), type == f64 ? f64 : f32, g);
  EXPECT_TRUE(args) << args.status().message();
  return args.value();
}

TEST(ApiConv2dKernels, GroupedFpropListsArch80GroupKernelsWhoseTilesFitTheGroups) {
  const Conv2dArguments args = grouped_fprop(f16, 128, 256, 4);  // 64 output channels per group
  const std::vector<Kernel> kernels = get_kernels(args, {}, 90);
  ASSERT_FALSE(kernels.empty());
  std::set<GroupMode> modes;
  for (const Kernel& k : kernels) {
    const KernelMetadata& m = k.metadata();
    EXPECT_EQ(m.kernel_class, "Sm80ConvKernel") << m.kernel_name;
    modes.insert(m.conv->group_mode);
    const int tile_n = m.design.tile_shape[1];
    if (m.conv->iterator_algorithm == IteratorAlgorithm::Direct) {
      // tilecraft's direct kernel: a thread's 8 channels in one group, any CTA width.
      EXPECT_EQ(m.conv->group_mode, GroupMode::MultipleGroup) << m.kernel_name;
      EXPECT_EQ(m.operands.A.alignment, 8) << m.kernel_name;
    } else if (m.conv->group_mode == GroupMode::SingleGroup) {
      EXPECT_EQ(64 % tile_n, 0) << m.kernel_name;
    } else {
      EXPECT_EQ(tile_n % 64, 0) << m.kernel_name;
    }
    EXPECT_TRUE(k.supports(args)) << m.kernel_name << ": " << k.supports(args).message();
  }
  EXPECT_EQ(modes, (std::set<GroupMode>{GroupMode::SingleGroup, GroupMode::MultipleGroup}));
  EXPECT_GT(kernels.front().metadata().score, 0.0);

  // 12 input channels per group: no access of 8 halves starts each group's channels.
  const Conv2dArguments narrow = grouped_fprop(f16, 48, 64, 4);
  for (const Kernel& k : get_kernels(narrow, {}, 90)) {
    EXPECT_EQ(12 % k.metadata().operands.A.alignment, 0) << k.metadata().kernel_name;
  }
  const Kernel wide = get_kernels(args, [](const KernelMetadata& m) {
                        return m.operands.A.alignment == 8;
                      }).front();
  // The filter holds C / groups channels: its alignment is the first requirement missed.
  EXPECT_NE(wide.supports(narrow).message().find("Operand `B` is unsupported: Expected alignment 8 "
                                                 "elements"),
            std::string::npos)
      << wide.supports(narrow).message();
}

TEST(ApiConv2dKernels, DepthwiseFpropRunsOnCudaCoreKernels) {
  const Conv2dArguments args = grouped_fprop(f32, 32, 32, 32);
  const std::vector<Kernel> kernels = get_kernels(args, {}, 90);
  ASSERT_FALSE(kernels.empty());
  std::set<std::string> names;
  const Kernel* cutlass_depthwise = nullptr;
  for (const Kernel& k : kernels) {
    const KernelMetadata& m = k.metadata();
    EXPECT_EQ(m.conv->group_mode, GroupMode::Depthwise) << m.kernel_name;
    EXPECT_EQ(m.design.stages, 2) << m.kernel_name;
    // tilecraft's direct kernels read 4 floats of channels at once, CUTLASS's one element.
    const bool direct = m.conv->iterator_algorithm == IteratorAlgorithm::Direct;
    EXPECT_EQ(m.operands.A.alignment, direct ? 4 : 1) << m.kernel_name;
    if (!direct && cutlass_depthwise == nullptr) cutlass_depthwise = &k;
    EXPECT_TRUE(names.insert(m.kernel_name).second) << "listed twice: " << m.kernel_name;
    EXPECT_TRUE(k.supports(args)) << m.kernel_name << ": " << k.supports(args).message();
  }
  // The direct kernels' memory-bound estimate ranks them above CUTLASS's implicit GEMM of one
  // useful output channel per tile column.
  EXPECT_EQ(kernels.front().metadata().conv->iterator_algorithm, IteratorAlgorithm::Direct);
  ASSERT_NE(cutlass_depthwise, nullptr);
  for (const Kernel* k : {&kernels.front(), cutlass_depthwise}) {
    EXPECT_NE(k->supports(grouped_fprop(f32, 64, 64, 32))
                  .message()
                  .find("Expected C == K == groups for a depthwise kernel"),
              std::string::npos);
  }
  EXPECT_TRUE(cutlass_depthwise->supports(grouped_fprop(f32, 30, 30, 30)));  // any channel count
  EXPECT_NE(kernels.front().supports(grouped_fprop(f32, 30, 30, 30)).message().find("alignment"),
            std::string::npos)
      << kernels.front().supports(grouped_fprop(f32, 30, 30, 30)).message();
}

TEST(ApiConv2dKernels, GroupedDgradAndWgradListNothing) {
  Conv2dGeometry g = pad1();
  g.groups = 2;
  auto dgrad = Conv2dArguments::make(ConvKind::Dgrad, channels_last(f16, 2, 128, 14, 14),
                                     channels_last(f16, 128, 32, 3, 3),
                                     channels_last(f16, 2, 64, 14, 14), f32, g);
  ASSERT_TRUE(dgrad) << dgrad.status().message();
  EXPECT_TRUE(get_kernels(*dgrad, {}, 90).empty());
}

// A (N, C, D, H, W) view in torch.channels_last_3d memory.
TensorView channels_last_3d(DataType type, int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) {
  TensorView t = testing::cuda(type, {n, d, h, w, c});
  t.shape = {n, c, d, h, w};
  t.strides = {d * h * w * c, 1, h * w * c, w * c, c};
  return t;
}

Conv2dGeometry pad1_3d(int stride = 1) {
  Conv2dGeometry g = pad1();
  g.padding_d = {1, 1};
  g.stride = {stride, stride};
  g.stride_d = stride;
  return g;
}

TEST(ApiConv3dArguments, FiveDimensionalTensorsMakeA3dProblem) {
  auto args = Conv2dArguments::make(ConvKind::Fprop, channels_last_3d(f16, 2, 32, 6, 10, 9),
                                    channels_last_3d(f16, 48, 32, 3, 3, 3),
                                    channels_last_3d(f16, 2, 48, 3, 5, 5), f32, pad1_3d(2));
  ASSERT_TRUE(args) << args.status().message();
  EXPECT_TRUE(args->problem_size().is_3d());
  EXPECT_EQ(args->problem_size().z, 3);
  const auto mnk = args->gemm_mnk();
  EXPECT_EQ(mnk[0], 2 * 3 * 5 * 5);
  EXPECT_EQ(mnk[2], 32 * 27);
  auto wrong = Conv2dArguments::make(ConvKind::Fprop, channels_last_3d(f16, 2, 32, 6, 10, 9),
                                     channels_last_3d(f16, 48, 32, 3, 3, 3),
                                     channels_last_3d(f16, 2, 48, 6, 10, 9), f32, pad1_3d(2));
  EXPECT_NE(error_of(wrong).find("out (y): expected (2, 48, 3, 5, 5) (N, K, Z, P, Q"),
            std::string::npos)
      << error_of(wrong);
  auto mixed = Conv2dArguments::make(ConvKind::Fprop, channels_last_3d(f16, 2, 32, 6, 10, 9),
                                     channels_last(f16, 48, 32, 3, 3),
                                     channels_last_3d(f16, 2, 48, 3, 5, 5), f32, pad1_3d(2));
  EXPECT_NE(error_of(mixed).find("B: expected a 5-D tensor like A"), std::string::npos)
      << error_of(mixed);
  TensorView first = testing::cuda(f16, {2, 32, 6, 10, 9});  // contiguous (N, C, D, H, W)
  auto channels_first =
      Conv2dArguments::make(ConvKind::Fprop, first, channels_last_3d(f16, 48, 32, 3, 3, 3),
                            channels_last_3d(f16, 2, 48, 3, 5, 5), f32, pad1_3d(2));
  EXPECT_NE(error_of(channels_first).find("channels_last_3d"), std::string::npos)
      << error_of(channels_first);
  Conv2dGeometry depth_on_2d = pad1();
  depth_on_2d.stride_d = 2;
  EXPECT_NE(error_of(Conv2dArguments::make(ConvKind::Fprop, channels_last(f16, 2, 64, 14, 14),
                                           channels_last(f16, 128, 64, 3, 3),
                                           channels_last(f16, 2, 128, 14, 14), f32, depth_on_2d))
                .find("depth values are for 5-D"),
            std::string::npos);
}

TEST(ApiConv3dKernels, ListsArch80Conv3dKernelsOfEveryKind) {
  const TensorView x = channels_last_3d(f16, 2, 32, 6, 10, 9),
                   w = channels_last_3d(f16, 48, 32, 3, 3, 3),
                   y = channels_last_3d(f16, 2, 48, 6, 10, 9);
  struct Case {
    ConvKind kind;
    TensorView a, b, out;
    Conv2dGeometry geometry;
  };
  Conv2dGeometry strided = pad1_3d(2);
  const TensorView y_strided = channels_last_3d(f16, 2, 48, 3, 5, 5);
  for (const Case& c :
       {Case{ConvKind::Fprop, x, w, y, pad1_3d()}, Case{ConvKind::Dgrad, y, w, x, pad1_3d()},
        Case{ConvKind::Dgrad, y_strided, w, x, strided},
        Case{ConvKind::Wgrad, y, x, w, pad1_3d()}}) {
    auto args = Conv2dArguments::make(c.kind, c.a, c.b, c.out, f32, c.geometry);
    ASSERT_TRUE(args) << args.status().message();
    const std::vector<Kernel> kernels = get_kernels(*args, {}, 90);
    ASSERT_FALSE(kernels.empty()) << to_string(c.kind);
    for (const Kernel& k : kernels) {
      const KernelMetadata& m = k.metadata();
      EXPECT_EQ(m.kernel_class, "Sm80ConvKernel") << m.kernel_name;
      EXPECT_EQ(m.operands.A.layout, Layout::TensorNDHWC) << m.kernel_name;
      EXPECT_EQ(m.operands.A.alignment, 8) << m.kernel_name;
      if (c.kind == ConvKind::Dgrad) {
        EXPECT_EQ(m.conv->stride_support,
                  c.geometry.stride_d == 1 ? StrideSupport::Unity : StrideSupport::Strided);
      }
      EXPECT_TRUE(k.supports(*args)) << m.kernel_name << ": " << k.supports(*args).message();
    }
    const std::string refusal =
        c.kind == ConvKind::Fprop
            ? "Expected a 3-D convolution kernel, this one computes 2-D convolutions"
            : "Expected a " + std::string(to_string(c.kind));
    EXPECT_NE(get_kernels(fprop(), {}, 90).front().supports(*args).message().find(refusal),
              std::string::npos);
  }
  // 20 halves (18 floats): no 128-bit access, so no tensor-op Conv3d kernel; f32 has CUDA-core
  // ones.
  auto odd = Conv2dArguments::make(ConvKind::Fprop, channels_last_3d(f16, 2, 20, 6, 10, 9),
                                   channels_last_3d(f16, 48, 20, 3, 3, 3), y, f32, pad1_3d());
  ASSERT_TRUE(odd) << odd.status().message();
  EXPECT_TRUE(get_kernels(*odd, {}, 90).empty());
  auto f32_odd = Conv2dArguments::make(ConvKind::Fprop, channels_last_3d(f32, 2, 18, 6, 10, 9),
                                       channels_last_3d(f32, 48, 18, 3, 3, 3),
                                       channels_last_3d(f32, 2, 48, 6, 10, 9), f32, pad1_3d());
  ASSERT_TRUE(f32_odd) << f32_odd.status().message();
  const std::vector<Kernel> simt = get_kernels(*f32_odd, {}, 90);
  ASSERT_FALSE(simt.empty());
  for (const Kernel& k : simt) EXPECT_EQ(k.metadata().operands.A.alignment, 1);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::api
