// Convolutions as a registered family of the shared emitters (emit/family_emitter.hpp): SM80
// modules of their own (implicit GEMMs), SM90 entries with a ConvUniversal in place of the GEMM
// mainloop and kernel.
#include "emit/conv/sm80_conv_parts.hpp"
#include "emit/conv/sm90_conv_parts.hpp"
#include "emit/family_emitter.hpp"

namespace tilecraft::emit {
namespace {

const FamilyEmitterRegistration kConvEmitter{{
    .name = "conv",
    .takes = [](const GemmDescription& d) { return d.is_conv(); },
    .sm80_module = emit_sm80_conv_module,
    .sm90_header = "sm90_conv.cuh",
    .sm90_layout_c = sm90_conv_output_layout,
    .sm90_tile_shape = sm90_conv_tile_shape,
    .sm90_kernel = sm90_conv_kernel_text,
}};

}  // namespace
}  // namespace tilecraft::emit
