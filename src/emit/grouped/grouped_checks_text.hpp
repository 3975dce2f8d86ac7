// Text shared by the grouped adapters of every arch (CUTLASS 2.x GemmGrouped, 3.x pointer-array
// kernels): namespace tc_grouped_args, the checks of the arrays a grouped kernel reads.
#pragma once

#include <string_view>

namespace tilecraft::emit {

std::string_view grouped_arguments_check_text();

}  // namespace tilecraft::emit
