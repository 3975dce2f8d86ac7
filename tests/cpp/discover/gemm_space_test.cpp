// The GEMM configuration spaces: size, the validity and uniqueness of every listed instance, and
// operand indexing.
#include "tilecraft/discover/gemm_space.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace tilecraft::discover {
namespace {
namespace TILECRAFT_TEST_FILE {

using enum DataType;

TEST(GemmSpace, Sm90ListsTensOfThousandsOfKernels) {
  const GemmSpace& space = GemmSpace::of(90);
  EXPECT_GE(space.size(), 10000u);
  EXPECT_EQ(space.arch(), 90);
}

TEST(GemmSpace, EveryInstanceIsValidAndNamedUniquely) {
  for (int arch : {80, 90}) {
    const GemmSpace& space = GemmSpace::of(arch);
    std::set<std::string> names;
    for (uint32_t i : space.all_instances()) {
      const GemmDescription d = space.description(i);  // throws if invalid
      ASSERT_EQ(d.arch, arch);
      ASSERT_TRUE(names.insert(d.procedural_name()).second)
          << "two instances named " << d.procedural_name();
    }
  }
}

TEST(GemmSpace, EveryOperandSetHasKernelsAndIndexesThem) {
  for (int arch : {80, 90}) {
    const GemmSpace& space = GemmSpace::of(arch);
    size_t total = 0;
    for (size_t set = 0; set < space.operand_sets().size(); ++set) {
      const GemmOperands& o = space.operand_sets()[set];
      const auto& instances = space.instances_of(set);
      EXPECT_FALSE(instances.empty())
          << "arch " << arch << ": no kernel for " << short_name(o.a) << " x " << short_name(o.b)
          << " -> " << short_name(o.out) << " acc " << short_name(o.accumulator);
      for (uint32_t i : instances) ASSERT_EQ(space.operands_of(i), o);
      total += instances.size();
    }
    EXPECT_EQ(total, space.size());
  }
}

TEST(GemmSpace, Sm90OperandsFollowTmaAndWgmmaRules) {
  const GemmSpace& space = GemmSpace::of(90);
  for (const GemmOperands& o : space.operand_sets()) {
    EXPECT_EQ(o.alignment_a * size_in_bits(o.a), 128) << "TMA needs 16-byte alignment";
    if (size_in_bits(o.a) != 16) {
      EXPECT_EQ(o.layout_a, Layout::RowMajor) << "wgmma reads 8/32-bit A K-major";
      EXPECT_EQ(o.layout_b, Layout::ColumnMajor);
    }
    EXPECT_EQ(o.scaled, o.a == e4m3 || o.a == e5m2);
  }
}

TEST(GemmSpace, Sm80OffersNarrowAlignments) {
  const GemmSpace& space = GemmSpace::of(80);
  std::set<int> alignments;
  for (const GemmOperands& o : space.operand_sets()) {
    if (o.a == f16) alignments.insert(o.alignment_a);
  }
  EXPECT_EQ(alignments, (std::set<int>{1, 2, 4, 8}));
  size_t narrow = 0;
  for (uint32_t i : space.all_instances()) {
    const GemmOperands& o = space.operands_of(i);
    if (o.math != MathFamily::tensor_op) continue;
    // cp.async copies >= 32 bits; narrower accesses run on the two-stage mainloop only.
    const bool below_32_bits = o.alignment_a * size_in_bits(o.a) < 32;
    EXPECT_EQ(below_32_bits, space.design_of(i).stages == 2)
        << space.description(i).procedural_name();
    narrow += below_32_bits;
  }
  EXPECT_GT(narrow, 0u);
}

TEST(GemmSpace, InstanceNumbersNameTheirOperandSetAndAreCheckedOnTheWayIn) {
  const GemmSpace& space = GemmSpace::of(80);
  const size_t last_set = space.operand_sets().size() - 1;
  for (uint32_t i : space.instances_of(last_set)) {
    EXPECT_EQ(space.operands_of(i), space.operand_sets()[last_set]);
  }
  const uint32_t past = space.instances_of(last_set).back() + 1000000;
  EXPECT_THROW(space.description(past), Error);
  EXPECT_THROW(space.instances_of(last_set + 1), Error);
}

TEST(GemmSpace, RejectsOtherArchitectures) { EXPECT_THROW(GemmSpace::of(75), Error); }

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::discover
