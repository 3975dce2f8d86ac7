#include "tune/launch_timer.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include "tilecraft/runtime/device.hpp"

namespace tilecraft::tune {
namespace {

constexpr int kMaxRepeats = 1000;

}  // namespace

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Result<std::unique_ptr<LaunchTimer>> LaunchTimer::make(int device, size_t l2_bytes) {
  std::unique_ptr<LaunchTimer> timer(new LaunchTimer());
  timer->device_ = device;
  cudaStream_t stream = nullptr;
  TILECRAFT_RETURN_IF_ERROR(cuda_status(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                                        "cudaStreamCreate (tuning)"));
  timer->stream_ = stream;
  timer->flush_bytes_ = std::max<size_t>(2 * l2_bytes, 8u << 20);
  TILECRAFT_RETURN_IF_ERROR(
      cuda_status(cudaMalloc(&timer->flush_, timer->flush_bytes_), "cudaMalloc (L2 flush buffer)"));
  return timer;
}

LaunchTimer::~LaunchTimer() {
  if (stream_) cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
  for (void* e : starts_) cudaEventDestroy(static_cast<cudaEvent_t>(e));
  for (void* e : stops_) cudaEventDestroy(static_cast<cudaEvent_t>(e));
  if (flush_) cudaFree(flush_);
  if (stream_) cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

Status LaunchTimer::wait(double timeout_seconds) const {
  auto stream = static_cast<cudaStream_t>(stream_);
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    const cudaError_t state = cudaStreamQuery(stream);
    if (state == cudaSuccess) return Status::ok();
    if (state != cudaErrorNotReady) return cuda_status(state, "a tuning launch");
    if (seconds_since(start) > timeout_seconds) {
      return Status(StatusCode::kInternal, "timed out: the launch did not finish within " +
                                               std::to_string(static_cast<int>(timeout_seconds)) +
                                               " s");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

Result<Timing> LaunchTimer::time(const std::function<Status(void*)>& launch, int repeats,
                                 double budget_seconds, int warmup) {
  repeats = std::clamp(repeats, 1, kMaxRepeats);
  auto stream = static_cast<cudaStream_t>(stream_);
  while (static_cast<int>(starts_.size()) < repeats) {
    cudaEvent_t start = nullptr, stop = nullptr;
    TILECRAFT_RETURN_IF_ERROR(cuda_status(cudaEventCreate(&start), "cudaEventCreate"));
    starts_.push_back(start);
    TILECRAFT_RETURN_IF_ERROR(cuda_status(cudaEventCreate(&stop), "cudaEventCreate"));
    stops_.push_back(stop);
  }
  for (int i = 0; i < warmup; ++i) TILECRAFT_RETURN_IF_ERROR(launch(stream_));
  TILECRAFT_RETURN_IF_ERROR(wait(30));
  // One timed launch first, to size the repeats to the budget.
  int planned = repeats;
  for (int round = 0, done = 0; done < planned; ++round) {
    const int batch = round == 0 ? 1 : planned - done;
    for (int i = done; i < done + batch; ++i) {
      TILECRAFT_RETURN_IF_ERROR(cuda_status(cudaMemsetAsync(flush_, i & 0xff, flush_bytes_, stream),
                                            "flushing the L2 cache"));
      TILECRAFT_RETURN_IF_ERROR(cuda_status(
          cudaEventRecord(static_cast<cudaEvent_t>(starts_[i]), stream), "cudaEventRecord"));
      TILECRAFT_RETURN_IF_ERROR(launch(stream_));
      TILECRAFT_RETURN_IF_ERROR(cuda_status(
          cudaEventRecord(static_cast<cudaEvent_t>(stops_[i]), stream), "cudaEventRecord"));
    }
    TILECRAFT_RETURN_IF_ERROR(wait(60));
    done += batch;
    if (round == 0 && budget_seconds > 0) {
      float ms = 0;
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(starts_[0]),
                           static_cast<cudaEvent_t>(stops_[0]));
      // The flush costs about as much as reading the buffer once more.
      const double each = ms * 1e-3 + 2e-6 + flush_bytes_ / 2e12;
      planned = std::clamp(static_cast<int>(budget_seconds / each), 1, repeats);
    }
  }
  std::vector<double> us;
  for (int i = 0; i < planned; ++i) {
    float ms = 0;
    TILECRAFT_RETURN_IF_ERROR(
        cuda_status(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(starts_[i]),
                                         static_cast<cudaEvent_t>(stops_[i])),
                    "cudaEventElapsedTime"));
    us.push_back(ms * 1e3);
  }
  std::sort(us.begin(), us.end());
  const size_t n = us.size();
  Timing timing;
  timing.median_us = n % 2 ? us[n / 2] : 0.5 * (us[n / 2 - 1] + us[n / 2]);
  timing.repeats = static_cast<int>(n);
  return timing;
}

namespace {

// The few NVML entry points used, found at run time: NVML ships with the driver, not the toolkit.
struct Nvml {
  using InitFn = int (*)();
  using HandleFn = int (*)(const char*, void**);
  using ClockFn = int (*)(void*, int, unsigned*);
  HandleFn handle_by_bus_id = nullptr;
  ClockFn clock_info = nullptr;
  std::string problem;
};

const Nvml& nvml() {
  static Nvml loaded = [] {
    Nvml n;
    void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      n.problem = "NVML (libnvidia-ml.so.1) not found";
      return n;
    }
    auto init = reinterpret_cast<Nvml::InitFn>(dlsym(library, "nvmlInit_v2"));
    n.handle_by_bus_id =
        reinterpret_cast<Nvml::HandleFn>(dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.clock_info = reinterpret_cast<Nvml::ClockFn>(dlsym(library, "nvmlDeviceGetClockInfo"));
    if (!init || !n.handle_by_bus_id || !n.clock_info || init() != 0) {
      n.problem = "NVML did not initialize";
      n.handle_by_bus_id = nullptr;
    }
    return n;
  }();
  return loaded;
}

}  // namespace

std::string clocks_note(int device) {
  const Nvml& n = nvml();
  if (!n.handle_by_bus_id) return "clocks unknown (" + n.problem + ")";
  char bus_id[64] = {0};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) {
    cudaGetLastError();
    return "clocks unknown (no PCI bus id)";
  }
  void* handle = nullptr;
  unsigned sm = 0, memory = 0;
  constexpr int kClockSm = 1, kClockMemory = 2;
  if (n.handle_by_bus_id(bus_id, &handle) != 0 || n.clock_info(handle, kClockSm, &sm) != 0 ||
      n.clock_info(handle, kClockMemory, &memory) != 0) {
    return "clocks unknown (NVML could not read them)";
  }
  return "SM " + std::to_string(sm) + " MHz, memory " + std::to_string(memory) + " MHz";
}

}  // namespace tilecraft::tune
