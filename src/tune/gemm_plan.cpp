#include "tilecraft/tune/gemm_plan.hpp"

#include <chrono>
#include <cstdio>
#include <mutex>

#include "tilecraft/discover/kernel_problem.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tune/background_tuner.hpp"
#include "tune/family_index.hpp"
#include "tune/served_pick.hpp"

namespace tilecraft {

using tune::TuningMode;

struct GemmPlan::Impl {
  api::GemmArguments made_for;
  tune::TuningOptions options;
  std::vector<api::Kernel> ranked;  // the kernels that may serve, best first

  mutable std::mutex mutex;
  std::shared_ptr<GemmOperation> operation;
  std::unique_ptr<tilecraft::GemmArguments> prepared;
  PlanState state;
  std::shared_ptr<tune::TuningJob> job;  // background tuning not yet adopted

  const api::Kernel* find(const std::string& name) const {
    for (const api::Kernel& kernel : ranked) {
      if (kernel.metadata().kernel_name == name) return &kernel;
    }
    return nullptr;
  }

  // Compiles (or loads) `kernel` and prepares the plan's arguments for it.
  Status use(const api::Kernel& kernel, std::string reason, bool tuned) {
    auto op = kernel.operation();
    if (!op) return op.status();
    auto problem =
        api::detail::problem_for(made_for, **op, kernel.metadata().design.split_k_slices);
    if (!problem) return problem.status();
    auto made = tilecraft::GemmArguments::make(**op, *problem);  // compiles on first use
    if (!made) return made.status();
    operation = *op;
    prepared = std::move(*made);
    state.kernel_name = kernel.metadata().kernel_name;
    state.reason = std::move(reason);
    state.tuned = tuned;
    return Status::ok();
  }

  // The first ranked kernel that compiles; each one skipped is named, with why,
  // in the state's reason (a kernel of the space that the compiler rejects must not end the call).
  Status use_first_that_compiles(const std::string& reason) {
    std::string skipped;
    Status last = Status::ok();
    for (size_t i = 0; i < ranked.size() && i < tune::kRankedTries; ++i) {
      last = use(ranked[i], reason, false);
      if (last) {
        if (!skipped.empty()) state.reason += "; skipped " + skipped;
        return last;
      }
      if (last.code() == StatusCode::kCancelled) return last;
      tune::note_skipped(ranked[i], last, &skipped);
    }
    return last;
  }

