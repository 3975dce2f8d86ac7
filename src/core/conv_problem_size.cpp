#include "tilecraft/core/conv_problem_size.hpp"

#include <limits>

#include "tilecraft/core/extents.hpp"

namespace tilecraft {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();

std::string pair_text(int a, int b) {
  return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}

}  // namespace

int64_t Conv2dProblemSize::activation_elements() const {
  return saturating_product({n, d, h, w, c});
}
int64_t Conv2dProblemSize::filter_elements() const {
  return saturating_product({k, t, r, s, c / (groups > 0 ? groups : 1)});
}
int64_t Conv2dProblemSize::output_elements() const { return saturating_product({n, z, p, q, k}); }

std::string_view to_string(ConvMode mode) {
  switch (mode) {
    case ConvMode::CrossCorrelation:
      return "cross_correlation";
    case ConvMode::Convolution:
      return "convolution";
  }
  return "?";
}

bool is_valid(ConvMode mode) { return to_string(mode) != "?"; }

std::string_view to_string(SplitKMode mode) {
  switch (mode) {
    case SplitKMode::Serial:
      return "Serial";
    case SplitKMode::Parallel:
      return "Parallel";
  }
  return "?";
}

bool is_valid(SplitKMode mode) { return to_string(mode) != "?"; }

Result<Conv2dProblemSize> Conv2dProblemSize::make(Tensor4DCoord input, Tensor4DCoord filter,
                                                  Tensor4DCoord padding, MatrixCoord stride,
                                                  MatrixCoord dilation, ConvMode mode,
                                                  int split_k_slices, int groups) {
  Conv2dProblemSize p;
  p.n = input.n;
  p.h = input.h;
  p.w = input.w;
  p.c = input.c;
  p.k = filter.n;
  p.r = filter.h;
  p.s = filter.w;
  p.pad_top = padding.n;
  p.pad_bottom = padding.h;
  p.pad_left = padding.w;
  p.pad_right = padding.c;
  p.stride_h = stride.row;
  p.stride_w = stride.column;
  p.dilation_h = dilation.row;
  p.dilation_w = dilation.column;
  p.mode = mode;
  p.split_k_slices = split_k_slices;
  p.groups = groups;
  if (groups >= 1 && input.c % groups == 0 && filter.c != input.c / groups) {
    return Status::invalid("filter_size: expected C / groups = " + std::to_string(input.c) + " / " +
                           std::to_string(groups) + " = " + std::to_string(input.c / groups) +
                           " channels, got " + std::to_string(filter.c) +
                           " (input_size has C=" + std::to_string(input.c) + ")");
  }
  // Validated before the output extent is computed from them.
  for (auto [name, value] : {std::pair{"input_size N", p.n}, std::pair{"input_size H", p.h},
                             std::pair{"input_size W", p.w}, std::pair{"input_size C", p.c},
                             std::pair{"filter_size K", p.k}, std::pair{"filter_size R", p.r},
                             std::pair{"filter_size S", p.s}}) {
    if (value < 1) {
      return Status::invalid(std::string(name) + ": expected >= 1, got " + std::to_string(value));
    }
  }
  if (p.stride_h < 1 || p.stride_w < 1) {
    return Status::invalid("stride: expected >= 1 in both dimensions, got " +
                           pair_text(p.stride_h, p.stride_w));
  }
  if (p.dilation_h < 1 || p.dilation_w < 1) {
    return Status::invalid("dilation: expected >= 1 in both dimensions, got " +
                           pair_text(p.dilation_h, p.dilation_w));
  }
  const int64_t span_h =
      int64_t{p.h} + p.pad_top + p.pad_bottom - int64_t{p.dilation_h} * (p.r - 1) - 1;
  const int64_t span_w =
      int64_t{p.w} + p.pad_left + p.pad_right - int64_t{p.dilation_w} * (p.s - 1) - 1;
  if (span_h < 0 || span_w < 0) {
    return Status::invalid("filter_size: the dilated " + std::to_string(p.r) + "x" +
                           std::to_string(p.s) + " filter (dilation " +
                           pair_text(p.dilation_h, p.dilation_w) + ") is larger than the padded " +
                           std::to_string(int64_t{p.h} + p.pad_top + p.pad_bottom) + "x" +
                           std::to_string(int64_t{p.w} + p.pad_left + p.pad_right) + " input");
  }
  p.p = static_cast<int>(std::min(kMaxInt, span_h / p.stride_h + 1));
  p.q = static_cast<int>(std::min(kMaxInt, span_w / p.stride_w + 1));
  TILECRAFT_RETURN_IF_ERROR(p.validate());
  return p;
}

