// The autotuner: compile the top-ranked candidates, check each once, time the ones that pass,
// store the fastest.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <set>

#include "tilecraft/discover/performance_model.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/tune/tuning.hpp"
#include "tune/family_index.hpp"
#include "tune/launch_timer.hpp"
#include "tune/trial.hpp"

namespace tilecraft::tune {
namespace {

using Clock = std::chrono::steady_clock;

std::string first_line(const std::string& text) {
  const size_t end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end) + " [...]";
}

// What one tuning run needs to know of its arguments, whatever their family.
struct TuningProblem {
  int device = 0;
  ProblemSignature signature;
  std::string shape_text;          // "1024x512x256", "32 groups of ...", a layer
  std::array<int64_t, 4> shape{};  // what TunedChoice::shape records
  double flops = 0;
  std::vector<api::Kernel> candidates;
  std::function<Result<std::unique_ptr<Trial>>()> make_trial;
};

Result<TuningReport> tune_problem(const TuningProblem& problem, const TuningOptions& options,
                                  const compile::ProgressFn& progress);

std::string gemm_shape_text(const api::GemmArguments& args) {
  std::string text =
      std::to_string(args.m()) + "x" + std::to_string(args.n()) + "x" + std::to_string(args.k());
  if (args.batch() > 1) text += " (batch " + std::to_string(args.batch()) + ")";
  return text;
}

// A kernel's design with its accesses left out: kernels that differ only in how wide they read
// and write compute alike, and the widest the arguments admit is the fastest.
std::string design_without_alignment(const api::Kernel& kernel) {
  GemmDescription d = kernel.description();
  d.A.alignment = d.B.alignment = d.C.alignment = 1;
  return d.procedural_name() + "/" + std::to_string(kernel.metadata().design.split_k_slices);
}

// A kernel's tile and schedule (and slices): the model often ranks a tile's cluster and swizzle
// variants side by side, which would fill the places with one tile.
std::string tile_family(const api::Kernel& kernel) {
  const TileDescription& t = kernel.description().tile;
  return std::to_string(kernel.description().arch) + ":" + std::to_string(t.threadblock_shape[0]) +
         "x" + std::to_string(t.threadblock_shape[1]) + "x" +
         std::to_string(t.threadblock_shape[2]) + ":" +
         std::to_string(static_cast<int>(t.kernel_schedule)) + ":" +
         std::to_string(kernel.metadata().design.split_k_slices);
}

// Variants of one tile family measured before every family had its turn: two of its clusters and
// swizzles, and one of each longer fp8 promotion interval.
constexpr int kPerTileFamily = 2;

int family_share(const api::Kernel& kernel) {
  const api::DesignMetadata& d = kernel.metadata().design;
  const bool derived =
      d.mma_promotion_interval > 0 || (d.arch == 90 && !discover::is_space_tile_n(d.tile_shape[1]));
  return derived ? 1 : kPerTileFamily;
}

// The top max_candidates kernels of get_kernels(args) that `options` admits, best first: each
// design once (a narrower-access twin of a design already taken is left out), at most
// kPerTileFamily of a tile family (and one of each longer fp8 promotion interval) while later
// families are still to take (then the best of the rest fill the places left), and split-K
// variants in at most half the places (rounded up): the best kernels that run K whole are
// measured too, whatever the model thinks of splitting.
std::vector<api::Kernel> top_candidates(const api::KernelArguments& args,
                                        const TuningOptions& options, int cc) {
  std::vector<api::Kernel> ranked;
  for (api::Kernel& kernel : api::get_kernels(args, {}, cc)) {
    if (admits(options, kernel.metadata())) ranked.push_back(std::move(kernel));
  }
  const size_t places = static_cast<size_t>(options.max_candidates);
  const int max_split = (options.max_candidates + 1) / 2;
  std::vector<bool> taken(ranked.size(), false);
  std::set<std::string> designs;
  std::map<std::string, int> per_family;
  int splits = 0;
  size_t count = 0;
  for (const bool spread : {true, false}) {
    for (size_t i = 0; i < ranked.size() && count < places; ++i) {
      if (taken[i]) continue;
      const bool split = ranked[i].metadata().design.split_k_slices > 1;
      if (split && splits == max_split) continue;
      const std::string family = tile_family(ranked[i]) + "/" +
                                 std::to_string(ranked[i].metadata().design.mma_promotion_interval);
      if (spread && per_family[family] == family_share(ranked[i])) continue;
      if (!designs.insert(design_without_alignment(ranked[i])).second) continue;
      taken[i] = true;
      ++per_family[family];
      splits += split;
      ++count;
    }
  }
  std::vector<api::Kernel> candidates;
  for (size_t i = 0; i < ranked.size(); ++i) {
    if (taken[i]) candidates.push_back(std::move(ranked[i]));
  }
  return candidates;
}

std::string tflops_text(double tflops) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", tflops);
  return text;
}

