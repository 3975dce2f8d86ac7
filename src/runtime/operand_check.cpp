#include "operand_check.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "tilecraft/core/extents.hpp"
#include "tilecraft/runtime/device.hpp"

namespace tilecraft::detail {
namespace {

std::string dims(int64_t rows, int64_t cols) {
  return "(" + std::to_string(rows) + ", " + std::to_string(cols) + ")";
}

Status beyond_64_bits(const std::string& who, const std::string& what, const TensorView& t) {
  return Status::invalid(who + ": " + what + " is beyond 64-bit offsets for " + t.describe());
}

Status misaligned(const char* name, const std::string& what, int64_t value, int alignment) {
  return Status::invalid(std::string(name) + ": " + what + " " + std::to_string(value) +
                         " is not a multiple of the " + std::to_string(alignment) +
                         "-element alignment of its TensorDescription");
}

}  // namespace

bool dtype_matches(DataType tensor_dtype, DataType described) {
  if (tensor_dtype == described) return true;
  return described == DataType::tf32 && tensor_dtype == DataType::f32;
}

Result<OperandPlacement> place_operand(const char* name, const TensorView& t,
                                       const TensorDescription& desc, int64_t rows, int64_t cols,
                                       int batch, bool allow_broadcast) {
  const std::string who = name;
  if (!t.data) return Status::invalid(who + ": expected a tensor, got a null data pointer");
  if (!dtype_matches(t.dtype, desc.element)) {
    return Status::invalid(who + ": expected " + std::string(long_name(desc.element)) +
                           " (from its TensorDescription), got " + std::string(long_name(t.dtype)));
  }
  for (int i = 0; i < t.rank; ++i) {
    if (t.strides[i] < 0) {
      return Status::invalid(who + ": negative strides cannot be expressed by " +
                             std::string(to_string(desc.layout)) + "; got " + t.describe());
    }
  }
  if (rows < 0 || cols < 0 || batch < 1) {
    return Status::invalid(who + ": expected a (" + std::to_string(rows) + ", " +
                           std::to_string(cols) + ") matrix in " + std::to_string(batch) +
                           " batches: extents must be >= 0 and the batch >= 1");
  }
  // Every product below is exact in 64 bits or refused.
  const auto matrix_or = checked_mul(rows, cols);
  const auto total_or = matrix_or ? checked_mul(*matrix_or, batch) : std::nullopt;
  if (!total_or) {
    return beyond_64_bits(
        who, "the element count of " + std::to_string(batch) + " x " + dims(rows, cols), t);
  }
  const int64_t matrix = *matrix_or;
  OperandPlacement p;
  const bool packed_form = t.rank == 1 || is_interleaved(desc.layout);
  if (packed_form) {
    if (!t.is_contiguous()) {
      return Status::invalid(who + ": a " + std::string(to_string(desc.layout)) +
                             " operand given as a flat tensor must be contiguous; got " +
                             t.describe());
    }
    if (t.numel() != *total_or) {
      return Status::invalid(who + ": expected " + std::to_string(*total_or) + " elements (" +
                             (batch > 1 ? std::to_string(batch) + " x " : std::string()) +
                             dims(rows, cols) + "), got " + std::to_string(t.numel()) + " in " +
                             t.describe());
    }
    switch (desc.layout) {
      case Layout::RowMajor:
        p.ld = cols;
        break;
      case Layout::ColumnMajor:
        p.ld = rows;
        break;
      case Layout::ColumnMajorInterleaved32:
        if (cols % 32 != 0) {
          return Status::invalid(who +
                                 ": ColumnMajorInterleaved32 needs a column count that is a "
                                 "multiple of 32, got " +
                                 dims(rows, cols));
        }
        if (!checked_mul(rows, 32)) return beyond_64_bits(who, "the interleaved stride", t);
        p.ld = rows * 32;
        break;
      case Layout::RowMajorInterleaved32:
        if (rows % 32 != 0) {
          return Status::invalid(who +
                                 ": RowMajorInterleaved32 needs a row count that is a "
                                 "multiple of 32, got " +
                                 dims(rows, cols));
        }
        if (!checked_mul(cols, 32)) return beyond_64_bits(who, "the interleaved stride", t);
        p.ld = cols * 32;
        break;
      default:
        return Status::invalid(who + ": layout " + std::string(to_string(desc.layout)) +
                               " is not a matrix layout");
    }
    p.batch_stride = matrix;
    p.span_elements = *total_or;
  } else {
    const int row_dim = t.rank - 2;
    if (t.rank == 3) {
      if (t.shape[0] != batch) {
        return Status::invalid(who + ": expected a leading batch dimension of " +
                               std::to_string(batch) + ", got " + t.describe());
      }
      p.batch_stride = t.strides[0];
      if (p.batch_stride == 0 && batch > 1 && !allow_broadcast) {
        return Status::invalid(who +
                               ": an output cannot repeat one matrix across the batch "
                               "(batch stride 0), got " +
                               t.describe());
      }
    } else if (t.rank == 2) {
      if (batch > 1) {
        return Status::invalid(who + ": expected shape (" + std::to_string(batch) + ", " +
                               std::to_string(rows) + ", " + std::to_string(cols) +
                               ") or a flat tensor for a batch of " + std::to_string(batch) +
                               ", got " + t.describe());
      }
      p.batch_stride = matrix;
    } else {
      return Status::invalid(who + ": expected a 2-D tensor " + dims(rows, cols) +
                             " (3-D with a batch, or 1-D packed), got rank " +
                             std::to_string(t.rank) + ": " + t.describe());
    }
    if (t.shape[row_dim] != rows || t.shape[row_dim + 1] != cols) {
      return Status::invalid(who + ": expected shape " + dims(rows, cols) + ", got " +
                             t.describe());
    }
    const int64_t s_row = t.strides[row_dim], s_col = t.strides[row_dim + 1];
    if (desc.layout == Layout::RowMajor) {
      if (s_col != 1 && cols > 1) {
        return Status::invalid(who + ": RowMajor needs unit stride along columns, got " +
                               t.describe() +
                               " (for a column-major tensor describe it ColumnMajor)");
      }
      p.ld = rows > 1 ? s_row : cols;
      if (p.ld < cols) {
        return Status::invalid(who + ": RowMajor leading dimension " + std::to_string(p.ld) +
                               " is smaller than the column count " + std::to_string(cols));
      }
    } else if (desc.layout == Layout::ColumnMajor) {
      if (s_row != 1 && rows > 1) {
        return Status::invalid(who + ": ColumnMajor needs unit stride along rows, got " +
                               t.describe() + " (for a row-major tensor describe it RowMajor)");
      }
      p.ld = cols > 1 ? s_col : rows;
      if (p.ld < rows) {
        return Status::invalid(who + ": ColumnMajor leading dimension " + std::to_string(p.ld) +
                               " is smaller than the row count " + std::to_string(rows));
      }
    } else {
      return Status::invalid(who + ": layout " + std::string(to_string(desc.layout)) +
                             " is not a matrix layout");
    }
    if (p.batch_stride < 0) {
      return Status::invalid(who + ": batch stride " + std::to_string(p.batch_stride) +
                             " is negative; got " + t.describe());
    }
    const bool row_major = desc.layout == Layout::RowMajor;
    const int64_t lines = row_major ? rows : cols, line = row_major ? cols : rows;
    std::optional<int64_t> last = line;
    if (lines > 1) {
      auto step = checked_mul(lines - 1, p.ld);
      last = step ? checked_add(*step, line) : std::nullopt;
    }
    std::optional<int64_t> span = last;
    if (last && batch > 1) {
      auto step = checked_mul(batch - 1, p.batch_stride);
      span = step ? checked_add(*step, *last) : std::nullopt;
    }
    if (!span) return beyond_64_bits(who, "the span its strides address", t);
    p.span_elements = *span;
  }
  if (!checked_mul(p.span_elements, storage_bytes(t.dtype))) {
    return beyond_64_bits(
        who,
        "the bytes of the " + std::to_string(p.span_elements) + " elements its strides address", t);
  }
  const int align = desc.alignment;
  if (align > 1) {
    if (p.ld % align != 0) return misaligned(name, "leading dimension", p.ld, align);
    if (batch > 1 && p.batch_stride % align != 0) {
      return misaligned(name, "batch stride", p.batch_stride, align);
    }
    const auto address = reinterpret_cast<uintptr_t>(t.data);
    const int bytes = align * storage_bytes(desc.element);
    if (address % bytes != 0) {
      return Status::invalid(who + ": data pointer 0x" +
                             [&] {
                               char buffer[32];
                               std::snprintf(buffer, sizeof buffer, "%llx",
                                             static_cast<unsigned long long>(address));
                               return std::string(buffer);
                             }() +
                             " is not " + std::to_string(bytes) + "-byte aligned, as alignment " +
                             std::to_string(align) + " needs");
    }
  }
  return p;
}

Status check_device_runs(int arch, const std::string& name) {
  TILECRAFT_RETURN_IF_ERROR(cuda_device_available());
  auto info = current_device_info();
  if (!info) return info.status();
  if (arch == 90 && info->compute_capability != 90) {
    return Status::unsupported(name +
                               " is built for sm_90a (TMA and wgmma), which runs on compute "
                               "capability 9.0 only; " +
                               info->name + " has " + std::to_string(info->compute_capability));
  }
  if (info->compute_capability < arch) {
    return Status::unsupported(name + " needs compute capability >= " + std::to_string(arch) +
                               "; " + info->name + " has " +
                               std::to_string(info->compute_capability));
  }
  return Status::ok();
}

}  // namespace tilecraft::detail
