// Grouped GEMM arguments on bad input: every refusal names the problem and the argument, and
// comes before anything is staged or launched (these run without a GPU: the checks precede any
// device work).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "emit/emit_test_descriptions.hpp"
#include "tilecraft/discover/grouped_api.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/runtime/grouped_gemm_arguments.hpp"

namespace tilecraft {
namespace {
namespace TILECRAFT_TEST_FILE {

std::shared_ptr<GemmOperation> f16_grouped() {
  const GemmDescription d = emit::testing::tensorop_f16_tn();
  return GemmOperation::make_grouped(d.arch, d.tile, d.A, d.B, d.C, d.epilogue, d.swizzle,
                                     SchedulerMode::Device)
      .value();
}

// Host tensors for problems of the given sizes: A row-major (M, K), B column-major (K, N),
// D row-major (M, N), all f16.
struct HostProblems {
  std::vector<std::vector<uint16_t>> storage;
  GroupedGemmProblem problem;

  explicit HostProblems(const std::vector<GemmCoord>& sizes) {
    problem.problem_sizes = sizes;
    problem.output_op = {1.0, 0.0, {}};
    for (const GemmCoord& s : sizes) {
      storage.emplace_back(static_cast<size_t>(s.m) * s.k + 8);
      problem.A.push_back(TensorView::host_contiguous(storage.back().data(), DataType::f16,
                                                      {int64_t{s.m}, int64_t{s.k}}));
      storage.emplace_back(static_cast<size_t>(s.k) * s.n + 8);
      TensorView b = TensorView::host_contiguous(storage.back().data(), DataType::f16,
                                                 {int64_t{s.k}, int64_t{s.n}});
      b.strides = {1, s.k, 0, 0};  // column-major
      problem.B.push_back(b);
      storage.emplace_back(static_cast<size_t>(s.m) * s.n + 8);
      problem.D.push_back(TensorView::host_contiguous(storage.back().data(), DataType::f16,
                                                      {int64_t{s.m}, int64_t{s.n}}));
    }
  }
};

void expect_refused(const Status& status, const std::string& words) {
  ASSERT_FALSE(status) << "expected a refusal mentioning '" << words << "'";
  EXPECT_NE(status.message().find(words), std::string::npos) << status.message();
}

Status make(const GroupedGemmProblem& problem) {
  auto made = GroupedGemmArguments::make(*f16_grouped(), problem);
  return made ? Status::ok() : made.status();
}

TEST(GroupedArguments, ListsOfDifferentLengths) {
  HostProblems p({{64, 64, 64}, {32, 64, 64}});
  p.problem.B.pop_back();
  expect_refused(make(p.problem), "B: expected one tensor per problem (2 problem sizes), got 1");
  HostProblems q({{64, 64, 64}});
  q.problem.C = {q.problem.D[0], q.problem.D[0]};
  expect_refused(make(q.problem), "C: expected one tensor per problem");
  HostProblems none({});
  expect_refused(make(none.problem), "problem_sizes: expected at least one problem");
}

TEST(GroupedArguments, NamesTheProblemOfABadMember) {
  HostProblems p({{64, 64, 64}, {32, 64, 64}, {16, 64, 64}});
  p.problem.A[2].dtype = DataType::bf16;
  expect_refused(make(p.problem), "A[2]: expected float16");

  HostProblems strided({{64, 64, 64}, {32, 64, 64}});
  strided.problem.B[1].strides = {64, 1, 0, 0};  // row-major where ColumnMajor is described
  expect_refused(make(strided.problem), "B[1]: ColumnMajor needs unit stride");

  HostProblems shape({{64, 64, 64}, {32, 64, 64}});
  shape.problem.D[1].shape = {32, 48, 0, 0};
  expect_refused(make(shape.problem), "D[1]: expected shape (32, 64)");

  HostProblems negative({{64, 64, 64}, {1, 64, 64}});
  negative.problem.problem_sizes[1].m = -1;
  expect_refused(make(negative.problem), "problem_sizes[1]: M, N and K must be >= 0");

  HostProblems misaligned({{64, 64, 64}, {32, 64, 60}});
  expect_refused(make(misaligned.problem), "A[1]: leading dimension 60 is not a multiple");
  misaligned.problem.A[1].strides = {64, 1, 0, 0};  // aligned rows, an unaligned extent
  misaligned.problem.B[1].strides = {1, 64, 0, 0};
  expect_refused(make(misaligned.problem), "A[1]: K=60 is not a multiple of the 8-element");

  HostProblems two_devices({{64, 64, 64}, {32, 64, 64}});
  for (auto* list : {&two_devices.problem.A, &two_devices.problem.B, &two_devices.problem.D}) {
    for (TensorView& t : *list) t.device = DeviceKind::kCuda;
  }
  two_devices.problem.D[1].device_id = 1;
  expect_refused(make(two_devices.problem), "D[1]: expected a tensor on cuda:0 like A[0]");
}

TEST(GroupedArguments, BetaNeedsC) {
  HostProblems p({{64, 64, 64}});
  p.problem.output_op.beta = 0.5;
  expect_refused(make(p.problem), "C: beta is 0.5");
}

TEST(GroupedArguments, UniversalAndGroupedArgumentsDoNotMix) {
  HostProblems p({{64, 64, 64}});
  const GemmDescription d = emit::testing::tensorop_f16_tn();
  auto universal = GemmOperation::make(d).value();
  auto made = GroupedGemmArguments::make(*universal, p.problem);
  ASSERT_FALSE(made);
  EXPECT_NE(made.status().message().find("not a grouped GEMM"), std::string::npos);
  GemmProblem single;
  single.problem_size = {64, 64, 64};
  single.A = p.problem.A[0];
  single.B = p.problem.B[0];
  single.D = p.problem.D[0];
  auto refused = GemmArguments::make(*f16_grouped(), single);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.status().message().find("takes GemmGroupedArguments"), std::string::npos);
  auto entry = f16_grouped()->entry(GemmMode::Gemm);
  ASSERT_FALSE(entry);
  EXPECT_NE(entry.status().message().find("is a grouped GEMM"), std::string::npos);
}

// The stacked (mixture-of-experts) form: offsets are checked before anything else happens.
struct Stacked {
  std::vector<uint16_t> a, b, d;
  std::vector<int32_t> offsets;
  StackedGroupedGemmProblem problem;
  Stacked(int64_t rows, int64_t groups, int64_t k, int64_t n, std::vector<int32_t> ends)
      : a(rows * k), b(groups * k * n), d(rows * n), offsets(std::move(ends)) {
    problem.A = TensorView::host_contiguous(a.data(), DataType::f16, {rows, k});
    problem.B = TensorView::host_contiguous(b.data(), DataType::f16, {groups, k, n});
    problem.D = TensorView::host_contiguous(d.data(), DataType::f16, {rows, n});
    problem.offsets = TensorView::host_contiguous(offsets.data(), DataType::s32,
                                                  {static_cast<int64_t>(offsets.size())});
  }
};

Status split(const StackedGroupedGemmProblem& p) {
  auto made = p.split();
  return made ? Status::ok() : made.status();
}

TEST(GroupedArguments, StackedOffsetsAreChecked) {
  expect_refused(split(Stacked(100, 3, 64, 64, {10, 5, 100}).problem),
                 "offsets[1]: end row 5 is smaller than offsets[0] = 10");
  expect_refused(split(Stacked(100, 3, 64, 64, {-1, 5, 100}).problem),
                 "offsets[0]: end row -1 is negative");
  expect_refused(split(Stacked(100, 3, 64, 64, {10, 50, 101}).problem),
                 "offsets[2]: end row 101 is past A's 100 rows");
  expect_refused(split(Stacked(100, 3, 64, 64, {10, 100}).problem),
                 "offsets: expected one end row per group of B (3), got 2");
  Stacked wrong_type(100, 2, 64, 64, {50, 100});
  wrong_type.problem.offsets.dtype = DataType::f32;
  expect_refused(split(wrong_type.problem), "offsets: expected int32");
}

TEST(GroupedArguments, StackedSplitsIntoRowsAndMatrices) {
  Stacked s(100, 3, 64, 32, {10, 10, 100});
  auto problem = s.problem.split();
  ASSERT_TRUE(problem) << problem.status().message();
  ASSERT_EQ(problem->problem_sizes.size(), 3u);
  EXPECT_EQ(problem->problem_sizes[0], (GemmCoord{10, 32, 64}));
  EXPECT_EQ(problem->problem_sizes[1], (GemmCoord{0, 32, 64}));
  EXPECT_EQ(problem->problem_sizes[2], (GemmCoord{90, 32, 64}));
  EXPECT_EQ(problem->A[2].data, static_cast<void*>(s.a.data() + 10 * 64));
  EXPECT_EQ(problem->B[2].data, static_cast<void*>(s.b.data() + 2 * 64 * 32));
  EXPECT_EQ(problem->D[2].data, static_cast<void*>(s.d.data() + 10 * 32));
  EXPECT_EQ(problem->B[1].strides[0], 32);
  EXPECT_EQ(problem->B[1].strides[1], 1);
}

// Offsets left on the device: the same checks without reading them, and problems of
// total_rows / groups rows each, every one starting at row 0 (views for checks and ranking).
TEST(GroupedArguments, StackedRepresentativeReadsNoOffsets) {
  Stacked s(100, 3, 64, 32, {-7, 5, 1000});  // never read: any values
  s.problem.offsets.device = DeviceKind::kCuda;
  auto problem = s.problem.representative();
  ASSERT_TRUE(problem) << problem.status().message();
  ASSERT_EQ(problem->problem_sizes.size(), 3u);
  EXPECT_EQ(problem->problem_sizes[0], (GemmCoord{33, 32, 64}));
  EXPECT_EQ(problem->problem_sizes[1], (GemmCoord{33, 32, 64}));
  EXPECT_EQ(problem->problem_sizes[2], (GemmCoord{34, 32, 64}));
  EXPECT_EQ(problem->A[2].data, static_cast<void*>(s.a.data()));
  EXPECT_EQ(problem->D[1].data, static_cast<void*>(s.d.data()));
  EXPECT_EQ(problem->B[2].data, static_cast<void*>(s.b.data() + 2 * 64 * 32));
  Stacked on_host(100, 3, 64, 32, {10, 20, 100});
  expect_refused(on_host.problem.representative().status(),
                 "offsets: expected a 1-D int32 CUDA tensor of cumulative end rows (read on the "
                 "device)");
  Stacked too_few(100, 3, 64, 32, {10, 100});
  too_few.problem.offsets.device = DeviceKind::kCuda;
  expect_refused(too_few.problem.representative().status(),
                 "offsets: expected one end row per group of B (3), got 2");
}

// The weight-gradient form: A (M, rows) column-major (a stacked (rows, M) transposed), B 2-D
// (rows, N), D (groups, M, N); the stacked rows are each problem's K.
struct StackedK {
  std::vector<uint16_t> a, b, d;
  std::vector<int32_t> offsets;
  StackedGroupedGemmProblem problem;
  StackedK(int64_t rows, int64_t groups, int64_t m, int64_t n, std::vector<int32_t> ends)
      : a(rows * m), b(rows * n), d(groups * m * n), offsets(std::move(ends)) {
    problem.A = TensorView::host_contiguous(a.data(), DataType::f16, {m, rows});
    problem.A.strides = {1, m, 0, 0};
    problem.B = TensorView::host_contiguous(b.data(), DataType::f16, {rows, n});
    problem.D = TensorView::host_contiguous(d.data(), DataType::f16, {groups, m, n});
    problem.offsets = TensorView::host_contiguous(offsets.data(), DataType::s32,
                                                  {static_cast<int64_t>(offsets.size())});
    problem.offsets.device = DeviceKind::kCuda;
  }
};

TEST(GroupedArguments, StackedRowsAsKAreColumnsOfAAndRowsOfB) {
  StackedK s(100, 3, 64, 32, {-7, 5, 1000});  // never read: any values
  auto problem = s.problem.representative();
  ASSERT_TRUE(problem) << problem.status().message();
  ASSERT_EQ(problem->problem_sizes.size(), 3u);
  EXPECT_EQ(problem->problem_sizes[0], (GemmCoord{64, 32, 33}));
  EXPECT_EQ(problem->problem_sizes[2], (GemmCoord{64, 32, 34}));
  EXPECT_EQ(problem->A[2].shape[1], 34);
  EXPECT_EQ(problem->A[2].data, static_cast<void*>(s.a.data()));
  EXPECT_EQ(problem->B[1].shape[0], 33);
  EXPECT_EQ(problem->D[2].data, static_cast<void*>(s.d.data() + 2 * 64 * 32));
  EXPECT_TRUE(problem->C.empty());
  StackedK few_rows(2, 3, 64, 32, {0, 0, 2});  // groups without rows: empty problems
  auto empty = few_rows.problem.representative();
  ASSERT_TRUE(empty) << empty.status().message();
  EXPECT_EQ(empty->problem_sizes[0], (GemmCoord{0, 32, 0}));
  EXPECT_EQ(empty->D[0].numel(), 0);
  expect_refused(split(s.problem), "B: a 2-D B (the stacked rows are each group's K");
  StackedK with_c(100, 3, 64, 32, {10, 20, 100});
  with_c.problem.C = with_c.problem.D;
  expect_refused(with_c.problem.representative().status(), "C: expected none with a 2-D B");
  StackedK short_b(100, 3, 64, 32, {10, 20, 100});
  short_b.problem.B.shape[0] = 99;
  expect_refused(short_b.problem.representative().status(),
                 "B: expected (total_rows=100, N) to match A's columns");
  StackedK few_matrices(100, 3, 64, 32, {10, 20, 100});
  few_matrices.problem.D.shape[0] = 2;
  expect_refused(few_matrices.problem.representative().status(),
                 "D: expected (groups=3, M=64, N=32)");
}

TEST(GroupedApiArguments, WordsItsRefusals) {
  HostProblems p({{64, 64, 64}, {32, 64, 64}});
  auto host = api::GroupedGemmArguments::make(p.problem.A, p.problem.B, p.problem.D, DataType::f32);
  ASSERT_FALSE(host);
  EXPECT_NE(host.status().message().find("A[0]: expected a CUDA tensor"), std::string::npos)
      << host.status().message();
  auto uneven =
      api::GroupedGemmArguments::make(p.problem.A, {p.problem.B[0]}, p.problem.D, DataType::f32);
  ASSERT_FALSE(uneven);
  EXPECT_NE(uneven.status().message().find("B: expected one tensor per problem (2 in A), got 1"),
            std::string::npos)
      << uneven.status().message();
}

}  // namespace TILECRAFT_TEST_FILE
}  // namespace
}  // namespace tilecraft
