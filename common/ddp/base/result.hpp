// Result<T>: a value or an error message meant for a person. C++20 has no
// std::expected; this is the small subset we need. Errors are values, so the
// parsers and planners stay pure and no exception ever reaches Slurm's C code.
#pragma once

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <variant>

namespace ddp {

struct Error {
  std::string message;  // names the problem and, where there is one, the fix
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  const std::string& error() const { return std::get<1>(v_).message; }

 private:
  std::variant<T, Error> v_;
};

// For operations that return nothing but can fail.
struct Ok {};
using Status = Result<Ok>;

inline Error fail(std::string message) { return Error{std::move(message)}; }

// What the last failed system call said, for such a message.
inline std::string errno_text() { return std::strerror(errno); }

}  // namespace ddp
