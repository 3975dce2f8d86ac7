// The host half's access to the module's kernels: tc_image::image() loads the device half's
// fatbinary (linked into the module as tc_device_image) once per process; kernel<Op>(name) finds a
// kernel in it and checks that the device compiler laid out Op::Params as the host one did;
// launch(); HostAdapter, CUTLASS's CudaHostAdapter over those kernels; verify().
#pragma once

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "cutlass/cuda_host_adapter.hpp"
#include "tilecraft/abi/module_abi.h"

extern "C" const unsigned char tc_device_image[];

namespace tc_image {

// Writes `text` into the caller's error buffer (truncated to capacity) and returns `code`.
inline int32_t fail(int32_t code, char* error, size_t capacity, const std::string& text) {
  if (error != nullptr && capacity > 0) {
    size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
    std::memcpy(error, text.data(), n);
    error[n] = '\0';
  }
  return code;
}

template <class Args>
std::string problem_text(const Args& a) {
  return "problem size " + std::to_string(a.m) + "x" + std::to_string(a.n) + "x" +
         std::to_string(a.k);
}

// "" when the header carries the `expected` number of activation arguments.
inline std::string check_activation_count(const tc_args_header& h, int expected) {
  if (h.num_activation_args == expected) return {};
  return "epilogue: expected " + std::to_string(expected) + " activation argument(s), got " +
         std::to_string(h.num_activation_args);
}

// The family block an entry reads (`of`: the family's tc_*_args_of), or null with the reason:
// arguments of another family, or of another version of the family's block.
template <class Args>
const Args* block(const tc_args_header* h, const Args* (*of)(const tc_args_header*), int family,
                  int version, std::string* why) {
  const Args* a = of(h);
  if (a == nullptr) {
    *why = h == nullptr
               ? std::string("null arguments")
               : "arguments: this entry reads family " + std::to_string(family) +
                     " arguments, version " + std::to_string(version) + "; got family " +
                     std::to_string(h->family) + ", version " + std::to_string(h->family_version);
  }
  return a;
}

// As above, the reason written to the caller's error buffer (TC_ERROR_INVALID_ARGUMENT).
template <class Args>
const Args* block(const tc_args_header* h, const Args* (*of)(const tc_args_header*), int family,
                  int version, char* error, size_t capacity) {
  std::string why;
  const Args* a = block(h, of, family, version, &why);
  if (a == nullptr) fail(TC_ERROR_INVALID_ARGUMENT, error, capacity, why);
  return a;
}

// An array of the ABI's, read in place as CUTLASS's array of T (each T is `n` of its elements).
template <class T, int n = 1, class Element>
T* in_place(const Element* array) {
  static_assert(sizeof(T) == n * sizeof(Element), "the ABI's array is not laid out as CUTLASS's");
  return static_cast<T*>(const_cast<void*>(static_cast<const void*>(array)));
}

inline std::string cuda_text(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " + cudaGetErrorString(error);
}

struct Image {
  cudaLibrary_t library = nullptr;
  std::string error;
};

// The device image, loaded once per process for every device (context-independent loading).
inline const Image& image() {
  static Image loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    cudaError_t e = cudaLibraryLoadData(&loaded.library, tc_device_image, nullptr, nullptr, 0,
                                        nullptr, nullptr, 0);
    if (e != cudaSuccess) {
      cudaGetLastError();
      loaded.error = "loading the module's device code failed: " + cuda_text(e);
    }
  });
  return loaded;
}

constexpr int kMaxDevices = 64;

struct Kernel {
  std::once_flag once;
  cudaKernel_t handle = nullptr;
  std::string name;   // the kernel's (C) name in the image
  std::string error;  // why handle is null
  size_t host_size = 0, host_align = 0, device_size = 0, device_align = 0, param_bytes = 0;
  // Per device: 0 not prepared, else occupancy + 1 (shared-memory limit raised, SMs counted).
  mutable std::atomic<int> prepared[kMaxDevices] = {};
  mutable std::atomic<int> sm_count[kMaxDevices] = {};
  // Per device: 1 once the kernel's dynamic shared-memory limit is the device's opt-in limit.
  mutable std::atomic<int> shared_raised[kMaxDevices] = {};
};

