// TensorViews at fake device addresses for tests of the arguments-first API on the CPU: nothing
// is launched or dereferenced.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>

#include "tilecraft/core/tensor_view.hpp"

namespace tilecraft::api::testing {

// A packed row-major view at a fake, 256-byte aligned device address.
inline TensorView cuda(DataType type, std::initializer_list<int64_t> shape, int device = 0) {
  static char base[1 << 12];
  auto address = reinterpret_cast<uintptr_t>(base);
  address = (address + 255) & ~uintptr_t(255);
  return TensorView::cuda_contiguous(reinterpret_cast<void*>(address), type, shape, device);
}

// The transpose of the last two dimensions of a packed view (a column-major matrix).
inline TensorView transposed(TensorView t) {
  std::swap(t.shape[t.rank - 1], t.shape[t.rank - 2]);
  std::swap(t.strides[t.rank - 1], t.strides[t.rank - 2]);
  return t;
}

}  // namespace tilecraft::api::testing