  // Switches to the background winner once there is one (called with the mutex held).
  void adopt_finished_tuning() {
    std::string winner, error;
    {
      std::lock_guard lock(job->mutex);
      winner = job->winner;
      error = job->error;
    }
    job.reset();
    state.tuning = false;
    if (winner.empty()) {
      state.tuning_error = error;
      return;
    }
    const api::Kernel* kernel = find(winner);
    Status used = kernel ? use(*kernel, "tuned winner (measured in the background)", true)
                         : Status::invalid("the winner " + winner + " is not a candidate");
    if (!used) state.tuning_error = "the winner could not be used: " + used.message();
  }
};

GemmPlan::GemmPlan() : impl_(std::make_unique<Impl>()) {}
GemmPlan::~GemmPlan() = default;

namespace {

std::string measured_text(const tune::TunedChoice& choice) {
  char text[160];
  std::snprintf(text, sizeof text, "%.1f TFLOP/s on %lldx%lldx%lld", choice.tflops,
                static_cast<long long>(choice.shape[0]), static_cast<long long>(choice.shape[1]),
                static_cast<long long>(choice.shape[2]));
  return text;
}

}  // namespace

Result<std::shared_ptr<GemmPlan>> GemmPlan::make(const api::GemmArguments& args,
                                                 const tune::TuningOptions& options) {
  TILECRAFT_RETURN_IF_ERROR(tune::validate(options));
  auto info = device_info(args.A().device_id);
  if (!info) return info.status();
  auto signature = tune::signature_of(args, options.allow_tf32);
  if (!signature) return signature.status();
  std::shared_ptr<GemmPlan> plan(new GemmPlan());
  plan->signature_ = *signature;
  Impl& p = *plan->impl_;
  p.made_for = args;
  p.options = options;
  const auto ranking = std::chrono::steady_clock::now();
  for (api::Kernel& kernel : api::get_kernels(&args, {}, info->compute_capability)) {
    if (tune::admits(options, kernel.metadata())) p.ranked.push_back(std::move(kernel));
  }
  const auto ranked = std::chrono::steady_clock::now();
  p.state.rank_ms = std::chrono::duration<double, std::milli>(ranked - ranking).count();
  // Every return below has made the serving kernel ready (or failed).
  struct ReadyClock {
    PlanState& state;
    std::chrono::steady_clock::time_point since;
    ~ReadyClock() {
      state.ready_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
              .count();
    }
  } ready_clock{p.state, ranked};
  if (p.ranked.empty()) {
    return Status::unsupported(
        "no kernel supports these arguments on " + info->name +
        (options.allow_tf32 ? std::string() : std::string(" without tf32 (allow_tf32)")));
  }
  std::lock_guard lock(p.mutex);
  std::string stale;
  if (options.mode != TuningMode::force) {
    if (auto tuned = tune::find_tuned(*signature)) {
      if (const api::Kernel* kernel = p.find(tuned->kernel_name)) {
        const Status used = p.use(
            *kernel, "tuned winner from the tuning cache (" + measured_text(*tuned) + ")", true);
        if (used || used.code() == StatusCode::kCancelled) return used ? Result(plan) : used;
        // A winner that no longer compiles or loads here: the next candidate serves instead.
        const std::string failed = tuned->kernel_name;
        std::erase_if(p.ranked, [&failed](const api::Kernel& k) {
          return k.metadata().kernel_name == failed;
        });
        stale = " (the stored winner " + tuned->kernel_name +
                " failed to compile or load: " + used.message() + ")";
        const std::string note =
            "tilecraft: " + stale.substr(2, stale.size() - 3) + "; using the next candidate\n";
        std::fwrite(note.data(), 1, note.size(), stderr);
        if (p.ranked.empty())
          return Status(used.code(), "no other kernel supports these arguments" + stale);
      } else {
        stale = " (the stored winner " + tuned->kernel_name + " is not a candidate any more)";
      }
    }
  }
  if (options.mode == TuningMode::off) {
    TILECRAFT_RETURN_IF_ERROR(p.use_first_that_compiles("ranked first pick (tuning off)" + stale));
    tune::note_compiled(*signature, {p.state.kernel_name});
    return plan;
  }
  if (options.mode == TuningMode::blocking || options.mode == TuningMode::force) {
    auto report = tune::tune_gemm(args, options);
    if (!report) return report.status();
    const auto& best = report->candidates[*report->winner];
    const api::Kernel* kernel = p.find(best.kernel_name);
    if (!kernel) return Status(StatusCode::kInternal, "tuned winner not among the candidates");
    char text[96];
    std::snprintf(text, sizeof text, "tuned now (%.1f TFLOP/s, best of %zu candidates)",
                  best.tflops, report->candidates.size());
    TILECRAFT_RETURN_IF_ERROR(p.use(*kernel, text, true));
    return plan;
  }
  // automatic: serve at once with a kernel that is ready, or compile the first pick; tune in the
  // background either way.
  if (const api::Kernel* ready = tune::first_ready_kernel(p.ranked, *signature)) {
    TILECRAFT_RETURN_IF_ERROR(
        p.use(*ready, "compiled earlier for this problem family, serves at once" + stale, false));
  } else {
    TILECRAFT_RETURN_IF_ERROR(p.use_first_that_compiles("ranked first pick, compiled now" + stale));
    tune::note_compiled(*signature, {p.state.kernel_name});
  }
  // Queued only now, so that the first pick's compile does not share the CPU with the tuning's.
  std::string why_not_queued;
  p.job = tune::tune_in_background(
      *signature, options,
      [args](const tune::TuningOptions& o, const compile::ProgressFn& progress) {
        return tune::tune_gemm(args, o, progress);
      },
      &why_not_queued);
  p.state.tuning = p.job != nullptr;
  p.state.reason += p.job ? "; the top " + std::to_string(options.max_candidates) +
                                " candidates tune in the background"
                          : "; not tuning: " + why_not_queued;
  return plan;
}

Status GemmPlan::launch(const void* A, const void* B, const void* C, void* out, const void* bias,
                        void* stream) {
  Impl& p = *impl_;
  std::lock_guard lock(p.mutex);
  // The tuned winner takes over outside a CUDA graph capture only: a capture keeps the kernel
  // that served before it (loading a module there would spoil the capture).
  if (p.job && p.job->done.load(std::memory_order_acquire) && !stream_is_capturing(stream)) {
    p.adopt_finished_tuning();
  }
  TILECRAFT_RETURN_IF_ERROR(p.prepared->retarget(A, B, C, out, bias));
  ++p.state.calls;
  return p.operation->run(*p.prepared, stream);
}

Status GemmPlan::run(const api::GemmArguments& args, void* stream) {
  if (!api::detail::same_but_pointers(impl_->made_for, args)) {
    return Status::invalid(
        "args: expected tensors of the shapes, strides and types (and the scalars) the plan was "
        "made for; make a new plan for A " +
        args.A().describe() + ", B " + args.B().describe() + ", out " + args.out().describe());
  }
  const api::EpilogueArguments& e = args.epilogue();
  return launch(args.A().data, args.B().data, e.C.data, args.out().data, e.bias.data, stream);
}

PlanState GemmPlan::state() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->state;
}

bool GemmPlan::wait_for_tuning(double timeout_seconds) const {
  std::shared_ptr<tune::TuningJob> job;
  {
    std::lock_guard lock(impl_->mutex);
    job = impl_->job;
  }
  return !job || tune::wait_for(*job, timeout_seconds);
}

}  // namespace tilecraft
