// Timing kernel launches on the device: CUDA events around each launch, the L2 cache flushed
// before each (a write of twice its size), warm-up launches first, the median kept; and the GPU's
// clocks while it ran (through NVML when the driver has it).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tilecraft/core/status.hpp"

namespace tilecraft::tune {

// Seconds of the steady clock since start.
double seconds_since(std::chrono::steady_clock::time_point start);

struct Timing {
  double median_us = 0;
  int repeats = 0;
};

class LaunchTimer {
 public:
  // A non-blocking stream on `device` (which must be current), events, and the flush buffer.
  static Result<std::unique_ptr<LaunchTimer>> make(int device, size_t l2_bytes);
  ~LaunchTimer();
  LaunchTimer(const LaunchTimer&) = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;

  void* stream() const { return stream_; }
  // Waits for the stream, at most `timeout_seconds`; kCancelled-free: a timeout is kInternal
  // with "timed out" in its text.
  Status wait(double timeout_seconds) const;
  // Runs `launch` (which enqueues one launch on stream()) `warmup` times, then up to `repeats`
  // timed times within about `budget_seconds`.
  Result<Timing> time(const std::function<Status(void* stream)>& launch, int repeats,
                      double budget_seconds, int warmup = 3);

 private:
  LaunchTimer() = default;
  int device_ = 0;
  void* stream_ = nullptr;
  void* flush_ = nullptr;
  size_t flush_bytes_ = 0;
  std::vector<void*> starts_, stops_;
};

// "SM 1980 MHz, memory 2619 MHz" for the device now; "clocks unknown (...)" without NVML.
std::string clocks_note(int device);

}  // namespace tilecraft::tune
