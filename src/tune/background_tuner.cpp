#include "tune/background_tuner.hpp"

#include <chrono>
#include <deque>
#include <map>
#include <thread>

#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/runtime/device.hpp"

namespace tilecraft::tune {
namespace {

constexpr size_t kMaxQueuedJobs = 64;

struct Queued {
  std::shared_ptr<TuningJob> job;
  TuningRun run;
  TuningOptions options;
};

class Worker {
 public:
  static Worker& instance() {
    static Worker worker;
    return worker;
  }

  std::shared_ptr<TuningJob> submit(const ProblemSignature& signature, const TuningOptions& options,
                                    TuningRun run, std::string* why) {
    std::lock_guard lock(mutex_);
    const std::string key = signature.key();
    if (auto it = active_.find(key); it != active_.end()) return it->second;
    if (queue_.size() >= kMaxQueuedJobs) {
      *why = "the background tuning queue is full (" + std::to_string(kMaxQueuedJobs) +
             " signatures waiting)";
      return nullptr;
    }
    auto job = std::make_shared<TuningJob>();
    job->key = key;
    active_[key] = job;
    queue_.push_back({job, std::move(run), options});
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    wake_.notify_one();
    return job;
  }

  // At exit: compiles still running are interrupted, the thread is joined.
  ~Worker() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  Worker() = default;

  void loop() {
    compile::InterruptScope stopping([this] { return stop_.load(); });
    // The tuner's allocations, copies and timings go on streams of its own; they must not fail
    // (or spoil the capture) while the caller's thread captures a CUDA graph.
    allow_calls_during_other_threads_captures();
    while (true) {
      Queued next;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        next = std::move(queue_.front());
        queue_.pop_front();
      }
      auto progress = [](std::string_view line) {
        compile::default_progress("(background) " + std::string(line));
      };
      TuningOptions options = next.options;
      options.mode = TuningMode::force;
      auto report = next.run(options, progress);
      {
        std::lock_guard lock(next.job->mutex);
        if (report && report->winner) {
          next.job->winner = report->candidates[*report->winner].kernel_name;
        } else {
          next.job->error = report ? "no winner" : report.status().message();
        }
        next.job->done = true;
      }
      next.job->finished.notify_all();
      std::lock_guard lock(mutex_);
      active_.erase(next.job->key);
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Queued> queue_;
  std::map<std::string, std::shared_ptr<TuningJob>> active_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

std::shared_ptr<TuningJob> tune_in_background(const ProblemSignature& signature,
                                              const TuningOptions& options, TuningRun run,
                                              std::string* why) {
  return Worker::instance().submit(signature, options, std::move(run), why);
}

bool wait_for(const TuningJob& job, double timeout_seconds) {
  auto& mutable_job = const_cast<TuningJob&>(job);
  std::unique_lock lock(mutable_job.mutex);
  return mutable_job.finished.wait_for(lock, std::chrono::duration<double>(timeout_seconds),
                                       [&] { return job.done.load(); });
}

}  // namespace tilecraft::tune