// Makes `device` current for the tuner's thread and restores the previous one after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    cudaGetDevice(&previous_);
    if (previous_ != device) cudaSetDevice(device);
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

// The second module of each parallel split-K candidate whose kernel compiled (its partials and
// reduction kernels), all at once; a candidate whose companion fails takes that failure.
void compile_parallel_companions(const std::vector<api::Kernel>& candidates,
                                 const std::vector<std::shared_ptr<GemmOperation>>& operations,
                                 std::vector<Status>* compiled,
                                 const compile::ProgressFn& progress) {
  std::vector<std::shared_ptr<GemmOperation>> companions;
  std::set<std::string> seen;
  std::vector<size_t> parallel;
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (!(*compiled)[c] || !candidates[c].metadata().design.split_k_parallel) continue;
    parallel.push_back(c);
    if (seen.insert(candidates[c].description().procedural_name()).second) {
      companions.push_back(operations[c]);
    }
  }
  if (companions.empty()) return;
  const Status built = compile_split_k_parallel(companions, progress);
  if (!built) {
    for (size_t c : parallel) (*compiled)[c] = built;
  }
}

}  // namespace

std::vector<api::Kernel> tuning_candidates(const api::GemmArguments& args,
                                           const TuningOptions& options, int cc) {
  return top_candidates(args, options, cc);
}
std::vector<api::Kernel> tuning_candidates(const api::GroupedGemmArguments& args,
                                           const TuningOptions& options, int cc) {
  return top_candidates(args, options, cc);
}
std::vector<api::Kernel> tuning_candidates(const api::Conv2dArguments& args,
                                           const TuningOptions& options, int cc) {
  return top_candidates(args, options, cc);
}

namespace {

// fn(args) with the arguments' own family type, or an error naming problems[i].
template <typename Fn>
Status with_family(const api::KernelArguments& args, size_t i, Fn fn) {
  return visit_family(args, fn, [i] {
    return Status::invalid("problems[" + std::to_string(i) +
                           "]: expected GEMM, grouped GEMM or convolution arguments");
  });
}

}  // namespace

Status precompile_candidates(const std::vector<const api::KernelArguments*>& problems,
                             const TuningOptions& options, const compile::ProgressFn& progress) {
  TILECRAFT_RETURN_IF_ERROR(validate(options));
  std::vector<std::shared_ptr<GemmOperation>> operations;
  std::map<std::string, std::shared_ptr<GemmOperation>> by_kernel;
  for (size_t i = 0; i < problems.size(); ++i) {
    if (problems[i] == nullptr) {
      return Status::invalid("problems[" + std::to_string(i) + "]: got no arguments");
    }
    TILECRAFT_RETURN_IF_ERROR(with_family(*problems[i], i, [&](const auto& args) -> Status {
      auto info = device_info(args.device());
      if (!info) return info.status();
      // Arguments whose signature cannot be made cannot tune: refused here already.
      auto signature = signature_of(args, options.allow_tf32);
      if (!signature) return signature.status();
      for (const api::Kernel& kernel : tuning_candidates(args, options, info->compute_capability)) {
        // Candidates that differ only in their K slices share one kernel: it compiles once.
        std::shared_ptr<GemmOperation>& same = by_kernel[kernel.description().procedural_name()];
        if (!same) {
          auto operation = kernel.operation();
          if (!operation) return operation.status();
          same = *operation;
          operations.push_back(same);
        }
      }
      return Status::ok();
    }));
  }
  if (progress) {
    progress("tilecraft: " + std::to_string(operations.size()) + " tuning candidates of " +
             std::to_string(problems.size()) + " problems compile (each in its own module)");
  }
  // A candidate that fails to compile here fails again, with its reason, when its problem tunes;
  // the family index learns of the others when their tuning has checked them.
  (void)compile_each_operation(operations, progress, /*one_kernel_per_module=*/true);
  return Status::ok();
}

namespace {

// The parts of a TuningProblem every family fills the same way.
template <typename Args>
Result<TuningProblem> problem_of(const Args& args, int device, const TuningOptions& options,
                                 std::string shape_text, std::array<int64_t, 4> shape) {
  TILECRAFT_RETURN_IF_ERROR(validate(options));
  auto signature = signature_of(args, options.allow_tf32);
  if (!signature) return signature.status();
  auto info = device_info(device);
  if (!info) return info.status();
  TuningProblem problem;
  problem.device = device;
  problem.signature = *signature;
  problem.shape_text = std::move(shape_text);
  problem.shape = shape;
  problem.candidates = tuning_candidates(args, options, info->compute_capability);
  problem.make_trial = [&args] { return make_trial(args, /*seed=*/0x7c); };
  return problem;
}

}  // namespace