Result<Conv2dProblemSize> Conv2dProblemSize::make_3d(std::array<int, 5> input,
                                                     std::array<int, 5> filter,
                                                     std::array<int, 6> padding,
                                                     std::array<int, 3> stride,
                                                     std::array<int, 3> dilation, ConvMode mode,
                                                     int split_k_slices, int groups) {
  // The 2-D problem of the rows and columns validates those; depth is checked here.
  auto planar =
      make({input[0], input[2], input[3], input[4]}, {filter[0], filter[2], filter[3], filter[4]},
           {padding[2], padding[3], padding[4], padding[5]}, {stride[1], stride[2]},
           {dilation[1], dilation[2]}, mode, split_k_slices, groups);
  if (!planar) return planar.status();
  Conv2dProblemSize p = *planar;
  p.spatial_dims = 3;
  p.d = input[1];
  p.t = filter[1];
  p.pad_front = padding[0];
  p.pad_back = padding[1];
  p.stride_d = stride[0];
  p.dilation_d = dilation[0];
  if (p.d < 1 || p.t < 1) {
    return Status::invalid("input_size D and filter_size T: expected >= 1, got " +
                           pair_text(p.d, p.t));
  }
  if (p.stride_d < 1 || p.dilation_d < 1) {
    return Status::invalid("stride and dilation: expected >= 1 in depth, got " +
                           pair_text(p.stride_d, p.dilation_d));
  }
  const int64_t span =
      int64_t{p.d} + p.pad_front + p.pad_back - int64_t{p.dilation_d} * (p.t - 1) - 1;
  if (span < 0) {
    return Status::invalid("filter_size: the dilated depth T=" + std::to_string(p.t) +
                           " (dilation " + std::to_string(p.dilation_d) +
                           ") is deeper than the padded input depth " +
                           std::to_string(int64_t{p.d} + p.pad_front + p.pad_back));
  }
  p.z = static_cast<int>(std::min(kMaxInt, span / p.stride_d + 1));
  TILECRAFT_RETURN_IF_ERROR(p.validate());
  return p;
}

