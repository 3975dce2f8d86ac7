// What serves a one-call op of a family whose arguments are not planned ahead (grouped GEMM,
// convolution), by the tuning mode (TILECRAFT_TUNING), as GemmPlan does for GEMMs: a stored
// winner of the signature; else (automatic) a kernel compiled earlier for the problem family, or
// the ranked first pick compiled now, while the candidates tune in the background and the winner
// takes over once stored; (blocking, force) the winner of a tuning run made now; (off) the ranked
// first pick. What serves is remembered for the process per signature, so that later calls pay
// no ranking.
#pragma once

#include <cstddef>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/tune/tuning.hpp"
#include "tune/background_tuner.hpp"
#include "tune/family_index.hpp"

namespace tilecraft::tune {

// How many ranked kernels a first pick tries before it gives up.
constexpr size_t kRankedTries = 4;

// Names `kernel`, which failed to build, in *skipped and on stderr.
inline void note_skipped(const api::Kernel& kernel, const Status& failure, std::string* skipped) {
  const std::string& name = kernel.metadata().kernel_name;
  const std::string why = failure.message().substr(0, failure.message().find('\n'));
  *skipped += (skipped->empty() ? "" : ", ") + name + " (" + why + ")";
  compile::default_progress("tilecraft: " + name +
                            " failed; trying the next ranked kernel: " + why);
}

// "612.3 TFLOP/s" of a stored or measured winner.
inline std::string tflops_note(double tflops) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f TFLOP/s", tflops);
  return text;
}

struct ServedKernel {
  api::Kernel kernel;
  std::string reason;
  std::shared_ptr<TuningJob> job;  // background tuning not yet adopted
};

struct ServedKernels {
  std::mutex mutex;
  std::map<std::string, ServedKernel> by_signature;
};

inline ServedKernels& served_kernels() {
  static ServedKernels served;
  return served;
}

// Runs `args` on the first of `ranked` (up to kRankedTries) whose kernel builds; *served names
// it. A kernel that fails to build is skipped and named in the reason; any other failure (a
// refusal of the arguments) is the caller's and returned.
template <typename Args>
Status run_first_that_builds(const Args& args, void* stream, const std::vector<api::Kernel>& ranked,
                             std::string reason, ServedKernel* served) {
  std::string skipped;
  Status last = Status::ok();
  for (size_t i = 0; i < ranked.size() && i < kRankedTries; ++i) {
    last = ranked[i].run(args, nullptr, stream);
    if (last) {
      served->kernel = ranked[i];
      served->reason = skipped.empty() ? reason : reason + "; skipped " + skipped;
      return last;
    }
    if (last.code() != StatusCode::kCompileError) return last;
    note_skipped(ranked[i], last, &skipped);
  }
  return last;
}

// The best ranked kernel that serves at once: one the tuner checked for the signature's family
// (or a first pick compiled for it; family_index) whose module waits in the cache. A kernel
// merely loaded in this process does not count: a tuning run loads candidates its check refuses.
inline const api::Kernel* first_ready_kernel(const std::vector<api::Kernel>& ranked,
                                             const ProblemSignature& signature) {
  const std::set<std::string> family = compiled_in_family(signature);
  for (const api::Kernel& kernel : ranked) {
    if (family.count(kernel.metadata().kernel_name) && kernel_is_ready(kernel.description())) {
      return &kernel;
    }
  }
  return nullptr;
}

inline const api::Kernel* find_kernel(const std::vector<api::Kernel>& ranked,
                                      const std::string& name) {
  for (const api::Kernel& kernel : ranked) {
    if (kernel.metadata().kernel_name == name) return &kernel;
  }
  return nullptr;
}

