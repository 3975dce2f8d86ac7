// SM80 grouped and depthwise convolutions: CUTLASS's kernels for them.
#pragma once

#include "cutlass/conv/kernel/default_conv2d_group_fprop.h"
#include "cutlass/conv/kernel/default_depthwise_fprop.h"
