// One-call convolution: tilecraft::conv2d(args) runs the kernel that serves the arguments'
// signature (tune::signature_of: the kind, operands, epilogue and layer, the batch in buckets),
// chosen by the tuning mode (TILECRAFT_TUNING) as for GEMMs: a stored tuned winner; else a kernel
// compiled earlier for the family or the ranked first pick, while the candidates tune in the
// background (automatic); the winner of a tuning run made now (blocking, force); or the ranked
// first pick (off). It is remembered for the process per signature.
#pragma once

#include <optional>
#include <string>

#include "tilecraft/core/status.hpp"
#include "tilecraft/discover/conv_api.hpp"
#include "tilecraft/tune/tuning.hpp"

namespace tilecraft {

struct ConvPick {
  std::string kernel_name;
  std::string reason;  // why this kernel serves (and which ranked kernels failed to compile)
};

// tuning: the mode and options; default: tuning_options_from_environment().
Result<ConvPick> conv2d(const api::Conv2dArguments& args, void* stream = nullptr,
                        const std::optional<tune::TuningOptions>& tuning = std::nullopt);

}  // namespace tilecraft
