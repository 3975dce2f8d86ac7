// A randomized (property-based) test of the description layer's C++ API.
//
// Each case starts from a valid description of the configuration spaces (SM80 or SM90) and
// replaces one to three of its fields with random values: ints of every size (huge, negative,
// zero, plausible) and enum values (mostly enumerators, sometimes any byte cast to the enum).
// It then builds the description again through the public factories, in order:
// MathInstruction::make, TileDescription::make / make_sm90, TensorDescription::make (A, B, C),
// the EpilogueFunctor factory of its kind (and with_fusion), GemmDescription::make, and for an
// accepted description GemmOperation::make and epilogue_type with random alpha, beta and
// activation arguments.
// Properties:
//   - nothing crashes and nothing throws;
//   - a refusal is a Status of code invalid-argument or not-supported whose message names an
//     argument of the call that refused (a field replaced by an out-of-range enum value is named
//     exactly);
//   - an accepted description yields a procedural name, validates again and makes an operation;
//   - a random sample of the accepted descriptions that differ from their starting point is
//     emitted and compiled with nvcc (AcceptedSampleCompiles): one SM80 and one SM90 per run
//     (about a minute), TILECRAFT_RANDOM_COMPILE_COUNT=<n> for n of each (20 with
//     TILECRAFT_COMPILE_TESTS=full, none with few), all of an arch in one module;
//     TILECRAFT_RANDOM_COMPILE_ARCH=80 (or 90) compiles one architecture's sample only.
// Each run draws a fresh seed and prints it; TILECRAFT_RANDOM_SEED=<n> replays a run, and
// TILECRAFT_RANDOM_CASES=<n> sets the number of cases (default 100000).
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "compile_tests.hpp"
#include "emit/module_compile_support.hpp"
#include "runtime/simt_kernel.hpp"
#include "tilecraft/describe/gemm_operation.hpp"
#include "tilecraft/discover/gemm_space.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::strtoull(value, nullptr, 10) : fallback;
}

// One seed per process, printed once, so every test of a run draws the same cases.
uint64_t run_seed() {
  static const uint64_t seed = [] {
    const uint64_t s = env_number("TILECRAFT_RANDOM_SEED", std::random_device{}());
    std::printf("describe randomized: TILECRAFT_RANDOM_SEED=%llu\n",
                static_cast<unsigned long long>(s));
    std::fflush(stdout);  // seen even if a case crashes the process
    return s;
  }();
  return seed;
}

class Random {
 public:
  explicit Random(uint64_t seed) : engine_(seed) {}

  int below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(engine_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(engine_) < p; }

  // Plausible values, edges, and anything at all.
  int any_int() {
    static constexpr int kInteresting[] = {0,
                                           1,
                                           2,
                                           3,
                                           4,
                                           5,
                                           6,
                                           7,
                                           8,
                                           12,
                                           16,
                                           24,
                                           32,
                                           40,
                                           48,
                                           64,
                                           80,
                                           90,
                                           96,
                                           128,
                                           192,
                                           256,
                                           257,
                                           512,
                                           1024,
                                           4096,
                                           65536,
                                           65537,
                                           1 << 20,
                                           1 << 24,
                                           1 << 27,
                                           1 << 30,
                                           -1,
                                           -2,
                                           -8,
                                           -128,
                                           -65536,
                                           1 << 29,
                                           3 << 27,
                                           16384,
                                           std::numeric_limits<int>::max(),
                                           std::numeric_limits<int>::min()};
    switch (below(3)) {
      case 0:
        return kInteresting[below(std::size(kInteresting))];
      case 1:
        return std::uniform_int_distribution<int>(-4, 300)(engine_);
      default:
        return std::uniform_int_distribution<int>(std::numeric_limits<int>::min(),
                                                  std::numeric_limits<int>::max())(engine_);
    }
  }
  // A power of two up to 256 (alignments, counts), or any int.
  int small_power_or_any() { return chance(0.6) ? 1 << below(9) : any_int(); }
  // A tile extent: mostly multiples of 8 up to 256, sometimes anything.
  int extent() { return chance(0.7) ? 8 * (1 + below(32)) : any_int(); }
  std::array<int, 3> triple(int (Random::*one)()) {
    return {(this->*one)(), (this->*one)(), (this->*one)()};
  }

