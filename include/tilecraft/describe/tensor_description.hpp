// TensorDescription: an operand's element type, layout and access alignment (seed 002).
#pragma once

#include "tilecraft/core/status.hpp"
#include "tilecraft/core/types.hpp"

namespace tilecraft {

struct TensorDescription {
  DataType element = DataType::f32;
  Layout layout = Layout::RowMajor;
  int alignment = 1;  // elements per vectorized access

  static Result<TensorDescription> make(DataType element, Layout layout, int alignment);
  Status validate() const;
  friend bool operator==(const TensorDescription&, const TensorDescription&) = default;
};

}  // namespace tilecraft
