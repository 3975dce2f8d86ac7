#include "tilecraft/runtime/grouped_gemm_arguments.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "operand_check.hpp"
#include "tilecraft/core/extents.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/runtime/index_limits.hpp"

namespace tilecraft {
namespace {

using detail::OperandPlacement;

std::string at(const char* name, size_t g) {
  return std::string(name) + "[" + std::to_string(g) + "]";
}

// The extent a layout keeps contiguous must be a multiple of the access width.
Status check_contiguous_extent(const std::string& who, const TensorDescription& desc,
                               const char* rows_name, int64_t rows, const char* cols_name,
                               int64_t cols) {
  const bool row_major = desc.layout == Layout::RowMajor;
  const int64_t extent = row_major ? cols : rows;
  if (desc.alignment > 1 && extent % desc.alignment != 0) {
    return Status::invalid(who + ": " + (row_major ? cols_name : rows_name) + "=" +
                           std::to_string(extent) + " is not a multiple of the " +
                           std::to_string(desc.alignment) + "-element alignment of its " +
                           std::string(to_string(desc.layout)) + " (" + rows_name + ", " +
                           cols_name + ") TensorDescription");
  }
  return Status::ok();
}

struct Placed {
  const void* data = nullptr;  // device pointer, once staged
  int64_t ld = 0;
};

// One operand of one problem. Empty problems only need the right dtype and shape; the kernel
// reads nothing of them.
Result<OperandPlacement> place(const std::string& who, const TensorView& t,
                               const TensorDescription& desc, int64_t rows, int64_t cols,
                               bool empty) {
  if (!empty) return detail::place_operand(who.c_str(), t, desc, rows, cols, 1, false);
  TILECRAFT_RETURN_IF_ERROR(detail::check_dtype(who, t, desc.element));
  if (t.numel() != rows * cols) {
    return Status::invalid(who + ": expected " + std::to_string(rows * cols) +
                           " elements for an empty (" + std::to_string(rows) + ", " +
                           std::to_string(cols) + ") problem, got " + t.describe());
  }
  OperandPlacement p;
  p.ld = std::max<int64_t>(desc.alignment, desc.layout == Layout::RowMajor
                                               ? std::max<int64_t>(cols, 1)
                                               : std::max<int64_t>(rows, 1));
  p.ld = (p.ld + desc.alignment - 1) / desc.alignment * desc.alignment;
  return p;
}

Status check_lists(const GroupedGemmProblem& p) {
  const size_t count = p.problem_sizes.size();
  if (count == 0) return Status::invalid("problem_sizes: expected at least one problem, got none");
  if (count > detail::kMaxGroupedProblems) {
    return Status::invalid("problem_sizes: at most " + std::to_string(detail::kMaxGroupedProblems) +
                           " problems in one launch, got " + std::to_string(count));
  }
  const std::pair<const char*, const std::vector<TensorView>*> lists[] = {
      {"A", &p.A}, {"B", &p.B}, {"D", &p.D}};
  for (const auto& [name, list] : lists) {
    if (list->size() != count) {
      return Status::invalid(std::string(name) + ": expected one tensor per problem (" +
                             std::to_string(count) + " problem sizes), got " +
                             std::to_string(list->size()));
    }
  }
  if (!p.C.empty() && p.C.size() != count) {
    return Status::invalid("C: expected one tensor per problem (" + std::to_string(count) +
                           " problem sizes) or none, got " + std::to_string(p.C.size()));
  }
  if (!p.bias.empty() && p.bias.size() != count) {
    return Status::invalid("bias: expected one vector per problem (" + std::to_string(count) +
                           " problem sizes), got " + std::to_string(p.bias.size()));
  }
  if (p.C.empty() && p.output_op.beta != 0.0) {
    return Status::invalid("C: beta is " + std::to_string(p.output_op.beta) +
                           " but no C tensors were given");
  }
  for (size_t g = 0; g < count; ++g) {
    const GemmCoord& s = p.problem_sizes[g];
    if (s.m < 0 || s.n < 0 || s.k < 0) {
      return Status::invalid(at("problem_sizes", g) + ": M, N and K must be >= 0, got " +
                             to_string(s));
    }
    if (s.k == 0 && s.m > 0 && s.n > 0) {
      return Status::invalid(at("problem_sizes", g) +
                             ": K must be >= 1 for a problem with rows and columns, got " +
                             to_string(s));
    }
  }
  return Status::ok();
}

// Every tensor given, in 64 bits, before any extent of it is read.
Status check_extents(const GroupedGemmProblem& p) {
  const std::pair<const char*, const std::vector<TensorView>*> lists[] = {
      {"A", &p.A}, {"B", &p.B}, {"C", &p.C}, {"D", &p.D}, {"bias", &p.bias}};
  for (const auto& [name, list] : lists) {
    for (size_t g = 0; g < list->size(); ++g) {
      TILECRAFT_RETURN_IF_ERROR(check_tensor_extents(at(name, g), (*list)[g]).status());
    }
  }
  return Status::ok();
}

// The problems as this kernel indexes them: tile-padded extents, the tiles of all problems, and
// (SM90) the widest leading dimension of each operand, which TMA descriptors address.
detail::GroupedIndexing indexing_of(const GroupedGemmProblem& p,
                                    const std::vector<OperandPlacement>& placed,
                                    const GemmDescription& d) {
  detail::GroupedIndexing out;
  const size_t count = p.problem_sizes.size();
  out.problems = p.problem_sizes;
  const char* names[4] = {"A", "B", "C", "D"};
  const DataType elements[4] = {d.A.element, d.B.element, d.C.element, d.C.element};
  for (int w = 0; w < 4; ++w) {
    if (w == 2 && p.C.empty()) continue;
    size_t widest = 0;
    for (size_t g = 1; g < count; ++g) {
      if (placed[4 * g + w].ld > placed[4 * widest + w].ld) widest = g;
    }
    if (count > 0) {
      out.strides.add({placed[4 * widest + w].ld, storage_bytes(elements[w]), "", names[w], -1,
                       static_cast<int64_t>(widest)});
    }
  }
  return out;
}

// Every tensor on one CUDA device (host tensors are staged there), returned in *device (-1:
// all on the host).
Status check_devices(const GroupedGemmProblem& p, int* device) {
  std::string first;
  const std::pair<const char*, const std::vector<TensorView>*> lists[] = {
      {"A", &p.A}, {"B", &p.B}, {"C", &p.C}, {"D", &p.D}};
  for (const auto& [name, list] : lists) {
    for (size_t g = 0; g < list->size(); ++g) {
      if ((*list)[g].numel() == 0) continue;
      TILECRAFT_RETURN_IF_ERROR(detail::check_same_device(at(name, g), (*list)[g], device, first));
      if (first.empty() && *device >= 0) first = at(name, g);
    }
  }
  return Status::ok();
}

// A problem's bias: N values of the epilogue's element_bias, contiguous, 16-byte aligned.
Status check_bias(const std::string& who, const TensorView& t, const GemmDescription& d, int64_t n,
                  bool empty) {
  const DataType element = d.epilogue.fusion.element_bias;
  if (t.dtype != element) {
    return Status::invalid(who + ": expected " + spelled(element) +
                           " (the epilogue's element_bias), got " + spelled(t.dtype));
  }
  if (t.rank != 1 || t.shape[0] != n || (n > 1 && t.strides[0] != 1)) {
    return Status::invalid(who + ": expected a contiguous vector of N=" + std::to_string(n) +
                           " values, got " + t.describe());
  }
  if (!empty && reinterpret_cast<uintptr_t>(t.data) % 16 != 0) {
    return Status::invalid(who + ": the vector must start 16-byte aligned; got " + t.describe());
  }
  return Status::ok();
}

}  // namespace

double GroupedGemmArguments::flops() const {
  double total = 0;
  for (size_t i = 0; i + 2 < sizes_.size(); i += 3) {
    total += 2.0 * double(sizes_[i]) * double(sizes_[i + 1]) * double(sizes_[i + 2]);
  }
  return total;
}

namespace {

// What make() checks of a problem before anything is staged, and what it learns doing so.
struct CheckedProblem {
  std::vector<OperandPlacement> placed;  // A, B, C, D of each problem
  int32_t max_k = 0;
  int device = -1;
  const tc_kernel_entry* entry = nullptr;
  bool has_C = false, wants_bias = false;
};

Result<CheckedProblem> check_problem(const GemmOperation& operation,
                                     const GroupedGemmProblem& problem) {
  CheckedProblem checked;
  const GemmDescription& d = operation.description();
  if (!d.is_grouped()) {
    return Status::invalid(
        "operation: " + operation.procedural_name() +
        " is not a grouped GEMM; GemmGroupedArguments need a GemmOperationGrouped");
  }
  TILECRAFT_RETURN_IF_ERROR(check_lists(problem));
  TILECRAFT_RETURN_IF_ERROR(check_extents(problem));
  TILECRAFT_RETURN_IF_ERROR(validate_epilogue_params(d.epilogue, problem.output_op));
  const bool scaled = d.epilogue.fusion.per_tensor_scales;
  const double scales[4] = {problem.scale_a, problem.scale_b, problem.scale_c, problem.scale_d};
  for (int i = 0; i < 4; ++i) {
    if (!scaled && scales[i] != 1.0) {
      return Status::invalid(std::string("scale_") + "abcd"[i] + ": " +
                             operation.procedural_name() +
                             " has no per-tensor scales (they are for fp8 operands); got " +
                             std::to_string(scales[i]));
    }
  }
  const size_t count = problem.problem_sizes.size();
  const bool has_C = !problem.C.empty();
  const bool wants_bias = d.epilogue.fusion.bias != BiasKind::none;
  if (wants_bias && problem.bias.empty()) {
    return Status::invalid("bias: " + operation.procedural_name() +
                           " adds a bias of N values per problem; got none");
  }
  if (!wants_bias && !problem.bias.empty()) {
    return Status::invalid("bias: " + operation.procedural_name() +
                           " adds no bias (describe the epilogue with a per-column bias); got " +
                           std::to_string(problem.bias.size()) + " vectors");
  }
  for (size_t g = 0; g < problem.bias.size(); ++g) {
    const GemmCoord& s = problem.problem_sizes[g];
    TILECRAFT_RETURN_IF_ERROR(
        check_bias(at("bias", g), problem.bias[g], d, s.n, s.m == 0 || s.n == 0));
  }
  std::vector<OperandPlacement>& placed = checked.placed;
  placed.resize(4 * count);
  int32_t& max_k = checked.max_k;
  for (size_t g = 0; g < count; ++g) {
    const GemmCoord& s = problem.problem_sizes[g];
    const bool empty = s.m == 0 || s.n == 0;
    max_k = std::max(max_k, static_cast<int32_t>(s.k));
    auto A = place(at("A", g), problem.A[g], d.A, s.m, s.k, empty);
    if (!A) return A.status();
    auto B = place(at("B", g), problem.B[g], d.B, s.k, s.n, empty);
    if (!B) return B.status();
    auto D = place(at("D", g), problem.D[g], d.C, s.m, s.n, empty);
    if (!D) return D.status();
    Result<OperandPlacement> C = *D;
    if (has_C) {
      C = place(at("C", g), problem.C[g], d.C, s.m, s.n, empty);
      if (!C) return C.status();
    }
    if (!empty) {
      TILECRAFT_RETURN_IF_ERROR(check_contiguous_extent(at("A", g), d.A, "M", s.m, "K", s.k));
      TILECRAFT_RETURN_IF_ERROR(check_contiguous_extent(at("B", g), d.B, "K", s.k, "N", s.n));
      TILECRAFT_RETURN_IF_ERROR(check_contiguous_extent(at("D", g), d.C, "M", s.m, "N", s.n));
    }
    placed[4 * g] = *A;
    placed[4 * g + 1] = *B;
    placed[4 * g + 2] = *C;
    placed[4 * g + 3] = *D;
  }
  if (d.epilogue.kind == EpilogueKind::FastLinearCombinationClamp &&
      max_k > kFastLinearCombinationClampMaxK) {
    return Status::invalid("problem_sizes: FastLinearCombinationClamp is exact only for K <= " +
                           std::to_string(kFastLinearCombinationClampMaxK) +
                           ", got K=" + std::to_string(max_k) + "; use LinearCombinationClamp");
  }
  TILECRAFT_RETURN_IF_ERROR(detail::check_grouped_indexes(d, indexing_of(problem, placed, d)));
  TILECRAFT_RETURN_IF_ERROR(check_devices(problem, &checked.device));
  DeviceScope on_device(checked.device);
  TILECRAFT_RETURN_IF_ERROR(on_device.status());
  TILECRAFT_RETURN_IF_ERROR(detail::check_device_runs(d.arch, operation.procedural_name()));
  auto entry = operation.entry(GemmMode::Grouped);
  if (!entry) return entry.status();

  checked.entry = *entry;
  checked.has_C = has_C;
  checked.wants_bias = wants_bias;
  return checked;
}

// With the offsets on the device, a group starts at any row of the stack: the rows' distance
// must keep every start as aligned as the kernel reads (the views checked start at row 0).
Status check_stacked_alignment(const StackedGroupedGemmProblem& p, const GemmDescription& d) {
  const bool rows_are_k = p.B.rank == 2;
  struct Stacked {
    const char* name;
    const TensorView* tensor;
    int dimension;
    int alignment;
  };
  const Stacked operands[] = {{"A", &p.A, rows_are_k ? 1 : 0, d.A.alignment},
                              {"B", &p.B, 0, rows_are_k ? d.B.alignment : 0},
                              {"C", &p.C, 0, rows_are_k ? 0 : d.C.alignment},
                              {"out", &p.D, 0, rows_are_k ? 0 : d.C.alignment}};
  for (const Stacked& s : operands) {
    const TensorView& t = *s.tensor;
    if (s.alignment <= 1 || t.data == nullptr || t.rank < 2) continue;
    const int64_t step = t.strides[s.dimension];
    if (t.shape[s.dimension] > 1 && step % s.alignment != 0) {
      return Status::invalid(std::string(s.name) + ": the stacked " +
                             (s.dimension == 0 ? "rows" : "columns") + " have a stride of " +
                             std::to_string(step) + (step == 1 ? " element" : " elements") +
                             ", not a multiple of the kernel's " + std::to_string(s.alignment) +
                             "-element alignment, so a group could start misaligned; got " +
                             t.describe() + " (make the stacked dimension the outer one)");
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<GroupedGemmArguments>> GroupedGemmArguments::make(
    const GemmOperation& operation, const GroupedGemmProblem& problem) {
  auto checked = check_problem(operation, problem);
  if (!checked) return checked.status();
  const std::vector<OperandPlacement>& placed = checked->placed;
  const size_t count = problem.problem_sizes.size();
  const bool has_C = checked->has_C;
  const bool wants_bias = checked->wants_bias;
  const int32_t max_k = checked->max_k;
  DeviceScope on_device(checked->device);
  TILECRAFT_RETURN_IF_ERROR(on_device.status());
  std::unique_ptr<GroupedGemmArguments> out(new GroupedGemmArguments());
  out->device_ = checked->device;
  out->entry_ = checked->entry;
  // Pointers: A, B, C, D arrays of `count` each; then leading dimensions likewise.
  std::vector<const void*> pointers(4 * count, nullptr);
  std::vector<int64_t> lds(4 * count, 0);
  std::vector<int32_t> sizes(3 * count);
  const void* placeholder = nullptr;  // any valid device address, for empty problems
  for (size_t g = 0; g < count; ++g) {
    const GemmCoord& s = problem.problem_sizes[g];
    sizes[3 * g] = static_cast<int32_t>(s.m);
    sizes[3 * g + 1] = static_cast<int32_t>(s.n);
    sizes[3 * g + 2] = static_cast<int32_t>(s.k);
    for (int w = 0; w < 4; ++w) lds[w * count + g] = placed[4 * g + w].ld;
    if (s.m == 0 || s.n == 0) continue;  // empty: given the placeholder below
    const TensorView* tensors[4] = {&problem.A[g], &problem.B[g], has_C ? &problem.C[g] : nullptr,
                                    &problem.D[g]};
    for (int w : {0, 1, 3, 2}) {
      if (w == 2 && !has_C) {
        pointers[2 * count + g] = pointers[3 * count + g];  // never read with beta == 0
        continue;
      }
      const bool output = w == 3;
      TILECRAFT_RETURN_IF_ERROR(out->stage(*tensors[w], placed[4 * g + w].span_elements,
                                           !output || !has_C, output, &pointers[w * count + g]));
      if (placeholder == nullptr) placeholder = pointers[w * count + g];
    }
  }
  for (size_t g = 0; g < count; ++g) {
    const GemmCoord& s = problem.problem_sizes[g];
    if (s.m != 0 && s.n != 0) continue;
    for (int w = 0; w < 4; ++w) pointers[w * count + g] = placeholder;
  }
  if (placeholder == nullptr) {
    // Every problem is empty: nothing will launch; one tiny buffer stands in for all operands
    // (the module still checks the arguments).
    out->launches_nothing_ = true;
    auto tiny = DeviceBuffer::allocate(256);
    if (!tiny) return tiny.status();
    placeholder = tiny->data();
    out->staged_.push_back(std::move(*tiny));
    std::fill(pointers.begin(), pointers.end(), placeholder);
  }
  // One upload: sizes (int32, padded to 16 bytes), then pointers, then leading dimensions.
  const size_t sizes_bytes = (sizes.size() * sizeof(int32_t) + 15) / 16 * 16;
  const size_t pointer_bytes = pointers.size() * sizeof(void*);
  std::vector<unsigned char> blob(sizes_bytes + pointer_bytes + lds.size() * sizeof(int64_t), 0);
  std::memcpy(blob.data(), sizes.data(), sizes.size() * sizeof(int32_t));
  std::memcpy(blob.data() + sizes_bytes, pointers.data(), pointer_bytes);
  std::memcpy(blob.data() + sizes_bytes + pointer_bytes, lds.data(), lds.size() * sizeof(int64_t));
  auto device = out->upload(blob.data(), blob.size(), "copying the grouped problems' arrays");
  if (!device) return device.status();
  auto* base = static_cast<unsigned char*>(*device);
  auto* device_pointers = reinterpret_cast<void**>(base + sizes_bytes);
  auto* device_lds = reinterpret_cast<const int64_t*>(base + sizes_bytes + pointer_bytes);

  const void* const* device_bias = nullptr;
  if (wants_bias) {
    std::vector<const void*> bias_pointers(count, placeholder);
    for (size_t g = 0; g < count; ++g) {
      const GemmCoord& s = problem.problem_sizes[g];
      if (s.m == 0 || s.n == 0) continue;
      TILECRAFT_RETURN_IF_ERROR(out->stage(problem.bias[g], s.n, true, false, &bias_pointers[g]));
    }
    auto uploaded = out->upload(bias_pointers.data(), count * sizeof(void*),
                                "copying the grouped problems' bias pointers");
    if (!uploaded) return uploaded.status();
    device_bias = static_cast<const void* const*>(*uploaded);
  }
  out->sizes_ = std::move(sizes);
  tc_grouped_args& a = out->args_;
  a.bias_array = device_bias;
  a.problem_count = static_cast<int32_t>(count);
  a.problem_sizes = reinterpret_cast<const int32_t*>(base);
  a.host_problem_sizes = out->sizes_.data();
  a.A_array = const_cast<const void* const*>(device_pointers);
  a.B_array = const_cast<const void* const*>(device_pointers + count);
  a.C_array = const_cast<const void* const*>(device_pointers + 2 * count);
  a.D_array = device_pointers + 3 * count;
  a.lda_array = device_lds;
  a.ldb_array = device_lds + count;
  a.ldc_array = device_lds + 2 * count;
  a.ldd_array = device_lds + 3 * count;
  a.max_k = max_k;
  TILECRAFT_RETURN_IF_ERROR(out->finish_problem(operation, problem));
  return out;
}

Result<std::unique_ptr<GroupedGemmArguments>> GroupedGemmArguments::make(
    const GemmOperation& operation, const StackedGroupedGemmProblem& problem) {
  if (!problem.expand_on_device) {
    auto split = problem.split();
    if (!split) return split.status();
    return make(operation, *split);
  }
  // Every group's rows are checked as rows of the stacked tensors (their pointers as aligned as
  // any row's); the module reads the offsets and fills the arrays on the stream.
  auto shape = problem.representative();
  if (!shape) return shape.status();
  auto checked = check_problem(operation, *shape);
  if (!checked) return checked.status();
  DeviceScope on_device(checked->device);
  TILECRAFT_RETURN_IF_ERROR(on_device.status());
  std::unique_ptr<GroupedGemmArguments> out(new GroupedGemmArguments());
  out->device_ = checked->device;
  out->entry_ = checked->entry;
  out->sizes_.clear();
  for (const GemmCoord& s : shape->problem_sizes) {
    out->sizes_.insert(out->sizes_.end(), {int32_t(s.m), int32_t(s.n), int32_t(s.k)});
  }
  const GemmDescription& d = operation.description();
  TILECRAFT_RETURN_IF_ERROR(check_stacked_alignment(problem, d));
  const auto bytes = [](const TensorView& t, int dimension) {
    return t.strides[dimension] * static_cast<int64_t>(storage_bytes(t.dtype));
  };
  // The last group has rows whenever any has (its leading dimensions are every group's).
  const OperandPlacement* placed = &checked->placed[checked->placed.size() - 4];
  tc_grouped_args& a = out->args_;
  a.stacked_offsets = static_cast<const int32_t*>(problem.offsets.data);
  a.stacked_offsets_step = problem.offsets.strides[0];
  a.stacked_A = problem.A.data;
  a.stacked_lda = placed[0].ld;
  a.stacked_B = problem.B.data;
  a.stacked_ldb = placed[1].ld;
  a.stacked_D = problem.D.data;
  if (problem.B.rank == 2) {  // the stacked rows are each group's K: columns of A, rows of B
    a.problem_count = static_cast<int32_t>(problem.offsets.shape[0]);
    a.stacked_rows_are_k = 1;
    a.stacked_rows = problem.B.shape[0];
    a.max_k = static_cast<int32_t>(problem.B.shape[0]);
    a.stacked_m = static_cast<int32_t>(problem.A.shape[0]);
    a.stacked_n = static_cast<int32_t>(problem.B.shape[1]);
    a.stacked_A_row_bytes = bytes(problem.A, 1);
    a.stacked_B_row_bytes = bytes(problem.B, 0);
    a.stacked_D_group_bytes = bytes(problem.D, 0);
    a.stacked_ldd = problem.D.strides[1];  // also when every group is empty (zeros only)
  } else {
    a.problem_count = static_cast<int32_t>(problem.B.shape[0]);
    a.stacked_rows = problem.A.shape[0];
    a.max_k = static_cast<int32_t>(problem.A.shape[1]);
    a.stacked_n = static_cast<int32_t>(problem.B.shape[2]);
    a.stacked_k = static_cast<int32_t>(problem.A.shape[1]);
    a.stacked_A_row_bytes = bytes(problem.A, 0);
    a.stacked_B_group_bytes = bytes(problem.B, 0);
    a.stacked_D_row_bytes = bytes(problem.D, 0);
    a.stacked_ldd = placed[3].ld;
    if (checked->has_C) {
      a.stacked_C = problem.C.data;
      a.stacked_C_row_bytes = bytes(problem.C, 0);
      a.stacked_ldc = placed[2].ld;
    }
    if (checked->wants_bias) {
      a.stacked_bias = problem.bias.data;
      a.stacked_bias_group_bytes = bytes(problem.bias, 0);
    }
  }
  TILECRAFT_RETURN_IF_ERROR(out->finish_problem(operation, problem));
  return out;
}

template <class Problem>
Status GroupedGemmArguments::finish_problem(const GemmOperation& operation,
                                            const Problem& problem) {
  tc_grouped_args& a = args_;
  detail::set_output_op(a.header, problem.output_op);
  // Grouped kernels take per-tensor scales folded into alpha and beta (1 where not scaled):
  // D = scale_d * (alpha * scale_a * scale_b * acc + beta * scale_c * C).
  a.header.alpha = problem.output_op.alpha * problem.scale_a * problem.scale_b * problem.scale_d;
  a.header.beta = problem.output_op.beta * problem.scale_c * problem.scale_d;
  return finish(operation.procedural_name(), problem.workspace, problem.workspace_bytes);
}

}  // namespace tilecraft
