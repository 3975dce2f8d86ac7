// The api.Kernel methods that take arguments (supports, compile, get_workspace_size, run): the
// arguments of any kernel family (api::KernelArguments).
#pragma once

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "arguments.hpp"
#include "common.hpp"
#include "described.hpp"
#include "tilecraft/discover/api.hpp"

namespace tilecraft::python {

inline void def_kernel_methods(nb::class_<api::Kernel>& kernel) {
  using api::Kernel;
  using Args = api::KernelArguments;
  const auto args = required<Ref<Args>>("args");
  def_method(
      kernel, "supports", "supports",
      [](const Kernel& k, Ref<Args> a) { return error_of(k.supports(*a)); }, args);
  def_method(
      kernel, "compile", "compile",
      [](const Kernel& k, Ref<Args> a) {
        return unwrap(interruptible([&] { return k.compile(*a); }));
      },
      args);
  def_method(
      kernel, "get_workspace_size", "get_workspace_size",
      [](const Kernel& k, Ref<Args> a) {
        return unwrap(interruptible([&] { return k.get_workspace_size(*a); }));
      },
      args);
  def_method(
      kernel, "run", "run",
      [](const Kernel& k, Ref<Args> a, std::optional<Ref<CompiledArtifact>> artifact,
         uint64_t stream, bool assume_supported_args, uint64_t workspace,
         uint64_t workspace_bytes) {
        const CompiledArtifact* compiled = artifact ? artifact->pointer : nullptr;
        check(interruptible([&] {
          return k.run(*a, compiled, reinterpret_cast<void*>(static_cast<uintptr_t>(stream)),
                       assume_supported_args,
                       reinterpret_cast<void*>(static_cast<uintptr_t>(workspace)), workspace_bytes);
        }));
      },
      args,
      optional<std::optional<Ref<CompiledArtifact>>>("compiled_artifact", std::nullopt, "None"),
      optional<uint64_t>("stream", 0, "0", "a cudaStream_t handle (an int >= 0)"),
      optional<bool>("assume_supported_args", false, "False"),
      optional<uint64_t>("workspace", 0, "0", "a device pointer (an int >= 0)"),
      optional<uint64_t>("workspace_bytes", 0, "0"));
}

}  // namespace tilecraft::python
