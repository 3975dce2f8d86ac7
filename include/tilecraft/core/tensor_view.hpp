// A non-owning view of a caller's tensor: what crosses from torch, cupy, numpy (DLPack) or C++.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "tilecraft/core/types.hpp"

namespace tilecraft {

enum class DeviceKind : uint8_t { kCpu, kCuda };

struct TensorView {
  static constexpr int kMaxRank = 5;  // 5-D: 3-D convolutions

  void* data = nullptr;
  DataType dtype = DataType::f32;
  int rank = 0;
  std::array<int64_t, kMaxRank> shape{};
  std::array<int64_t, kMaxRank> strides{};  // in elements
  DeviceKind device = DeviceKind::kCuda;
  int device_id = 0;

  int64_t numel() const;
  bool is_contiguous() const;    // row-major packed
  std::string describe() const;  // "float16[128, 64] strides (64, 1) on cuda:0"

  // A packed row-major view of a device buffer.
  static TensorView cuda_contiguous(void* data, DataType dtype,
                                    std::initializer_list<int64_t> shape, int device_id = 0);
  static TensorView host_contiguous(void* data, DataType dtype,
                                    std::initializer_list<int64_t> shape);
};

}  // namespace tilecraft