// The kernel `name` of the image (defined by the device half with C linkage, one parameter), once
// checked: the device compiler gave Op::Params the size and alignment this host compiler gave it
// (recorded by the device half in <name>_layout), and the kernel's parameter has that size. A
// launch with any other layout would pass garbage.
template <class Op>
const Kernel& kernel(const char* name) {
  using Params = typename Op::Params;
  static std::mutex mutex;
  static std::map<std::string, Kernel> kernels;
  Kernel* found = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    found = &kernels[name];
  }
  std::call_once(found->once, [found, name] {
    found->name = name;
    found->host_size = sizeof(Params);
    found->host_align = alignof(Params);
    const Image& loaded = image();
    if (!loaded.error.empty()) {
      found->error = loaded.error;
      return;
    }
    cudaKernel_t handle = nullptr;
    void* symbol = nullptr;
    size_t bytes = 0, offset = 0, param_bytes = 0;
    unsigned long long layout[2] = {0, 0};
    cudaError_t e = cudaLibraryGetKernel(&handle, loaded.library, name);
    if (e == cudaSuccess) {
      e = cudaLibraryGetGlobal(&symbol, &bytes, loaded.library,
                               (std::string(name) + "_layout").c_str());
    }
    if (e == cudaSuccess && bytes != sizeof(layout)) e = cudaErrorInvalidSymbol;
    if (e == cudaSuccess) e = cudaMemcpy(layout, symbol, sizeof(layout), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) {
      e = cudaFuncGetParamInfo(reinterpret_cast<const void*>(handle), 0, &offset, &param_bytes);
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      found->error =
          std::string("finding kernel ") + name +
          " and its parameter layout in the module's device code failed: " + cuda_text(e);
      return;
    }
    found->device_size = size_t(layout[0]);
    found->device_align = size_t(layout[1]);
    found->param_bytes = param_bytes;
    // (The offset is where the parameter block begins in the device's constant bank. The device
    // half defines every kernel with exactly one parameter.)
    if (param_bytes != sizeof(Params) || found->device_size != sizeof(Params) ||
        found->device_align != alignof(Params)) {
      found->error = std::string("host and device disagree on the parameters of ") + name +
                     ": host " + std::to_string(sizeof(Params)) + " bytes aligned to " +
                     std::to_string(alignof(Params)) + ", device " +
                     std::to_string(found->device_size) + " bytes aligned to " +
                     std::to_string(found->device_align) + " (the kernel takes " +
                     std::to_string(param_bytes) + " bytes at offset " + std::to_string(offset) +
                     "); refusing to launch it";
      return;
    }
    found->handle = handle;
  });
  return *found;
}

// Before the first launch on a device: raises the kernel's dynamic shared-memory limit and
// counts its occupancy there. Returns the occupancy (blocks per SM), or -1 with `error` set.
inline int prepare(const Kernel& k, int threads, int smem_bytes, std::string* error) {
  int device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess && (device < 0 || device >= kMaxDevices)) e = cudaErrorInvalidDevice;
  if (e != cudaSuccess) {
    cudaGetLastError();
    *error = "cudaGetDevice: " + cuda_text(e);
    return -1;
  }
  int known = k.prepared[device].load(std::memory_order_acquire);
  if (known > 0) return known - 1;
  const void* f = reinterpret_cast<const void*>(k.handle);
  int sms = 0, occupancy = 0;
  e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e == cudaSuccess && smem_bytes >= (48 << 10)) {
    e = cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
  }
  if (e == cudaSuccess) {
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&occupancy, f, threads, smem_bytes,
                                                               cudaOccupancyDisableCachingOverride);
  }
  if (e != cudaSuccess) {
    cudaGetLastError();
    *error = "preparing " + k.name + " (" + std::to_string(smem_bytes) +
             " bytes of shared memory) failed: " + cuda_text(e);
    return -1;
  }
  k.sm_count[device].store(sms, std::memory_order_relaxed);
  k.prepared[device].store(occupancy + 1, std::memory_order_release);
  return occupancy;
}

