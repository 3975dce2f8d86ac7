#include <string>

#include "tilecraft/tune/conv2d.hpp"
#include "tune/ranked_pick.hpp"
#include "tune/text.hpp"

namespace tilecraft {
namespace {

std::string conv_family(const api::Conv2dArguments& args, int cc) {
  const Conv2dProblemSize& p = args.problem_size();
  const api::EpilogueArguments& e = args.epilogue();
  tune::Text key;
  key << "conv;cc" << cc << ";" << to_string(args.kind()) << ";" << short_name(args.A().dtype)
      << short_name(args.B().dtype) << short_name(args.out().dtype)
      << short_name(args.accumulator_type()) << ";" << args.alignment_a() << "x"
      << args.alignment_b() << "x" << args.alignment_out() << "x" << args.alignment_c() << ";"
      << p.to_string() << ";" << to_string(e.activation) << (e.C.data ? ";C" : "")
      << (e.bias.data ? ";bias_" + std::string(short_name(e.bias.dtype)) : "");
  return key.str();
}

std::string groups_hint(const Conv2dProblemSize& p) {
  if (p.c == p.groups && p.k == p.groups) {
    return "; depthwise convolutions run on CUDA-core kernels, which the arch-80 space lists "
           "for float32 and float64 (describe a SIMT float16 Conv2dOperation with "
           "conv.GroupMode.Depthwise for half precision)";
  }
  return "; grouped fprop runs on arch-80 tensor-op group kernels, whose accesses must divide "
         "C / groups = " +
         std::to_string(p.c / p.groups) + " (dgrad and wgrad are not grouped in CUTLASS)";
}

}  // namespace

Result<ConvPick> conv2d(const api::Conv2dArguments& args, void* stream) {
  return tune::run_ranked_first_pick<ConvPick>(args, stream, "convolution", conv_family, [&] {
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