  // An enumerator, or (15%) any byte cast to the enum.
  template <typename E, size_t N>
  E enumerator(const E (&all)[N], bool* out_of_range = nullptr) {
    if (chance(0.15)) {
      const E e = static_cast<E>(below(256));
      if (out_of_range != nullptr) *out_of_range = !is_valid(e);
      return e;
    }
    return all[below(N)];
  }

 private:
  std::mt19937_64 engine_;
};

constexpr OpClass kOpClasses[] = {OpClass::Simt, OpClass::TensorOp};
constexpr MathOperation kMathOperations[] = {
    MathOperation::multiply_add,           MathOperation::multiply_add_saturate,
    MathOperation::multiply_add_fast_f32,  MathOperation::multiply_add_fast_f16,
    MathOperation::multiply_add_fast_bf16, MathOperation::multiply_add_fast_accum};
constexpr KernelSchedule kKernelSchedules[] = {
    KernelSchedule::Auto, KernelSchedule::TmaWarpSpecialized,
    KernelSchedule::TmaWarpSpecializedPingpong, KernelSchedule::TmaWarpSpecializedCooperative};
constexpr EpilogueSchedule kEpilogueSchedules[] = {EpilogueSchedule::Auto,
                                                   EpilogueSchedule::TmaWarpSpecialized,
                                                   EpilogueSchedule::TmaWarpSpecializedCooperative};
constexpr TileScheduler kTileSchedulers[] = {TileScheduler::Persistent, TileScheduler::StreamK};
constexpr EpilogueKind kEpilogueKinds[] = {
    EpilogueKind::LinearCombination, EpilogueKind::LinearCombinationClamp,
    EpilogueKind::FastLinearCombinationClamp, EpilogueKind::LinearCombinationGeneric};
constexpr Activation kActivations[] = {
    Activation::identity,  Activation::relu, Activation::leaky_relu, Activation::tanh,
    Activation::sigmoid,   Activation::silu, Activation::hardswish,  Activation::gelu,
    Activation::gelu_tanh, Activation::clamp};
constexpr BiasKind kBiasKinds[] = {BiasKind::none, BiasKind::per_row, BiasKind::per_column};

// The parameters of each factory, as its messages name them.
const std::vector<std::string> kMathNames = {"instruction_shape", "element_a",
                                             "element_b",         "element_accumulator",
                                             "opcode_class",      "math_operation"};
const std::vector<std::string> kTileNames = {
    "threadblock_shape", "stages",          "warp_count",        "math_instruction",
    "cluster_shape",     "kernel_schedule", "epilogue_schedule", "tile_scheduler"};
const std::vector<std::string> kTensorNames = {"element", "layout", "alignment"};
const std::vector<std::string> kEpilogueNames = {"kind",
                                                 "element_output",
                                                 "elements_per_access",
                                                 "element_accumulator",
                                                 "element_epilogue",
                                                 "activation",
                                                 "bias",
                                                 "element_bias",
                                                 "aux",
                                                 "element_aux",
                                                 "scales"};
const std::vector<std::string> kGemmNames = {
    "arch", "tile_description", "A", "B", "C", "epilogue_functor", "swizzling_functor", "layouts"};

// Whether `message` has `name` as a word (not inside a longer identifier).
bool names(const std::string& message, const std::string& name) {
  const auto is_word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  for (size_t at = message.find(name); at != std::string::npos; at = message.find(name, at + 1)) {
    const size_t end = at + name.size();
    if ((at == 0 || !is_word(message[at - 1])) &&
        (end == message.size() || !is_word(message[end]))) {
      return true;
    }
  }
  return false;
}

struct Tally {
  std::map<std::string, int> refused_by;  // call -> refusals
  int accepted = 0;
  std::vector<GemmDescription> accepted_changed[2];  // [0]: SM80, [1]: SM90
};

