// Compile test of tilecraft's direct convolution (iterator_algorithm direct,
// tilecraft/jit/direct_conv.cuh): a module of three entries (f16 depthwise, bf16 grouped with a
// relu, f32 depthwise) is emitted, compiled by nvcc, dlopen'ed (no GPU needed) and its host checks
// probed with problems it must take and problems it must refuse, in words. The module's compile
// time is printed: the direct kernels include none of CUTLASS's implicit-GEMM headers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compile_tests.hpp"
#include "emit/emit_test_descriptions.hpp"
#include "emit/module_compile_support.hpp"
#include "tilecraft/abi/module_abi.h"
#include "tilecraft/emit/gemm_emitter.hpp"

namespace tilecraft::emit {
namespace {
namespace TILECRAFT_TEST_FILE {

using namespace tilecraft::emit::compile_testing;
using namespace tilecraft::emit::testing;

alignas(256) unsigned char g_dummy[256];

GemmDescription direct(DataType element, int vector, std::array<int, 3> shape, int warps,
                       GroupMode mode, EpilogueKind kind = EpilogueKind::LinearCombination,
                       Activation activation = Activation::identity) {
  const MathInstruction m = math({1, 1, 1}, element, DataType::f32, OpClass::Simt);
  auto tile = TileDescription::make(shape, 2, {warps, 1, 1}, m);
  EXPECT_TRUE(bool(tile)) << tile.status().message();
  const EpilogueFunctor e =
      epilogue(kind, element, vector, DataType::f32, DataType::f32, activation);
  auto made = GemmDescription::make_conv2d(
      ConvKind::Fprop, IteratorAlgorithm::Direct, 80, *tile, {element, Layout::TensorNHWC, vector},
      {element, Layout::TensorNHWC, 1}, {element, Layout::TensorNHWC, vector},
      StrideSupport::Strided, e, Swizzle::IdentitySwizzle1, mode);
  EXPECT_TRUE(bool(made)) << made.status().message();
  return made.value();
}

tc_conv_args direct_args(const GemmDescription& d) {
  tc_conv_args a = conv_block();
  a.mode = TC_CONV_MODE_RUN;
  a.A = a.B = a.C = a.D = g_dummy;
  a.header.alpha = 1.0;
  a.header.beta = 0.5;
  a.header.num_activation_args = activation_argument_count(d.epilogue.activation);
  tc_conv_problem& c = a.conv;
  c.kind = 0;
  c.n = 2;
  c.h = c.w = 9;
  c.r = c.s = 3;
  c.pad_h = c.pad_w = c.pad_bottom = c.pad_right = 1;
  c.stride_h = c.stride_w = 1;
  c.p = c.q = 9;
  c.dilation_h = c.dilation_w = 1;
  c.split_k_slices = 1;
  if (d.conv.group_mode == GroupMode::Depthwise) {
    c.groups = c.c = c.k = 96;
  } else {
    c.groups = 4, c.c = 64, c.k = 128;  // 16 inputs, 32 outputs per group
  }
  return a;
}

void expect_refused(const tc_kernel_entry& entry, const tc_conv_args& args, const char* words) {
  const Verdict refused = can_implement(entry, args);
  EXPECT_EQ(refused.status, TC_ERROR_INVALID_ARGUMENT) << words;
  EXPECT_NE(refused.text.find(words), std::string::npos) << refused.text;
}

void check_direct_entry(const GemmEntry& spec, const tc_kernel_entry& entry) {
  const GemmDescription& d = spec.description;
  EXPECT_NE(std::string(entry.metadata).find("iterator_algorithm=direct"), std::string::npos)
      << entry.metadata;
  const tc_conv_args good = direct_args(d);
  const Verdict ok = can_implement(entry, good);
  EXPECT_EQ(ok.status, TC_OK) << ok.text;

  tc_conv_args dgrad = good;
  dgrad.conv.kind = 1;
  expect_refused(entry, dgrad, "conv kind: this entry computes fprop, got dgrad");
  tc_conv_args split = good;
  split.conv.split_k_slices = 2;
  expect_refused(entry, split, "do not split K");
  tc_conv_args parallel = good;
  parallel.mode = TC_CONV_MODE_SPLIT_K_PARALLEL;
  expect_refused(entry, parallel, "no split-K form");
  tc_conv_args three_d = good;
  three_d.conv.spatial_dims = 3;
  expect_refused(entry, three_d, "got a 3-D problem");
  tc_conv_args negative = good;
  negative.conv.pad_h = -1;
  expect_refused(entry, negative, "must not be negative");
  tc_conv_args uneven = good;
  uneven.conv.k = good.conv.k + 1;
  expect_refused(entry, uneven, "multiples of the group count");
  tc_conv_args null_a = good;
  null_a.A = nullptr;
  expect_refused(entry, null_a, "A: null pointer");

  const int vector = d.C.alignment;
  tc_conv_args off_vector = good;
  if (d.conv.group_mode == GroupMode::Depthwise) {
    tc_conv_args not_depthwise = good;
    not_depthwise.conv.k = 2 * good.conv.k;
    expect_refused(entry, not_depthwise, "C == K == groups");
    off_vector.conv.groups = off_vector.conv.c = off_vector.conv.k = 3 * vector + vector / 2;
    expect_refused(entry, off_vector, "access of the activation");
  } else {
    off_vector.conv.c = good.conv.groups * (vector + vector / 2);  // C / groups off the access
    expect_refused(entry, off_vector, "C / groups");
  }
  tc_conv_args huge_filter = good;  // more filter than a CTA's shared memory
  huge_filter.conv.r = huge_filter.conv.s = 99;
  huge_filter.conv.pad_h = huge_filter.conv.pad_w = 49;
  huge_filter.conv.pad_bottom = huge_filter.conv.pad_right = 49;
  if (d.conv.group_mode != GroupMode::Depthwise) {
    expect_refused(entry, huge_filter, "bytes of shared memory");
  }
}

std::vector<ModuleSpec> direct_specs() {
  using enum DataType;
  return {{"conv_direct",
           {{direct(f16, 8, {64, 64, 1}, 8, GroupMode::Depthwise)},
            {direct(bf16, 8, {128, 32, 1}, 4, GroupMode::MultipleGroup,
                    EpilogueKind::LinearCombinationGeneric, Activation::relu)},
            {direct(f32, 4, {128, 64, 1}, 8, GroupMode::Depthwise)}}}};
}

TEST(DirectConvModuleCompile, DepthwiseAndGroupedFprop) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "the direct convolution module");
  auto modules =
      compile_and_check("tilecraft_conv_direct_", direct_specs(), 80, check_direct_entry);
  EXPECT_EQ(modules.size(), 1u);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::emit
