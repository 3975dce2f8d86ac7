// Shared helpers of the nanobind layer: Status -> Python exception.
#pragma once

#include <nanobind/nanobind.h>

#include "tilecraft/core/status.hpp"

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

void bind_types(nb::module_& m);
void bind_describe(nb::module_& m);
void bind_runtime(nb::module_& m);
void bind_api(nb::module_& m);

}  // namespace tilecraft::python
