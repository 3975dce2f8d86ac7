#include "export/choose_kernels.hpp"

#include <cstdint>

#include "tilecraft/tune/tuning.hpp"

namespace tilecraft::exporting {
namespace {

// Placeholder addresses: far apart, aligned to 256 bytes, never dereferenced.
void* choice_placeholder(int which) {
  return reinterpret_cast<void*>((uintptr_t{1} << 40) + (static_cast<uintptr_t>(which) << 36));
}

// A rows x cols choice_matrix (batch of them when batch > 1) in `layout`, packed.
TensorView choice_matrix(int which, DataType type, Layout layout, int64_t batch, int64_t rows,
                         int64_t cols) {
  TensorView t;
  t.data = choice_placeholder(which);
  t.dtype = type == DataType::tf32 ? DataType::f32 : type;
  t.device = DeviceKind::kCuda;
  t.device_id = 0;
  const int lead = batch > 1 ? 1 : 0;
  t.rank = 2 + lead;
  if (lead) {
    t.shape[0] = batch;
    t.strides[0] = rows * cols;
  }
  t.shape[lead] = rows;
  t.shape[lead + 1] = cols;
  const bool row_major = layout == Layout::RowMajor;
  t.strides[lead] = row_major ? cols : 1;
  t.strides[lead + 1] = row_major ? 1 : rows;
  return t;
}

std::string choice_layouts_text(const GemmProblem& p) {
  return std::string(short_name(p.layout_a)) + std::string(short_name(p.layout_b)) +
         std::string(short_name(p.layout_out));
}

}  // namespace

std::string label_of(const GemmProblem& p) {
  if (!p.label.empty()) return p.label;
  std::string text = std::string(short_name(p.a)) + " ";
  if (p.batch != 1) text += std::to_string(p.batch) + "x";
  text += std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) + " " +
          choice_layouts_text(p);
  if (p.bias) text += " +bias";
  if (p.activation != Activation::identity) text += " +" + std::string(to_string(p.activation));
  return text;
}

Result<api::GemmArguments> arguments_of(const GemmProblem& p) {
  const std::string who = label_of(p);
  for (const auto& [name, value] :
       {std::pair{"m", p.m}, {"n", p.n}, {"k", p.k}, {"batch", p.batch}}) {
    if (value < 1 || value > INT32_MAX) {
      return Status::invalid(who + ": " + name + ": expected an extent from 1 to 2147483647, got " +
                             std::to_string(value));
    }
  }
  for (const auto& [name, layout] : {std::pair{"layout_a", p.layout_a},
                                     {"layout_b", p.layout_b},
                                     {"layout_out", p.layout_out}}) {
    if (layout != Layout::RowMajor && layout != Layout::ColumnMajor) {
      return Status::invalid(who + ": " + name + ": expected RowMajor or ColumnMajor, got " +
                             spelled(layout));
    }
  }
  const TensorView A = choice_matrix(0, p.a, p.layout_a, p.batch, p.m, p.k);
  const TensorView B = choice_matrix(1, p.b, p.layout_b, p.batch, p.k, p.n);
  const TensorView out = choice_matrix(2, p.out, p.layout_out, p.batch, p.m, p.n);
  api::EpilogueArguments epilogue;
  epilogue.activation = p.activation;
  if (p.bias)
    epilogue.bias = TensorView::cuda_contiguous(choice_placeholder(3), out.dtype, {p.n}, 0);
  auto args = api::GemmArguments::make(A, B, out, p.accumulator, epilogue);
  if (!args) return Status(args.status().code(), who + ": " + args.status().message());
  return args;
}

Result<Choice> choose_kernel(const GemmProblem& problem, const api::GemmArguments& args, int cc,
                             bool tune_here, const ExportOptions& options,
                             const compile::ProgressFn& progress) {
  const std::string who = label_of(problem);
  tune::TuningOptions tuning = options.tuning;
  tuning.allow_tf32 = problem.allow_tf32;
  if (!tune_here) {
    std::vector<api::Kernel> ranked = tune::tuning_candidates(args, tuning, cc);
    if (ranked.empty()) {
      return Status::unsupported(who + ": no kernel supports it on compute capability " +
                                 std::to_string(cc) + " (A, B and out aligned to " +
                                 std::to_string(args.alignment_a()) + ", " +
                                 std::to_string(args.alignment_b()) + " and " +
                                 std::to_string(args.alignment_out()) + " elements)");
    }
    return Choice{ranked.front(), "ranked first pick, not tuned", false};
  }
  auto signature = tune::signature_of(args, problem.allow_tf32);
  if (!signature)
    return Status(signature.status().code(), who + ": " + signature.status().message());
  std::string winner, how;
  if (auto found = tune::find_tuned(*signature)) {
    winner = found->kernel_name;
    how = "tuned winner (stored)";
  } else {
    progress("tuning " + who);
    auto report = tune::tune_gemm(args, tuning, progress);
    if (!report) return Status(report.status().code(), who + ": " + report.status().message());
    if (!report->winner) {
      std::string reasons;
      for (const tune::CandidateResult& c : report->candidates) {
        reasons += "; " + c.kernel_name + ": " + std::string(tune::to_string(c.outcome)) +
                   (c.reason.empty() ? "" : " (" + c.reason + ")");
      }
      return Status::unsupported(who + ": tuning found no kernel that runs it" + reasons);
    }
    winner = report->candidates[*report->winner].kernel_name;
    how = "tuned now";
  }
  for (const api::Kernel& kernel : api::get_kernels(&args, {}, cc)) {
    if (kernel.metadata().kernel_name == winner) return Choice{kernel, how, true};
  }
  return Status::internal(who + ": the tuned winner " + winner +
                          " is not among the kernels listed for it on compute capability " +
                          std::to_string(cc));
}

}  // namespace tilecraft::exporting