// The served kernel of `args`' signature, run on them, chosen under `tuning` (default: the
// environment's options). Pick: GroupedPick or ConvPick; `what`:
// "grouped" or "convolution"; tune(args, options, progress): the family's tuning run;
// why_none(): why no kernel is listed.
template <typename Pick, typename Args, typename Tune, typename WhyNone>
Result<Pick> run_served_kernel(const Args& args, void* stream,
                               const std::optional<TuningOptions>& tuning, const char* what,
                               Tune tune, WhyNone why_none) {
  auto info = device_info(args.device());  // the operands' device, whichever is current
  if (!info) return info.status();
  Result<TuningOptions> options =
      tuning ? Result<TuningOptions>(*tuning) : tuning_options_from_environment();
  if (!options) return options.status();
  TILECRAFT_RETURN_IF_ERROR(validate(*options));
  auto signature = signature_of(args, options->allow_tf32);
  if (!signature) return signature.status();
  // What serves depends on the options too (a forced tuning replaces what served before).
  const std::string key = signature->device_model + "\n" + signature->text() + "|" +
                          std::string(to_string(options->mode)) + "|" +
                          std::to_string(options->max_candidates) + "|" +
                          std::to_string(options->allow_tf32);
  ServedKernels& all = served_kernels();
  std::optional<ServedKernel> remembered;
  {
    std::lock_guard lock(all.mutex);
    auto found = all.by_signature.find(key);
    if (found != all.by_signature.end()) remembered = found->second;
  }
  std::vector<api::Kernel> ranked;
  auto rank = [&] {
    if (!ranked.empty()) return;
    for (api::Kernel& kernel : api::get_kernels(args, {}, info->compute_capability)) {
      if (admits(*options, kernel.metadata())) ranked.push_back(std::move(kernel));
    }
  };
  // A CUDA graph capture keeps what served before it (see GemmPlan::launch).
  if (remembered && remembered->job && remembered->job->done.load(std::memory_order_acquire) &&
      !stream_is_capturing(stream)) {
    std::string winner, error;
    {
      std::lock_guard lock(remembered->job->mutex);
      winner = remembered->job->winner;
      error = remembered->job->error;
    }
    remembered->job.reset();
    rank();
    if (const api::Kernel* kernel = winner.empty() ? nullptr : find_kernel(ranked, winner)) {
      remembered->kernel = *kernel;
      remembered->reason = "tuned winner (measured in the background)";
    } else {
      remembered->reason += "; background tuning found no winner: " +
                            (winner.empty() ? error : winner + " is not a candidate here");
    }
    std::lock_guard lock(all.mutex);
    all.by_signature[key] = *remembered;
  }
  // A problem of the signature that the remembered kernel cannot run (a bucketed extent) picks
  // for itself below.
  if (remembered && remembered->kernel.supports(args)) {
    TILECRAFT_RETURN_IF_ERROR(
        remembered->kernel.run(args, nullptr, stream, /*assume_supported_args=*/true));
    return Pick{remembered->kernel.metadata().kernel_name, remembered->reason};
  }
  if (stream_is_capturing(stream)) {
    return Status::invalid(
        std::string("stream: capturing a CUDA graph, and no ") + what +
        " kernel has served this signature in this process yet (choosing, compiling and loading "
        "one cannot be captured): run the call once before the capture");
  }
  rank();
  if (ranked.empty()) return Status::unsupported(why_none());
  const TuningMode mode = options->mode;
  ServedKernel served;
  std::string stale;
  if (mode != TuningMode::force) {
    if (auto tuned = find_tuned(*signature)) {
      if (const api::Kernel* kernel = find_kernel(ranked, tuned->kernel_name)) {
        const Status ran = kernel->run(args, nullptr, stream);
        if (ran) {
          served.kernel = *kernel;
          served.reason = "tuned winner from the tuning cache (" + tflops_note(tuned->tflops) + ")";
        } else if (ran.code() != StatusCode::kCompileError) {
          return ran;
        } else {
          stale = " (the stored winner " + tuned->kernel_name + " failed to build)";
        }
      } else {
        stale = " (the stored winner " + tuned->kernel_name + " is not a candidate any more)";
      }
    }
  }
  const std::string count = std::to_string(ranked.size()) + " " + what + " kernels";
  if (served.reason.empty() && mode == TuningMode::off) {
    TILECRAFT_RETURN_IF_ERROR(run_first_that_builds(
        args, stream, ranked, "ranked first pick of " + count + " (tuning off)" + stale, &served));
  } else if (served.reason.empty() && (mode == TuningMode::blocking || mode == TuningMode::force)) {
    auto report = tune(args, *options, compile::default_progress);
    if (!report) return report.status();
    const CandidateResult& best = report->candidates[*report->winner];
    const api::Kernel* kernel = find_kernel(ranked, best.kernel_name);
    if (!kernel) return Status(StatusCode::kInternal, "tuned winner not among the candidates");
    TILECRAFT_RETURN_IF_ERROR(kernel->run(args, nullptr, stream));
    served.kernel = *kernel;
    served.reason = "tuned now (" + tflops_note(best.tflops) + ", best of " +
                    std::to_string(report->candidates.size()) + " candidates)";
  } else if (served.reason.empty()) {
    // automatic: a kernel that is ready serves at once, or the first pick compiles; the
    // candidates tune in the background either way.
    if (const api::Kernel* ready = first_ready_kernel(ranked, *signature)) {
      TILECRAFT_RETURN_IF_ERROR(ready->run(args, nullptr, stream));
      served.kernel = *ready;
      served.reason = "compiled earlier for this problem family, serves at once" + stale;
    } else {
      TILECRAFT_RETURN_IF_ERROR(run_first_that_builds(
          args, stream, ranked, "ranked first pick of " + count + ", compiled now" + stale,
          &served));
      note_compiled(*signature, {served.kernel.metadata().kernel_name});
    }
    std::string why_not_queued;
    served.job = tune_in_background(
        *signature, *options,
        [args, tune](const TuningOptions& o, const compile::ProgressFn& progress) {
          return tune(args, o, progress);
        },
        &why_not_queued);
    served.reason += served.job ? "; the top " + std::to_string(options->max_candidates) +
                                      " candidates tune in the background"
                                : "; not tuning: " + why_not_queued;
  }
  {
    std::lock_guard lock(all.mutex);
    all.by_signature[key] = served;
  }
  return Pick{served.kernel.metadata().kernel_name, served.reason};
}

}  // namespace tilecraft::tune
