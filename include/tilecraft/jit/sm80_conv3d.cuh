// SM80 3-D convolutions: CUTLASS's kernels for them.
#pragma once

#include "cutlass/conv/conv3d_problem_size.h"
#include "cutlass/conv/kernel/default_conv3d_dgrad.h"
#include "cutlass/conv/kernel/default_conv3d_fprop.h"
#include "cutlass/conv/kernel/default_conv3d_wgrad.h"
