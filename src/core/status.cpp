#include "tilecraft/core/status.hpp"

namespace tilecraft {

const char* to_string(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotSupported:
      return "not supported";
    case StatusCode::kCompileError:
      return "compile error";
    case StatusCode::kCudaError:
      return "CUDA error";
    case StatusCode::kInternal:
      return "internal error";
    case StatusCode::kCancelled:
      return "cancelled";
  }
  return "unknown";
}

Status& Status::with_context(const std::string& context) {
  if (!is_ok()) message_ = context + ": " + message_;
  return *this;
}

}  // namespace tilecraft
