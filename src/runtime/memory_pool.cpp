#include "tilecraft/runtime/memory_pool.hpp"

#include <cuda_runtime_api.h>

#include <mutex>
#include <unordered_map>
#include <utility>

#include "tilecraft/runtime/device.hpp"

namespace tilecraft {
namespace {

struct PoolRegistry {
  std::mutex mutex;
  std::unordered_map<int, cudaMemPool_t> pools;  // device -> pool
};

PoolRegistry& registry() {
  static PoolRegistry instance;
  return instance;
}

Status create_pool(int device, size_t max, cudaMemPool_t* pool) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypeNone;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  props.maxSize = max;
  return cuda_status(cudaMemPoolCreate(pool, &props), "cudaMemPoolCreate");
}

// The current device's pool, made with no limit on first use.
Result<cudaMemPool_t> current_pool() {
  int device = 0;
  TILECRAFT_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&device), "cudaGetDevice"));
  std::lock_guard lock(registry().mutex);
  auto it = registry().pools.find(device);
  if (it != registry().pools.end()) return it->second;
  cudaMemPool_t pool = nullptr;
  TILECRAFT_RETURN_IF_ERROR(create_pool(device, 0, &pool));
  registry().pools[device] = pool;
  return pool;
}

// The bytes a pool has handed out and not taken back.
size_t used_bytes(cudaMemPool_t pool) {
  uint64_t used = 0;
  if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess) return 0;
  return static_cast<size_t>(used);
}

}  // namespace

Status get_memory_pool(size_t init, size_t max) {
  if (max != 0 && init > max) {
    return Status::invalid("get_memory_pool: init (" + std::to_string(init) +
                           " bytes) must not exceed max (" + std::to_string(max) + " bytes)");
  }
  TILECRAFT_RETURN_IF_ERROR(cuda_device_available());
  int device = 0;
  TILECRAFT_RETURN_IF_ERROR(cuda_status(cudaGetDevice(&device), "cudaGetDevice"));
  cudaMemPool_t pool = nullptr;
  {
    std::lock_guard lock(registry().mutex);
    auto it = registry().pools.find(device);
    if (it != registry().pools.end() && used_bytes(it->second) == 0) {
      cudaMemPoolDestroy(it->second);
      registry().pools.erase(it);
    }
    if (registry().pools.count(device) == 0) {
      TILECRAFT_RETURN_IF_ERROR(create_pool(device, max, &pool));
      registry().pools[device] = pool;
    } else {
      pool = registry().pools[device];
    }
  }
  // Keep up to `init` bytes reserved between allocations, and reserve them now.
  uint64_t threshold = init;
  TILECRAFT_RETURN_IF_ERROR(
      cuda_status(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
                  "cudaMemPoolSetAttribute(ReleaseThreshold)"));
  if (init > 0) {
    void* warm = nullptr;
    TILECRAFT_RETURN_IF_ERROR(
        cuda_status(cudaMallocFromPoolAsync(&warm, init, pool, nullptr), "reserving init bytes"));
    TILECRAFT_RETURN_IF_ERROR(cuda_status(cudaFreeAsync(warm, nullptr), "cudaFreeAsync"));
    TILECRAFT_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize"));
  }
  return Status::ok();
}

size_t get_allocated_size() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  std::lock_guard lock(registry().mutex);
  auto it = registry().pools.find(device);
  return it == registry().pools.end() ? 0 : used_bytes(it->second);
}

Result<DeviceBuffer> DeviceBuffer::allocate(size_t bytes, void* stream) {
  DeviceBuffer buffer;
  buffer.bytes_ = bytes;
  buffer.stream_ = stream;
  if (bytes == 0) return buffer;
  auto pool = current_pool();
  if (!pool) return pool.status();
  Status status = cuda_status(
      cudaMallocFromPoolAsync(&buffer.data_, bytes, *pool, static_cast<cudaStream_t>(stream)),
      "cudaMallocFromPoolAsync");
  if (!status) {
    buffer.data_ = nullptr;
    return status.with_context("allocating " + std::to_string(bytes) + " bytes from the pool");
  }
  return buffer;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      stream_(other.stream_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    stream_ = other.stream_;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() {
  if (data_) cudaFreeAsync(data_, static_cast<cudaStream_t>(stream_));
  data_ = nullptr;
}

}  // namespace tilecraft
