// Checks one GEMM operand tensor against its description and extent; yields what the ABI needs.
#pragma once

#include <cstdint>
#include <string>

#include "tilecraft/abi/module_abi.h"
#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/describe/epilogue.hpp"
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
// "<who>: expected <described> (from its TensorDescription), got <dtype>" unless they match.
Status check_dtype(const std::string& who, const TensorView& tensor, DataType described);

// Ok for a host tensor and for one on *device, the CUDA device of the operands checked before it
// (the first CUDA tensor sets it; -1 while none has). `like` names those operands in the message.
Status check_same_device(const std::string& who, const TensorView& tensor, int* device,
                         const std::string& like = "the other operands");

// "C: beta is <beta> but no C tensor was given" when beta is nonzero and C is absent.
Status check_beta_without_c(bool has_c, double beta);

// The epilogue's runtime values (alpha, beta, activation arguments) into an entry's header.
void set_output_op(tc_args_header& header, const EpilogueParams& params);

// A GPU is there and can run the kernel `name` of arch `arch` (sm_90a kernels: 9.0 only).
Status check_device_runs(int arch, const std::string& name);

}  // namespace tilecraft::detail
