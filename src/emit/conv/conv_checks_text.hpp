// The fixed C++17 text of the checks every convolution module makes of a tc_conv_problem before
// CUTLASS's own can_implement, in words (namespace tc_conv_checks): shared by the SM80
// (ImplicitGemmConvolution) and SM90 (ConvUniversal) entries.
#pragma once

#include <string_view>

namespace tilecraft::emit {

std::string_view conv_checks_text();

}  // namespace tilecraft::emit
