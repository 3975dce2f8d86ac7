// api::Kernel's state and what get_kernels of every family shares (kernel_api.cpp,
// grouped_kernel_api.cpp, conv_kernel_api.cpp).
#pragma once

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tilecraft/discover/api.hpp"
#include "tilecraft/discover/gemm_space.hpp"
#include "tilecraft/discover/performance_model.hpp"
#include "tilecraft/runtime/device.hpp"
#include "tilecraft/runtime/gemm_arguments.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"

namespace tilecraft::api {
namespace detail {

// The device a kernel list is for: the operands' (`device`, a CUDA index) or, for -1, the
// current one. Ranking and architectures follow the device the kernels will run on, whichever is
// current when they are asked for.
inline Result<DeviceInfo> info_of(int device) {
  return device >= 0 ? device_info(device) : current_device_info();
}

// The device the ranking models: `device` (see info_of) where it has the kernel's architecture.
inline discover::DeviceTraits traits_for(int cc, int device = -1) {
  discover::DeviceTraits traits;
  traits.compute_capability = cc;
  if (auto info = info_of(device); info && info->multiprocessor_count > 0) {
    traits.sm_count = info->multiprocessor_count;
  }
  return traits;
}

// The architectures whose kernels run on compute capability `cc` (the device's when none is
// given; every architecture when there is no device either).
inline std::vector<int> architectures_for(std::optional<int>& cc, int device = -1) {
  if (!cc) {
    if (auto info = info_of(device); info) cc = info->compute_capability;
  }
  if (!cc) return {80, 90};
  std::vector<int> archs;
  if (*cc >= 80) archs.push_back(80);
  if (*cc == 90) archs.push_back(90);  // sm_90a kernels run on compute capability 9.0 only
  return archs;
}

// Best first by the model's score; a kernel that spills (by the compiler, or predicted) never
// ranks above one that does not.
inline void sort_ranked(std::vector<Kernel>& kernels) {
  std::stable_sort(kernels.begin(), kernels.end(), [](const Kernel& a, const Kernel& b) {
    const KernelMetadata& x = a.metadata();
    const KernelMetadata& y = b.metadata();
    if (x.facts.spills() != y.facts.spills()) return y.facts.spills();
    return x.score > y.score;
  });
}

// The kernels that list(space, traits, operands, instance, add) makes of every instance of the
// operand sets that matches(operands) accepts, in the space of each architecture for `cc` (see
// architectures_for), and those list_beside(arch, traits, add) makes once per architecture (a
// family's kernels not drawn from the GEMM space), passing each to add(kernel); those that pass
// `filter`, best first.
template <class Matches, class List, class ListBeside>
std::vector<Kernel> ranked_kernels(std::optional<int> cc, int device, const MetadataFilter& filter,
                                   Matches matches, List list, ListBeside list_beside) {
  std::vector<Kernel> kernels;
  auto add = [&](Kernel kernel) {
    if (filter && !filter(kernel.metadata())) return;
    kernels.push_back(std::move(kernel));
  };
  for (int arch : architectures_for(cc, device)) {
    const discover::GemmSpace& space = discover::GemmSpace::of(arch);
    const discover::DeviceTraits traits = traits_for(cc.value_or(arch), device);
    for (size_t set = 0; set < space.operand_sets().size(); ++set) {
      const discover::GemmOperands& operands = space.operand_sets()[set];
      if (!matches(operands)) continue;
      for (uint32_t instance : space.instances_of(set))
        list(space, traits, operands, instance, add);
    }
    list_beside(arch, traits, add);
  }
  sort_ranked(kernels);
  return kernels;
}

template <class Matches, class List>
std::vector<Kernel> ranked_kernels(std::optional<int> cc, int device, const MetadataFilter& filter,
                                   Matches matches, List list) {
  return ranked_kernels(cc, device, filter, matches, list, [](int, const auto&, auto) {});
}

// The fusion arguments ask for: their activation, and a bias of `bias` (when there is one).
inline discover::GemmEpilogue fusion_for(Activation activation, std::optional<DataType> bias,
                                         BiasKind bias_kind = BiasKind::per_column) {
  discover::GemmEpilogue fusion;
  fusion.activation = activation;
  if (bias) {
    fusion.bias = bias_kind;
    fusion.element_bias = *bias;
  }
  return fusion;
}

// Instance `instance` of `space` fusing `fusion`, when it can.
inline Result<GemmDescription> fused_description(const discover::GemmSpace& space,
                                                 uint32_t instance,
                                                 const discover::GemmEpilogue& fusion) {
  if (fusion.plain()) return space.description(instance);
  return space.description(instance, fusion);
}

}  // namespace detail

struct Kernel::State {
  int arch = 90;
  size_t instance = 0;
  int split_k = 1;  // K slices of each launch (design.split_k_slices); 1: none
  std::once_flag described;
  GemmDescription description;
  KernelMetadata metadata;
  std::mutex operation_mutex;
  std::shared_ptr<GemmOperation> operation;

