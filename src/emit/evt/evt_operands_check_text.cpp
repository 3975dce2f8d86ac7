// The check of a custom epilogue's launch operands, shared by the SM80 and SM90 adapters (host
// half of a module, namespace tc_evt_args).
#include "emit/evt/evt_text.hpp"

namespace tilecraft::emit {

std::string_view epilogue_operands_check_text() {
  static constexpr std::string_view kText = R"tc(
// ---- tilecraft epilogue graph operands: what an entry's graph takes at launch ----------------
namespace tc_evt_args {
inline std::string check(const tc_gemm_args& a, int tensors, int scalars) {
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
)tc";
  return kText;
}

}  // namespace tilecraft::emit