// The raw fields of a GemmDescription, to be replaced one by one and built again.
struct Fields {
  int arch = 80;
  std::array<int, 3> instruction_shape{};
  DataType element_a{}, element_b{}, element_accumulator{};
  OpClass opcode_class{};
  MathOperation math_operation{};
  std::array<int, 3> threadblock_shape{}, warp_count{}, cluster_shape{};
  int stages = 0;
  KernelSchedule kernel_schedule{};
  EpilogueSchedule epilogue_schedule{};
  TileScheduler tile_scheduler{};
  std::array<DataType, 3> operand_element{};
  std::array<Layout, 3> operand_layout{};
  std::array<int, 3> operand_alignment{};
  EpilogueKind kind{};
  DataType element_output{}, epilogue_accumulator{}, element_epilogue{};
  int elements_per_access = 1;
  Activation activation{};
  EpilogueFusion fusion;
  Swizzle swizzle{};

  static Fields of(const GemmDescription& d) {
    Fields f;
    const MathInstruction& m = d.tile.math_instruction;
    f.arch = d.arch;
    f.instruction_shape = m.instruction_shape;
    f.element_a = m.element_a;
    f.element_b = m.element_b;
    f.element_accumulator = m.element_accumulator;
    f.opcode_class = m.opcode_class;
    f.math_operation = m.math_operation;
    f.threadblock_shape = d.tile.threadblock_shape;
    f.warp_count = d.tile.warp_count;
    f.cluster_shape = d.tile.cluster_shape;
    f.stages = d.tile.stages;
    f.kernel_schedule = d.tile.kernel_schedule;
    f.epilogue_schedule = d.tile.epilogue_schedule;
    f.tile_scheduler = d.tile.tile_scheduler;
    int i = 0;
    for (const TensorDescription* t : {&d.A, &d.B, &d.C}) {
      f.operand_element[i] = t->element;
      f.operand_layout[i] = t->layout;
      f.operand_alignment[i++] = t->alignment;
    }
    f.kind = d.epilogue.kind;
    f.element_output = d.epilogue.element_output;
    f.epilogue_accumulator = d.epilogue.element_accumulator;
    f.element_epilogue = d.epilogue.element_epilogue;
    f.elements_per_access = d.epilogue.elements_per_access;
    f.activation = d.epilogue.activation;
    f.fusion = d.epilogue.fusion;
    f.swizzle = d.swizzle;
    return f;
  }
};

// What mutate() replaced: the field, and whether it was given an out-of-range enum value (a
// refusal must then name exactly it).
struct Replaced {
  std::string field;
  bool out_of_range = false;
};