// The most shared memory a CTA of the current device may take (its opt-in limit), asked once per
// device; 0 where no device answers (a machine without a GPU), with `device` set to -1.
inline int shared_limit(int* device) {
  static std::atomic<int> limits[kMaxDevices] = {};
  *device = -1;
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess || current < 0 || current >= kMaxDevices) {
    cudaGetLastError();
    return 0;
  }
  int limit = limits[current].load(std::memory_order_relaxed);
  if (limit == 0) {
    if (cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, current) !=
        cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    limits[current].store(limit, std::memory_order_relaxed);
  }
  *device = current;
  return limit;
}

// Before a launch with `smem_bytes` of dynamic shared memory: above the default 48 KB, raises
// the kernel's limit on the current device to the device's opt-in limit, once per device.
// Returns "" or why the launch cannot have it.
inline std::string allow_shared(const Kernel& k, size_t smem_bytes) {
  if (smem_bytes <= (48u << 10)) return {};
  int device = -1;
  const int limit = shared_limit(&device);
  if (device < 0) return "no CUDA device answered the shared-memory query";
  if (smem_bytes > size_t(limit)) {
    return k.name + " needs " + std::to_string(smem_bytes) +
           " bytes of shared memory per CTA; this device allows " + std::to_string(limit);
  }
  if (k.shared_raised[device].load(std::memory_order_acquire) != 0) return {};
  const cudaError_t e = cudaFuncSetAttribute(reinterpret_cast<const void*>(k.handle),
                                             cudaFuncAttributeMaxDynamicSharedMemorySize, limit);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return "raising " + k.name + "'s shared-memory limit to " + std::to_string(limit) +
           " bytes failed: " + cuda_text(e);
  }
  k.shared_raised[device].store(1, std::memory_order_release);
  return {};
}

inline int sm_count(const Kernel& k) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= kMaxDevices) return 0;
  return k.sm_count[device].load(std::memory_order_relaxed);
}

// One launch, as CUTLASS's own launchers make it: a cluster shape when it is larger than one
// block, programmatic dependent launch when asked for.
inline cudaError_t launch(const Kernel& k, dim3 grid, dim3 block, dim3 cluster, size_t smem_bytes,
                          cudaStream_t stream, void** params, bool pdl) {
  cudaLaunchAttribute attributes[2];
  unsigned count = 0;
  if (cluster.x * cluster.y * cluster.z > 1) {
    attributes[count].id = cudaLaunchAttributeClusterDimension;
    attributes[count].val.clusterDim = {cluster.x, cluster.y, cluster.z};
    ++count;
  }
  if (pdl) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  cudaLaunchConfig_t config = {grid, block, smem_bytes, stream, attributes, count};
  return cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(k.handle), params);
}

// TC_OK, or why a launch of `k` failed (the CUDA error cleared) in the caller's buffer.
inline int32_t launched(const Kernel& k, cudaError_t e, char* error, size_t capacity) {
  if (e == cudaSuccess) return TC_OK;
  cudaGetLastError();
  return fail(TC_ERROR_CUDA, error, capacity, "launching " + k.name + " failed: " + cuda_text(e));
}

// CUTLASS's CudaHostAdapter over kernels of the image (kernel index i is kernels[i]).
class HostAdapter : public cutlass::CudaHostAdapter {
 public:
  HostAdapter(std::initializer_list<const Kernel*> kernels) {
    for (const Kernel* k : kernels) {
      if (kernel_count < kMaximumKernelCount) {
        kernels_[kernel_count] = k;
        kernel_handles[kernel_count++] = reinterpret_cast<void*>(k->handle);
      }
    }
  }

  const std::string& error() const { return error_; }

  cutlass::Status query_occupancy(int32_t* device_sms, int32_t* sm_occupancy, int32_t kernel_index,
                                  int32_t thread_count, int32_t smem_size) const override {
    const Kernel* k = at(kernel_index);
    if (k == nullptr) return cutlass::Status::kErrorInternal;
    int occupancy = prepare(*k, thread_count, smem_size, &error_);
    if (occupancy < 0) return cutlass::Status::kErrorInternal;
    *device_sms = sm_count(*k);
    *sm_occupancy = occupancy;
    return cutlass::Status::kSuccess;
  }

