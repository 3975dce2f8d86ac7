// Opens every generated module, before any CUTLASS header. A module is compiled in two halves
// (compile/toolchain.hpp): the device half (-DTILECRAFT_DEVICE_HALF) instantiates only the kernels,
// into a fatbinary; the host half (-DTILECRAFT_HOST_HALF) holds CUTLASS's host-side preparation and
// the C ABI table and launches through tc_image (device_image.cuh), never through kernel symbols.
#pragma once

#if !defined(TILECRAFT_HOST_HALF) && !defined(TILECRAFT_DEVICE_HALF)
#error \
    "a tilecraft module is compiled in two halves: -DTILECRAFT_DEVICE_HALF=1 (nvcc -fatbin) and -DTILECRAFT_HOST_HALF=1 (nvcc -c), linked with the fatbinary as tc_device_image"
#endif
#if defined(TILECRAFT_HOST_HALF)
// Host half: CUTLASS launches and sizes through a CudaHostAdapter (tc_image::HostAdapter), never
// through kernel symbols of this translation unit.
#define CUTLASS_ENABLE_CUDA_HOST_ADAPTER true
#endif

#include "tilecraft/abi/module_abi.h"
