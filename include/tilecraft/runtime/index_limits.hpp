// What each kernel family can index (issue 27, TRUNC-1). The arguments of every surface (the
// arguments-first api, the operation-first seed arguments, the one-call ops) check the same rules
// here, so that supports(), get_kernels() and a launch agree.
//
// Every family, when its arguments are made (the extents no kernel can hold):
//   - M, N, K (GEMM and each grouped problem) and every convolution extent: at most 2^31 - 1
//     (CUTLASS 2.x GemmCoord / Conv2dProblemSize, CUTLASS 3.x cute int shapes, the module ABI's
//     int32 extents). Strides, offsets and spans are 64-bit (LongIndex, int64_t) and checked
//     exact in int64_t (check_tensor_extents).
//   - a batch L of at most 65535 (the modules' batch_count: one launch's grid z).
//   - a convolution tensor of at most 2^31 - 1 elements (32-bit implicit-GEMM indexing; see
//     Conv2dProblemSize::validate).
// Per kernel (supports(), get_kernels(), and the operation-first arguments):
//   - M, N and K rounded up to whole tiles of the kernel fit 32 bits (tile coordinates, and the
//     rows and columns a tile's threads compute, are int: the last tile must not wrap).
//   - SM80 (CUTLASS 2.x) GEMM and convolution kernels: the threadblock grid's y extent (tiles of
//     N, divided by the swizzle width; M for HorizontalSwizzle) and z extent (batch or split-K
//     slices) at most 65535, as GemmUniversalBase / ImplicitGemmConvolution::can_implement
//     require. A column-major output runs the transposed problem (N x M).
//   - Grouped kernels: the output tiles of all problems (SM90: each problem's tiles rounded up to
//     whole clusters) number at most 2^31 - 1 (the problem visitors' int32 tile index).
//   - SM90 (TMA) kernels: every stride, in bytes, below 2^40 (a TMA descriptor's limit).
// The checks allocate nothing unless they refuse: supports() runs before every launch.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tilecraft/core/conv_problem_size.hpp"
#include "tilecraft/core/extents.hpp"
#include "tilecraft/core/status.hpp"
#include "tilecraft/describe/gemm_operation.hpp"

namespace tilecraft::detail {

inline constexpr int64_t kMaxBatch = 65535;                     // one launch's grid z
inline constexpr size_t kMaxGroupedProblems = size_t{1} << 20;  // problems in one launch
inline constexpr int64_t kMaxGridYZ = 65535;                    // CUDA's grid y and z
inline constexpr int64_t kTmaStrideBytes = int64_t{1} << 40;    // TMA strides are below this

// One extent of a problem and what names it: "A: M (extent of dimension 0)" (tensor A, what M,
// dimension 0), "problem_size: M" (no dimension), "A[3]: M" (problem 3 of a grouped GEMM).
// The views must outlive the check (string literals, or names held by the arguments).
struct NamedExtent {
  int64_t value = 0;
  std::string_view tensor;
  std::string_view what;
  int dimension = -1;
  int64_t problem = -1;
  std::string label() const;
};

// One stride (in elements) of an operand that SM90 kernels address through TMA: "A: stride of
// dimension 0", "epilogue.bias: leading dimension" (dimension -1), "D[2]: batch stride" (-2).
struct NamedStride {
  int64_t elements = 0;
  int element_bytes = 1;
  std::string_view prefix;  // "epilogue." for a custom epilogue's operands
  std::string_view tensor;
  int dimension = -1;
  int64_t problem = -1;
  std::string label() const;
};

// Strides held in place for the usual operands (A, B, C, D: no allocation), others beyond.
class NamedStrides {
 public:
  void add(const NamedStride& s);
  // The widest stride (of the extents above 1) of a tensor, if it has any.
  void add_widest(std::string_view prefix, std::string_view tensor, const TensorView& t,
                  int64_t problem = -1);
  template <typename F>
  void for_each(F&& f) const {
    for (int i = 0; i < count_; ++i) f(fixed_[i]);
    for (const NamedStride& s : more_) f(s);
  }

 private:
  std::array<NamedStride, 8> fixed_{};
  int count_ = 0;
  std::vector<NamedStride> more_;
};

// A GEMM-shaped problem as one kernel indexes it: a GEMM, or a convolution's implicit GEMM.
struct IndexedProblem {
  std::array<NamedExtent, 3> mnk;
  NamedExtent grid_z{1, "batch", "", -1, -1};  // batch L or split-K slices
  NamedStrides strides;                        // read by SM90 kernels through TMA
};

// Ok when kernel `d` can index `p`, else the first extent, grid dimension or stride it cannot
// hold, named.
Status check_kernel_indexes(const GemmDescription& d, const IndexedProblem& p);

// A convolution's implicit GEMM (M, N, K): fprop (N*P*Q, K, C*R*S), dgrad (N*H*W, C, K*R*S),
// wgrad (K, C*R*S, N*P*Q), with depth (D, Z, T) for 3-D and C, K per group for grouped ones.
// Saturating at INT64_MAX (a problem not yet validated must not wrap into a plausible extent).
std::array<int64_t, 3> implicit_gemm_mnk(ConvKind kind, const Conv2dProblemSize& p);

// The implicit GEMM as a kernel indexes it, each extent named by the tensor it comes from:
// x, w and y name the activation, filter and output tensors ("A (x)", or "problem_size" for
// all three); split-K slices are the grid's z.
IndexedProblem conv_indexing(ConvKind kind, const Conv2dProblemSize& p, std::string_view x,
                             std::string_view w, std::string_view y);

// Grouped kernels: each problem's extents (named "<A>[g]: M" and so on from `names`, the
// argument names of A, B and the output), the tiles of all problems, and the TMA strides.
struct GroupedIndexing {
  std::span<const GemmCoord> problems;
  std::array<std::string_view, 3> names{"A", "B", "D"};
  NamedStrides strides;  // the widest of each operand's, named by its problem
};
Status check_grouped_indexes(const GemmDescription& d, const GroupedIndexing& g);

// The TMA check alone: each stride times its element's bytes below 2^40.
Status check_tma_strides(const NamedStrides& strides);

}  // namespace tilecraft::detail
