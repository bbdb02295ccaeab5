// Environment: a process environment as a value (name -> value, ordered by name),
// built from and turned back into the char** form execve() takes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddp {

class Environment {
 public:
  Environment() = default;
  // From a NULL-terminated "NAME=VALUE" array such as environ or S_JOB_ENV.
  static Environment from_envp(const char* const* envp);

  std::optional<std::string> get(std::string_view name) const;
  bool has(std::string_view name) const { return vars_.find(name) != vars_.end(); }
  void set(std::string name, std::string value) { vars_[std::move(name)] = std::move(value); }
  // Sets only when absent: for variables a user may pre-set.
  void set_default(std::string name, std::string value) { vars_.try_emplace(std::move(name), std::move(value)); }
  void unset(std::string_view name);
  // Removes every variable whose name starts with `prefix`.
  void unset_prefix(std::string_view prefix);

  const std::map<std::string, std::string, std::less<>>& vars() const { return vars_; }
  bool operator==(const Environment&) const = default;

  // Owns the strings; envp() points into them (valid while this object lives).
  class Block {
   public:
    explicit Block(const Environment& env);
    char* const* envp() { return pointers_.data(); }

   private:
    std::vector<std::string> strings_;
    std::vector<char*> pointers_;
  };

 private:
  std::map<std::string, std::string, std::less<>> vars_;
};

}  // namespace ddp
