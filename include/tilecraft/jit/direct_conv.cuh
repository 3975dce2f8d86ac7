// tilecraft's direct grouped and depthwise fprop on CUDA cores (iterator_algorithm direct): not an
// implicit GEMM, so no MMA tile is spent on the zeros between groups. Each thread computes
// kVector consecutive output channels (one access of x, one of y) of kPixelsPerThread
// consecutive pixels of an output row, in float. A CTA's threads split into channel threads (at
// most kChannels / kVector; the host picks the count that leaves the fewest threads idle for the
// problem's K) by pixel threads; its slice of the filter is staged once in shared memory, as
// floats, tap by tap.
// The epilogue is CUTLASS's thread-level output operator (LinearCombination and the rest).
//
// Depthwise (C == K == groups): thread channel k reads input channel k. Otherwise a thread's
// channels lie in one group (C / groups and K / groups multiples of kVector) and read that group's
// C / groups input channels, kVector at a time.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cutlass/arch/synclog.hpp"
#include "cutlass/array.h"
#include "cutlass/epilogue/thread/activation.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/epilogue/thread/linear_combination_clamp.h"
#include "cutlass/epilogue/thread/linear_combination_generic.h"
#include "cutlass/numeric_conversion.h"
#include "cutlass/numeric_types.h"
#include "tilecraft/abi/conv_args.h"

namespace tc_direct {

// The kernel's view of the problem (every extent checked positive by the host half).
struct Problem {
  int n, h, w, c, k, r, s, p, q;
  int pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
  int c_per_group, k_per_group;
  int flip;               // convolution mode: the filter read back to front
  int q_blocks;           // ceil(Q / pixels per thread)
  long long pixel_slots;  // N * P * q_blocks
};

// `count` floats from shared memory, 16 bytes at a time where the count allows.
template <int kCount>
CUTLASS_DEVICE void load_floats(const float* source, float (&out)[kCount]) {
  if constexpr (kCount % 4 == 0) {
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kCount; i += 4) {
      const float4 v = *reinterpret_cast<const float4*>(source + i);
      out[i] = v.x;
      out[i + 1] = v.y;
      out[i + 2] = v.z;
      out[i + 3] = v.w;
    }
  } else {
    CUTLASS_PRAGMA_UNROLL
    for (int i = 0; i < kCount; ++i) out[i] = source[i];
  }
}

// An access of 1 to 16 bytes as one load or store.
template <int kBytes>
using RawVector = std::conditional_t<
    kBytes == 16, uint4,
    std::conditional_t<kBytes == 8, uint2,
                       std::conditional_t<kBytes == 4, uint32_t,
                                          std::conditional_t<kBytes == 2, uint16_t, uint8_t>>>>;

// The array at `source` in one access (`source` aligned to the array's size).
template <class Array, class Element>
CUTLASS_DEVICE Array load_vector(const Element* source) {
  using Raw = RawVector<sizeof(Array)>;
  const Raw raw = __ldg(reinterpret_cast<const Raw*>(source));
  Array out;
  memcpy(&out, &raw, sizeof(Array));
  return out;
}

template <class Array, class Element>
CUTLASS_DEVICE void store_vector(Element* destination, const Array& value) {
  using Raw = RawVector<sizeof(Array)>;
  Raw raw;
  memcpy(&raw, &value, sizeof(Array));
  *reinterpret_cast<Raw*>(destination) = raw;
}

template <class ElementA_, class ElementB_, class ElementC_, class OutputOp_, int kVector_,
          int kPixels_, int kChannels_, int kThreads_, bool kDepthwise_>
struct DirectConv {
  using ElementA = ElementA_;
  using ElementB = ElementB_;
  using ElementC = ElementC_;
  using ElementAccumulator = float;
  using EpilogueOutputOp = OutputOp_;
  static constexpr int kVector = kVector_;
  static constexpr int kPixels = kPixels_;
  static constexpr int kChannels = kChannels_;
  static constexpr int kThreads = kThreads_;
  static constexpr bool kDepthwise = kDepthwise_;
  static constexpr int kMaxChannelThreads = kChannels / kVector;
  static constexpr int kPixelsPerThread = kPixels / (kThreads / kMaxChannelThreads);
  static_assert(kChannels % kVector == 0 && kThreads % kMaxChannelThreads == 0 &&
                    kPixels % (kThreads / kMaxChannelThreads) == 0 && kPixelsPerThread >= 1,
                "the tile's channels and pixels must split evenly over the threads");
  static_assert(EpilogueOutputOp::kCount == kVector, "one output access per thread and pixel");

