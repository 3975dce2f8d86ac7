// 64-bit extent arithmetic for arguments (issue 27, TRUNC-1): every extent, stride, offset and
// product a tensor or a problem implies is computed with overflow checks when arguments are made,
// and what a kernel's 32-bit indexes cannot hold is refused by name, never truncated.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"

namespace tilecraft {

// The largest value a kernel's 32-bit index holds. CUTLASS 2.x GemmCoord, MatrixCoord and
// Conv2dProblemSize, CUTLASS 3.x problem shapes (cute int) and the module ABI's extents are all
// int32; strides and offsets are 64-bit (LongIndex, int64_t).
inline constexpr int64_t kMaxIndex32 = std::numeric_limits<int32_t>::max();

// a * b and a + b exactly, or nullopt when the result does not fit in 64 bits.
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}
// The product, or INT64_MAX when it does not fit: an unvalidated value must not wrap to a sane one.
inline int64_t saturating_product(std::initializer_list<int64_t> factors) {
  int64_t out = 1;
  for (int64_t f : factors) {
    if (__builtin_mul_overflow(out, f, &out)) return std::numeric_limits<int64_t>::max();
  }
  return out;
}

// "A: extent 2147483656 of dimension 0 exceeds the kernel's 32-bit index (at most
// 2147483647)", or ok. `what` ("M", "batch L") is added to the dimension when given.
Status check_index32(const std::string& name, int dimension, int64_t extent,
                     const std::string& what = {});

// What a well-formed view holds and addresses.
struct TensorExtent {
  int64_t elements = 0;  // the product of the extents
  int64_t span = 0;      // elements from the data pointer to one past the last one addressed
  int64_t bytes = 0;     // span in bytes
};

// Checks a caller's tensor (`name` in messages) in 64 bits before anything reads its extents:
// rank in [0, kMaxRank]; every extent >= 0; no negative stride on an extent above 1
// (tilecraft's kernels and staging copies address memory forward); and, when it holds elements,
// its element count, the span its strides address and that span's bytes exact in int64_t, ending
// within the address space. Refusals name the tensor, the dimension and the values.
Result<TensorExtent> check_tensor_extents(const std::string& name, const TensorView& t);

}  // namespace tilecraft
