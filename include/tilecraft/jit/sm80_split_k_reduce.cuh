// The second launch of an SM80 parallel split-K entry, GEMM's and convolution's: CUTLASS's
// ReduceSplitK over the partial slices (namespace tc_gemm).
#pragma once

#include "tilecraft/jit/sm80_common.cuh"

#include "cutlass/reduction/device/reduce_split_k.h"
#include "cutlass/reduction/kernel/reduce_split_k.h"
#include "cutlass/reduction/thread/reduction_operators.h"

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

namespace tc_gemm {

// Sums `partitions` slices of rows x columns accumulators (row-major, `slice` elements apart) from
// the workspace into D (leading dimension ldd) through the epilogue, reading C with ldc (0: one
// value per column).
template <typename Reduction, typename Args>
int32_t reduce_split_k(const Args& a, void* workspace, int rows, int columns, int partitions,
                       size_t slice, int64_t ldd, int64_t ldc, cudaStream_t stream,
                       tc_image::HostAdapter& adapter, char* error, size_t capacity) {
  using Output = typename Reduction::OutputOp;
  using ElementOutput = typename Output::ElementOutput;
  using Layout = cutlass::layout::RowMajor;
  typename Reduction::Arguments reduction_args(
      cutlass::MatrixCoord(rows, columns), partitions, slice,
      {static_cast<typename Reduction::ElementWorkspace*>(workspace), Layout(columns)},
      {static_cast<ElementOutput*>(a.D), Layout(ldd)},
      {const_cast<ElementOutput*>(static_cast<const ElementOutput*>(a.C)), Layout(ldc)},
      epilogue_params<Output>(a));
  Reduction reduction;
  cutlass::Status status = reduction.initialize(reduction_args, nullptr, stream);
  if (status == cutlass::Status::kSuccess) status = reduction.run(stream, &adapter, 1);
  return cuda_result("ReduceSplitK::run", status, adapter, error, capacity);
}

}  // namespace tc_gemm

#endif  // !TILECRAFT_DEVICE_HALF
