// PreparedLaunch: what every family's arguments hold once validated against an operation: the
// packed ABI arguments, the kernel entry, the workspace, device copies of host tensors (copied
// back by sync()), and the bookkeeping that frees them in stream order after the last launch.
#pragma once

#include <string>
#include <vector>

#include "tilecraft/abi/module_abi.h"
#include "tilecraft/core/status.hpp"
#include "tilecraft/core/tensor_view.hpp"
#include "tilecraft/runtime/memory_pool.hpp"

namespace tilecraft {

class PreparedLaunch {
 public:
  // Waits for the launch; copies staged outputs back to the caller's host tensors.
  Status sync();

  // The entry's arguments: the header its family's block starts with.
  const tc_args_header* abi_header() const { return header_; }
  // The device of the operands (-1: host tensors only, staged on the device current then);
  // launches, syncs and frees happen there whichever device is current.
  int device() const { return device_; }
  const tc_kernel_entry* entry() const { return entry_; }
  void* workspace() const { return caller_workspace_ ? caller_workspace_ : workspace_.data(); }
  size_t workspace_bytes() const { return workspace_needed_; }
  // Nothing to compute (a grouped GEMM whose problems are all empty): run() launches nothing.
  bool launches_nothing() const { return launches_nothing_; }
  // Its workspace belongs to the CUDA graph being captured (allocated on the capturing stream):
  // launch it in that capture only and let it go before the capture ends.
  bool allocated_in_capture() const { return capture_stream_ != nullptr; }
  // Called by GemmOperation::run: remembers where the launch went, for sync() and frees.
  void note_launch(void* stream);

  PreparedLaunch(const PreparedLaunch&) = delete;
  PreparedLaunch& operator=(const PreparedLaunch&) = delete;
  // Frees workspace and staged buffers in stream order after the last launch, even if the
  // caller's stream is gone by then.
  virtual ~PreparedLaunch();

 protected:
  explicit PreparedLaunch(const tc_args_header* header) : header_(header) {}

  // A device pointer for the tensor: its own, or a fresh device copy of a host tensor holding
  // span_elements elements (copied in when copy_in, copied back by sync() when copy_back).
  Status stage(const TensorView& t, int64_t span_elements, bool copy_in, bool copy_back,
               const void** device_ptr);
  // A device copy of host bytes, kept as long as these arguments.
  Result<void*> upload(const void* host, size_t bytes, const char* what);
  // Asks the entry whether it can run the arguments (the text names `kernel_name`), then sizes the
  // workspace: the caller's if given (checked for size), else one from the pool when needed.
  Status finish(const std::string& kernel_name, void* caller_workspace,
                size_t caller_workspace_bytes);

  const tc_kernel_entry* entry_ = nullptr;
  int device_ = -1;
  std::vector<DeviceBuffer> staged_;  // device copies of host tensors, pointer arrays
  bool launches_nothing_ = false;

 private:
  struct CopyBack {
    void* host;
    const void* device;
    size_t bytes;
  };
  const tc_args_header* header_;
  DeviceBuffer workspace_;
  void* caller_workspace_ = nullptr;
  size_t workspace_needed_ = 0;
  std::vector<CopyBack> copy_back_;  // outputs staged from host tensors
  void* stream_ = nullptr;
  void* last_launch_ = nullptr;  // a cudaEvent_t recorded after each launch, if buffers are owned
  void* capture_stream_ = nullptr;  // the capturing stream the workspace was allocated on

 protected:
  bool staged_host_tensors() const { return !copy_back_.empty(); }
};

// While a LaunchStreamScope lives on a thread, the launches prepared there know the stream they
// will go to: when it is capturing a CUDA graph, a preparation that would allocate a workspace or
// copy host data (which a graph cannot hold: each would be made once, at capture) refuses with a
// status saying so before it touches the device.
class LaunchStreamScope {
 public:
  explicit LaunchStreamScope(void* stream);
  ~LaunchStreamScope();
  LaunchStreamScope(const LaunchStreamScope&) = delete;
  LaunchStreamScope& operator=(const LaunchStreamScope&) = delete;
  // Ok unless the scope's stream is capturing; `what` names what the preparation needs.
  static Status allows(const std::string& what);
  // The scope's stream when it is capturing a CUDA graph (not the legacy stream), else null.
  static void* capturing_stream();

 private:
  void* previous_;
  bool previous_set_;
};

// A PreparedLaunch over one family's argument block (abi/gemm_args.h, ...), its header filled.
template <class Block, int32_t kFamily, int32_t kVersion>
class PreparedLaunchOf : public PreparedLaunch {
 protected:
  PreparedLaunchOf() : PreparedLaunch(&args_.header) {
    args_.header.family = kFamily;
    args_.header.family_version = kVersion;
  }
  Block args_{};
};

}  // namespace tilecraft
