// The runtime arguments an api::Conv2dArguments has been prepared into, per kernel.
#pragma once

#include "discover/prepared_by_kernel.hpp"
#include "tilecraft/discover/conv_api.hpp"
#include "tilecraft/runtime/conv2d_arguments.hpp"

namespace tilecraft::api {

struct Conv2dArguments::Prepared : detail::PreparedByKernel<tilecraft::Conv2dArguments> {};

}  // namespace tilecraft::api
