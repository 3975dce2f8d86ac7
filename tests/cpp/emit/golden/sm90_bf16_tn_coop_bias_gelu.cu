// <module_abi.h>

// ---- tilecraft generated module: 1 GEMM entry (CUTLASS 3.x GemmUniversalAdapter, SM90)
#define CUTLASS_ENABLE_GDC_FOR_SM90 1
#if defined(TILECRAFT_HOST_HALF) && defined(__CUDA_ARCH__)
// The host half's device pass: the kernels are compiled in the device half, nothing to do here.
#else
#if !defined(TILECRAFT_HOST_HALF) && !defined(TILECRAFT_DEVICE_HALF)
#error "a tilecraft module is compiled in two halves: -DTILECRAFT_DEVICE_HALF=1 (nvcc -fatbin) and -DTILECRAFT_HOST_HALF=1 (nvcc -c), linked with the fatbinary as tc_device_image"
#endif
#if defined(TILECRAFT_HOST_HALF)
// Host half: CUTLASS launches and sizes through a CudaHostAdapter (tc_image::HostAdapter), never
// through kernel symbols of this translation unit.
#define CUTLASS_ENABLE_CUDA_HOST_ADAPTER true
#endif
// <SM90 includes>
#if !defined(TILECRAFT_DEVICE_HALF)
#include <atomic>
#include <map>
#include <mutex>
#include <string>

#include "cutlass/cuda_host_adapter.hpp"

// ---- tilecraft device image: the kernels, compiled apart from this host code -----------------
// The fatbinary of the device half, linked into this module (see the module's build).
extern "C" const unsigned char tc_device_image[];

