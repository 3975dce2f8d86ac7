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

}  // namespace tilecraft
