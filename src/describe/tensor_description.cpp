#include "tilecraft/describe/tensor_description.hpp"

#include <string>

#include "describe/checks.hpp"

namespace tilecraft {

Result<TensorDescription> TensorDescription::make(DataType element, Layout layout, int alignment) {
  TensorDescription desc{element, layout, alignment};
  if (Status status = desc.validate(); !status) return status;
  return desc;
}

Status TensorDescription::validate() const {
  using describe::check_enumerator;
  TILECRAFT_RETURN_IF_ERROR(
      check_enumerator("TensorDescription: ", "element", "DataType", element));
  TILECRAFT_RETURN_IF_ERROR(check_enumerator("TensorDescription: ", "layout", "Layout", layout));
  if (alignment < 1 || (alignment & (alignment - 1)) != 0) {
    return Status::invalid("TensorDescription: alignment must be a power of two >= 1, got " +
                           std::to_string(alignment));
  }
  const int max_alignment = 128 / size_in_bits(element);
  if (alignment > max_alignment) {
    return Status::invalid("TensorDescription: alignment " + std::to_string(alignment) + " of " +
                           spelled(element) + " is " +
                           std::to_string(int64_t{alignment} * size_in_bits(element)) +
                           " bits; a vector access is at most 128 bits (alignment <= " +
                           std::to_string(max_alignment) + ")");
  }
  if (is_interleaved(layout) && element != DataType::s8 && element != DataType::u8) {
    return Status::invalid("TensorDescription: layout " + std::string(to_string(layout)) +
                           " holds 8-bit integers only, got " + spelled(element));
  }
  return Status::ok();
}

}  // namespace tilecraft
