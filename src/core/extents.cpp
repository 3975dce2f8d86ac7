#include "tilecraft/core/extents.hpp"

#include <cstdio>
#include <string>

namespace tilecraft {
namespace {

// A Python tuple of the first `rank` values: "(2, 3)", "(2,)".
std::string tuple_text(const std::array<int64_t, TensorView::kMaxRank>& values, int rank) {
  std::string out = "(";
  for (int i = 0; i < rank; ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + (rank == 1 ? ",)" : ")");
}

std::string shape_text(const TensorView& t) { return tuple_text(t.shape, t.rank); }
std::string strides_text(const TensorView& t) { return tuple_text(t.strides, t.rank); }

std::string hex(uintptr_t value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace

Status check_index32(const std::string& name, int dimension, int64_t extent,
                     const std::string& what) {
  if (extent <= kMaxIndex32) return Status::ok();
  return Status::invalid(name + ": extent " + std::to_string(extent) + " of dimension " +
                         std::to_string(dimension) + (what.empty() ? "" : " (" + what + ")") +
                         " exceeds the kernel's 32-bit index (at most " +
                         std::to_string(kMaxIndex32) + ")");
}

Result<TensorExtent> check_tensor_extents(const std::string& name, const TensorView& t) {
  if (t.rank < 0 || t.rank > TensorView::kMaxRank) {
    return Status::invalid(name + ": expected a tensor of rank 0 to " +
                           std::to_string(TensorView::kMaxRank) + ", got rank " +
                           std::to_string(t.rank));
  }
  if (!is_valid(t.dtype)) {
    return Status::invalid(name + ": expected a DataType, got the out-of-range value " +
                           std::to_string(static_cast<int>(t.dtype)));
  }
  TensorExtent out;
  out.elements = 1;
  bool overflow = false;
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[i] < 0) {
      return Status::invalid(name + ": extent " + std::to_string(t.shape[i]) + " of dimension " +
                             std::to_string(i) + " is negative; got shape " + shape_text(t));
    }
    if (__builtin_mul_overflow(out.elements, t.shape[i], &out.elements)) overflow = true;
  }
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[i] == 0) return TensorExtent{};  // no element: nothing is addressed
  }
  if (overflow) {
    return Status::invalid(name + ": shape " + shape_text(t) +
                           " holds more than 2^63 - 1 elements, beyond 64-bit offsets");
  }
  // One past the last element addressed: 1 + sum over dimensions of (extent - 1) * stride.
  int64_t last = 0;
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[i] == 1) continue;  // any stride: it never moves
    if (t.strides[i] < 0) {
      return Status::invalid(name + ": stride " + std::to_string(t.strides[i]) + " of dimension " +
                             std::to_string(i) +
                             " is negative; tilecraft's kernels address tensors with strides >= 0 "
                             "(got strides " +
                             strides_text(t) + " for shape " + shape_text(t) + ")");
    }
    const auto step = checked_mul(t.shape[i] - 1, t.strides[i]);
    if (!step) {
      return Status::invalid(name + ": stride " + std::to_string(t.strides[i]) + " of dimension " +
                             std::to_string(i) + " (extent " + std::to_string(t.shape[i]) +
                             ") addresses elements beyond 64-bit offsets (strides " +
                             strides_text(t) + " for shape " + shape_text(t) + ")");
    }
    const auto sum = checked_add(last, *step);
    if (!sum) {
      return Status::invalid(name + ": strides " + strides_text(t) + " for shape " + shape_text(t) +
                             " address elements beyond 64-bit offsets");
    }
    last = *sum;
  }
  auto span = checked_add(last, 1);
  auto bytes = span ? checked_mul(*span, storage_bytes(t.dtype)) : std::nullopt;
  if (!bytes) {
    return Status::invalid(name + ": strides " + strides_text(t) + " for shape " + shape_text(t) +
                           " address more than 2^63 - 1 bytes of " +
                           std::string(long_name(t.dtype)));
  }
  const auto address = reinterpret_cast<uintptr_t>(t.data);
  if (address > std::numeric_limits<uintptr_t>::max() - static_cast<uintptr_t>(*bytes)) {
    return Status::invalid(name + ": the " + std::to_string(*bytes) +
                           " bytes its strides address from data pointer " + hex(address) +
                           " run past the end of the address space (strides " + strides_text(t) +
                           " for shape " + shape_text(t) + ")");
  }
  out.span = *span;
  out.bytes = *bytes;
  return out;
}

}  // namespace tilecraft
