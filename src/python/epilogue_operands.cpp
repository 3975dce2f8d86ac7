#include "epilogue_operands.hpp"

#include <string>

#include "arguments.hpp"
#include "tensor_adapter.hpp"

namespace tilecraft::python {

EpilogueOperands epilogue_operands_from(const char* name, nb::handle value) {
  EpilogueOperands out;
  if (value.is_none()) return out;
  if (!nb::isinstance<nb::dict>(value)) {
    wrong_type(name, "a dict of the epilogue graph's names to tensors and numbers", value);
  }
  for (auto [key, item] : nb::borrow<nb::dict>(value)) {
    if (!nb::isinstance<nb::str>(key)) {
      wrong_type(name, "str keys (the epilogue graph's names)", key);
    }
    const std::string label = std::string(name) + "[" + nb::cast<std::string>(key) + "]";
    const std::string operand = nb::cast<std::string>(key);
    if (is_tensor_like(item)) {
      auto array = Arg<nb::ndarray<>>::from(label, item, "a tensor");
      out.tensors[operand] = to_tensor_view(("epilogue." + operand).c_str(), array);
    } else {
      out.scalars[operand] = float_from(label, item, "a tensor (torch, cupy, numpy) or a number");
    }
  }
  return out;
}

}  // namespace tilecraft::python