// Replaces one random field with a random value.
Replaced mutate(Fields& f, Random& r) {
  auto enum_field = [&r](auto& field, const auto& all, const char* name) -> Replaced {
    bool bad = false;
    field = r.enumerator(all, &bad);
    return {name, bad};
  };
  switch (r.below(27)) {
    case 0:
      f.arch = r.chance(0.5) ? (r.chance(0.5) ? 80 : 90) : r.any_int();
      return {"arch"};
    case 1:
      f.instruction_shape =
          r.chance(0.5) ? r.triple(&Random::small_power_or_any)
                        : std::array<int, 3>{64, 8 * (1 + r.below(32)), r.small_power_or_any()};
      return {"instruction_shape"};
    case 2:
      return enum_field(f.element_a, kAllDataTypes, "element_a");
    case 3:
      return enum_field(f.element_b, kAllDataTypes, "element_b");
    case 4:
      return enum_field(f.element_accumulator, kAllDataTypes, "element_accumulator");
    case 5:
      return enum_field(f.opcode_class, kOpClasses, "opcode_class");
    case 6:
      return enum_field(f.math_operation, kMathOperations, "math_operation");
    case 7:
      f.threadblock_shape = r.triple(&Random::extent);
      return {"threadblock_shape"};
    case 8:
      f.threadblock_shape[r.below(3)] = r.extent();
      return {"threadblock_shape"};
    case 9:
      f.warp_count = r.chance(0.7) ? std::array<int, 3>{1 << r.below(4), 1 << r.below(4), 1}
                                   : r.triple(&Random::any_int);
      return {"warp_count"};
    case 10:
      f.cluster_shape = r.chance(0.7) ? std::array<int, 3>{1 << r.below(3), 1 << r.below(3), 1}
                                      : r.triple(&Random::any_int);
      return {"cluster_shape"};
    case 11:
      f.stages = r.chance(0.6) ? r.below(14) : r.any_int();
      return {"stages"};
    case 12:
      return enum_field(f.kernel_schedule, kKernelSchedules, "kernel_schedule");
    case 13:
      return enum_field(f.epilogue_schedule, kEpilogueSchedules, "epilogue_schedule");
    case 14:
      return enum_field(f.tile_scheduler, kTileSchedulers, "tile_scheduler");
    case 15:
      return enum_field(f.operand_element[r.below(3)], kAllDataTypes, "element");
    case 16:
      return enum_field(f.operand_layout[r.below(3)], kAllLayouts, "layout");
    case 17:
      f.operand_alignment[r.below(3)] = r.small_power_or_any();
      return {"alignment"};
    case 18:
      return enum_field(f.kind, kEpilogueKinds, "kind");
    case 19:
      return enum_field(f.element_output, kAllDataTypes, "element_output");
    case 20:
      return enum_field(f.epilogue_accumulator, kAllDataTypes, "element_accumulator");
    case 21:
      return enum_field(f.element_epilogue, kAllDataTypes, "element_epilogue");
    case 22:
      f.elements_per_access = r.small_power_or_any();
      return {"elements_per_access"};
    case 23:
      return enum_field(f.activation, kActivations, "activation");
    case 24:
      if (r.chance(0.5)) return enum_field(f.fusion.bias, kBiasKinds, "bias");
      f.fusion.aux_output = r.chance(0.5);
      f.fusion.per_tensor_scales = r.chance(0.5);
      return {"aux/scales"};
    case 25:
      return r.chance(0.5) ? enum_field(f.fusion.element_bias, kAllDataTypes, "element_bias")
                           : enum_field(f.fusion.element_aux, kAllDataTypes, "element_aux");
    default:
      return enum_field(f.swizzle, kAllSwizzles, "swizzling_functor");
  }
}

// Checks a refusal: the code, and that the message names an argument of the call (exactly the
// out-of-range enum field, when one was given).
void check_refusal(const std::string& call, const Status& status,
                   const std::vector<std::string>& call_names, const std::string& must_name,
                   const std::string& trace) {
  EXPECT_TRUE(status.code() == StatusCode::kInvalidArgument ||
              status.code() == StatusCode::kNotSupported)
      << call << " refused with code " << to_string(status.code()) << ": " << status.message()
      << trace;
  bool named = false;
  for (const std::string& name : call_names) named = named || names(status.message(), name);
  EXPECT_TRUE(named) << call << "'s message names none of its arguments: " << status.message()
                     << trace;
  if (!must_name.empty()) {
    EXPECT_TRUE(names(status.message(), must_name))
        << call << " refused an out-of-range " << must_name
        << " without naming it: " << status.message() << trace;
  }
}

template <typename T>
bool refused(const std::string& call, const Result<T>& result,
             const std::vector<std::string>& call_names, const std::string& must_name,
             const std::string& trace, Tally& tally) {
  if (result) return false;
  check_refusal(call, result.status(), call_names, must_name, trace);
  ++tally.refused_by[call];
  return true;
}

std::vector<std::string> joined(std::initializer_list<const std::vector<std::string>*> lists) {
  std::vector<std::string> out;
  for (const auto* list : lists) out.insert(out.end(), list->begin(), list->end());
  return out;
}

