// Checks one GEMM operand tensor against its description and extent; yields what the ABI needs.
#pragma once

#include <cstdint>
#include <string>

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/describe/tensor_description.hpp"

namespace tilecraft::detail {

struct OperandPlacement {
  int64_t ld = 0;
  int64_t batch_stride = 0;
  int64_t span_elements = 0;  // elements from data to one past the last one addressed
};

// `name` is the argument's name for messages ("A"); rows x cols is the logical matrix, `batch`
// the number of matrices the tensor holds (1 unless batched). `allow_broadcast` lets a 3-D input
// repeat one matrix across the batch with batch stride 0.
Result<OperandPlacement> place_operand(const char* name, const TensorView& tensor,
                                       const TensorDescription& desc, int64_t rows, int64_t cols,
                                       int batch, bool allow_broadcast);

// The tensor's dtype may be given for the description's element (f32 storage serves tf32).
bool dtype_matches(DataType tensor_dtype, DataType described);

// A GPU is there and can run the kernel `name` of arch `arch` (sm_90a kernels: 9.0 only).
Status check_device_runs(int arch, const std::string& name);

}  // namespace tilecraft::detail
