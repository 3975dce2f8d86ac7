// The CUDA device the caller runs on: availability, compute capability, current stream helpers.
#pragma once

#include <string>

#include "tilecraft/core/status.hpp"

namespace tilecraft {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_capability = 0;  // 90 for an H100
  int multiprocessor_count = 0;
  size_t shared_memory_per_block_optin = 0;
  size_t l2_cache_bytes = 0;
};

// Ok when a CUDA device is usable; otherwise the reason (no driver, no device, ...).
Status cuda_device_available();
Result<DeviceInfo> current_device_info();
// The properties of device `index` (read once per process and device).
Result<DeviceInfo> device_info(int index);
// Turns a cudaError_t (as int) into a Status naming what failed.
Status cuda_status(int cuda_error, const char* what);

// Whether `stream` (a cudaStream_t) is capturing a CUDA graph now.
bool stream_is_capturing(void* stream);

// Lets the calling thread allocate, copy and synchronize while another thread captures a CUDA
// graph (CUDA's relaxed capture mode for this thread): for threads of tilecraft's own that never
// touch the capturing stream, such as the background tuner.
void allow_calls_during_other_threads_captures();

// Makes `device` the calling thread's current device for the scope and restores the previous one
// after it: operands on cuda:1 are prepared and launched there whichever device is current. A
// no-op for device < 0 (host operands) and for the device already current.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;
  // Whether the device could be made current.
  const Status& status() const { return status_; }

 private:
  int previous_ = -1;  // the device to restore; -1: nothing was switched
  Status status_;
};

}  // namespace tilecraft
