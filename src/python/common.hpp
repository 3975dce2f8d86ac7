// What every binding file includes: the argument machinery (arguments.hpp), how messages name the
// bound types (described.hpp), one set of nanobind's type casters for all of them, and the
// helpers below (Status -> Python exception, the GIL released while compiling, stream handles).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/unique_ptr.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include "arguments.hpp"
#include "described.hpp"
#include "tilecraft/compile/compiler.hpp"
#include "tilecraft/core/status.hpp"
#include "tilecraft/discover/api.hpp"
#include "tilecraft/runtime/gemm_operation.hpp"
#include "tilecraft/tune/tuning.hpp"

namespace tilecraft::python {

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

// The epilogue parameters of a launch: output_op, or without it epilogue_type(1.0, 0.0), which
// says what else the epilogue needs.
inline EpilogueParams output_op_or_default(const GemmOperation& op,
                                           const std::optional<Ref<EpilogueParams>>& output_op) {
  return output_op ? **output_op : unwrap(op.epilogue_type(1.0, 0.0, {}));
}

// A pointer Python passes as an int: a cudaStream_t handle, a device pointer (0: none).
inline void* as_pointer(uint64_t address) {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(address));
}

// The stream= parameter of every launch.
inline Param<uint64_t> stream_parameter() {
  return optional<uint64_t>("stream", 0, "0", "a cudaStream_t handle (an int >= 0)");
}

// The layouts and alignments of A, B and out, as an arguments-first class (GEMM, grouped,
// convolution) has them.
template <typename Arguments>
std::array<Layout, 3> layouts_of(const Arguments& a) {
  return {a.layout_a(), a.layout_b(), a.layout_out()};
}
template <typename Arguments>
std::array<int, 3> alignments_of(const Arguments& a) {
  return {a.alignment_a(), a.alignment_b(), a.alignment_out()};
}

// A one-call launch (tilecraft.conv2d, tilecraft.grouped_gemm): `run` picks a kernel for the
// arguments, compiles it on first use and launches it; Python gets (kernel name, reason).
template <typename Arguments, typename Pick>
void def_one_call(nb::module_& m, const char* name,
                  Result<Pick> (*run)(const Arguments&, void*,
                                      const std::optional<tune::TuningOptions>&)) {
  def_checked(
      m, name, name,
      [run](Ref<Arguments> a, uint64_t stream, std::optional<std::string> tuning) {
        std::optional<tune::TuningOptions> options;
        if (tuning) {
          options = unwrap(tune::tuning_options_from_environment());
          options->mode = unwrap(tune::parse_tuning_mode(*tuning, "tuning"));
        }
        Pick pick = unwrap(interruptible([&] { return run(*a, as_pointer(stream), options); }));
        return nb::make_tuple(pick.kernel_name, pick.reason);
      },
      required<Ref<Arguments>>("args"), stream_parameter(),
      optional<std::optional<std::string>>("tuning", std::nullopt, "None",
                                           "'auto', 'blocking', 'off', 'force' or None"));
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
void bind_export(nb::module_& m);

}  // namespace tilecraft::python
