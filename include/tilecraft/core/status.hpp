// Status and Result: errors are values with words (DESIGN, Decided 6).
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace tilecraft {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller gave a value the operation cannot take
  kNotSupported,     // a valid value no kernel or device here can serve
  kCompileError,     // the device compiler rejected generated code
  kCudaError,        // the CUDA runtime or driver failed
  kInternal,         // a broken invariant inside tilecraft
  kCancelled,        // the caller interrupted the work (Ctrl-C); nothing was kept of it
};

const char* to_string(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  static Status invalid(std::string message) {
    return {StatusCode::kInvalidArgument, std::move(message)};
  }
  static Status unsupported(std::string message) {
    return {StatusCode::kNotSupported, std::move(message)};
  }
  static Status internal(std::string message) {
    return {StatusCode::kInternal, std::move(message)};
  }

  explicit operator bool() const { return code_ == StatusCode::kOk; }
  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // Prefixes the message with where the failure happened, e.g. "A: ".
  Status& with_context(const std::string& context);

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// The exception form of a failed Status, for callers that prefer to throw.
class Error : public std::runtime_error {
 public:
  explicit Error(Status status)
      : std::runtime_error(status.message()), status_(std::move(status)) {}
  const Status& status() const { return status_; }

 private:
  Status status_;
};

inline void throw_if_error(const Status& status) {
  if (!status) throw Error(status);
}

// A value or the Status that explains why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.is_ok())
      status_ = Status::internal("Result built from an ok Status without a value");
  }

  explicit operator bool() const { return value_.has_value(); }
  bool has_value() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  // Throws tilecraft::Error when there is no value.
  T& value() & {
    throw_if_error(status_);
    return *value_;
  }
  const T& value() const& {
    throw_if_error(status_);
    return *value_;
  }
  T&& value() && {
    throw_if_error(status_);
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace tilecraft

#define TILECRAFT_RETURN_IF_ERROR(expr)      \
  do {                                       \
    ::tilecraft::Status tc_status_ = (expr); \
    if (!tc_status_) return tc_status_;      \
  } while (0)
