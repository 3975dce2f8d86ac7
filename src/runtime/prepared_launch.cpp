#include "tilecraft/runtime/prepared_launch.hpp"

#include <cuda_runtime_api.h>

#include "tilecraft/runtime/device.hpp"

namespace tilecraft {
namespace {

// The stream of the launch being prepared on this thread (LaunchStreamScope), or none.
thread_local void* launch_stream = nullptr;
thread_local bool launch_stream_set = false;

}  // namespace

LaunchStreamScope::LaunchStreamScope(void* stream)
    : previous_(launch_stream), previous_set_(launch_stream_set) {
  launch_stream = stream;
  launch_stream_set = true;
}

LaunchStreamScope::~LaunchStreamScope() {
  launch_stream = previous_;
  launch_stream_set = previous_set_;
}

void* LaunchStreamScope::capturing_stream() {
  return launch_stream_set && launch_stream != nullptr && stream_is_capturing(launch_stream)
             ? launch_stream
             : nullptr;
}

Status LaunchStreamScope::allows(const std::string& what) {
  if (!launch_stream_set || !stream_is_capturing(launch_stream)) return Status::ok();
  return Status::invalid(
      "stream: capturing a CUDA graph, and this launch needs " + what +
      " made for each call, which a captured graph would keep from its capture; run it outside "
      "the capture (or, for a GEMM, through a plan made before the capture: tilecraft.plan_gemm; "
      "for a stacked grouped GEMM, with its offsets read on the device)");
}

Status PreparedLaunch::stage(const TensorView& t, int64_t span_elements, bool copy_in,
                             bool copy_back, const void** device_ptr) {
  if (t.device == DeviceKind::kCuda) {
    *device_ptr = t.data;
    return Status::ok();
  }
  const size_t bytes = static_cast<size_t>(span_elements) * storage_bytes(t.dtype);
  TILECRAFT_RETURN_IF_ERROR(LaunchStreamScope::allows("a device copy of a host tensor"));
  auto buffer = DeviceBuffer::allocate(bytes > 0 ? bytes : 1);
  if (!buffer) return buffer.status();
  // Outputs are copied in too: what the kernel does not write (padding between rows) must come
  // back as it was.
  if ((copy_in || copy_back) && bytes > 0) {
    TILECRAFT_RETURN_IF_ERROR(cuda_status(
        cudaMemcpy(buffer->data(), t.data, bytes, cudaMemcpyHostToDevice), "staging to device"));
  }
  *device_ptr = buffer->data();
  if (copy_back && bytes > 0) copy_back_.push_back({t.data, buffer->data(), bytes});
  staged_.push_back(std::move(*buffer));
  return Status::ok();
}

Result<void*> PreparedLaunch::upload(const void* host, size_t bytes, const char* what) {
  TILECRAFT_RETURN_IF_ERROR(LaunchStreamScope::allows(std::string("a device copy of ") + what));
  auto buffer = DeviceBuffer::allocate(bytes);
  if (!buffer) return buffer.status();
  TILECRAFT_RETURN_IF_ERROR(
      cuda_status(cudaMemcpy(buffer->data(), host, bytes, cudaMemcpyHostToDevice), what));
  void* data = buffer->data();
  staged_.push_back(std::move(*buffer));
  return data;
}

Status PreparedLaunch::finish(const std::string& kernel_name, void* caller_workspace,
                              size_t caller_workspace_bytes) {
  char error[512] = {0};
  if (entry_->can_implement(header_, error, sizeof error) != TC_OK) {
    return Status::invalid(kernel_name + " cannot run this problem: " + error);
  }
  const size_t workspace_bytes = entry_->workspace_size(header_);
  workspace_needed_ = workspace_bytes;
  if (caller_workspace != nullptr) {
    if (caller_workspace_bytes < workspace_bytes) {
      return Status::invalid("workspace: expected at least " + std::to_string(workspace_bytes) +
                             " bytes for " + kernel_name + " on this problem, got " +
                             std::to_string(caller_workspace_bytes));
    }
    caller_workspace_ = caller_workspace;
  } else if (workspace_bytes > 0) {
    // Inside a CUDA graph capture the workspace is the graph's own: allocated and (when these
    // arguments go, before the capture ends) freed on the capturing stream.
    if (void* capturing = LaunchStreamScope::capturing_stream()) {
      auto workspace = DeviceBuffer::allocate(workspace_bytes, capturing);
      if (!workspace) return workspace.status();
      workspace_ = std::move(*workspace);
      capture_stream_ = capturing;
      return Status::ok();
    }
    auto workspace = DeviceBuffer::allocate(workspace_bytes);
    if (!workspace) return workspace.status();
    workspace_ = std::move(*workspace);
  }
  return Status::ok();
}

void PreparedLaunch::note_launch(void* stream) {
  stream_ = stream;
  if (capture_stream_ != nullptr || (staged_.empty() && workspace_.data() == nullptr)) return;
  auto& event = reinterpret_cast<cudaEvent_t&>(last_launch_);
  if (!event && cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) {
    event = nullptr;
    return;
  }
  cudaEventRecord(event, static_cast<cudaStream_t>(stream));
}

PreparedLaunch::~PreparedLaunch() {
  DeviceScope on_device(device_);
  if (capture_stream_ != nullptr) {  // the graph's workspace: freed in stream order, in the graph
    workspace_ = DeviceBuffer{};
    staged_.clear();
    return;
  }
  // The buffers are freed on the legacy default stream once the last launch has finished:
  // the caller's stream may already be destroyed, so it is never named here.
  if (auto event = static_cast<cudaEvent_t>(last_launch_)) {
    cudaStreamWaitEvent(nullptr, event, 0);
    cudaEventDestroy(event);
  } else if (stream_ != nullptr && (!staged_.empty() || workspace_.data() != nullptr)) {
    cudaStreamSynchronize(nullptr);
  }
  workspace_.set_stream(nullptr);
  for (DeviceBuffer& buffer : staged_) buffer.set_stream(nullptr);
  // Freed here, while the operands' device is current (members would go after the scope).
  workspace_ = DeviceBuffer{};
  staged_.clear();
}

Status PreparedLaunch::sync() {
  DeviceScope on_device(device_);
  TILECRAFT_RETURN_IF_ERROR(on_device.status());
  auto stream = static_cast<cudaStream_t>(stream_);
  TILECRAFT_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(stream), "synchronizing the launch"));
  TILECRAFT_RETURN_IF_ERROR(cuda_status(cudaGetLastError(), "the kernel"));
  for (const CopyBack& copy : copy_back_) {
    TILECRAFT_RETURN_IF_ERROR(
        cuda_status(cudaMemcpy(copy.host, copy.device, copy.bytes, cudaMemcpyDeviceToHost),
                    "copying an output back to the host"));
  }
  return Status::ok();
}

}  // namespace tilecraft
