// The project's one error style: functions that can fail return Result<T>.
// No exceptions cross module boundaries; third-party exceptions (nlohmann
// JSON) are caught at the call site and turned into an Error.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace gd {

struct Error {
  std::string message;  // one line, no trailing period; said to the user as is
};

// The value of a Result that has none to give: Result<Done> says only whether
// the call worked, and if not, why.
struct Done {};

template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const std::string& error() const { return std::get<1>(v_).message; }

 private:
  std::variant<T, Error> v_;
};

}  // namespace gd
