#include "ddp/base/environment.hpp"

#include <cstring>

namespace ddp {

Environment Environment::from_envp(const char* const* envp) {
  Environment env;
  for (; envp && *envp; ++envp) {
    const char* eq = std::strchr(*envp, '=');
    if (!eq || eq == *envp) continue;  // not NAME=VALUE: nothing a program could read
    env.vars_.insert_or_assign(std::string(*envp, eq), std::string(eq + 1));
  }
  return env;
}

std::optional<std::string> Environment::get(std::string_view name) const {
  const auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

void Environment::unset(std::string_view name) {
  const auto it = vars_.find(name);
  if (it != vars_.end()) vars_.erase(it);
}

void Environment::unset_prefix(std::string_view prefix) {
  for (auto it = vars_.lower_bound(prefix); it != vars_.end() && it->first.starts_with(prefix);) it = vars_.erase(it);
}

Environment::Block::Block(const Environment& env) {
  strings_.reserve(env.vars_.size());
  for (const auto& [name, value] : env.vars_) strings_.push_back(name + "=" + value);
  pointers_.reserve(strings_.size() + 1);
  for (auto& s : strings_) pointers_.push_back(s.data());
  pointers_.push_back(nullptr);
}

}  // namespace ddp
