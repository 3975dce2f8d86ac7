#include "discover/tensor_facts.hpp"

#include <string>

namespace tilecraft::api::detail {

// The layout of the last two dimensions of t, or why neither is contiguous.
Result<Layout> layout_of(const char* name, const TensorView& t) {
  const int r = t.rank - 2, c = t.rank - 1;
  const int64_t rows = t.shape[r], cols = t.shape[c];
  const int64_t row_stride = t.strides[r], col_stride = t.strides[c];
  if (col_stride == 1 && (rows <= 1 || row_stride >= cols)) return Layout::RowMajor;
  if (row_stride == 1 && (cols <= 1 || col_stride >= rows)) return Layout::ColumnMajor;
  return Status::invalid(std::string("Operand `") + name +
                         "`: expected one of its last two dimensions to be contiguous (stride "
                         "1, the other stride covering it), got " +
                         t.describe());
}

// The widest access, in elements (a power of two up to 16 bytes), that the data pointer, the
// leading dimension, the batch stride and the contiguous extent all admit.
int alignment_of(const TensorView& t, Layout layout) {
  const int bytes = storage_bytes(t.dtype);
  const int r = t.rank - 2, c = t.rank - 1;
  const bool row = layout == Layout::RowMajor;
  const int64_t ld = row ? t.strides[r] : t.strides[c];
  const int64_t extent = row ? t.shape[c] : t.shape[r];
  const int64_t batch_stride = t.rank == 3 && t.shape[0] > 1 ? t.strides[0] : 0;
  const auto address = reinterpret_cast<uintptr_t>(t.data);
  for (int a = 16 / bytes; a > 1; a /= 2) {
    const bool fits = address % (static_cast<uintptr_t>(a) * bytes) == 0 &&
                      (ld <= 1 || ld % a == 0) && batch_stride % a == 0 && extent % a == 0;
    if (fits) return a;
  }
  return 1;
}

}  // namespace tilecraft::api::detail
