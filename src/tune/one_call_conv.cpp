#include <string>

#include "tilecraft/tune/conv2d.hpp"
#include "tune/served_pick.hpp"
#include "tune/text.hpp"

namespace tilecraft {
namespace {

Result<tune::TuningReport> tune_conv(const api::Conv2dArguments& args,
                                     const tune::TuningOptions& options,
                                     const compile::ProgressFn& progress) {
  return tune::tune_conv2d(args, options, progress);
}

std::string groups_hint(const Conv2dProblemSize& p) {
  if (p.c == p.groups && p.k == p.groups) {
    return "; depthwise convolutions run on CUDA cores: tilecraft's direct kernels take "
           "float16, bfloat16 and float32 with a float32 accumulator, CUTLASS's depthwise "
           "kernels float32 and float64";
  }
  return "; grouped fprop runs on arch-80 tensor-op group kernels, whose accesses must divide "
         "C / groups = " +
         std::to_string(p.c / p.groups) +
         ", and on tilecraft's direct kernels (float16, bfloat16 and float32 with a float32 "
         "accumulator); dgrad and wgrad are not grouped";
}

}  // namespace

Result<ConvPick> conv2d(const api::Conv2dArguments& args, void* stream,
                        const std::optional<tune::TuningOptions>& tuning) {
  return tune::run_served_kernel<ConvPick>(args, stream, tuning, "convolution", tune_conv, [&] {
    const Conv2dProblemSize& p = args.problem_size();
    return "conv2d: no " + std::string(to_string(args.kind())) + " kernel takes " +
           std::string(long_name(args.A().dtype)) + " operands with " +
           std::string(long_name(args.out().dtype)) + " output and channel alignments " +
           std::to_string(args.alignment_a()) + "/" + std::to_string(args.alignment_b()) + "/" +
           std::to_string(args.alignment_out()) + " (" + p.to_string() + ")" +
           (p.groups > 1 ? groups_hint(p) : std::string()) +
           (p.is_3d() ? "; 3-D convolutions run on arch-80 Conv3d kernels, which move 128 bits "
                        "of channels at a time on tensor cores (C and K multiples of 8 halves "
                        "or 4 floats) or one element on CUDA cores (float32, float64)"
                      : std::string());
  });
}

}  // namespace tilecraft
