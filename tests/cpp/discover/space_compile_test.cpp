// Every instance the configuration spaces list must be a kernel CUTLASS builds: random samples are
// compiled with nvcc through tilecraft's own compiler. TILECRAFT_COMPILE_TESTS=standard (the
// default) compiles one SM80 and one SM90 instance and one of each SM80 CUDA-core and f64 family;
// few compiles none; the full sample (20 of each) runs with
//   TILECRAFT_COMPILE_TESTS=full ./tilecraft_tests --gtest_filter='SpaceCompile*'
// TILECRAFT_SPACE_SEED=<n> picks another sample (the seed is printed).
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "compile/test_support.hpp"
#include "compile_tests.hpp"
#include "runtime/simt_kernel.hpp"
#include "tilecraft/discover/gemm_space.hpp"
#include "tilecraft/tilecraft.hpp"

namespace tilecraft::discover {
namespace {
namespace TILECRAFT_TEST_FILE {

unsigned sample_seed() {
  const char* value = std::getenv("TILECRAFT_SPACE_SEED");
  return value != nullptr ? static_cast<unsigned>(std::strtoul(value, nullptr, 10)) : 20261122u;
}

std::vector<std::shared_ptr<GemmOperation>> sample(int arch, size_t count, std::mt19937& rng) {
  const GemmSpace& space = GemmSpace::of(arch);
  const std::vector<uint32_t>& all = space.all_instances();
  std::uniform_int_distribution<size_t> pick(0, all.size() - 1);
  std::vector<std::shared_ptr<GemmOperation>> operations;
  for (size_t i = 0; i < count; ++i) {
    operations.push_back(GemmOperation::make(space.description(all[pick(rng)])).value());
  }
  return operations;
}

void compile_sample(size_t per_arch) {
  const std::string missing = runtime_test::missing_toolchain();
  if (!missing.empty()) GTEST_SKIP() << missing;
  const unsigned seed = sample_seed();
  std::printf("space sample: %zu SM80 + %zu SM90 instances, TILECRAFT_SPACE_SEED=%u\n", per_arch,
              per_arch, seed);
  std::mt19937 rng(seed);
  auto operations = sample(80, per_arch, rng);
  for (auto& op : sample(90, per_arch, rng)) operations.push_back(op);
  compile::testing::ScopedCache cache("space-compile", /*compile_jobs=*/2);
  const Status status = compile_operations(operations);
  for (const auto& op : operations) {
    EXPECT_TRUE(op->is_compiled())
        << op->procedural_name() << " did not compile: " << status.message();
  }
}

TEST(SpaceCompile, CiSample) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "one random SM80 and one random SM90 instance");
  compile_sample(1);
}

// One random SM80 instance of each CUDA-core and f64 family (f32 SIMT, f64 SIMT, f64 tensor
// cores), whose tiles come from CUTLASS's generator rather than from the rules.
TEST(SpaceCompile, EverySm80MathFamily) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "one instance of each SM80 CUDA-core and f64 family");
  const std::string missing = runtime_test::missing_toolchain();
  if (!missing.empty()) GTEST_SKIP() << missing;
  const GemmSpace& space = GemmSpace::of(80);
  std::mt19937 rng(sample_seed());
  std::vector<std::shared_ptr<GemmOperation>> operations;
  for (const auto& [math, element] :
       {std::pair{MathFamily::simt, DataType::f32}, std::pair{MathFamily::simt, DataType::f64},
        std::pair{MathFamily::tensor_op_f64, DataType::f64}}) {
    std::vector<size_t> instances;
    for (uint32_t i : space.all_instances()) {
      const GemmOperands& o = space.operands_of(i);
      if (o.math == math && o.a == element) instances.push_back(i);
    }
    ASSERT_FALSE(instances.empty());
    std::uniform_int_distribution<size_t> pick(0, instances.size() - 1);
    operations.push_back(GemmOperation::make(space.description(instances[pick(rng)])).value());
  }
  compile::testing::ScopedCache cache("space-compile-families", /*compile_jobs=*/2);
  const Status status = compile_operations(operations);
  for (const auto& op : operations) {
    EXPECT_TRUE(op->is_compiled())
        << op->procedural_name() << " did not compile: " << status.message();
  }
}

TEST(SpaceCompile, RandomForty) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(
      full, "20 random SM80 and 20 random SM90 instances of the configuration spaces");
  compile_sample(20);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::discover
