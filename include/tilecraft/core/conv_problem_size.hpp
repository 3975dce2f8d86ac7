// Conv2dProblemSize (seed 002, cutlass.conv.Conv2dProblemSize): the extents of a 2-D convolution.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/types.hpp"

namespace tilecraft {

// cutlass.conv.Mode: cross-correlation (what deep-learning frameworks call convolution) or true
// convolution (the filter flipped in R and S).
enum class ConvMode : uint8_t { CrossCorrelation, Convolution };
std::string_view to_string(ConvMode mode);
bool is_valid(ConvMode mode);

// cutlass.conv.SplitKMode: slices of the reduction accumulate into the output one after another
// (Serial), or into a workspace summed by a second kernel (Parallel).
enum class SplitKMode : uint8_t { Serial, Parallel };
std::string_view to_string(SplitKMode mode);
bool is_valid(SplitKMode mode);

// x is N x H x W x C, the filter K x R x S x (C / groups), y N x P x Q x K.
struct Conv2dProblemSize {
  int n = 0, h = 0, w = 0, c = 0;
  int k = 0, r = 0, s = 0;
  int p = 0, q = 0;
  int pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int stride_h = 1, stride_w = 1;
  int dilation_h = 1, dilation_w = 1;
  ConvMode mode = ConvMode::CrossCorrelation;
  int split_k_slices = 1;
  int groups = 1;
  // A 3-D convolution (CUTLASS's Conv3dProblemSize, made by make_3d): x is N x D x H x W x C,
  // the filter K x T x R x S x (C / groups), y N x Z x P x Q x K, padded pad_front / pad_back in
  // depth. A 2-D problem has spatial_dims 2, D = T = Z = 1 and no depth padding.
  int spatial_dims = 2;
  int d = 1, t = 1, z = 1;
  int pad_front = 0, pad_back = 0;
  int stride_d = 1, dilation_d = 1;

  // The seed's constructor: input (N, H, W, C), filter (K, R, S, C / groups), padding (top,
  // bottom, left, right: CUTLASS's pad_h, upper pad_h, pad_w, upper pad_w), stride and
  // dilation (rows, columns). P and Q follow as torch computes them:
  // P = (H + top + bottom - dilation_h * (R - 1) - 1) / stride_h + 1.
  static Result<Conv2dProblemSize> make(Tensor4DCoord input, Tensor4DCoord filter,
                                        Tensor4DCoord padding, MatrixCoord stride,
                                        MatrixCoord dilation,
                                        ConvMode mode = ConvMode::CrossCorrelation,
                                        int split_k_slices = 1, int groups = 1);
  // input (N, D, H, W, C), filter (K, T, R, S, C / groups), padding (front, back, top, bottom,
  // left, right), stride and dilation (depth, rows, columns); Z, P and Q as torch computes them.
  static Result<Conv2dProblemSize> make_3d(std::array<int, 5> input, std::array<int, 5> filter,
                                           std::array<int, 6> padding, std::array<int, 3> stride,
                                           std::array<int, 3> dilation,
                                           ConvMode mode = ConvMode::CrossCorrelation,
                                           int split_k_slices = 1, int groups = 1);
  Status validate() const;
  bool is_3d() const { return spatial_dims == 3; }

  // Element counts, saturating at INT64_MAX (five int extents can overflow even 64 bits).
  int64_t activation_elements() const;
  int64_t filter_elements() const;
  int64_t output_elements() const;
  std::string to_string() const;  // "N=32 H=56 W=56 C=64 K=64 R=3 S=3 P=56 Q=56 pad (1,1,1,1) ..."
  friend bool operator==(const Conv2dProblemSize&, const Conv2dProblemSize&) = default;
};

}  // namespace tilecraft