namespace tc_image {

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
    size_t bytes = 0;
    unsigned long long layout[2] = {0, 0};
    size_t offset = 0, param_bytes = 0;
    cudaError_t e = cudaLibraryGetKernel(&handle, loaded.library, name);
    if (e == cudaSuccess) {
      e = cudaLibraryGetGlobal(&symbol, &bytes, loaded.library, (std::string(name) + "_layout").c_str());
    }
    if (e == cudaSuccess && bytes != sizeof(layout)) e = cudaErrorInvalidSymbol;
    if (e == cudaSuccess) e = cudaMemcpy(layout, symbol, sizeof(layout), cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) {
      e = cudaFuncGetParamInfo(reinterpret_cast<const void*>(handle), 0, &offset, &param_bytes);
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      found->error = std::string("finding kernel ") + name + " and its parameter layout in the module's device code failed: " + cuda_text(e);
      return;
    }
    found->device_size = size_t(layout[0]);
    found->device_align = size_t(layout[1]);
    found->param_bytes = param_bytes;
    // (The offset is where the parameter block begins in the device's constant bank. The device
    // half defines every kernel with exactly one parameter.)
    if (param_bytes != sizeof(Params) ||
        found->device_size != sizeof(Params) || found->device_align != alignof(Params)) {
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
    attributes[count].val.clusterDim.x = cluster.x;
    attributes[count].val.clusterDim.y = cluster.y;
    attributes[count].val.clusterDim.z = cluster.z;
    ++count;
  }
  if (pdl) {
    attributes[count].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attributes[count].val.programmaticStreamSerializationAllowed = 1;
    ++count;
  }
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = count;
  return cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(k.handle), params);
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

  cutlass::Status launch(dim3 const grid, dim3 const block, size_t const smem,
                         cudaStream_t stream, void** params, int32_t index) const override {
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
  // CUTLASS encodes its TMA descriptors itself; these forward to the driver as CUTLASS does.
  CUresult tensorMapEncodeIm2col(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank,
                                 void* address, const cuuint64_t* dims,
                                 const cuuint64_t* strides, const int* lower, const int* upper,
                                 cuuint32_t channels, cuuint32_t pixels,
                                 const cuuint32_t* element_strides, CUtensorMapInterleave interleave,
                                 CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion,
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
  // CUTLASS fills workspaces with zeros (or another repeated byte) through here.
  cutlass::Status memsetDeviceImpl(void* destination, void const* fill_value, size_t fill_size,
                                   size_t count, cudaStream_t stream) const override {
    const unsigned char* bytes = static_cast<const unsigned char*>(fill_value);
    for (size_t i = 1; i < fill_size; ++i) {
      if (bytes[i] != bytes[0]) {
        error_ = "filling a workspace with a multi-byte pattern is not supported";
        return cutlass::Status::kErrorNotSupported;
      }
    }
    cudaError_t e = cudaMemsetAsync(destination, fill_size == 0 ? 0 : bytes[0],
                                    fill_size * count, stream);
    if (e != cudaSuccess) {
      error_ = "cudaMemsetAsync: " + cuda_text(e);
      return cutlass::Status::kErrorInternal;
    }
    return cutlass::Status::kSuccess;
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

}  // namespace tc_image
// <SM90 adapters>
#endif  // !TILECRAFT_DEVICE_HALF

// ---- entry 0: tilecraft_sm90_tensorop_gemm_bf16bf16_f32acc_bf16_128x128x64_c1x1x1_s0_coop_tnt_align8x8x8_gelu_bcol_bf16
namespace tc_entry_0 {
using ElementA = cutlass::bfloat16_t;
using LayoutA = cutlass::layout::RowMajor;
constexpr int AlignmentA = 8;
using ElementB = cutlass::bfloat16_t;
using LayoutB = cutlass::layout::ColumnMajor;
constexpr int AlignmentB = 8;
using ElementC = cutlass::bfloat16_t;
using ElementD = ElementC;
using LayoutC = cutlass::layout::RowMajor;
constexpr int AlignmentC = 8;
using ElementAccumulator = float;
using ElementCompute = float;
using ElementBias = cutlass::bfloat16_t;
using TileShape = cute::Shape<cute::_128, cute::_128, cute::_64>;
using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
using FusionOp = cutlass::epilogue::fusion::LinCombPerColBiasEltAct<cutlass::epilogue::thread::GELU, ElementD, ElementCompute, ElementBias, ElementC, ElementCompute>;
using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementCompute,
    ElementC, LayoutC, AlignmentC, ElementD, LayoutC, AlignmentC,
    cutlass::epilogue::TmaWarpSpecializedCooperative, FusionOp>::CollectiveOp;
using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutA, AlignmentA,
    ElementB, LayoutB, AlignmentB, ElementAccumulator, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>,
    CollectiveMainloop, CollectiveEpilogue, cutlass::gemm::PersistentScheduler>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;
#if defined(TILECRAFT_DEVICE_HALF)
}  // namespace tc_entry_0
extern "C" __global__ void __launch_bounds__(tc_entry_0::Kernel::MaxThreadsPerBlock, tc_entry_0::Kernel::MinBlocksPerMultiprocessor)
tc_kernel_0(CUTLASS_GRID_CONSTANT typename tc_entry_0::Kernel::Params const params) {
  extern __shared__ char smem[];
  tc_entry_0::Kernel op;
  op(params, smem);
  cutlass::arch::synclog_print();
}
extern "C" __device__ unsigned long long tc_kernel_0_layout[2] = {sizeof(typename tc_entry_0::Kernel::Params), alignof(typename tc_entry_0::Kernel::Params)};
#else
constexpr tc_sm90::EntryTraits kTraits{1, 0, false, true, false, 0, "tc_kernel_0"};
using FusionArguments = decltype(typename Gemm::Arguments{}.epilogue.thread);
inline void fill_fusion(FusionArguments& f, const tc_gemm_args& a) {
  f.alpha = ElementCompute(a.alpha);
  f.beta = ElementCompute(a.beta);
  f.bias_ptr = static_cast<const ElementBias*>(a.bias);
  cute::get<2>(f.dBias) = a.batch_stride_bias;
}
}  // namespace tc_entry_0
static int32_t tc_can_implement_0(const tc_gemm_args* args, char* error, size_t capacity) {
  return tc_sm90::can_implement<tc_entry_0::Gemm>(args, tc_entry_0::kTraits, &tc_entry_0::fill_fusion, error, capacity);
}
static size_t tc_workspace_size_0(const tc_gemm_args* args) {
  return tc_sm90::workspace_size<tc_entry_0::Gemm>(args, tc_entry_0::kTraits, &tc_entry_0::fill_fusion);
}
static int32_t tc_run_0(const tc_gemm_args* args, void* workspace, void* stream, char* error,
    size_t capacity) {
  return tc_sm90::run<tc_entry_0::Gemm>(args, tc_entry_0::kTraits, &tc_entry_0::fill_fusion, workspace, stream, error, capacity);
}
#endif  // TILECRAFT_DEVICE_HALF
#if !defined(TILECRAFT_DEVICE_HALF)

// ---- the module table
static const tc_kernel_entry tc_entries[] = {
    {"tilecraft_sm90_tensorop_gemm_bf16bf16_f32acc_bf16_128x128x64_c1x1x1_s0_coop_tnt_align8x8x8_gelu_bcol_bf16",
     "kind=universal;arch=90;op_class=TensorOp;inst_shape=64x128x16;math_operation=multiply_add;element_a=bf16;element_b=bf16;element_c=bf16;element_accumulator=f32;layout_a=RowMajor;layout_b=ColumnMajor;layout_c=RowMajor;alignment_a=8;alignment_b=8;alignment_c=8;tile=128x128x64;stages=0;warps=0x0x0;epilogue=LinearCombinationGeneric;element_epilogue=f32;epilogue_vector=8;activation=gelu;swizzle=IdentitySwizzle1;cluster=1x1x1;kernel_schedule=TmaWarpSpecializedCooperative;epilogue_schedule=TmaWarpSpecializedCooperative;tile_scheduler=Persistent;bias=per_column;element_bias=bf16;aux=none;scales=none",
     &tc_can_implement_0, &tc_workspace_size_0, &tc_run_0},
};

extern "C" __attribute__((visibility("default"))) const tc_module_table*
tilecraft_module_table(void) {
  static const tc_module_table table = {TILECRAFT_ABI_VERSION, 1u, tc_entries};
  return &table;
}

// ---- parameter layouts, for tests: every kernel of the module, loaded and checked
extern "C" __attribute__((visibility("default"))) int32_t tilecraft_module_verify(
    char* report, size_t capacity) {
  const tc_image::Kernel* kernels[] = {
      &tc_image::kernel<tc_entry_0::Kernel>("tc_kernel_0"),
  };
  std::string text;
  bool ok = true;
  for (const tc_image::Kernel* k : kernels) {
    text += k->name + ": host " + std::to_string(k->host_size) + " bytes aligned to " +
            std::to_string(k->host_align) + ", device " + std::to_string(k->device_size) +
            " bytes aligned to " + std::to_string(k->device_align) + ", kernel parameter " +
            std::to_string(k->param_bytes) + " bytes" +
            (k->error.empty() ? std::string(": ok") : ": " + k->error) + "\n";
    ok = ok && k->error.empty();
  }
  if (report != nullptr && capacity > 0) {
    size_t n = text.size() < capacity - 1 ? text.size() : capacity - 1;
    std::memcpy(report, text.data(), n);
    report[n] = '\0';
  }
  return ok ? TC_OK : TC_ERROR_CUDA;
}
#endif  // !TILECRAFT_DEVICE_HALF
#endif  // TILECRAFT_HOST_HALF && __CUDA_ARCH__