Status Conv2dProblemSize::validate() const {
  if (spatial_dims != 2 && spatial_dims != 3) {
    return Status::invalid("problem_size: spatial_dims must be 2 or 3, got " +
                           std::to_string(spatial_dims));
  }
  if (spatial_dims == 2 && (d != 1 || t != 1 || z != 1 || pad_front != 0 || pad_back != 0 ||
                            stride_d != 1 || dilation_d != 1)) {
    return Status::invalid(
        "problem_size: a 2-D problem has D = T = Z = 1 and no depth padding, "
        "stride or dilation (" +
        to_string() + ")");
  }
  if (spatial_dims == 3) {
    for (auto [name, value] :
         {std::pair{"D", d}, std::pair{"T", t}, std::pair{"Z", z}, std::pair{"stride_d", stride_d},
          std::pair{"dilation_d", dilation_d}}) {
      if (value < 1) {
        return Status::invalid(std::string("problem_size: ") + name + " must be >= 1, got " +
                               std::to_string(value) + " (" + to_string() + ")");
      }
    }
    if (pad_front < 0 || pad_back < 0) {
      return Status::invalid("padding: expected >= 0 in depth, got " +
                             pair_text(pad_front, pad_back));
    }
    const int64_t span = int64_t{d} + pad_front + pad_back - int64_t{dilation_d} * (t - 1) - 1;
    if (span < 0 || span / stride_d + 1 != z) {
      return Status::invalid("problem_size: output depth Z = " + std::to_string(z) +
                             " does not follow from the input, padding, stride and dilation (" +
                             to_string() + ")");
    }
  }
  for (auto [name, value] : {std::pair{"N", n}, std::pair{"H", h}, std::pair{"W", w},
                             std::pair{"C", c}, std::pair{"K", k}, std::pair{"R", r},
                             std::pair{"S", s}, std::pair{"P", p}, std::pair{"Q", q}}) {
    if (value < 1) {
      return Status::invalid(std::string("problem_size: ") + name + " must be >= 1, got " +
                             std::to_string(value) + " (" + to_string() + ")");
    }
  }
  if (pad_top < 0 || pad_bottom < 0 || pad_left < 0 || pad_right < 0) {
    return Status::invalid("padding: expected >= 0 on every side, got (" + std::to_string(pad_top) +
                           ", " + std::to_string(pad_bottom) + ", " + std::to_string(pad_left) +
                           ", " + std::to_string(pad_right) + ")");
  }
  if (stride_h < 1 || stride_w < 1) {
    return Status::invalid("stride: expected >= 1, got " + pair_text(stride_h, stride_w));
  }
  if (dilation_h < 1 || dilation_w < 1) {
    return Status::invalid("dilation: expected >= 1, got " + pair_text(dilation_h, dilation_w));
  }
  if (!is_valid(mode)) {
    return Status::invalid("mode: expected cutlass.conv.Mode.cross_correlation or convolution");
  }
  if (split_k_slices < 1) {
    return Status::invalid("split_k_slices: expected >= 1, got " + std::to_string(split_k_slices));
  }
  if (groups < 1 || c % groups != 0 || k % groups != 0) {
    return Status::invalid("groups: expected a count >= 1 dividing C=" + std::to_string(c) +
                           " and K=" + std::to_string(k) + ", got " + std::to_string(groups));
  }
  // The output the padding and strides make must be the P x Q given.
  const int64_t span_h = int64_t{h} + pad_top + pad_bottom - int64_t{dilation_h} * (r - 1) - 1;
  const int64_t span_w = int64_t{w} + pad_left + pad_right - int64_t{dilation_w} * (s - 1) - 1;
  if (span_h < 0 || span_w < 0 || span_h / stride_h + 1 != p || span_w / stride_w + 1 != q) {
    return Status::invalid("problem_size: output P x Q = " + std::to_string(p) + "x" +
                           std::to_string(q) +
                           " does not follow from the input, padding, stride "
                           "and dilation (" +
                           to_string() + ")");
  }
  for (auto [name, count] :
       {std::pair{"activation", activation_elements()}, std::pair{"filter", filter_elements()},
        std::pair{"output", output_elements()}}) {
    if (count > kMaxInt) {
      return Status::unsupported(std::string("problem_size: the ") + name + " tensor has " +
                                 std::to_string(count) +
                                 " elements; 32-bit implicit-GEMM indexing takes at most 2^31 - 1");
    }
  }
  return Status::ok();
}

std::string Conv2dProblemSize::to_string() const {
  // A 3-D problem adds its depth: D, T, Z, and the first of its padding, stride and dilation.
  const bool deep = spatial_dims == 3;
  auto depth = [deep](const std::string& text) { return deep ? text : std::string(); };
  auto num = [](int value) { return std::to_string(value); };
  return "N=" + num(n) + depth(" D=" + num(d)) + " H=" + num(h) + " W=" + num(w) + " C=" + num(c) +
         " K=" + num(k) + depth(" T=" + num(t)) + " R=" + num(r) + " S=" + num(s) +
         depth(" Z=" + num(z)) + " P=" + num(p) + " Q=" + num(q) + " pad (" +
         depth(num(pad_front) + "," + num(pad_back) + ",") + num(pad_top) + "," + num(pad_bottom) +
         "," + num(pad_left) + "," + num(pad_right) + ") stride (" + depth(num(stride_d) + ", ") +
         num(stride_h) + ", " + num(stride_w) + ") dilation (" + depth(num(dilation_d) + ", ") +
         num(dilation_h) + ", " + num(dilation_w) + ")" +
         (groups != 1 ? " groups " + num(groups) : std::string());
}

}  // namespace tilecraft