  using VectorA = cutlass::Array<ElementA, kVector>;
  using VectorC = cutlass::Array<ElementC, kVector>;
  using Accumulators = cutlass::Array<ElementAccumulator, kVector>;
  using ToFloat = cutlass::NumericArrayConverter<float, ElementA, kVector>;

  struct Params {
    const ElementA* x;
    const ElementB* w;
    const ElementC* c;  // null when the epilogue reads no source
    ElementC* d;
    int c_per_channel;                   // 1: C holds one value per output channel (a bias)
    int channel_threads, pixel_threads;  // channel_threads * pixel_threads <= kThreads
    Problem problem;
    typename EpilogueOutputOp::Params output_op;
  };

  // The filter slice lives in dynamic shared memory: filter_floats() floats.
  struct SharedStorage {
    float filter[1];
  };

  // Input channels each output channel reads.
  CUTLASS_HOST_DEVICE static int group_inputs(int c_per_group) {
    return kDepthwise ? 1 : c_per_group;
  }

  // The filter slice in shared memory of a CTA of `channel_threads` channel threads.
  CUTLASS_HOST_DEVICE static long long filter_floats(int r, int s, int c_per_group,
                                                     int channel_threads) {
    return static_cast<long long>(r) * s * group_inputs(c_per_group) * channel_threads * kVector;
  }

  // Accumulation over the whole filter at column stride kStride (dilation 1), kTaps filter
  // columns at a time (kExact: the filter is kTaps wide): the (pixels - 1) * kStride + kTaps
  // input columns those taps read for the thread's pixels (a vector of channels each; a grouped
  // thread takes its group's inputs a vector at a time) are loaded once, all at once, and each is
  // used by every tap and pixel that reads it. `x` points at the thread's first input channel.
  template <int kStride, int kTaps, bool kExact>
  CUTLASS_DEVICE static void window_rows(const Problem& pb, const ElementA* x, const float* filter,
                                         int channels, int kk0, int n, int p, int q0,
                                         float (&acc)[kPixelsPerThread][kVector]) {
    constexpr int kWindow = (kPixelsPerThread - 1) * kStride + kTaps;
    const int inputs = group_inputs(pb.c_per_group);
    ToFloat to_float;
    for (int r = 0; r < pb.r; ++r) {
      const int ih = p * pb.stride_h - pb.pad_h + r * pb.dilation_h;
      if (ih < 0 || ih >= pb.h) continue;
      const ElementA* x_row = x + (static_cast<int64_t>(n) * pb.h + ih) * pb.w * int64_t(pb.c);
      for (int s0 = 0; s0 < (kExact ? kTaps : pb.s); s0 += kTaps) {
        const int iw0 = q0 * kStride - pb.pad_w + s0;
        for (int c = 0; c < inputs; c += kVector) {
          VectorA columns[kWindow];
          CUTLASS_PRAGMA_UNROLL
          for (int j = 0; j < kWindow; ++j) {
            const int iw = iw0 + j;
            if (iw >= 0 && iw < pb.w) {
              columns[j] = load_vector<VectorA>(x_row + static_cast<int64_t>(iw) * pb.c + c);
            } else {
              columns[j].fill(ElementA(0));
            }
          }
          CUTLASS_PRAGMA_UNROLL
          for (int j = 0; j < kTaps; ++j) {
            if (!kExact && s0 + j >= pb.s) break;
            const float* tap_filter = filter + ((r * pb.s + s0 + j) * inputs + c) * channels + kk0;
            if constexpr (kDepthwise) {
              float weight[kVector];
              load_floats(tap_filter, weight);
              CUTLASS_PRAGMA_UNROLL
              for (int t = 0; t < kPixelsPerThread; ++t) {
                const Accumulators value = to_float(columns[t * kStride + j]);
                CUTLASS_PRAGMA_UNROLL
                for (int v = 0; v < kVector; ++v) acc[t][v] += value[v] * weight[v];
              }
            } else {
              CUTLASS_PRAGMA_UNROLL
              for (int cc = 0; cc < kVector; ++cc) {
                float weight[kVector];
                load_floats(tap_filter + cc * channels, weight);
                CUTLASS_PRAGMA_UNROLL
                for (int t = 0; t < kPixelsPerThread; ++t) {
                  const float value = static_cast<float>(columns[t * kStride + j][cc]);
                  CUTLASS_PRAGMA_UNROLL
                  for (int v = 0; v < kVector; ++v) acc[t][v] += value * weight[v];
                }
              }
            }
          }
        }
      }
    }
  }