Result<EpilogueFunctor> make_epilogue(const Fields& f) {
  switch (f.kind) {
    case EpilogueKind::LinearCombination:
      return EpilogueFunctor::linear_combination(f.element_output, f.elements_per_access,
                                                 f.epilogue_accumulator, f.element_epilogue);
    case EpilogueKind::LinearCombinationClamp:
      return EpilogueFunctor::linear_combination_clamp(f.element_output, f.elements_per_access,
                                                       f.epilogue_accumulator, f.element_epilogue);
    case EpilogueKind::FastLinearCombinationClamp:
      return EpilogueFunctor::fast_linear_combination_clamp(f.element_output,
                                                            f.elements_per_access);
    case EpilogueKind::LinearCombinationGeneric:
      return EpilogueFunctor::linear_combination_generic(
          f.activation, f.element_output, f.elements_per_access, f.epilogue_accumulator,
          f.element_epilogue);
  }
  // An out-of-range kind: build the functor by hand and let validation judge it.
  EpilogueFunctor functor{f.kind,
                          f.element_output,
                          f.elements_per_access,
                          f.epilogue_accumulator,
                          f.element_epilogue,
                          f.activation,
                          {}};
  if (Status status = functor.validate(); !status) return status;
  return functor;
}

// One case: a space description with one to three fields replaced, built again.
void run_case(Random& r, Tally& tally) {
  const int arch = r.chance(0.5) ? 80 : 90;
  const discover::GemmSpace& space = discover::GemmSpace::of(arch);
  const size_t instance =
      space.all_instances()[static_cast<size_t>(r.below(static_cast<int>(space.size())))];
  const GemmDescription base = space.description(instance);
  Fields f = Fields::of(base);
  const int mutations = 1 + r.below(3);
  std::string replaced_fields;
  Replaced first;
  for (int i = 0; i < mutations; ++i) {
    const Replaced replaced = mutate(f, r);
    if (i == 0) first = replaced;
    replaced_fields +=
        (i ? ", " : "") + replaced.field + (replaced.out_of_range ? " (out of range)" : "");
  }
  // With one field replaced by an out-of-range enum value, that field is what is refused (with
  // several, another may be refused first).
  const std::string must_name = mutations == 1 && first.out_of_range ? first.field : "";
  const std::string trace = "\n  case: arch " + std::to_string(arch) + " instance " +
                            std::to_string(instance) + " (" + base.procedural_name() + ") with " +
                            replaced_fields + " replaced; seed " + std::to_string(run_seed());

  const auto math = MathInstruction::make(f.instruction_shape, f.element_a, f.element_b,
                                          f.element_accumulator, f.opcode_class, f.math_operation);
  if (refused("MathInstruction::make", math, kMathNames, must_name, trace, tally)) return;
  const auto tile =
      math->is_wgmma()
          ? TileDescription::make_sm90(f.threadblock_shape, f.stages, f.cluster_shape, *math,
                                       f.kernel_schedule, f.epilogue_schedule, f.tile_scheduler)
          : TileDescription::make(f.threadblock_shape, f.stages, f.warp_count, *math);
  if (refused("TileDescription::make", tile, kTileNames, must_name, trace, tally)) return;
  std::array<TensorDescription, 3> operands;
  for (int i = 0; i < 3; ++i) {
    const auto t =
        TensorDescription::make(f.operand_element[i], f.operand_layout[i], f.operand_alignment[i]);
    if (refused("TensorDescription::make", t, kTensorNames, must_name, trace, tally)) return;
    operands[i] = *t;
  }
  auto epilogue = make_epilogue(f);
  if (refused("EpilogueFunctor factory", epilogue, kEpilogueNames, must_name, trace, tally)) {
    return;
  }
  if (f.fusion.any() || f.fusion != EpilogueFusion{}) {
    epilogue = epilogue->with_fusion(f.fusion);
    if (refused("EpilogueFunctor::with_fusion", epilogue, kEpilogueNames, must_name, trace,
                tally)) {
      return;
    }
  }
  const auto gemm = GemmDescription::make(f.arch, *tile, operands[0], operands[1], operands[2],
                                          *epilogue, f.swizzle);
  const auto gemm_names = joined({&kGemmNames, &kEpilogueNames, &kTensorNames, &kTileNames});
  if (refused("GemmDescription::make", gemm, gemm_names, must_name, trace, tally)) return;

  ++tally.accepted;
  EXPECT_TRUE(gemm->validate()) << gemm->validate().message() << trace;
  const std::string name = gemm->procedural_name();
  EXPECT_EQ(name.rfind("tilecraft_sm" + std::to_string(gemm->arch) + "_", 0), 0u) << name << trace;
  EXPECT_FALSE(tile->procedural_name().empty()) << trace;
  // The runtime operation takes it as it is, and checks the epilogue's runtime values.
  const auto op = GemmOperation::make(*gemm);
  ASSERT_TRUE(op) << op.status().message() << trace;
  EXPECT_EQ((*op)->procedural_name(), name) << trace;
  std::vector<double> args(static_cast<size_t>(r.below(4)));
  for (double& a : args) a = r.chance(0.1) ? std::nan("") : r.any_int() / 7.0;
  const double alpha = r.chance(0.1) ? INFINITY : r.any_int() / 3.0;
  const auto params = (*op)->epilogue_type(alpha, r.any_int() / 5.0, args);
  if (!params) {
    check_refusal("GemmOperation::epilogue_type", params.status(), {"output_op"}, "output_op",
                  trace);
  }
  if (*gemm != base) tally.accepted_changed[gemm->arch == 90].push_back(*gemm);
}

