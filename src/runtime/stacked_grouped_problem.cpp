// StackedGroupedGemmProblem::split and representative: the stacked forms of a grouped GEMM as one
// problem per group, viewing rows (or columns) of the stacked tensors and matrices of the 3-D one.
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "tilecraft/core/extents.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/grouped_gemm_arguments.hpp"
#include "tilecraft/runtime/index_limits.hpp"

namespace tilecraft {
namespace {

Status expect_rank(const char* name, const TensorView& t, int rank, const char* shape) {
  if (t.data == nullptr && t.numel() != 0) {
    return Status::invalid(std::string(name) + ": expected a tensor, got a null data pointer");
  }
  if (t.rank != rank) {
    return Status::invalid(std::string(name) + ": expected a " + std::to_string(rank) +
                           "-D tensor " + shape + ", got " + t.describe());
  }
  return Status::ok();
}

// Indices [first, first + count) along `dimension` of a 2-D tensor.
TensorView slice_of(const TensorView& t, int dimension, int64_t first, int64_t count) {
  TensorView v = t;
  v.shape[dimension] = count;
  if (t.data != nullptr) {
    v.data = static_cast<char*>(t.data) + first * t.strides[dimension] * storage_bytes(t.dtype);
  }
  return v;
}

TensorView rows_of(const TensorView& t, int64_t first, int64_t rows) {
  return slice_of(t, 0, first, rows);
}

// Matrix g of a 3-D tensor.
TensorView matrix_of(const TensorView& t, int64_t g) {
  TensorView v;
  v.dtype = t.dtype;
  v.device = t.device;
  v.device_id = t.device_id;
  v.rank = 2;
  v.shape = {t.shape[1], t.shape[2], 0, 0};
  v.strides = {t.strides[1], t.strides[2], 0, 0};
  v.data = t.data == nullptr
               ? nullptr
               : static_cast<char*>(t.data) + g * t.strides[0] * storage_bytes(t.dtype);
  return v;
}

Result<std::vector<int64_t>> read_offsets(const TensorView& offsets) {
  if (offsets.data == nullptr) {
    return Status::invalid("offsets: expected an int32 tensor of cumulative end rows, got none");
  }
  if (offsets.dtype != DataType::s32) {
    return Status::invalid(
        "offsets: expected int32 (cumulative end rows, as torch._grouped_mm takes), got " +
        spelled(offsets.dtype));
  }
  if (offsets.rank != 1 || offsets.shape[0] < 1) {
    return Status::invalid("offsets: expected a 1-D tensor with one entry per group, got " +
                           offsets.describe());
  }
  const int64_t groups = offsets.shape[0];
  std::vector<int32_t> values(static_cast<size_t>(groups));
  if (offsets.device == DeviceKind::kCuda) {
    // Reads the offsets where they are: a strided view is copied row by row.
    TILECRAFT_RETURN_IF_ERROR(cuda_status(
        cudaMemcpy2D(values.data(), sizeof(int32_t), offsets.data,
                     static_cast<size_t>(offsets.strides[0]) * sizeof(int32_t), sizeof(int32_t),
                     static_cast<size_t>(groups), cudaMemcpyDeviceToHost),
        "reading offsets from the device"));
  } else {
    for (int64_t g = 0; g < groups; ++g) {
      values[g] = static_cast<const int32_t*>(offsets.data)[g * offsets.strides[0]];
    }
  }
  return std::vector<int64_t>(values.begin(), values.end());
}

// What split() and representative() check before anything is read: the tensors' extents and
// ranks, and that they agree with each other. rows_are_k: B is 2-D (the weight-gradient form).
struct StackedShape {
  int64_t total = 0, M = 0, K = 0, groups = 0, N = 0;
  bool has_C = false, has_bias = false, rows_are_k = false;
};

// The mixture-of-experts form: A (total_rows, K), B (groups, K, N), C and D (total_rows, N).
Status check_m_form(const StackedGroupedGemmProblem& p, const std::string& out,
                    StackedShape* shape) {
  const TensorView &A = p.A, &B = p.B, &C = p.C, &D = p.D, &bias = p.bias, &offsets = p.offsets;
  TILECRAFT_RETURN_IF_ERROR(expect_rank("A", A, 2, "(total_rows, K)"));
  TILECRAFT_RETURN_IF_ERROR(expect_rank("B", B, 3, "(groups, K, N), or 2-D (total_rows, N)"));
  TILECRAFT_RETURN_IF_ERROR(expect_rank(out.c_str(), D, 2, "(total_rows, N)"));
  if (shape->has_C) TILECRAFT_RETURN_IF_ERROR(expect_rank("C", C, 2, "(total_rows, N)"));
  const int64_t total = A.shape[0], K = A.shape[1], groups = B.shape[0], N = B.shape[2];
  shape->total = total;
  shape->K = K;
  shape->groups = groups;
  shape->N = N;
  if (B.shape[1] != K) {
    return Status::invalid("B: expected (groups, K=" + std::to_string(K) +
                           ", N) to match A's K, got " + B.describe());
  }
  if (D.shape[0] != total || D.shape[1] != N) {
    return Status::invalid(out + ": expected (" + std::to_string(total) + ", " + std::to_string(N) +
                           ") for A's rows and B's N, got " + D.describe());
  }
  if (shape->has_C && (C.shape[0] != total || C.shape[1] != N)) {
    return Status::invalid("C: expected (" + std::to_string(total) + ", " + std::to_string(N) +
                           ") like " + out + ", got " + C.describe());
  }
  // What no kernel can index: N or K above 32 bits (each group's rows are checked later).
  TILECRAFT_RETURN_IF_ERROR(check_index32("B", 2, N, "N"));
  TILECRAFT_RETURN_IF_ERROR(check_index32("B", 1, K, "K"));
  if (groups > static_cast<int64_t>(detail::kMaxGroupedProblems)) {
    return Status::invalid("B: at most " + std::to_string(detail::kMaxGroupedProblems) +
                           " groups (problems) in one launch, got " + std::to_string(groups) +
                           " in " + B.describe());
  }
  // Before anything is read (or allocated) for them.
  if (offsets.data != nullptr && offsets.rank == 1 && offsets.shape[0] != groups) {
    return Status::invalid("offsets: expected one end row per group of B (" +
                           std::to_string(groups) + "), got " + std::to_string(offsets.shape[0]));
  }
  if (shape->has_bias && (bias.rank != 2 || bias.shape[0] != groups || bias.shape[1] != N)) {
    return Status::invalid("bias: expected (groups=" + std::to_string(groups) + ", N=" +
                           std::to_string(N) + "), one bias per group, got " + bias.describe());
  }
  return Status::ok();
}

// The weight-gradient form: A (M, total_rows), B (total_rows, N), D (groups, M, N).
Status check_k_form(const StackedGroupedGemmProblem& p, const std::string& out,
                    StackedShape* shape) {
  const TensorView &A = p.A, &B = p.B, &D = p.D, &offsets = p.offsets;
  TILECRAFT_RETURN_IF_ERROR(expect_rank("A", A, 2, "(M, total_rows)"));
  TILECRAFT_RETURN_IF_ERROR(expect_rank("B", B, 2, "(total_rows, N)"));
  TILECRAFT_RETURN_IF_ERROR(expect_rank(out.c_str(), D, 3, "(groups, M, N)"));
  if (shape->has_C || shape->has_bias) {
    return Status::invalid(std::string(shape->has_C ? "C" : "bias") +
                           ": expected none with a 2-D B (the stacked rows are each group's K, "
                           "the weight-gradient form), got " +
                           (shape->has_C ? p.C : p.bias).describe());
  }
  if (offsets.data == nullptr || offsets.rank != 1) {
    return Status::invalid("offsets: expected a 1-D tensor with one end row per group, got " +
                           (offsets.data == nullptr ? std::string("none") : offsets.describe()));
  }
  shape->rows_are_k = true;
  shape->M = A.shape[0];
  shape->total = A.shape[1];
  shape->N = B.shape[1];
  shape->groups = offsets.shape[0];
  if (B.shape[0] != shape->total) {
    return Status::invalid("B: expected (total_rows=" + std::to_string(shape->total) +
                           ", N) to match A's columns, got " + B.describe());
  }
  if (D.shape[0] != shape->groups || D.shape[1] != shape->M || D.shape[2] != shape->N) {
    return Status::invalid(out + ": expected (groups=" + std::to_string(shape->groups) +
                           ", M=" + std::to_string(shape->M) + ", N=" + std::to_string(shape->N) +
                           ") for the offsets, A's rows and B's N, got " + D.describe());
  }
  if (D.strides[2] != 1 && shape->N > 1) {
    return Status::invalid(out +
                           ": expected row-major matrices (stride 1 along N) with a 2-D B, "
                           "got " +
                           D.describe());
  }
  TILECRAFT_RETURN_IF_ERROR(check_index32("A", 0, shape->M, "M"));
  TILECRAFT_RETURN_IF_ERROR(check_index32("B", 1, shape->N, "N"));
  return check_index32("A", 1, shape->total, "total_rows");
}

Result<StackedShape> checked_shape(const StackedGroupedGemmProblem& p, const std::string& out) {
  const TensorView &A = p.A, &B = p.B, &C = p.C, &D = p.D, &bias = p.bias, &offsets = p.offsets;
  StackedShape shape;
  shape.has_C = C.data != nullptr || C.rank != 0;
  shape.has_bias = bias.data != nullptr || bias.rank != 0;
  const std::pair<std::string, const TensorView*> tensors[] = {
      {"A", &A}, {"B", &B}, {out, &D}, {"C", &C}, {"bias", &bias}, {"offsets", &offsets}};
  for (const auto& [name, t] : tensors) {
    TILECRAFT_RETURN_IF_ERROR(check_tensor_extents(name, *t).status());
  }
  if (B.rank == 2) {
    TILECRAFT_RETURN_IF_ERROR(check_k_form(p, out, &shape));
  } else {
    TILECRAFT_RETURN_IF_ERROR(check_m_form(p, out, &shape));
  }
  if (offsets.device == DeviceKind::kCuda && A.device == DeviceKind::kCuda &&
      offsets.device_id != A.device_id) {
    return Status::invalid(
        "offsets: expected a tensor on cuda:" + std::to_string(A.device_id) +
        " like A (or on the host), got cuda:" + std::to_string(offsets.device_id));
  }
  if (shape.groups > static_cast<int64_t>(detail::kMaxGroupedProblems)) {
    return Status::invalid("offsets: at most " + std::to_string(detail::kMaxGroupedProblems) +
                           " groups (problems) in one launch, got " + std::to_string(shape.groups));
  }
  return shape;
}

// The per-problem form with group g ending at ends[g]; from_row_zero: every group's rows start at
// row 0 instead (views for checks and ranking only, whose pointers are as aligned as any row's).
GroupedGemmProblem problems_of(const StackedGroupedGemmProblem& p, const StackedShape& shape,
                               const std::vector<int64_t>& ends, bool from_row_zero) {
  GroupedGemmProblem result;
  result.output_op = p.output_op;
  result.scale_a = p.scale_a;
  result.scale_b = p.scale_b;
  result.scale_c = p.scale_c;
  result.scale_d = p.scale_d;
  result.workspace = p.workspace;
  result.workspace_bytes = p.workspace_bytes;
  int64_t start = 0;
  for (int64_t g = 0; g < shape.groups; ++g) {
    const int64_t rows = ends[g] - start;
    const int64_t first = from_row_zero ? 0 : start;
    if (shape.rows_are_k) {
      // A group with no rows is an empty problem: the module zeros its matrix of D.
      const int64_t m = rows > 0 ? shape.M : 0;
      result.problem_sizes.push_back(
          {static_cast<int>(m), static_cast<int>(shape.N), static_cast<int>(rows)});
      result.A.push_back(slice_of(p.A, 1, first, rows));
      result.B.push_back(rows_of(p.B, first, rows));
      result.D.push_back(rows_of(matrix_of(p.D, g), 0, m));
      start = ends[g];
      continue;
    }
    result.problem_sizes.push_back(
        {static_cast<int>(rows), static_cast<int>(shape.N), static_cast<int>(shape.K)});
    result.A.push_back(rows_of(p.A, first, rows));
    result.B.push_back(matrix_of(p.B, g));
    result.D.push_back(rows_of(p.D, first, rows));
    if (shape.has_C) result.C.push_back(rows_of(p.C, first, rows));
    if (shape.has_bias) {
      TensorView row = rows_of(p.bias, g, 1);
      row.rank = 1;
      row.shape = {shape.N, 0, 0, 0};
      row.strides = {p.bias.strides[1], 0, 0, 0};
      result.bias.push_back(row);
    }
    start = ends[g];
  }
  return result;
}

}  // namespace

Result<GroupedGemmProblem> StackedGroupedGemmProblem::split(const char* out_name) const {
  auto shape = checked_shape(*this, out_name);
  if (!shape) return shape.status();
  if (shape->rows_are_k) {
    return Status::invalid(
        "B: a 2-D B (the stacked rows are each group's K, the weight-gradient form) is read with "
        "its offsets on the device only (expand_on_device), which zeros the groups with no rows");
  }
  auto ends = read_offsets(offsets);  // one per group: read_offsets needs a 1-D tensor
  if (!ends) return ends.status();
  int64_t start = 0;
  for (int64_t g = 0; g < shape->groups; ++g) {
    const int64_t end = (*ends)[g];
    const std::string who = "offsets[" + std::to_string(g) + "]";
    if (end < 0) return Status::invalid(who + ": end row " + std::to_string(end) + " is negative");
    if (end < start) {
      return Status::invalid(who + ": end row " + std::to_string(end) +
                             " is smaller than offsets[" + std::to_string(g - 1) +
                             "] = " + std::to_string(start) +
                             " (offsets are cumulative end rows, non-decreasing)");
    }
    if (end > shape->total) {
      return Status::invalid(who + ": end row " + std::to_string(end) + " is past A's " +
                             std::to_string(shape->total) + " rows");
    }
    const int64_t rows = end - start;
    if (rows > kMaxIndex32) {
      return Status::invalid(who + ": group " + std::to_string(g) + " has " + std::to_string(rows) +
                             " rows (rows " + std::to_string(start) + " to " + std::to_string(end) +
                             " of A), beyond the kernel's 32-bit index (at most " +
                             std::to_string(kMaxIndex32) + ")");
    }
    start = end;
  }
  return problems_of(*this, *shape, *ends, false);
}

Result<GroupedGemmProblem> StackedGroupedGemmProblem::representative(const char* out_name) const {
  auto shape = checked_shape(*this, out_name);
  if (!shape) return shape.status();
  if (offsets.data == nullptr || offsets.dtype != DataType::s32 || offsets.rank != 1 ||
      offsets.device != DeviceKind::kCuda) {
    return Status::invalid(
        "offsets: expected a 1-D int32 CUDA tensor of cumulative end rows (read on the device), "
        "got " +
        (offsets.data == nullptr ? std::string("none") : offsets.describe()));
  }
  if (!shape->rows_are_k) {
    TILECRAFT_RETURN_IF_ERROR(check_index32("A", 0, shape->total, "total_rows"));
  }
  std::vector<int64_t> ends(static_cast<size_t>(shape->groups));
  for (int64_t g = 0; g < shape->groups; ++g) ends[g] = (g + 1) * shape->total / shape->groups;
  return problems_of(*this, *shape, ends, true);
}

}  // namespace tilecraft
