// Every generated module is compiled in two halves at once (compile/toolchain.hpp): the device
// half (-DTILECRAFT_DEVICE_HALF) instantiates only the kernels, into a fatbinary; the host half
// (-DTILECRAFT_HOST_HALF) holds CUTLASS's host-side preparation and the C ABI table, and never
// names a kernel symbol, so its compile instantiates no device code. The link step embeds the
// fatbinary as `tc_device_image`; the text here loads it on first use and launches its kernels.
#pragma once

#include <string>
#include <string_view>

namespace tilecraft::emit {

// Defines CUTLASS_ENABLE_CUDA_HOST_ADAPTER for the host half; goes before the includes. Opens a
// conditional that leaves the host half's device pass empty (nvcc's cicc then parses nothing);
// device_image_end_text() closes it at the end of the module.
std::string_view device_image_prelude_text();
std::string_view device_image_end_text();

// The #include lines the runtime below needs (host half only; goes after CUTLASS's includes).
// Namespace tc_image: image() loads tc_device_image; kernel<Op>(function, layout_symbol) finds
// `function<Op>` in it and checks that the device compiler laid out Op::Params as the host one
// did; launch(); HostAdapter, CUTLASS's CudaHostAdapter over those kernels.
std::string_view device_image_runtime_text();

// Device-half text instantiating `function<op>` (e.g. "cutlass::device_kernel") and recording
// sizeof and alignof of op::Params, as the device compiler sees them, in `layout_symbol`.
// `parameter` is the kernel's parameter declaration with `$P` standing for op::Params, as the
// template declares it (e.g. "CUTLASS_GRID_CONSTANT $P const").
std::string kernel_instantiation_text(const std::string& function, const std::string& op,
                                      const std::string& parameter,
                                      const std::string& layout_symbol);

// The exported tilecraft_module_verify(): loads every kernel of the module and reports each one's
// parameter layout on both sides (a GPU is needed). `kernels` is text of the form
// "tc_image::kernel<Op>(\"function\", \"symbol\")," for each kernel, in order.
std::string module_verify_text(const std::string& kernels);

}  // namespace tilecraft::emit
