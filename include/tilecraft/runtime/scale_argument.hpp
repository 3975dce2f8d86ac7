// ScaleArgument: a per-tensor scale of an fp8 GEMM, as both argument surfaces take it.
#pragma once

#include "tilecraft/core/tensor_view.hpp"

namespace tilecraft {

// A value, or a one-element float32 tensor on the device (read when the kernel runs, as
// torch._scaled_mm reads its scales).
struct ScaleArgument {
  bool given = false;
  double value = 1.0;
  TensorView tensor;  // data != nullptr: use the tensor, not the value
};

}  // namespace tilecraft
