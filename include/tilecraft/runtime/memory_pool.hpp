// Device memory through CUDA's stream-ordered allocator (DESIGN, Decided 5): the seeds' RMM pool.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tilecraft/core/status.hpp"

namespace tilecraft {

// Sets up the current device's pool: `init` bytes reserved up front, at most `max` bytes held
// (0: no limit). Calling it again resizes the limits.
Status get_memory_pool(size_t init, size_t max);
// Bytes currently handed out from the pool.
size_t get_allocated_size();

// One allocation from the pool, freed in stream order on the stream it was last used on.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static Result<DeviceBuffer> allocate(size_t bytes, void* stream = nullptr);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  void set_stream(void* stream) { stream_ = stream; }

 private:
  void release();
  void* data_ = nullptr;
  size_t bytes_ = 0;
  void* stream_ = nullptr;
};

}  // namespace tilecraft