Tally explore(uint64_t seed, int cases) {
  Random r(seed);
  Tally tally;
  // Stops at the first failing case (TILECRAFT_RANDOM_KEEP_GOING=1: runs them all).
  const bool keep_going = env_number("TILECRAFT_RANDOM_KEEP_GOING", 0) != 0;
  for (int i = 0; i < cases && (keep_going || !::testing::Test::HasFailure()); ++i) {
    try {
      run_case(r, tally);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "case " << i << " threw: " << e.what() << " (seed " << seed << ")";
    }
  }
  return tally;
}

int case_count() { return static_cast<int>(env_number("TILECRAFT_RANDOM_CASES", 100000)); }

TEST(DescribeRandomized, RefusalsNameAnArgumentAndAcceptedDescriptionsHaveNames) {
  const Tally tally = explore(run_seed(), case_count());
  std::printf(
      "describe randomized: %d cases, %d accepted (%zu SM80 + %zu SM90 changed from "
      "their start);",
      case_count(), tally.accepted, tally.accepted_changed[0].size(),
      tally.accepted_changed[1].size());
  for (const auto& [call, count] : tally.refused_by) std::printf(" %s %d,", call.c_str(), count);
  std::printf("\n");
  // The generator reaches every stage: each factory refuses some cases, and some pass them all.
  EXPECT_GT(tally.accepted, case_count() / 50);
  EXPECT_EQ(tally.refused_by.size(), 6u);
  EXPECT_FALSE(tally.accepted_changed[0].empty());
  EXPECT_FALSE(tally.accepted_changed[1].empty());
}

