// Tuning signatures name no epilogue graph: arguments with a custom epilogue are refused by
// signature_of (so by plans, tuning and find_tuned), with the argument named, before any device
// is asked for. TensorViews point at fake device addresses: nothing runs.
#include <gtest/gtest.h>

#include <string>

#include "discover/fake_device_views.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/tune/tuning.hpp"

namespace tilecraft::tune {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;
using api::testing::cuda;

TEST(TuningSignature, RefusesArgumentsWithACustomEpilogue) {
  EpilogueGraph graph;
  graph.store(graph.mul(graph.scalar("alpha"), graph.accumulator()), "D", bf16);
  api::EpilogueArguments epilogue;
  epilogue.graph = graph;
  epilogue.operands.scalars["alpha"] = 2.0;
  auto args = api::GemmArguments::make(cuda(bf16, {256, 128}), cuda(bf16, {128, 512}),
                                       cuda(bf16, {256, 512}), f32, epilogue);
  ASSERT_TRUE(args) << args.status().message();
  auto signature = signature_of(*args);
  ASSERT_FALSE(signature);
  EXPECT_EQ(signature.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(signature.status().message().find("epilogue.graph: tuning and plans do not take"),
            std::string::npos)
      << signature.status().message();
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::tune
