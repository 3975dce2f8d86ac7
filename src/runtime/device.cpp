#include "tilecraft/runtime/device.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>

namespace tilecraft {

bool stream_is_capturing(void* stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status) != cudaSuccess) {
    cudaGetLastError();
    return true;  // the legacy stream while another stream captures: as good as capturing
  }
  return status != cudaStreamCaptureStatusNone;
}

void allow_calls_during_other_threads_captures() {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
}

Status cuda_status(int cuda_error, const char* what) {
  if (cuda_error == cudaSuccess) return Status::ok();
  auto error = static_cast<cudaError_t>(cuda_error);
  return {StatusCode::kCudaError, std::string(what) + " failed: " + cudaGetErrorName(error) + " (" +
                                      cudaGetErrorString(error) + ")"};
}

Status cuda_device_available() {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();
    const std::string detail =
        std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
    if (error == cudaErrorInsufficientDriver || error == cudaErrorNoDevice) {
      return {StatusCode::kNotSupported,
              "no usable CUDA device: no NVIDIA GPU with a driver for CUDA " +
                  std::to_string(CUDART_VERSION / 1000) + " was found (" + detail + ")"};
    }
    return {StatusCode::kNotSupported, "no usable CUDA device (" + detail + ")"};
  }
  if (count == 0) return {StatusCode::kNotSupported, "no CUDA device is present"};
  return Status::ok();
}

Result<DeviceInfo> current_device_info() {
  TILECRAFT_RETURN_IF_ERROR(cuda_device_available());
  int index = 0;
  TILECRAFT_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&index), "cudaGetDevice"));
  return device_info(index);
}

Result<DeviceInfo> device_info(int index) {
  static std::mutex mutex;
  static std::map<int, DeviceInfo> known;
  {
    std::lock_guard lock(mutex);
    if (auto it = known.find(index); it != known.end()) return it->second;
  }
  TILECRAFT_RETURN_IF_ERROR(cuda_device_available());
  DeviceInfo info;
  info.index = index;
  cudaDeviceProp prop{};
  TILECRAFT_RETURN_IF_ERROR(
      cuda_status(cudaGetDeviceProperties(&prop, index), "cudaGetDeviceProperties"));
  info.name = prop.name;
  info.compute_capability = prop.major * 10 + prop.minor;
  info.multiprocessor_count = prop.multiProcessorCount;
  info.shared_memory_per_block_optin = prop.sharedMemPerBlockOptin;
  info.l2_cache_bytes = static_cast<size_t>(prop.l2CacheSize);
  std::lock_guard lock(mutex);
  known[index] = info;
  return info;
}

DeviceScope::DeviceScope(int device) {
  if (device < 0) return;
  int current = -1;
  status_ = cuda_status(cudaGetDevice(&current), "cudaGetDevice");
  if (!status_ || current == device) return;
  status_ = cuda_status(cudaSetDevice(device),
                        ("making cuda:" + std::to_string(device) + " current").c_str());
  if (status_) previous_ = current;
}

DeviceScope::~DeviceScope() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

}  // namespace tilecraft
