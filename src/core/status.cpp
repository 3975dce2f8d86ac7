#include "tilecraft/core/status.hpp"

#include <iterator>

namespace tilecraft {

const char* to_string(StatusCode code) {
  static constexpr const char* kNames[] = {
      "ok",         "invalid argument", "not supported", "compile error",
      "CUDA error", "internal error",   "cancelled"};
  static_assert(std::size(kNames) == static_cast<size_t>(StatusCode::kCancelled) + 1);
  const auto index = static_cast<size_t>(code);
  return index < std::size(kNames) ? kNames[index] : "unknown";
}

Status& Status::with_context(const std::string& context) {
  if (!is_ok()) message_ = context + ": " + message_;
  return *this;
}

}  // namespace tilecraft
