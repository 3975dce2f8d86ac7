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

Status check_dtype(const std::string& who, const TensorView& t, DataType described) {
  if (dtype_matches(t.dtype, described)) return Status::ok();
  return Status::invalid(who + ": expected " + spelled(described) +
                         " (from its TensorDescription), got " + spelled(t.dtype));
}

Status check_same_device(const std::string& who, const TensorView& t, int* device,
                         const std::string& like) {
  if (t.device != DeviceKind::kCuda) return Status::ok();
  if (*device < 0) {
    *device = t.device_id;
  } else if (t.device_id != *device) {
    return Status::invalid(who + ": expected a tensor on cuda:" + std::to_string(*device) +
                           " like " + like + ", got cuda:" + std::to_string(t.device_id));
  }
  return Status::ok();
}

Status check_beta_without_c(bool has_c, double beta) {
  if (has_c || beta == 0.0) return Status::ok();
  return Status::invalid("C: beta is " + std::to_string(beta) + " but no C tensor was given");
}

void set_output_op(tc_args_header& header, const EpilogueParams& params) {
  header.alpha = params.alpha;
  header.beta = params.beta;
  header.num_activation_args = static_cast<int32_t>(params.activation_args.size());
  for (int i = 0; i < header.num_activation_args && i < 4; ++i) {
    header.activation_args[i] = params.activation_args[i];
  }
}

Result<OperandPlacement> place_operand(const char* name, const TensorView& t,
                                       const TensorDescription& desc, int64_t rows, int64_t cols,
                                       int batch, bool allow_broadcast) {
  const std::string who = name;
  if (!t.data) return Status::invalid(who + ": expected a tensor, got a null data pointer");
  TILECRAFT_RETURN_IF_ERROR(check_dtype(who, t, desc.element));
  for (int i = 0; i < t.rank; ++i) {
    if (t.strides[i] < 0) {
      return Status::invalid(who + ": negative strides cannot be expressed by " +
                             spelled(desc.layout) + "; got " + t.describe());
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
      return Status::invalid(who + ": a " + spelled(desc.layout) +
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
      case Layout::RowMajorInterleaved32: {
        // Columns (rows) are interleaved in groups of 32; the other extent sets the stride.
        const bool columns = desc.layout == Layout::ColumnMajorInterleaved32;
        if ((columns ? cols : rows) % 32 != 0) {
          return Status::invalid(who + ": " + spelled(desc.layout) + " needs a " +
                                 (columns ? "column" : "row") +
                                 " count that is a multiple of 32, got " + dims(rows, cols));
        }
        const int64_t other = columns ? rows : cols;
        if (!checked_mul(other, 32)) return beyond_64_bits(who, "the interleaved stride", t);
        p.ld = other * 32;
        break;
      }
      default:
        return Status::invalid(who + ": layout " + spelled(desc.layout) +
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
        return Status::invalid(
            who + ": an output cannot repeat one matrix across the batch (batch stride 0), got " +
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
    if (desc.layout != Layout::RowMajor && desc.layout != Layout::ColumnMajor) {
      return Status::invalid(who + ": layout " + spelled(desc.layout) + " is not a matrix layout");
    }
    // A row-major matrix is `lines` rows of `line` elements; a column-major one, columns.
    const bool row_major = desc.layout == Layout::RowMajor;
    const int64_t lines = row_major ? rows : cols, line = row_major ? cols : rows;
    const int64_t unit_stride = t.strides[row_major ? row_dim + 1 : row_dim];
    if (unit_stride != 1 && line > 1) {
      return Status::invalid(who + ": " + spelled(desc.layout) + " needs unit stride along " +
                             (row_major ? "columns" : "rows") + ", got " + t.describe() +
                             (row_major ? " (for a column-major tensor describe it ColumnMajor)"
                                        : " (for a row-major tensor describe it RowMajor)"));
    }
    p.ld = lines > 1 ? t.strides[row_major ? row_dim : row_dim + 1] : line;
    if (p.ld < line) {
      return Status::invalid(who + ": " + spelled(desc.layout) + " leading dimension " +
                             std::to_string(p.ld) + " is smaller than the " +
                             (row_major ? "column" : "row") + " count " + std::to_string(line));
    }
    if (p.batch_stride < 0) {
      return Status::invalid(who + ": batch stride " + std::to_string(p.batch_stride) +
                             " is negative; got " + t.describe());
    }
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
      char hex[32];
      std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(address));
      return Status::invalid(who + ": data pointer 0x" + hex + " is not " + std::to_string(bytes) +
                             "-byte aligned, as alignment " + std::to_string(align) + " needs");
    }
  }
  return p;
}

Status check_device_runs(int arch, const std::string& name) {
  TILECRAFT_RETURN_IF_ERROR(cuda_device_available());
  auto info = current_device_info();
  if (!info) return info.status();
  if (arch == 90 && info->compute_capability != 90) {
    return Status::unsupported(
        name + " is built for sm_90a (TMA and wgmma), which runs on compute capability 9.0 only; " +
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
