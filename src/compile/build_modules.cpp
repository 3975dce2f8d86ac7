// build_modules: cache lookups, then the misses compiled several at a time, each key once per
// process (a mutex per key) and once across processes (the cache's per-key file lock).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "compile/nvcc_backend.hpp"
#include "compile/process.hpp"
#include "compile/toolchain.hpp"
#include "tilecraft/compile/artifact_cache.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/compile/kernel_facts.hpp"
#include "tilecraft/core/settings.hpp"

namespace tilecraft::compile {
namespace {

// What this process knows about one key of one cache root. Holding `mutex` is the right to
// compile the key; `private_module` remembers a module built outside the on-disk cache.
struct KeyState {
  std::mutex mutex;
  std::optional<std::string> private_module;
};

std::shared_ptr<KeyState> key_state(const std::string& root, const std::string& key) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<KeyState>> states;
  std::lock_guard lock(mutex);
  std::shared_ptr<KeyState>& state = states[root + '\n' + key];
  if (!state) state = std::make_shared<KeyState>();
  return state;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f s", seconds);
  return text;
}

std::string plural(size_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

struct Job {
  const CompileRequest* request = nullptr;
  std::string key_text;
  std::string key;
};

// Serializes progress lines from the worker threads.
class Reporter {
 public:
  Reporter(const ProgressFn& progress, size_t total) : progress_(progress), total_(total) {}
  void line(const std::string& text) {
    std::lock_guard lock(mutex_);
    if (progress_) progress_(text);
  }
  void finished(const std::string& what) {
    std::lock_guard lock(mutex_);
    ++done_;
    if (progress_) {
      progress_("tilecraft: [" + std::to_string(done_) + "/" + std::to_string(total_) + "] " +
                what);
    }
  }

 private:
  const ProgressFn& progress_;
  size_t total_;
  size_t done_ = 0;
  std::mutex mutex_;
};

std::optional<CompiledModule> find_existing(const ArtifactCache& cache, const Job& job,
                                            KeyState& state, std::string* invalid_reason) {
  std::error_code error;
  if (state.private_module && std::filesystem::exists(*state.private_module, error)) {
    return CompiledModule{*state.private_module, job.key, true, 0.0};
  }
  LookupResult found = cache.lookup(job.key);
  if (invalid_reason) *invalid_reason = found.invalid_reason;
  if (!found.module_path) return std::nullopt;
  return CompiledModule{*found.module_path, job.key, true, 0.0};
}

Status cancelled_status(const CompileRequest& request) {
  return Status(StatusCode::kCancelled,
                "compiling " + request.name + " was interrupted; nothing of it was kept");
}

// Takes the key's in-process mutex, giving up when the compile is cancelled meanwhile.
bool lock_key(KeyState& state, const std::atomic<bool>& cancel) {
  while (!state.mutex.try_lock()) {
    if (cancel.load()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Finds the job's module or compiles it, holding the key against other threads and processes.
// Every failure path removes the build folder (BuildDir's destructor).
Result<CompiledModule> obtain(const Toolchain& toolchain, const ArtifactCache& cache,
                              const Job& job, const Settings& s, Reporter& reporter,
                              const std::atomic<bool>& cancel) {
  const CompileRequest& request = *job.request;
  std::shared_ptr<KeyState> state = key_state(cache.root(), job.key);
  if (!lock_key(*state, cancel)) return cancelled_status(request);
  std::lock_guard key_guard(state->mutex, std::adopt_lock);
  if (auto hit = find_existing(cache, job, *state, nullptr)) {
    reporter.finished(request.name + " was compiled by another thread");
    return *hit;
  }
  Result<KeyLock> process_lock = cache.lock(job.key, &cancel);
  if (!process_lock) return cancelled_status(request);
  std::string invalid_reason;
  if (auto hit = find_existing(cache, job, *state, &invalid_reason)) {
    reporter.finished(request.name + " was compiled by another process");
    return *hit;
  }
  if (!invalid_reason.empty()) {
    reporter.line("tilecraft: cache entry " + job.key.substr(0, 16) + " for " + request.name +
                  " is invalid (" + invalid_reason + "); rebuilding it");
  }

  Result<BuildDir> build = cache.make_build_dir(job.key);
  if (!build) return build.status();
  auto start = std::chrono::steady_clock::now();
  Result<NvccRun> run = run_nvcc(toolchain, request, build->path(), &cancel);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!run) return run.status();
  if (run->cancelled) return cancelled_status(request);
  if (s.verbose) reporter.line("tilecraft: " + format_command(run->command));
  if (!run->ok()) {
    std::string kept = cache.keep_failed(request.name, job.key, *build, run->output);
    reporter.finished("failed to compile " + request.name + " after " + seconds_text(seconds));
    return compile_error(request, *run, kept);
  }
  if (Status produced = check_module_produced(request, *run, build->path()); !produced) {
    reporter.finished("failed to compile " + request.name + " after " + seconds_text(seconds));
    return produced;
  }
  // ptxas's registers and spills of each kernel, kept beside the module (KernelFacts).
  TILECRAFT_RETURN_IF_ERROR(
      write_file_synced(build->path() + "/resources.txt", resource_usage_lines(run->output)));
  Result<std::string> module_path = cache.commit(job.key, *build, job.key_text);
  if (!module_path) {
    reporter.finished("could not store " + request.name + " after compiling it");
    return Status(module_path.status().code(),
                  "compiled " + request.name +
                      " but could not store it in the cache: " + module_path.status().message());
  }
  remove_intermediates(std::filesystem::path(*module_path).parent_path().string());
  if (!cache.writable()) state->private_module = *module_path;
  reporter.finished("compiled " + request.name + " in " + seconds_text(seconds) + " (device " +
                    seconds_text(run->device_seconds) + ", host " +
                    seconds_text(run->host_seconds) + ", at once)");
  return CompiledModule{*module_path, job.key, false, seconds};
}

thread_local std::function<bool()> t_interrupted;

// Runs `work` on `workers` threads. With an interrupt poll on this thread, this thread only
// waits and polls, and sets `cancel` when the poll says so; without one it works too.
void run_workers(size_t workers, const std::function<void()>& work,
                 const std::function<bool()>& interrupted, std::atomic<bool>& cancel) {
  std::mutex mutex;
  std::condition_variable finished_one;
  size_t finished = 0;
  auto worker = [&]() {
    work();
    std::lock_guard lock(mutex);
    ++finished;
    finished_one.notify_all();
  };
  std::vector<std::thread> threads;
  const size_t spawned = interrupted ? workers : workers - 1;
  for (size_t t = 0; t < spawned; ++t) threads.emplace_back(worker);
  if (!interrupted) {
    work();
  } else {
    std::unique_lock lock(mutex);
    while (finished < spawned) {
      finished_one.wait_for(lock, std::chrono::milliseconds(50));
      if (finished == spawned || cancel.load()) continue;
      lock.unlock();
      if (interrupted()) cancel = true;
      lock.lock();
    }
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace

InterruptScope::InterruptScope(std::function<bool()> interrupted) : previous_(t_interrupted) {
  if (previous_) {
    // An enclosing scope (Ctrl-C in Python) still interrupts.
    t_interrupted = [outer = previous_, inner = std::move(interrupted)] {
      return outer() || (inner && inner());
    };
  } else {
    t_interrupted = std::move(interrupted);
  }
}

InterruptScope::~InterruptScope() { t_interrupted = std::move(previous_); }

int module_builds_at_once(int compile_jobs) { return std::max(1, compile_jobs / 2); }

void default_progress(std::string_view line) {
  if (settings().quiet) return;
  std::string text(line);
  text += '\n';
  std::fwrite(text.data(), 1, text.size(), stderr);
}

std::string cache_key(const CompileRequest& request) {
  Result<std::shared_ptr<const Toolchain>> toolchain = find_toolchain(settings());
  if (!toolchain) {
    // No compiler to identify: a key that matches no entry any real toolchain wrote.
    return key_of("tilecraft: no toolchain: " + toolchain.status().message() + "\n",
                  request.source);
  }
  return key_of(key_text(**toolchain, request), request.source);
}

std::vector<Result<CompiledModule>> build_modules(const std::vector<CompileRequest>& requests,
                                                  const ProgressFn& progress) {
  const Settings s = settings();  // a copy: set_settings may replace the table meanwhile
  ArtifactCache cache = ArtifactCache::open(s);  // first: the toolchain remembers a hash there
  Result<std::shared_ptr<const Toolchain>> toolchain = find_toolchain(s);
  if (!toolchain) return std::vector<Result<CompiledModule>>(requests.size(), toolchain.status());

  std::vector<std::optional<Result<CompiledModule>>> results(requests.size());
  std::vector<Job> jobs(requests.size());
  std::vector<size_t> misses;
  for (size_t i = 0; i < requests.size(); ++i) {
    const CompileRequest& request = requests[i];
    if (request.source.empty()) {
      results[i] = Status::invalid("CompileRequest '" + request.name +
                                   "': expected CUDA C++ source, got an empty string");
      continue;
    }
    jobs[i] = Job{&request, key_text(**toolchain, request), ""};
    jobs[i].key = key_of(jobs[i].key_text, request.source);
    std::shared_ptr<KeyState> state = key_state(cache.root(), jobs[i].key);
    std::optional<CompiledModule> hit;
    {
      // A key another thread is compiling right now counts as a miss here; obtain() waits for it.
      std::unique_lock lock(state->mutex, std::try_to_lock);
      if (lock.owns_lock()) hit = find_existing(cache, jobs[i], *state, nullptr);
    }
    if (hit) {
      if (s.verbose && progress) {
        progress("tilecraft: cache hit for " + request.name + " (" + jobs[i].key.substr(0, 16) +
                 ") at " + hit->path);
      }
      results[i] = std::move(*hit);
    } else {
      misses.push_back(i);
    }
  }

  if (!misses.empty()) {
    size_t workers =
        std::min(misses.size(), static_cast<size_t>(module_builds_at_once(s.compile_jobs)));
    if (progress) {
      progress("tilecraft: compiling " + plural(misses.size(), "kernel") + " with " +
               plural(workers, "parallel job") + " (cache miss)");
    }
    Reporter reporter(progress, misses.size());
    std::atomic<size_t> next{0};
    std::atomic<bool> cancel{false};
    auto work = [&]() {
      for (size_t at = next++; at < misses.size(); at = next++) {
        size_t i = misses[at];
        if (cancel.load()) {
          results[i] = cancelled_status(requests[i]);
          continue;
        }
        try {
          results[i] = obtain(**toolchain, cache, jobs[i], s, reporter, cancel);
        } catch (const std::exception& error) {
          results[i] =
              Status::internal("compiling " + requests[i].name + " failed: " + error.what());
        }
      }
    };
    run_workers(workers, work, t_interrupted, cancel);
    if (cancel.load() && progress) {
      progress(
          "tilecraft: interrupted: the compiler processes were stopped and nothing of the "
          "unfinished kernels was kept");
    }
  }

  std::vector<Result<CompiledModule>> out;
  out.reserve(results.size());
  for (auto& result : results) out.push_back(std::move(*result));
  return out;
}

std::vector<std::optional<CompiledModule>> find_cached_modules(
    const std::vector<CompileRequest>& requests) {
  std::vector<std::optional<CompiledModule>> out(requests.size());
  const Settings s = settings();
  ArtifactCache cache = ArtifactCache::open(s);
  Result<std::shared_ptr<const Toolchain>> toolchain = find_toolchain(s);
  if (!toolchain) return out;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].source.empty()) continue;
    Job job{&requests[i], key_text(**toolchain, requests[i]), ""};
    job.key = key_of(job.key_text, requests[i].source);
    std::shared_ptr<KeyState> state = key_state(cache.root(), job.key);
    std::unique_lock lock(state->mutex, std::try_to_lock);
    if (lock.owns_lock()) out[i] = find_existing(cache, job, *state, nullptr);
    if (out[i]) continue;
    if (std::optional<std::string> unit_key = cache.alias_of(job.key)) {
      LookupResult unit = cache.lookup(*unit_key);
      if (unit.module_path) out[i] = CompiledModule{*unit.module_path, *unit_key, true, 0.0, true};
    }
  }
  return out;
}

void record_unit_serves(const CompiledModule& unit, const std::vector<CompileRequest>& kernels) {
  const Settings s = settings();
  ArtifactCache cache = ArtifactCache::open(s);
  if (!cache.writable()) return;
  Result<std::shared_ptr<const Toolchain>> toolchain = find_toolchain(s);
  if (!toolchain) return;
  for (const CompileRequest& kernel : kernels) {
    if (kernel.source.empty()) continue;
    cache.record_alias(key_of(key_text(**toolchain, kernel), kernel.source), unit.key);
  }
}

void discard_cached_module(const CompiledModule& module, const std::string& why) {
  ArtifactCache cache = ArtifactCache::open(settings());
  std::shared_ptr<KeyState> state = key_state(cache.root(), module.key);
  std::lock_guard guard(state->mutex);
  if (state->private_module == module.path) state->private_module.reset();
  bool removed = false;
  if (cache.writable()) {
    Result<KeyLock> lock = cache.lock(module.key);
    const LookupResult found = cache.lookup(module.key);
    if (lock && found.module_path == module.path)
      removed = remove_path(cache.entry_dir(module.key));
  }
  const std::string line = "tilecraft: the cached module " + module.path + " cannot be loaded (" +
                           why + ")" +
                           (removed ? ": removed it; compiling it again" : ": compiling it again");
  std::fwrite((line + "\n").data(), 1, line.size() + 1, stderr);
}

Result<CompiledModule> build_module(const CompileRequest& request, const ProgressFn& progress) {
  std::vector<Result<CompiledModule>> results = build_modules({request}, progress);
  return std::move(results.front());
}

}  // namespace tilecraft::compile
