// Convolution checks shared by the SM80 and SM90 adapters: a tc_conv_problem against what a
// kernel takes (namespace tc_conv_checks).
#pragma once

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

#include <string>

#include "tilecraft/abi/conv_args.h"

namespace tc_conv_checks {

inline std::string problem_text(const tc_conv_problem& c) {
  return "convolution N=" + std::to_string(c.n) + " H=" + std::to_string(c.h) +
         " W=" + std::to_string(c.w) + " C=" + std::to_string(c.c) + " K=" + std::to_string(c.k) +
         " R=" + std::to_string(c.r) + " S=" + std::to_string(c.s) + " P=" + std::to_string(c.p) +
         " Q=" + std::to_string(c.q);
}

inline const char* kind_name(int kind) {
  return kind == 0 ? "fprop" : kind == 1 ? "dgrad" : kind == 2 ? "wgrad" : "an unknown kind";
}

inline std::string check_shape(const tc_conv_problem& c) {
  const int32_t extents[] = {c.n, c.h, c.w, c.c, c.k, c.r, c.s, c.p, c.q};
  for (int32_t e : extents) {
    if (e <= 0) return problem_text(c) + ": every extent must be positive";
  }
  if (c.pad_h < 0 || c.pad_w < 0 || c.pad_bottom < 0 || c.pad_right < 0) {
    return "padding (" + std::to_string(c.pad_h) + ", " + std::to_string(c.pad_bottom) + ", " +
           std::to_string(c.pad_w) + ", " + std::to_string(c.pad_right) + ") must not be negative";
  }
  if (c.stride_h < 1 || c.stride_w < 1 || c.dilation_h < 1 || c.dilation_w < 1) {
    return "stride (" + std::to_string(c.stride_h) + ", " + std::to_string(c.stride_w) +
           ") and dilation (" + std::to_string(c.dilation_h) + ", " + std::to_string(c.dilation_w) +
           ") must be at least 1";
  }
  if (c.mode != 0 && c.mode != 1) return "mode " + std::to_string(c.mode) + " is not a conv mode";
  if (c.split_k_slices < 1) {
    return "split_k_slices " + std::to_string(c.split_k_slices) + " must be at least 1";
  }
  if (c.groups < 1) return "groups " + std::to_string(c.groups) + " must be at least 1";
  if (c.spatial_dims == 3) {
    if (c.d < 1 || c.t < 1 || c.z < 1) {
      return problem_text(c) + " D=" + std::to_string(c.d) + " T=" + std::to_string(c.t) +
             " Z=" + std::to_string(c.z) + ": every extent must be positive";
    }
    if (c.pad_front < 0 || c.pad_back < 0 || c.stride_d < 1 || c.dilation_d < 1) {
      return "depth padding (" + std::to_string(c.pad_front) + ", " + std::to_string(c.pad_back) +
             ") must not be negative, and the depth stride " + std::to_string(c.stride_d) +
             " and dilation " + std::to_string(c.dilation_d) + " must be at least 1";
    }
  }
  return {};
}

// What every grouped kernel takes: channel counts that split into the groups, and no split K.
inline std::string check_group_counts(const tc_conv_problem& c) {
  if (c.c % c.groups != 0 || c.k % c.groups != 0) {
    return "groups=" + std::to_string(c.groups) + ": C=" + std::to_string(c.c) +
           " and K=" + std::to_string(c.k) + " must both be multiples of the group count";
  }
  if (c.split_k_slices != 1) {
    return "split_k_slices " + std::to_string(c.split_k_slices) +
           ": grouped convolutions do not split K (split_k_slices=1)";
  }
  return {};
}

// The groups of a problem against a kernel's group mode (0 none, 1 single group, 2 multiple
// groups, 3 depthwise) and its tile's N: what CUTLASS's grouped kernels take, in words.
inline std::string check_groups(const tc_conv_problem& c, int group_mode, int tile_n) {
  const std::string groups = "groups=" + std::to_string(c.groups);
  if (group_mode == 0) {
    if (c.groups == 1) return {};
    return groups +
           ": this kernel computes ungrouped convolutions (groups=1); grouped fprop runs on a "
           "kernel of group_mode single_group, multiple_group or depthwise";
  }
  const std::string why = check_group_counts(c);
  if (!why.empty()) return why;
  const int k_per_group = c.k / c.groups;
  if (group_mode == 3) {
    if (c.c != c.groups || c.k != c.groups) {
      return groups + ": a depthwise kernel takes C == K == groups, got C=" + std::to_string(c.c) +
             " K=" + std::to_string(c.k);
    }
    return {};
  }
  if (group_mode == 1 && k_per_group % tile_n != 0) {
    return groups + ": K / groups = " + std::to_string(k_per_group) +
           " output channels per group must be a multiple of this single_group kernel's tile N=" +
           std::to_string(tile_n) + " (a multiple_group kernel takes groups smaller than its tile)";
  }
  if (group_mode == 2 && tile_n % k_per_group != 0) {
    return groups + ": this multiple_group kernel's tile N=" + std::to_string(tile_n) +
           " must be a multiple of K / groups = " + std::to_string(k_per_group) +
           " output channels per group (a single_group kernel takes larger groups)";
  }
  return {};
}

// What every kernel checks first: its kind, the extents, its dimensions (a 2-D problem on a 2-D
// kernel, a 3-D one on a 3-D kernel), then the groups.
inline std::string check_problem_fits(const tc_conv_problem& c, int kind, int kernel_dims,
                                      int group_mode, int tile_n) {
  if (c.kind != kind) {
    return std::string("conv kind: this entry computes ") + kind_name(kind) + ", got " +
           kind_name(c.kind);
  }
  std::string why = check_shape(c);
  const int dims = c.spatial_dims == 3 ? 3 : 2;
  if (why.empty() && dims != kernel_dims) {
    why = "problem: this entry computes " + std::to_string(kernel_dims) +
          "-D convolutions, got a " + std::to_string(dims) + "-D problem";
  }
  return why.empty() ? check_groups(c, group_mode, tile_n) : why;
}

inline std::string check_pointer(const char* name, const void* pointer, int bytes) {
  if (pointer == nullptr) return std::string(name) + ": null pointer";
  if (reinterpret_cast<uintptr_t>(pointer) % uintptr_t(bytes) != 0) {
    return std::string(name) + ": address is not aligned to the " + std::to_string(bytes) +
           "-byte access width";
  }
  return {};
}

inline std::string check_multiple(const char* operand, const char* extent_name, int extent,
                                  int alignment, const char* why) {
  if (extent % alignment == 0) return {};
  return std::string(operand) + ": " + extent_name + "=" + std::to_string(extent) +
         " is not a multiple of the " + std::to_string(alignment) + "-element " + why;
}

// The channel counts against the kernel's accesses: each operand's contiguous extent (its
// channels) must be a multiple of the elements it moves at once.
// Grouped fprop reads C / groups channels per group (depthwise: each pixel's C channels at once).
inline std::string check_channels(const tc_conv_problem& c, int align_a, int align_b, int align_c,
                                  bool depthwise = false) {
  std::string why;
  if (c.kind == 0) {
    const bool grouped = c.groups > 1;
    const char* channels = grouped ? "C / groups" : "C";
    const int per_group = grouped ? c.c / c.groups : c.c;
    why =
        grouped && depthwise
            ? check_multiple("A (x)", "C", c.c, align_a, "access of the activation")
            : check_multiple("A (x)", channels, per_group, align_a, "alignment of the activation");
    if (why.empty()) {
      why = check_multiple("B (w)", channels, per_group, align_b, "alignment of the filter");
    }
    if (why.empty()) why = check_multiple("C/D (y)", "K", c.k, align_c, "alignment of the output");
    return why;
  }
  const bool dgrad = c.kind == 1;
  why = check_multiple("A (dy)", "K", c.k, align_a, "alignment of the output gradient");
  if (why.empty()) {
    why = check_multiple(dgrad ? "B (w)" : "B (x)", "C", c.c, align_b,
                         dgrad ? "alignment of the filter" : "alignment of the activation");
  }
  if (why.empty()) {
    why = check_multiple(
        dgrad ? "C/D (dx)" : "C/D (dw)", "C", c.c, align_c,
        dgrad ? "alignment of the input gradient" : "alignment of the filter gradient");
  }
  return why;
}

}  // namespace tc_conv_checks

#endif  // !TILECRAFT_DEVICE_HALF