Result<TuningReport> tune_gemm(const api::GemmArguments& args, const TuningOptions& options,
                               const compile::ProgressFn& progress) {
  DeviceGuard guard(args.A().device_id);
  auto problem = problem_of(args, args.A().device_id, options, gemm_shape_text(args),
                            {args.m(), args.n(), args.k(), args.batch()});
  if (!problem) return problem.status();
  problem->flops = 2.0 * args.m() * args.n() * args.k() * args.batch();
  return tune_problem(*problem, options, progress);
}

Result<TuningReport> tune_grouped_gemm(const api::GroupedGemmArguments& args,
                                       const TuningOptions& options,
                                       const compile::ProgressFn& progress) {
  DeviceGuard guard(args.device());
  const GroupedShape s = grouped_shape(args);
  auto problem = problem_of(args, args.device(), options, s.text, s.extents);
  if (!problem) return problem.status();
  problem->flops = args.flops();
  return tune_problem(*problem, options, progress);
}

Result<TuningReport> tune_conv2d(const api::Conv2dArguments& args, const TuningOptions& options,
                                 const compile::ProgressFn& progress) {
  DeviceGuard guard(args.device());
  const auto [m, n, k] = args.gemm_mnk();
  auto problem =
      problem_of(args, args.device(), options,
                 std::string(to_string(args.kind())) + " " + args.problem_size().to_string(),
                 {m, n, k, args.problem_size().n});
  if (!problem) return problem.status();
  problem->flops = args.flops();
  return tune_problem(*problem, options, progress);
}

namespace {

Result<TuningReport> tune_problem(const TuningProblem& problem, const TuningOptions& options,
                                  const compile::ProgressFn& progress) {
  const auto start = Clock::now();
  const auto deadline_passed = [&] {
    return options.max_seconds > 0 && seconds_since(start) > options.max_seconds;
  };
  const int device = problem.device;
  auto info = device_info(device);
  if (!info) return info.status();

  TuningReport report;
  report.signature = problem.signature;
  const std::vector<api::Kernel>& candidates = problem.candidates;
  if (candidates.empty()) {
    return Status::unsupported("no kernel supports these arguments (" + problem.shape_text +
                               "), so there is nothing to tune");
  }
  const std::string what = "tilecraft: tuning " + problem.shape_text + " on " + info->name;
  if (progress) {
    progress(what + ": " + std::to_string(candidates.size()) +
             " candidates compile (each in its own module), then run");
  }
  for (const api::Kernel& kernel : candidates) {
    report.candidates.emplace_back().kernel_name = kernel.metadata().kernel_name;
  }

  // 1. Compile in parallel; the budget interrupts what is still compiling.
  std::vector<std::shared_ptr<GemmOperation>> operations(candidates.size());
  std::vector<Status> compiled(candidates.size());
  {
    std::vector<std::shared_ptr<GemmOperation>> to_compile;
    std::vector<size_t> index;
    // Candidates that differ only in their K slices share one kernel: it compiles once.
    std::map<std::string, size_t> first_of;
    std::vector<std::pair<size_t, size_t>> same_kernel;
    for (size_t c = 0; c < candidates.size(); ++c) {
      auto operation = candidates[c].operation();
      if (!operation) {
        compiled[c] = operation.status();
        continue;
      }
      operations[c] = *operation;
      const auto [first, added] =
          first_of.emplace(candidates[c].description().procedural_name(), c);
      if (!added) {
        same_kernel.emplace_back(c, first->second);
        continue;
      }
      to_compile.push_back(*operation);
      index.push_back(c);
    }
    compile::InterruptScope budget(deadline_passed);
    auto statuses = compile_each_operation(to_compile, progress, /*one_kernel_per_module=*/true);
    for (size_t i = 0; i < statuses.size(); ++i) compiled[index[i]] = std::move(statuses[i]);
    for (const auto& [c, first] : same_kernel) compiled[c] = compiled[first];
    compile_parallel_companions(candidates, operations, &compiled, progress);
  }
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (compiled[c]) continue;
    CandidateResult& r = report.candidates[c];
    const bool budget = compiled[c].code() == StatusCode::kCancelled && deadline_passed();
    r.outcome = budget ? Outcome::timed_out : Outcome::compile_failed;
    r.reason = budget ? "the tuning budget of " + tflops_text(options.max_seconds) +
                            " s ran out while it compiled"
                      : first_line(compiled[c].message());
    if (compiled[c].code() == StatusCode::kCancelled && !budget) return compiled[c];
  }

