// The runtime arguments an api::GroupedGemmArguments has been prepared into, per kernel: a later
// run of the same arguments with the same kernel reuses the device arrays.
#pragma once

#include "discover/prepared_by_kernel.hpp"
#include "tilecraft/discover/grouped_api.hpp"
#include "tilecraft/runtime/grouped_gemm_arguments.hpp"

namespace tilecraft::api {

struct GroupedGemmArguments::Prepared : detail::PreparedByKernel<tilecraft::GroupedGemmArguments> {
};

}  // namespace tilecraft::api
