// How rdzv_messages.cpp and rdzv_preflight.cpp read and write fields: one
// reader per message that keeps the first error, so that each
// from_message() reads as the list of its fields. Internal to the wire code.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ddp/base/parse.hpp"
#include "ddp/base/result.hpp"
#include "ddp/wire/rdzv_protocol.hpp"

namespace ddp::rdzv {

inline constexpr std::uint64_t kMaxAttempt = 1u << 20;
inline constexpr std::uint64_t kMaxNode = (1u << 20) - 1;
inline constexpr std::uint64_t kMaxRank = 1u << 30;

// Reads one message's fields, keeping the first error, so that each
// from_message() below reads as the list of its fields.
class Fields {
 public:
  Fields(const Message& m, const char* verb) : m_(m) {
    if (m.verb != verb) error_ = "expected " + std::string(verb) + ", got " + printable(m.verb, 40);
  }
  std::uint64_t number(const char* key, std::uint64_t min, std::uint64_t max) {
    return keep(m_.get_uint(key, min, max)).value_or(0);
  }
  std::optional<std::uint64_t> maybe_number(const char* key, std::uint64_t min, std::uint64_t max) {
    return m_.get(key) ? keep(m_.get_uint(key, min, max)) : std::nullopt;
  }
  std::string text(const char* key) {
    const auto value = m_.get(key);
    if (!value) note(m_.verb + ": the field '" + key + "' is missing");
    return value.value_or("");
  }
  std::string maybe_text(const char* key) const { return m_.get(key).value_or(""); }
  bool flag(const char* key) { return maybe_number(key, 1, 1).has_value(); }
  std::vector<std::uint32_t> runs(const char* key, std::uint32_t min, std::uint32_t max, std::size_t items) {
    if (!m_.get(key)) return {};
    return keep(m_.get_uint_list(key, min, max, items)).value_or(std::vector<std::uint32_t>{});
  }
  // A field holding a value of its own (a list, a nested message).
  template <class T>
  T parsed(const char* key, Result<T> (*parse)(std::string_view)) {
    const auto value = m_.get(key);
    if (!value) return T{};
    auto r = parse(*value);
    if (!r) note(m_.verb + " " + key + ": " + r.error());
    return r ? std::move(r).value() : T{};
  }
  void note(std::string error) {
    if (!error_) error_ = std::move(error);
  }
  template <class T>
  Result<T> done(T value) const {
    if (error_) return fail(*error_);
    return value;
  }

 private:
  template <class T>
  std::optional<T> keep(Result<T> r) {
    if (r) return std::move(r).value();
    note(r.error());
    return std::nullopt;
  }
  const Message& m_;
  std::optional<std::string> error_;
};

inline Message& set_text(Message& m, const char* key, const std::string& value) {
  return value.empty() ? m : m.set(key, value);
}

}  // namespace ddp::rdzv
