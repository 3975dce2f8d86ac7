// Shared helpers of the nanobind layer: Status -> Python exception.
#pragma once

#include <nanobind/nanobind.h>

#include <exception>
#include <optional>
#include <string>

#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/status.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"

namespace tilecraft::python {

namespace nb = nanobind;

template <typename T>
T unwrap(Result<T>&& result) {
  if (!result) throw Error(result.status());
  return std::move(result).value();
}

inline void check(const Status& status) {
  if (!status) throw Error(status);
}

// Runs `work` (returning a Status or a Result) with the GIL released, so that what it compiles
// can be stopped by Ctrl-C: Python's signal handlers run about every 50 ms while it waits; when
// one raises (KeyboardInterrupt), the compiler processes are killed, nothing of them is kept, and
// that exception propagates instead of any error the stopped work reports.
template <typename Work>
auto interruptible(Work&& work) -> decltype(work()) {
  bool interrupted = false;
  auto poll = [&interrupted] {
    nb::gil_scoped_acquire gil;
    interrupted = PyErr_CheckSignals() != 0;
    return interrupted;
  };
  std::optional<decltype(work())> outcome;
  try {
    nb::gil_scoped_release release;
    compile::InterruptScope scope(poll);
    outcome.emplace(work());
  } catch (...) {
    if (interrupted) throw nb::python_error();
    throw;
  }
  if (interrupted) throw nb::python_error();
  return std::move(*outcome);
}

// None for ok, else the status's words (Kernel.supports and friends return these).
inline std::optional<std::string> error_of(const Status& status) {
  if (status) return std::nullopt;
  return status.message();
}

void bind_types(nb::module_& m);
void bind_describe(nb::module_& m);
void bind_runtime(nb::module_& m);
// Called by bind_runtime with its GemmOperation class (GemmOperationGrouped builds on it).
void bind_grouped(nb::module_& m, nb::class_<GemmOperation>& operation);
// Called by bind_runtime with its GemmOperation class (Conv2dOperation builds on it).
void bind_conv(nb::module_& m, nb::class_<GemmOperation>& operation);
void bind_api(nb::module_& m);
// Called by bind_api with its submodule (after binding api.KernelArguments).
void bind_grouped_api(nb::module_& api);
// Called by bind_api with its submodule (after binding api.KernelArguments).
void bind_conv_api(nb::module_& api);
void bind_tune(nb::module_& m);
void bind_epilogue_graph(nb::module_& m);

}  // namespace tilecraft::python