  CUTLASS_DEVICE void operator()(const Params& params, SharedStorage& storage) {
    const Problem& pb = params.problem;
    float* filter = storage.filter;
    const int inputs = group_inputs(pb.c_per_group);
    const int taps = pb.r * pb.s;
    const int channels = params.channel_threads * kVector;  // the CTA's output channels
    const int k_block = static_cast<int>(blockIdx.y) * channels;

    // filter[(tap * inputs + c) * channels + kk] = w[k_block + kk][tap][c], read in w's order.
    const int per_channel = taps * inputs;
    const int staged = per_channel * channels;
    for (int i = static_cast<int>(threadIdx.x); i < staged; i += kThreads) {
      const int kk = i / per_channel;
      const int rest = i - kk * per_channel;
      const int tap = rest / inputs;
      const int c = rest - tap * inputs;
      const int k = k_block + kk;
      float value = 0.f;
      if (k < pb.k) {
        const int source_tap = pb.flip ? taps - 1 - tap : tap;
        value = static_cast<float>(
            params.w[(static_cast<int64_t>(k) * taps + source_tap) * inputs + c]);
      }
      filter[(tap * inputs + c) * channels + kk] = value;
    }
    __syncthreads();

    const int channel_thread = static_cast<int>(threadIdx.x) % params.channel_threads;
    const int pixel_thread = static_cast<int>(threadIdx.x) / params.channel_threads;
    const int kk0 = channel_thread * kVector;
    const int k0 = k_block + kk0;
    const long long slot = static_cast<long long>(blockIdx.x) * params.pixel_threads + pixel_thread;
    if (pixel_thread >= params.pixel_threads || k0 >= pb.k || slot >= pb.pixel_slots) return;
    const long long row = slot / pb.q_blocks;  // n * P + p
    const int q0 = static_cast<int>(slot - row * pb.q_blocks) * kPixelsPerThread;
    const int p = static_cast<int>(row % pb.p);
    const int n = static_cast<int>(row / pb.p);
    const int c0 = kDepthwise ? k0 : (k0 / pb.k_per_group) * inputs;
    ToFloat to_float;

    float acc[kPixelsPerThread][kVector];
    CUTLASS_PRAGMA_UNROLL
    for (int t = 0; t < kPixelsPerThread; ++t) {
      CUTLASS_PRAGMA_UNROLL
      for (int v = 0; v < kVector; ++v) acc[t][v] = 0.f;
    }

    // At column stride 1 (and 2, depthwise) with dilation 1, each input column is read once per
    // window of taps (a grouped thread's window at stride 2 costs more registers than it saves).
    const bool window =
        pb.dilation_w == 1 && (pb.stride_w == 1 || (kDepthwise && pb.stride_w == 2));
    const ElementA* x = params.x + c0;
    if (window && pb.stride_w == 1) {
      if (pb.s == 3) {
        window_rows<1, 3, true>(pb, x, filter, channels, kk0, n, p, q0, acc);
      } else if (kDepthwise && pb.s == 5) {
        window_rows<1, 5, true>(pb, x, filter, channels, kk0, n, p, q0, acc);
      } else {
        window_rows<1, 3, false>(pb, x, filter, channels, kk0, n, p, q0, acc);
      }
    } else if constexpr (kDepthwise) {
      if (window && pb.s == 3) {
        window_rows<2, 3, true>(pb, x, filter, channels, kk0, n, p, q0, acc);
      } else if (window) {
        window_rows<2, 3, false>(pb, x, filter, channels, kk0, n, p, q0, acc);
      }
    }
    for (int r = 0; r < (window ? 0 : pb.r); ++r) {
      const int ih = p * pb.stride_h - pb.pad_h + r * pb.dilation_h;
      if (ih < 0 || ih >= pb.h) continue;
      const ElementA* x_row =
          params.x + (static_cast<int64_t>(n) * pb.h + ih) * pb.w * static_cast<int64_t>(pb.c) + c0;
      for (int s = 0; s < pb.s; ++s) {
        const float* tap_filter = filter + (r * pb.s + s) * inputs * channels + kk0;
        const ElementA* column[kPixelsPerThread];
        CUTLASS_PRAGMA_UNROLL
        for (int t = 0; t < kPixelsPerThread; ++t) {
          const int iw = (q0 + t) * pb.stride_w - pb.pad_w + s * pb.dilation_w;
          column[t] = (q0 + t < pb.q && iw >= 0 && iw < pb.w)
                          ? x_row + static_cast<int64_t>(iw) * pb.c
                          : nullptr;
        }
        if constexpr (kDepthwise) {
          float weight[kVector];
          load_floats(tap_filter, weight);
          CUTLASS_PRAGMA_UNROLL
          for (int t = 0; t < kPixelsPerThread; ++t) {
            if (column[t] == nullptr) continue;
            const Accumulators x = to_float(load_vector<VectorA>(column[t]));
            CUTLASS_PRAGMA_UNROLL
            for (int v = 0; v < kVector; ++v) acc[t][v] += x[v] * weight[v];
          }
        } else {
          for (int c = 0; c < inputs; c += kVector) {
            Accumulators x[kPixelsPerThread];
            CUTLASS_PRAGMA_UNROLL
            for (int t = 0; t < kPixelsPerThread; ++t) {
              if (column[t] != nullptr) {
                x[t] = to_float(load_vector<VectorA>(column[t] + c));
              } else {
                x[t].fill(0.f);
              }
            }
            CUTLASS_PRAGMA_UNROLL
            for (int cc = 0; cc < kVector; ++cc) {
              float weight[kVector];
              load_floats(tap_filter + (c + cc) * channels, weight);
              CUTLASS_PRAGMA_UNROLL
              for (int t = 0; t < kPixelsPerThread; ++t) {
                CUTLASS_PRAGMA_UNROLL
                for (int v = 0; v < kVector; ++v) acc[t][v] += x[t][cc] * weight[v];
              }
            }
          }
        }
      }
    }

    EpilogueOutputOp output_op(params.output_op);
    const bool source = output_op.is_source_needed();
    CUTLASS_PRAGMA_UNROLL
    for (int t = 0; t < kPixelsPerThread; ++t) {
      if (q0 + t >= pb.q) break;
      const int64_t out = (row * pb.q + q0 + t) * static_cast<int64_t>(pb.k) + k0;
      Accumulators accumulators;
      CUTLASS_PRAGMA_UNROLL
      for (int v = 0; v < kVector; ++v) accumulators[v] = acc[t][v];
      typename EpilogueOutputOp::FragmentOutput result;
      if (source) {
        result = output_op(accumulators,
                           load_vector<VectorC>(params.c + (params.c_per_channel ? k0 : out)));
      } else {
        result = output_op(accumulators);
      }
      store_vector(params.d + out, result);
    }
  }
};

}  // namespace tc_direct

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

