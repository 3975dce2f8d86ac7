// Every generated module is compiled in two halves at once (compile/toolchain.hpp): the device
// half (-DTILECRAFT_DEVICE_HALF) instantiates only the kernels, into a fatbinary; the host half
// (-DTILECRAFT_HOST_HALF) holds CUTLASS's host-side preparation and the C ABI table, and never
// names a kernel symbol, so its compile instantiates no device code. The link step embeds the
// fatbinary as `tc_device_image`; tilecraft/jit/device_image.cuh loads it on first use and launches
// its kernels. The text here opens and closes a module and defines its kernels and verify export.
#pragma once

#include <string>
#include <string_view>

namespace tilecraft::emit {

// The first and last lines of every module: the host half's device pass leaves all between them
// out; the prelude (tilecraft/jit/module_prelude.cuh) goes before any CUTLASS header.
std::string module_open_text();
std::string_view module_close_text();

// `#include "tilecraft/jit/<header>"`: the fixed code of a module lives in those headers.
std::string jit_include(std::string_view header);

// How CUTLASS's own kernel templates enter an operator (cutlass/device_kernel.h).
enum class KernelForm {
  kDeviceKernel,  // cutlass::device_kernel<Op>: 3.x kernels, with Op's launch bounds
  kKernel2,       // cutlass::Kernel2<Op>: 2.x GEMMs (Op::invoke)
  kKernel,        // cutlass::Kernel<Op>: 2.x reductions and the like
};

// Device-half text defining kernel `name` with C linkage (so that the host half finds it by that
// name) as CUTLASS's template of that form would for `op`, and recording sizeof and alignof of
// op::Params, as the device compiler sees them, in <name>_layout.
std::string kernel_definition_text(KernelForm form, const std::string& op, const std::string& name);

// `device` for the device half, `host` for the host half.
std::string halves_text(const std::string& device, const std::string& host);

// The host half's three static ABI functions of entry `index`, each returning the given call:
// tc_can_implement_<index>(args, error, capacity), tc_workspace_size_<index>(args) and
// tc_run_<index>(args, workspace, stream, error, capacity).
std::string abi_functions_text(const std::string& index, const std::string& can_implement,
                               const std::string& workspace_size, const std::string& run);

// The exported tilecraft_module_verify(): loads every kernel of the module and reports each one's
// parameter layout on both sides (a GPU is needed). `kernels` is text of the form
// "&tc_image::kernel<Op>(\"name\")," for each kernel, in order.
std::string module_verify_text(const std::string& kernels);

}  // namespace tilecraft::emit