  cutlass::Status launch(dim3 const grid, dim3 const block, size_t const smem, cudaStream_t stream,
                         void** params, int32_t index) const override {
    return launch(grid, dim3(1, 1, 1), block, smem, stream, params, index);
  }

  cutlass::Status launch(dim3 const grid, dim3 const cluster, dim3 const block, size_t const smem,
                         cudaStream_t stream, void** params, int32_t index) const override {
    const Kernel* k = at(index);
    if (k == nullptr) return cutlass::Status::kErrorInternal;
    if (prepare(*k, int(block.x * block.y * block.z), int(smem), &error_) < 0) {
      return cutlass::Status::kErrorInternal;
    }
    cudaError_t e = tc_image::launch(*k, grid, block, cluster, smem, stream, params, false);
    if (e != cudaSuccess) {
      error_ = "launching " + k->name + " failed: " + cuda_text(e);
      return cutlass::Status::kErrorInternal;
    }
    return cutlass::Status::kSuccess;
  }

  cutlass::Status launch(dim3 const grid, dim3 const cluster, dim3 const /*fallback_cluster*/,
                         dim3 const block, size_t const smem, cudaStream_t stream, void** params,
                         int32_t index) const override {
    return launch(grid, cluster, block, smem, stream, params, index);
  }

#if defined(CUDA_HOST_ADAPTER_TENSORMAP_ENABLED)
  // A driver function by name (null if the driver has none).
  static void* driver_function(const char* name) {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
    cudaError_t e =
        cudaGetDriverEntryPointByVersion(name, &function, 12000, cudaEnableDefault, &found);
#else
    cudaError_t e = cudaGetDriverEntryPoint(name, &function, cudaEnableDefault, &found);
#endif
    return e == cudaSuccess && found == cudaDriverEntryPointSuccess ? function : nullptr;
  }

  // Fills `count` elements with the pattern at `value` through the driver's `function`
  // (cuMemsetD16Async, cuMemsetD32Async).
  template <class Pattern>
  static CUresult fill_pattern(const char* function, CUdeviceptr address, const void* value,
                               size_t count, cudaStream_t stream) {
    using Fill = CUresult (*)(CUdeviceptr, Pattern, size_t, CUstream);
    static const Fill fill = reinterpret_cast<Fill>(driver_function(function));
    Pattern pattern = 0;
    std::memcpy(&pattern, value, sizeof(Pattern));
    return fill == nullptr ? CUDA_ERROR_NOT_SUPPORTED : fill(address, pattern, count, stream);
  }

  // CUTLASS encodes its TMA descriptors itself; these forward to the driver as CUTLASS does.
  CUresult tensorMapEncodeIm2col(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank,
                                 void* address, const cuuint64_t* dims, const cuuint64_t* strides,
                                 const int* lower, const int* upper, cuuint32_t channels,
                                 cuuint32_t pixels, const cuuint32_t* element_strides,
                                 CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                 CUtensorMapL2promotion promotion,
                                 CUtensorMapFloatOOBfill fill) const override {
    return CUTLASS_CUDA_DRIVER_WRAPPER_CALL(cuTensorMapEncodeIm2col)(
        map, type, rank, address, dims, strides, lower, upper, channels, pixels, element_strides,
        interleave, swizzle, promotion, fill);
  }
  CUresult tensorMapEncodeTiled(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank,
                                void* address, const cuuint64_t* dims, const cuuint64_t* strides,
                                const cuuint32_t* box, const cuuint32_t* element_strides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion promotion,
                                CUtensorMapFloatOOBfill fill) const override {
    return CUTLASS_CUDA_DRIVER_WRAPPER_CALL(cuTensorMapEncodeTiled)(
        map, type, rank, address, dims, strides, box, element_strides, interleave, swizzle,
        promotion, fill);
  }
  CUresult tensorMapReplaceAddress(CUtensorMap* /*map*/, void* /*address*/) const override {
    return CUDA_ERROR_NOT_SUPPORTED;  // CUTLASS 4.2 never asks
  }
#endif

