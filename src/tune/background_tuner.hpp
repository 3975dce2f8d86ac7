// One background thread per process that runs tuning jobs one after another (a tuning run
// compiles with all of Settings::compile_jobs and times on the GPU: two at once would only
// disturb each other's timing). Jobs for a signature already queued or running are shared.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "tilecraft/discover/api.hpp"
#include "tilecraft/tune/tuning.hpp"

namespace tilecraft::tune {

struct TuningJob {
  std::string key;  // the signature's key
  std::atomic<bool> done{false};
  std::mutex mutex;
  std::condition_variable finished;
  std::string winner;  // the kernel name, once done, if tuning found one
  std::string error;   // why not, otherwise
};

// One tuning run of some family's arguments (tune_gemm, tune_grouped_gemm, tune_conv2d on a
// copy of the arguments: their shapes, never their tensors' contents).
using TuningRun =
    std::function<Result<TuningReport>(const TuningOptions&, const compile::ProgressFn&)>;

// Queues `run` for `signature` (or returns the job already queued for it); nullptr when the
// queue is full (kMaxQueuedJobs), with *why saying so. The run gets `options` in mode force.
std::shared_ptr<TuningJob> tune_in_background(const ProblemSignature& signature,
                                              const TuningOptions& options, TuningRun run,
                                              std::string* why);

// Waits for the job (true) or until timeout_seconds pass (false).
bool wait_for(const TuningJob& job, double timeout_seconds);

}  // namespace tilecraft::tune
