// Custom epilogues (epilogue graphs built in C++) on SM90 GEMM descriptions: what the description
// accepts and refuses, names and cache keys, the lowering to a visitor tree, and the emitted
// Sm90EVT text.
#include <gtest/gtest.h>

#include <string>

#include "emit/device_image_text.hpp"
#include "emit/evt/evt_text.hpp"
#include "emit/evt/evt_tree.hpp"
#include "emit/evt_test_graphs.hpp"
#include "emit/sm90_gemm_parts.hpp"
#include "emit/sm90_test_descriptions.hpp"

namespace tilecraft::emit {
namespace {
namespace TILECRAFT_TEST_FILE {

using namespace tilecraft::sm90_test;
using enum DataType;

// D = relu(alpha * acc + C + bias[n]) * rowscale[m]; Z = acc * 2 (bf16); amax, row sums.
EpilogueGraph residual_graph() {
  EpilogueGraph g;
  const int acc = g.accumulator();
  const int alpha = g.scalar("alpha");
  const int scaled = g.mul(alpha, acc);
  const int c = g.tensor("C", bf16);
  const int bias = g.tensor("bias", f32, Broadcast::column);
  const int rowscale = g.tensor("rowscale", f32, Broadcast::row);
  const int sum = g.add(scaled, c);
  const int biased = g.add(sum, bias);
  const int relu = g.activation(Activation::relu, biased);
  const int d = g.mul(relu, rowscale);
  g.store(d, "D", bf16);
  const int two = g.constant(2.0);
  const int z = g.mul(acc, two);
  g.store(z, "Z", bf16);
  g.reduce(d, ReduceOp::abs_max, ReduceAxis::all, "amax", f32);
  g.reduce(d, ReduceOp::sum, ReduceAxis::row, "rowsum", f32);
  return g;
}

GemmDescription plain_bf16() {
  const MathInstruction m = wgmma({64, 128, 16}, bf16, bf16, f32);
  return gemm(tile({128, 128, 64}, m, 0, {1, 1, 1}, KernelSchedule::TmaWarpSpecializedCooperative),
              tma(bf16, Layout::RowMajor), tma(bf16, Layout::ColumnMajor),
              tma(bf16, Layout::RowMajor), epilogue(bf16, f32));
}

TEST(EpilogueGraphDescription, NamesCarryTheGraphKeyAndEqualGraphsShareThem) {
  const GemmDescription base = plain_bf16();
  auto with = base.with_epilogue_graph(residual_graph());
  ASSERT_TRUE(with) << with.status().message();
  auto again = base.with_epilogue_graph(residual_graph());
  ASSERT_TRUE(again);
  EXPECT_EQ(with->procedural_name(), again->procedural_name());
  EXPECT_NE(with->procedural_name().find("_evt" + residual_graph().key()), std::string::npos);
  EpilogueGraph other = residual_graph();
  other.reduce(0, ReduceOp::max, ReduceAxis::column, "colmax", f32);
  auto different = base.with_epilogue_graph(other);
  ASSERT_TRUE(different) << different.status().message();
  EXPECT_NE(with->procedural_name(), different->procedural_name());
  EXPECT_NE(base.procedural_name(), with->procedural_name());
}

TEST(EpilogueGraphDescription, RefusesWhatTheKernelCannotTake) {
  const GemmDescription base = plain_bf16();
  // D's type must be C's.
  EpilogueGraph f16_d;
  f16_d.store(f16_d.accumulator(), "D", f16);
  auto wrong_type = base.with_epilogue_graph(f16_d);
  ASSERT_FALSE(wrong_type);
  EXPECT_NE(wrong_type.status().message().find("'D' is float16"), std::string::npos)
      << wrong_type.status().message();
  // A graph with only a reduction has no D.
  EpilogueGraph no_store;
  no_store.reduce(no_store.accumulator(), ReduceOp::sum, ReduceAxis::all, "s", f32);
  auto no_d = base.with_epilogue_graph(no_store);
  ASSERT_FALSE(no_d);
  EXPECT_NE(no_d.status().message().find("writes D"), std::string::npos) << no_d.status().message();
  // Reductions accumulate with float32 atomics.
  EpilogueGraph f16_sum;
  const int acc = f16_sum.accumulator();
  f16_sum.store(acc, "D", bf16);
  f16_sum.reduce(acc, ReduceOp::sum, ReduceAxis::row, "s", f16);
  auto f16_reduction = base.with_epilogue_graph(f16_sum);
  ASSERT_FALSE(f16_reduction);
  EXPECT_NE(f16_reduction.status().message().find("Float32"), std::string::npos)
      << f16_reduction.status().message();
  // The functor under a graph is a plain linear combination.
  GemmDescription fused = base;
  fused.epilogue.activation = Activation::relu;
  fused.epilogue.kind = EpilogueKind::LinearCombinationGeneric;
  auto over_fused = fused.with_epilogue_graph(residual_graph());
  ASSERT_FALSE(over_fused);
  EXPECT_NE(over_fused.status().message().find("plain LinearCombination"), std::string::npos)
      << over_fused.status().message();
}

TEST(EvtTree, SinksWrapTheirValueOnceAndSideOutputsAreKept) {
  const EpilogueGraph g = residual_graph();
  const EvtVisitors tree = lower_epilogue_graph(g);
  ASSERT_GE(tree.root, 0);
  EXPECT_EQ(tree.nodes[tree.root].role, EvtRole::root);
  int sinks = 0, keeps = 0;
  for (const EvtNode& n : tree.nodes) {
    sinks += n.role == EvtRole::sink;
    keeps += n.role == EvtRole::keep;
  }
  EXPECT_EQ(sinks, 3);  // Z, amax, rowsum (D is the root)
  EXPECT_EQ(keeps, 1);  // Z does not feed D
  // Operands in node order, D left out; scalars apart.
  const std::vector<int> operands = g.operand_nodes();
  ASSERT_EQ(operands.size(), 6u);  // C, bias, rowscale, Z, amax, rowsum
  EXPECT_EQ(g.nodes()[operands[3]].name, "Z");
  EXPECT_EQ(scalar_index(g, g.scalar_nodes()[0]), 0);
}

TEST(EvtFastMath, ActivationsTakeTheirFastFormsAndTheGraphSaysSo) {
  const EpilogueGraph fast = testing::fast_math_graph(true, DataType::bf16);
  EpilogueGraph precise = fast;
  precise.set_fast_math(false);
  EXPECT_NE(fast, precise);
  EXPECT_NE(fast.key(), precise.key());
  EXPECT_TRUE(fast.to_string().ends_with(" fast_math")) << fast.to_string();
  EXPECT_EQ(precise.to_string().find("fast_math"), std::string::npos);
  auto d = plain_bf16().with_epilogue_graph(fast);
  ASSERT_TRUE(d) << d.status().message();
  auto p = plain_bf16().with_epilogue_graph(precise);
  ASSERT_TRUE(p) << p.status().message();
  EXPECT_NE(d->procedural_name(), p->procedural_name());
  const std::string fast_entry = sm90_entry_text({*d}, 0);
  const std::string precise_entry = sm90_entry_text({*p}, 0);
  for (const char* name : {"Tanh", "Sigmoid", "Silu", "GeluTanh"}) {
    EXPECT_NE(fast_entry.find("tc_evt::" + std::string(name) + "Fast,"), std::string::npos) << name;
    EXPECT_NE(precise_entry.find("tc_evt::" + std::string(name) + ","), std::string::npos) << name;
    EXPECT_EQ(precise_entry.find("Fast,"), std::string::npos);
  }
  // gelu's fast form replaces erff; relu has none.
  EpilogueGraph with_gelu;
  const int gelu = with_gelu.activation(Activation::gelu, with_gelu.accumulator());
  with_gelu.store(with_gelu.activation(Activation::relu, gelu), "D", DataType::bf16);
  with_gelu.set_fast_math(true);
  auto g = plain_bf16().with_epilogue_graph(with_gelu);
  ASSERT_TRUE(g) << g.status().message();
  const std::string gelu_entry = sm90_entry_text({*g}, 0);
  EXPECT_NE(gelu_entry.find("tc_evt::GeluFast,"), std::string::npos);
  EXPECT_NE(gelu_entry.find("tc_evt::Relu,"), std::string::npos);
  for (Activation a : {Activation::tanh, Activation::sigmoid, Activation::silu, Activation::gelu,
                       Activation::gelu_tanh}) {
    EXPECT_TRUE(has_fast_form(a));
  }
  for (Activation a : {Activation::relu, Activation::hardswish, Activation::leaky_relu,
                       Activation::clamp, Activation::identity}) {
    EXPECT_FALSE(has_fast_form(a));
  }
}

TEST(Sm90EvtEmission, EntryIsAVisitorTreeReadingItsFirstFullInputAsTheSourceC) {
  auto d = plain_bf16().with_epilogue_graph(residual_graph());
  ASSERT_TRUE(d) << d.status().message();
  const std::string entry = sm90_entry_text({*d}, 0);
  for (const char* part :
       {"using ElementC = cutlass::bfloat16_t;", "using ElementD = cutlass::bfloat16_t;",
        "cutlass::epilogue::fusion::Sm90SrcFetch<ElementC>",
        "Sm90RowBroadcast<0, EvtTileShape, float", "Sm90ColBroadcast<0, EvtTileShape, float",
        "Sm90AuxStore<", "Sm90ScalarReduction<tc_evt::ReduceAbsMax, cutlass::atomic_maximum",
        "Sm90ColReduction<cutlass::plus, cutlass::plus, cutlass::atomic_add", "tc_evt::First",
        "a.header.epilogue_scalars[0]", "ElementCompute(float(2))",
        // C is operand 0 of the graph: the entry's traits say so, after the promotion interval.
        ", 6, 1, true, 0, 0};"}) {
    EXPECT_NE(entry.find(part), std::string::npos) << "missing: " << part;
  }
  // C's TMA loads are the collective epilogue's: no aux load of its own.
  EXPECT_EQ(entry.find("Sm90AuxLoad<"), std::string::npos);
  EXPECT_EQ(entry.find("AuxLoadDescriptor<"), std::string::npos);

  // An input of another type than D's stays an aux load, and the kernel has no source C.
  EpilogueGraph f32_input;
  const int sum = f32_input.add(f32_input.accumulator(), f32_input.tensor("C", f32));
  f32_input.store(sum, "D", bf16);
  auto other = plain_bf16().with_epilogue_graph(f32_input);
  ASSERT_TRUE(other) << other.status().message();
  const std::string aux = sm90_entry_text({*other}, 0);
  for (const char* part : {"using ElementC = void;", "Sm90AuxLoad<",
                           "AuxLoadDescriptor<EpilogueDescriptor", ", 1, 0, false, 0, -1};"}) {
    EXPECT_NE(aux.find(part), std::string::npos) << "missing: " << part << "\n" << aux;
  }
  EXPECT_EQ(aux.find("Sm90SrcFetch"), std::string::npos);
  // Plain descriptions keep their fusion operation and source C.
  const std::string plain = sm90_entry_text({plain_bf16()}, 0);
  EXPECT_EQ(plain.find("Sm90AuxLoad"), std::string::npos);
  EXPECT_NE(plain.find("using ElementD = ElementC;"), std::string::npos);
  // The module carries the graph's functions once.
  const std::string module = emit_gemm_module({{*d}, {*d}});
  const std::string marker = jit_include("evt_functions.cuh");
  const size_t first = module.find(marker);
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(module.find(marker, first + 1), std::string::npos);
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft::emit