 protected:
  // CUTLASS fills workspaces with zeros, and reduction outputs with their identity (a 16- or
  // 32-bit pattern), through here.
  cutlass::Status memsetDeviceImpl(void* destination, void const* fill_value, size_t fill_size,
                                   size_t count, cudaStream_t stream) const override {
    const unsigned char* bytes = static_cast<const unsigned char*>(fill_value);
    bool repeated = true;
    for (size_t i = 1; i < fill_size; ++i) repeated = repeated && bytes[i] == bytes[0];
    if (repeated) {
      cudaError_t e =
          cudaMemsetAsync(destination, fill_size == 0 ? 0 : bytes[0], fill_size * count, stream);
      if (e != cudaSuccess) {
        error_ = "cudaMemsetAsync: " + cuda_text(e);
        return cutlass::Status::kErrorInternal;
      }
      return cutlass::Status::kSuccess;
    }
#if defined(CUDA_HOST_ADAPTER_TENSORMAP_ENABLED)
    const CUdeviceptr address = reinterpret_cast<CUdeviceptr>(destination);
    const CUresult r =
        fill_size == 4
            ? fill_pattern<uint32_t>("cuMemsetD32Async", address, fill_value, count, stream)
        : fill_size == 2
            ? fill_pattern<uint16_t>("cuMemsetD16Async", address, fill_value, count, stream)
            : CUDA_ERROR_NOT_SUPPORTED;
    if (r == CUDA_SUCCESS) return cutlass::Status::kSuccess;
    error_ = "filling " + std::to_string(count) + " elements of " + std::to_string(fill_size) +
             " bytes failed (CUresult " + std::to_string(int(r)) + ")";
    return cutlass::Status::kErrorInternal;
#else
    error_ = "filling a workspace with a multi-byte pattern needs CUDA 12.0 or newer";
    return cutlass::Status::kErrorNotSupported;
#endif
  }

 private:
  const Kernel* at(int32_t index) const {
    if (index < 0 || index >= kernel_count || kernels_[index]->handle == nullptr) {
      error_ = "no kernel " + std::to_string(index) + " in this entry";
      return nullptr;
    }
    return kernels_[index];
  }

  const Kernel* kernels_[kMaximumKernelCount] = {};
  mutable std::string error_;
};

// A failed CUTLASS call, in words: its status, the adapter's error and the CUDA runtime's.
inline std::string failure_text(const char* call, cutlass::Status status,
                                const HostAdapter& adapter) {
  cudaError_t cuda = cudaGetLastError();
  std::string text = std::string(call) + " failed: " + cutlass::cutlassGetStatusString(status);
  if (!adapter.error().empty()) text += ": " + adapter.error();
  if (cuda != cudaSuccess) text += ": " + cuda_text(cuda);
  return text;
}

// TC_OK when CUTLASS's can_implement took the arguments, else its refusal in the caller's buffer:
// "<what>: <status><after>".
inline int32_t cutlass_verdict(cutlass::Status status, const std::string& what, char* error,
                               size_t capacity, const std::string& after = "") {
  if (status == cutlass::Status::kSuccess) return TC_OK;
  return fail(TC_ERROR_INVALID_ARGUMENT, error, capacity,
              what + ": " + cutlass::cutlassGetStatusString(status) + after);
}

// tilecraft_module_verify(): loads every kernel of the module and reports each one's parameter
// layout on both sides (for tests; a GPU is needed).
inline int32_t verify(const Kernel* const* kernels, size_t count, char* report, size_t capacity) {
  std::string text;
  bool ok = true;
  for (size_t i = 0; i < count; ++i) {
    const Kernel* k = kernels[i];
    text += k->name + ": host " + std::to_string(k->host_size) + " bytes aligned to " +
            std::to_string(k->host_align) + ", device " + std::to_string(k->device_size) +
            " bytes aligned to " + std::to_string(k->device_align) + ", kernel parameter " +
            std::to_string(k->param_bytes) + " bytes" +
            (k->error.empty() ? std::string(": ok") : ": " + k->error) + "\n";
    ok = ok && k->error.empty();
  }
  return fail(ok ? TC_OK : TC_ERROR_CUDA, report, capacity, text);
}

}  // namespace tc_image

#endif  // !TILECRAFT_DEVICE_HALF
