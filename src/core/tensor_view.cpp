#include "tilecraft/core/tensor_view.hpp"

#include <string>

namespace tilecraft {

// Saturates at INT64_MAX rather than overflow: a hostile view's count must not wrap into a
// plausible one before check_tensor_extents refuses it.
int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int i = 0; i < rank && i < kMaxRank; ++i) {
    if (shape[i] == 0) return 0;
    if (__builtin_mul_overflow(n, shape[i], &n)) n = INT64_MAX;
  }
  return n;
}

bool TensorView::is_contiguous() const {
  int64_t expected = 1;
  for (int i = rank - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    if (__builtin_mul_overflow(expected, shape[i], &expected)) return false;
  }
  return true;
}

// Built with std::to_string rather than iostreams: numeric stream insertion crashed inside
// Python processes that carry another libstdc++ build (seen on the GPU machine).
std::string TensorView::describe() const {
  std::string out = std::string(long_name(dtype)) + "[";
  for (int i = 0; i < rank; ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  out += "] strides (";
  for (int i = 0; i < rank; ++i) out += (i ? ", " : "") + std::to_string(strides[i]);
  out += rank == 1 ? ",)" : ")";
  out += " on ";
  out += device == DeviceKind::kCuda ? "cuda:" + std::to_string(device_id) : std::string("cpu");
  return out;
}

static TensorView contiguous(void* data, DataType dtype, std::initializer_list<int64_t> shape,
                             DeviceKind device, int device_id) {
  TensorView view;
  view.data = data;
  view.dtype = dtype;
  view.rank = static_cast<int>(shape.size());
  view.device = device;
  view.device_id = device_id;
  int i = 0;
  for (int64_t extent : shape) view.shape[i++] = extent;
  int64_t stride = 1;
  for (int d = view.rank - 1; d >= 0; --d) {
    view.strides[d] = stride;
    stride *= view.shape[d];
  }
  return view;
}

TensorView TensorView::cuda_contiguous(void* data, DataType dtype,
                                       std::initializer_list<int64_t> shape, int device_id) {
  return contiguous(data, dtype, shape, DeviceKind::kCuda, device_id);
}

TensorView TensorView::host_contiguous(void* data, DataType dtype,
                                       std::initializer_list<int64_t> shape) {
  return contiguous(data, dtype, shape, DeviceKind::kCpu, 0);
}

}  // namespace tilecraft