  // The arguments of the last run, prepared for the ABI: a run with tensors of the same shapes,
  // strides and types (and the same scalars, stream and workspace) only swaps pointers.
  struct Prepared {
    std::optional<GemmArguments> made_for;
    std::unique_ptr<tilecraft::GemmArguments> abi;
    void* stream = nullptr;
    void* workspace = nullptr;
    size_t workspace_bytes = 0;
  };
  std::mutex prepared_mutex;
  Prepared prepared;

  void describe() {
    std::call_once(described,
                   [this] { adopt(discover::GemmSpace::of(arch).description(instance)); });
  }

  // The description and its metadata, keeping the score get_kernels set.
  void adopt(GemmDescription built) {
    description = std::move(built);
    const double score = metadata.score;
    std::string explain = std::move(metadata.score_explain);
    metadata = metadata_of(description);
    metadata.facts =
        discover::kernel_facts(description, metadata.kernel_name, detail::traits_for(arch));
    metadata.score = score;
    metadata.score_explain = std::move(explain);
    metadata.design.split_k_slices = split_k;
    metadata.design.split_k_parallel = split_k > 1 && discover::split_k_parallel(description);
    if (split_k > 1) metadata.kernel_name += "_splitk" + std::to_string(split_k);
    if (metadata.design.split_k_parallel) metadata.kernel_name += "_parallel";
  }

  // The operation, running the artifact's kernel when one is given (it must be this kernel's).
  Result<std::shared_ptr<GemmOperation>> operation_using(const CompiledArtifact* artifact) {
    auto made = get_operation();
    if (!made || artifact == nullptr) return made;
    if (artifact->kernel_name() != description.procedural_name()) {
      return Status::invalid("compiled_artifact: compiled for " + artifact->kernel_name() +
                             ", not for this kernel (" + metadata.kernel_name + ")");
    }
    TILECRAFT_RETURN_IF_ERROR((*made)->use_artifact(*artifact));
    return made;
  }
  // The operation's compiled kernel (compiled, or found in the cache, on first use).
  Result<CompiledArtifact> artifact() {
    auto made = get_operation();
    if (!made) return made.status();
    return CompiledArtifact::of(**made);
  }
  Result<std::shared_ptr<GemmOperation>> get_operation() {
    describe();
    std::lock_guard lock(operation_mutex);
    if (!operation) {
      auto made = GemmOperation::make(description);
      if (!made) return made.status();
      operation = *made;
    }
    return operation;
  }
};

inline Kernel Kernel::listed(int arch, size_t instance, double score, std::string score_explain,
                             std::optional<GemmDescription> described, int split_k) {
  Kernel kernel;
  kernel.state_ = std::make_shared<Kernel::State>();
  kernel.state_->arch = arch;
  kernel.state_->instance = instance;
  kernel.state_->split_k = split_k;
  kernel.state_->metadata.score = score;
  kernel.state_->metadata.score_explain = std::move(score_explain);
  if (described) {  // get_kernels built it to rank the kernel: keep it
    std::call_once(kernel.state_->described, [&] { kernel.state_->adopt(std::move(*described)); });
  }
  return kernel;
}

}  // namespace tilecraft::api
