// The check of a custom epilogue's launch operands (namespace tc_evt_args), shared by the SM80 and
// SM90 adapters.
#pragma once

#if !defined(TILECRAFT_DEVICE_HALF)  // host half only

#include <string>

#include "tilecraft/abi/module_abi.h"

namespace tc_evt_args {
inline std::string check(const tc_args_header& a, int tensors, int scalars) {
  if (a.num_epilogue_tensors != tensors) {
    return "epilogue graph: expected " + std::to_string(tensors) + " operand tensor(s), got " +
           std::to_string(a.num_epilogue_tensors);
  }
  if (a.num_epilogue_scalars != scalars) {
    return "epilogue graph: expected " + std::to_string(scalars) + " scalar(s), got " +
           std::to_string(a.num_epilogue_scalars);
  }
  if ((tensors > 0 && a.epilogue_tensors == nullptr) ||
      (scalars > 0 && a.epilogue_scalars == nullptr)) {
    return "epilogue graph: null operand array";
  }
  for (int i = 0; i < tensors; ++i) {
    if (a.epilogue_tensors[i].data == nullptr) {
      return "epilogue graph: operand tensor " + std::to_string(i) + " is a null pointer";
    }
  }
  return {};
}
}  // namespace tc_evt_args

#endif  // !TILECRAFT_DEVICE_HALF
