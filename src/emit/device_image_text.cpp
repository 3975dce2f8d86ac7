#include "emit/device_image_text.hpp"

namespace tilecraft::emit {

std::string module_open_text() {
  // The host half's device pass compiles nothing.
  return "#if !(defined(TILECRAFT_HOST_HALF) && defined(__CUDA_ARCH__))\n" +
         jit_include("module_prelude.cuh");
}

std::string_view module_close_text() {
  return "#endif  // !(TILECRAFT_HOST_HALF && __CUDA_ARCH__)\n";
}

std::string jit_include(std::string_view header) {
  return "#include \"tilecraft/jit/" + std::string(header) + "\"\n";
}

std::string kernel_definition_text(KernelForm form, const std::string& op,
                                   const std::string& name) {
  const std::string params = "typename " + op + "::Params";
  std::string out = "extern \"C\" __global__ void ";
  switch (form) {
    case KernelForm::kDeviceKernel:
      out += "__launch_bounds__(" + op + "::MaxThreadsPerBlock, " + op +
             "::MinBlocksPerMultiprocessor)\n" + name + "(CUTLASS_GRID_CONSTANT " + params +
             " const params) {\n  extern __shared__ char smem[];\n  " + op +
             " op;\n  op(params, smem);\n";
      break;
    case KernelForm::kKernel2:
    case KernelForm::kKernel:
      out += name + "(" + params + " params) {\n  extern __shared__ int SharedStorageBase[];\n" +
             "  typename " + op + "::SharedStorage* shared_storage =\n" +
             "      reinterpret_cast<typename " + op + "::SharedStorage*>(SharedStorageBase);\n";
      out += form == KernelForm::kKernel2 ? "  " + op + "::invoke(params, *shared_storage);\n"
                                          : "  " + op + " op;\n  op(params, *shared_storage);\n";
      break;
  }
  out += "  cutlass::arch::synclog_print();\n}\n";
  out += "extern \"C\" __device__ unsigned long long " + name + "_layout[2] = {sizeof(" + params +
         "), alignof(" + params + ")};\n";
  return out;
}

std::string halves_text(const std::string& device, const std::string& host) {
  return "#if defined(TILECRAFT_DEVICE_HALF)\n" + device + "#else\n" + host +
         "#endif  // TILECRAFT_DEVICE_HALF\n";
}

std::string abi_functions_text(const std::string& index, const std::string& can_implement,
                               const std::string& workspace_size, const std::string& run) {
  return "static int32_t tc_can_implement_" + index +
         "(const tc_args_header* args, char* error, size_t capacity) {\n  return " + can_implement +
         ";\n}\nstatic size_t tc_workspace_size_" + index +
         "(const tc_args_header* args) {\n  return " + workspace_size +
         ";\n}\nstatic int32_t tc_run_" + index +
         "(const tc_args_header* args, void* workspace, void* stream, char* error,\n"
         "    size_t capacity) {\n  return " +
         run + ";\n}\n";
}

std::string module_verify_text(const std::string& kernels) {
  return "extern \"C\" __attribute__((visibility(\"default\"))) int32_t "
         "tilecraft_module_verify(\n"
         "    char* report, size_t capacity) {\n"
         "  const tc_image::Kernel* kernels[] = {\n" +
         kernels +
         "  };\n"
         "  return tc_image::verify(kernels, sizeof(kernels) / sizeof(kernels[0]), report, "
         "capacity);\n"
         "}\n";
}

}  // namespace tilecraft::emit