// Fully random arguments, with no valid starting point: the factories refuse almost all of them,
// by name, and never crash.
TEST(DescribeRandomized, FullyRandomArgumentsNeverCrash) {
  Random r(run_seed() ^ 0x9e3779b97f4a7c15ull);
  Tally tally;
  for (int i = 0; i < case_count() / 4; ++i) {
    const std::string trace =
        "\n  fully random case " + std::to_string(i) + "; seed " + std::to_string(run_seed());
    const auto math = MathInstruction::make(
        r.triple(&Random::any_int), r.enumerator(kAllDataTypes), r.enumerator(kAllDataTypes),
        r.enumerator(kAllDataTypes), r.enumerator(kOpClasses), r.enumerator(kMathOperations));
    refused("MathInstruction::make", math, kMathNames, "", trace, tally);
    const MathInstruction any_math =
        math ? *math
             : MathInstruction::make({1, 1, 1}, DataType::f32, DataType::f32, DataType::f32,
                                     OpClass::Simt, MathOperation::multiply_add)
                   .value();
    refused("TileDescription::make",
            TileDescription::make(r.triple(&Random::any_int), r.any_int(),
                                  r.triple(&Random::any_int), any_math),
            kTileNames, "", trace, tally);
    refused("TileDescription::make_sm90",
            TileDescription::make_sm90(
                r.triple(&Random::any_int), r.any_int(), r.triple(&Random::any_int), any_math,
                r.enumerator(kKernelSchedules), r.enumerator(kEpilogueSchedules),
                r.enumerator(kTileSchedulers)),
            kTileNames, "", trace, tally);
    refused("TensorDescription::make",
            TensorDescription::make(r.enumerator(kAllDataTypes), r.enumerator(kAllLayouts),
                                    r.any_int()),
            kTensorNames, "", trace, tally);
    Fields f;
    f.kind = r.enumerator(kEpilogueKinds);
    f.element_output = r.enumerator(kAllDataTypes);
    f.epilogue_accumulator = r.enumerator(kAllDataTypes);
    f.element_epilogue = r.enumerator(kAllDataTypes);
    f.elements_per_access = r.any_int();
    f.activation = r.enumerator(kActivations);
    refused("EpilogueFunctor factory", make_epilogue(f), kEpilogueNames, "", trace, tally);
    GemmDescription raw;  // every field random, validated as a C++ caller might build it
    raw.arch = r.any_int();
    raw.tile.threadblock_shape = r.triple(&Random::any_int);
    raw.tile.warp_count = r.triple(&Random::any_int);
    raw.tile.stages = r.any_int();
    raw.tile.math_instruction = any_math;
    raw.A.alignment = r.any_int();
    raw.swizzle = r.enumerator(kAllSwizzles);
    const Status status = raw.validate();
    if (!status) {
      check_refusal("GemmDescription::validate", status,
                    joined({&kGemmNames, &kTileNames, &kTensorNames, &kEpilogueNames}), "", trace);
    }
    if (::testing::Test::HasFailure() && env_number("TILECRAFT_RANDOM_KEEP_GOING", 0) == 0) {
      return;
    }
  }
}

// A sample of the accepted descriptions that differ from where they started compiles.
TEST(DescribeRandomized, AcceptedSampleCompiles) {
  TILECRAFT_COMPILE_TESTS_AT_LEAST(standard, "a random sample of accepted descriptions");
  const std::string missing = runtime_test::missing_toolchain();
  if (!missing.empty()) GTEST_SKIP() << missing;
  const Tally tally = explore(run_seed(), case_count());
  const size_t count = env_number("TILECRAFT_RANDOM_COMPILE_COUNT",
                                  compile_tests::level() == compile_tests::Level::full ? 20 : 1);
  Random r(run_seed() + 1);
  // TILECRAFT_RANDOM_COMPILE_ARCH=80 or 90: compile that architecture's sample only.
  const uint64_t only_arch = env_number("TILECRAFT_RANDOM_COMPILE_ARCH", 0);
  std::future<void> jobs[2];
  for (int sm90 = 0; sm90 < 2; ++sm90) {
    if (only_arch != 0 && only_arch != (sm90 ? 90u : 80u)) continue;
    const std::vector<GemmDescription>& accepted = tally.accepted_changed[sm90];
    ASSERT_FALSE(accepted.empty());
    emit::compile_testing::ModuleSpec spec{"describe_random_sm" + std::string(sm90 ? "90" : "80"),
                                           {}};
    std::set<std::string> chosen;  // distinct kernels (one module cannot hold one twice)
    for (size_t tries = 0; chosen.size() < count && tries < 100 * count; ++tries) {
      const GemmDescription& d = accepted[r.below(static_cast<int>(accepted.size()))];
      if (!chosen.insert(d.procedural_name()).second) continue;
      std::printf("describe randomized: compiling %s\n", d.procedural_name().c_str());
      spec.entries.push_back({d, emit::GemmEntryKind::kUniversal});
    }
    // SM80 and SM90 compile side by side (one nvcc each).
    jobs[sm90] = std::async(std::launch::async, [spec, sm90] {
      emit::compile_testing::compile_and_check(
          "tilecraft-describe-random-" + std::to_string(sm90) + "-", {spec}, sm90 ? 90 : 80,
          [](const emit::GemmEntry&, const tc_kernel_entry&) {});
    });
  }
  for (auto& job : jobs) {
    if (job.valid()) job.get();
  }
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
