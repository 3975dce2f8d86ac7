// SM90 GEMMs: CUTLASS's GemmUniversalAdapter (not in convolution modules: it brings CUTLASS 2.x's
// GemmUniversal, whose specialization also matches a ConvUniversal on a non-tuple problem shape).
#pragma once

#include "tilecraft/jit/sm90.cuh"

#include "cutlass/gemm/device/gemm_universal_adapter.h"