  // 2. Check each compiled candidate once on fresh random data, then time it.
  auto scratch = problem.make_trial();
  if (!scratch) return scratch.status();
  auto timer = LaunchTimer::make(device, info->l2_cache_bytes);
  if (!timer) return timer.status();
  const api::KernelArguments& trial = (*scratch)->arguments();
  const double flops = problem.flops;
  std::string clocks;
  for (size_t c = 0; c < candidates.size(); ++c) {
    CandidateResult& r = report.candidates[c];
    if (!compiled[c]) continue;
    if (deadline_passed()) {
      r.outcome = Outcome::timed_out;
      r.reason =
          "the tuning budget of " + tflops_text(options.max_seconds) + " s ran out before it ran";
      continue;
    }
    const api::Kernel& kernel = candidates[c];
    auto launch = [&](void* stream) { return kernel.run(trial, nullptr, stream); };
    Status ran = (*scratch)->poison_output((*timer)->stream());
    if (ran) ran = launch((*timer)->stream());
    if (ran) ran = (*timer)->wait(30);
    if (!ran) {
      const bool hung = ran.message().rfind("timed out", 0) == 0;
      r.outcome = hung ? Outcome::timed_out : Outcome::run_failed;
      r.reason = first_line(ran.message());
      if (hung || ran.code() == StatusCode::kCudaError) {
        // The device may be unusable after a failed or hung kernel: measure nothing more.
        for (size_t rest = c + 1; rest < candidates.size(); ++rest) {
          if (!compiled[rest]) continue;
          report.candidates[rest].outcome = Outcome::skipped;
          report.candidates[rest].reason = "not run after " + r.kernel_name + " failed on the GPU";
        }
        break;
      }
      continue;
    }
    if (Status checked = (*scratch)->check_output(kernel.metadata()); !checked) {
      r.outcome = Outcome::verify_failed;
      r.reason = checked.message();
      if (progress) progress(what + ": " + r.kernel_name + " is wrong (" + r.reason + "): skipped");
      continue;
    }
    const double left = options.max_seconds > 0 ? options.max_seconds - seconds_since(start) : 0;
    const double budget = options.max_seconds > 0 ? std::max(0.001, std::min(0.5, left)) : 0.5;
    auto timing = (*timer)->time(launch, options.repeats, budget);
    if (!timing) {
      r.outcome = Outcome::run_failed;
      r.reason = first_line(timing.status().message());
      continue;
    }
    r.outcome = Outcome::measured;
    r.median_us = timing->median_us;
    r.repeats = timing->repeats;
    r.tflops = flops / (timing->median_us * 1e-6) / 1e12;
    const std::string seen_clocks = clocks_note(device);
    if (clocks.find(seen_clocks) == std::string::npos) {
      clocks += (clocks.empty() ? "" : "; ") + seen_clocks;
    }
    if (progress) {
      progress(what + ": [" + std::to_string(c + 1) + "/" + std::to_string(candidates.size()) +
               "] " + r.kernel_name + " " + tflops_text(r.tflops) + " TFLOP/s (median of " +
               std::to_string(r.repeats) + ")");
    }
  }
  report.clocks = clocks;
  // The family index serves new shapes of the family at once: only kernels checked right here.
  std::vector<std::string> verified;
  for (const CandidateResult& r : report.candidates) {
    if (r.outcome == Outcome::measured) verified.push_back(r.kernel_name);
  }
  note_compiled(problem.signature, verified);
  for (size_t c = 0; c < report.candidates.size(); ++c) {
    const CandidateResult& r = report.candidates[c];
    if (r.outcome != Outcome::measured) continue;
    if (!report.winner || r.median_us < report.candidates[*report.winner].median_us) {
      report.winner = c;
    }
  }
  report.seconds = seconds_since(start);
  if (!report.winner) {
    std::string reasons;
    for (const CandidateResult& r : report.candidates) {
      reasons +=
          "\n  " + r.kernel_name + ": " + std::string(to_string(r.outcome)) + " (" + r.reason + ")";
    }
    return Status(StatusCode::kNotSupported,
                  "tuning " + problem.shape_text + ": no candidate ran and verified:" + reasons);
  }
  const CandidateResult& best = report.candidates[*report.winner];
  TunedChoice choice;
  choice.kernel_name = best.kernel_name;
  choice.median_us = best.median_us;
  choice.tflops = best.tflops;
  choice.shape = problem.shape;
  choice.clocks = clocks;
  choice.tuned_at = static_cast<int64_t>(std::time(nullptr));
  choice.candidates = report.candidates;
  Status stored = store_tuned(problem.signature, choice);
  report.stored = static_cast<bool>(stored);
  if (progress) {
    progress(what + ": winner " + best.kernel_name + " at " + tflops_text(best.tflops) +
             " TFLOP/s, " + tflops_text(report.seconds) + " s" +
             (stored ? std::string(", stored") : ", not stored: " + stored.message()));
  }
  return report;
}

}  // namespace

}  // namespace tilecraft::tune