#include <string>

#include "tilecraft/jit/conv_checks.cuh"
#include "tilecraft/jit/sm80_common.cuh"

namespace tc_direct {

using namespace tc_conv_checks;

inline const tc_conv_args* conv_block(const tc_args_header* h, char* error, size_t capacity) {
  return tc_image::block(h, tc_conv_args_of, TC_FAMILY_CONV, TC_CONV_ARGS_VERSION, error, capacity);
}

// How a CTA's threads split into channel threads (each kVector output channels) and pixel
// threads for a problem of `vectors` channel vectors: the split that leaves the fewest threads
// idle, over the CTAs and within each, and of those the one with most channel threads.
struct Split {
  int channel_threads, pixel_threads;
  long long channel_blocks;
};

template <class Conv>
Split split_of(const tc_conv_problem& c) {
  const int vectors = c.k / Conv::kVector;
  Split best{1, Conv::kThreads, vectors};
  double best_use = -1;
  for (int threads = 1; threads <= Conv::kMaxChannelThreads && threads <= vectors; ++threads) {
    const long long blocks = (vectors + threads - 1) / threads;
    const int pixel_threads = Conv::kThreads / threads;
    const double use = double(vectors) / double(blocks * threads) *
                       double(pixel_threads * threads) / double(Conv::kThreads);
    if (use >= best_use) best = {threads, pixel_threads, blocks}, best_use = use;
  }
  return best;
}

// What the direct kernel Conv needs of the problem and its inputs, in words ("" if it takes them).
template <class Conv>
std::string check_problem(const tc_conv_args& a) {
  const tc_conv_problem& c = a.conv;
  if (a.mode != TC_CONV_MODE_RUN) {
    return "mode " + std::to_string(a.mode) +
           ": the direct convolution runs a whole convolution (mode 0); it has no split-K form";
  }
  if (c.kind != 0) {
    return std::string("conv kind: this entry computes fprop, got ") + kind_name(c.kind);
  }
  if (c.spatial_dims == 3)
    return "problem: this entry computes 2-D convolutions, got a 3-D problem";
  std::string why = check_shape(c);
  if (!why.empty()) return why;
  why = check_group_counts(c);
  if (!why.empty()) return why;
  constexpr int kVector = Conv::kVector;
  if (Conv::kDepthwise) {
    if (c.c != c.groups || c.k != c.groups) {
      return "groups=" + std::to_string(c.groups) +
             ": a depthwise kernel takes C == K == groups, got C=" + std::to_string(c.c) +
             " K=" + std::to_string(c.k);
    }
    why = check_multiple("A (x)", "C", c.c, kVector, "access of the activation");
  } else {
    why = check_multiple("A (x)", "C / groups", c.c / c.groups, kVector,
                         "access of the activation (a thread reads one group's channels)");
    if (why.empty()) {
      why = check_multiple("C/D (y)", "K / groups", c.k / c.groups, kVector,
                           "access of the output (a thread writes one group's channels)");
    }
  }
  if (why.empty()) why = check_multiple("C/D (y)", "K", c.k, kVector, "access of the output");
  if (!why.empty()) return why;
  const Split split = split_of<Conv>(c);
  const long long bytes = Conv::filter_floats(c.r, c.s, c.c / c.groups, split.channel_threads) *
                          static_cast<long long>(sizeof(float));
  // The current device's limit; without a device, the most any SM80 or SM90 CTA has.
  int device = -1;
  const int queried = tc_image::shared_limit(&device);
  const long long limit = device >= 0 ? queried : 227 * 1024;
  if (bytes > limit) {
    return "filter R=" + std::to_string(c.r) + " S=" + std::to_string(c.s) +
           " with C / groups=" + std::to_string(c.c / c.groups) + ": the CTA's filter slice of " +
           std::to_string(split.channel_threads * Conv::kVector) + " output channels needs " +
           std::to_string(bytes) + " bytes of shared memory, more than the " +
           std::to_string(limit) + (device >= 0 ? " this device's" : " an SM90") +
           " CTA may have; use a kernel of fewer channels per CTA";
  }
  if (split.channel_blocks > 65535) {
    return "K=" + std::to_string(c.k) + ": more than 65535 CTAs of " +
           std::to_string(split.channel_threads * Conv::kVector) + " output channels";
  }
  why = check_pointer("A", a.A, static_cast<int>(sizeof(typename Conv::VectorA)));
  if (why.empty()) why = check_pointer("B", a.B, static_cast<int>(sizeof(typename Conv::ElementB)));
  return why;
}

template <class Conv>
std::string check_outputs(const tc_conv_args& a) {
  const int bytes = static_cast<int>(sizeof(typename Conv::VectorC));
  std::string why = check_pointer("D", a.D, bytes);
  if (why.empty() && a.C == nullptr && a.header.beta != 0.0) {
    why = "C: null pointer while beta is not 0";
  }
  if (why.empty() && a.C != nullptr) why = check_pointer("C", a.C, bytes);
  return why;
}

template <class Conv>
int32_t can_implement(const tc_args_header* header, char* error, size_t capacity) {
  const tc_conv_args* args = conv_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  std::string why = tc_gemm::check_activation_args<typename Conv::EpilogueOutputOp>(args->header);
  if (why.empty()) why = check_problem<Conv>(*args);
  if (!why.empty()) return tc_image::fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  return TC_OK;
}

template <class Conv>
int32_t run(const tc_args_header* header, void* /*workspace*/, void* stream, char* error,
            size_t capacity, const char* kernel_name) {
  const tc_conv_args* args = conv_block(header, error, capacity);
  if (args == nullptr) return TC_ERROR_INVALID_ARGUMENT;
  const tc_conv_args& a = *args;
  using Output = typename Conv::EpilogueOutputOp;
  std::string why = tc_gemm::check_activation_args<Output>(a.header);
  if (why.empty()) why = check_problem<Conv>(a);
  if (why.empty()) why = check_outputs<Conv>(a);
  if (!why.empty()) return tc_image::fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  const tc_image::Kernel& kernel = tc_image::kernel<Conv>(kernel_name);
  if (kernel.handle == nullptr) return tc_image::fail(TC_ERROR_CUDA, error, capacity, kernel.error);

  const tc_conv_problem& c = a.conv;
  typename Conv::Params params;
  params.x = static_cast<const typename Conv::ElementA*>(a.A);
  params.w = static_cast<const typename Conv::ElementB*>(a.B);
  params.c = static_cast<const typename Conv::ElementC*>(a.C);
  params.d = static_cast<typename Conv::ElementC*>(a.D);
  params.c_per_channel = a.conv.c_per_channel;
  const Split split = split_of<Conv>(c);
  params.channel_threads = split.channel_threads;
  params.pixel_threads = split.pixel_threads;
  const int q_blocks = (c.q + Conv::kPixelsPerThread - 1) / Conv::kPixelsPerThread;
  params.problem = {c.n,
                    c.h,
                    c.w,
                    c.c,
                    c.k,
                    c.r,
                    c.s,
                    c.p,
                    c.q,
                    c.pad_h,
                    c.pad_w,
                    c.stride_h,
                    c.stride_w,
                    c.dilation_h,
                    c.dilation_w,
                    c.c / c.groups,
                    c.k / c.groups,
                    c.mode == 1 ? 1 : 0,
                    q_blocks,
                    static_cast<long long>(c.n) * c.p * q_blocks};
  params.output_op = tc_gemm::epilogue_params<Output>(a);

  const long long blocks =
      (params.problem.pixel_slots + split.pixel_threads - 1) / split.pixel_threads;
  if (blocks > 0x7fffffffLL) {
    return tc_image::fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
                          problem_text(c) + ": more than 2^31 - 1 CTAs of " +
                              std::to_string(Conv::kPixels) + " output pixels");
  }
  const size_t smem =
      static_cast<size_t>(Conv::filter_floats(c.r, c.s, c.c / c.groups, split.channel_threads)) *
      sizeof(float);
  why = tc_image::allow_shared(kernel, smem);
  if (!why.empty()) return tc_image::fail(TC_ERROR_CUDA, error, capacity, why);
  void* launch_params[] = {&params};
  const cudaError_t e = tc_image::launch(
      kernel, dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(split.channel_blocks), 1),
      dim3(Conv::kThreads, 1, 1), dim3(1, 1, 1), smem, static_cast<cudaStream_t>(stream),
      launch_params, false);
  return tc_image::launched(kernel, e, error, capacity);
}

}  // namespace tc_direct

#endif  // !TILECRAFT_DEVICE_HALF
