#include "ddp/node/cgroup.hpp"

#include <fstream>
#include <sstream>

#include "ddp/base/parse.hpp"

namespace ddp {

namespace {

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  while (!line.empty()) {
    const auto start = line.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    const auto end = line.find(' ');
    words.push_back(line.substr(0, end));
    line.remove_prefix(end == std::string_view::npos ? line.size() : end);
  }
  return words;
}

bool lists(std::string_view comma_list, std::string_view name) {
  for (const auto item : split_list(comma_list, ','))
    if (item == name) return true;
  return false;
}

// The process's path in the v1 hierarchy of `controller` (v1: true), or in
// the v2 one.
std::optional<std::string> process_path(std::string_view proc_cgroup, std::string_view controller, bool v1) {
  for (const auto line : split_list(proc_cgroup, '\n')) {
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string_view::npos || second == std::string_view::npos) continue;
    const auto controllers = line.substr(first + 1, second - first - 1);
    if (v1 ? lists(controllers, controller) : line.substr(0, first) == "0" && controllers.empty())
      return std::string(line.substr(second + 1));
  }
  return std::nullopt;
}

// The mount of that hierarchy: its root within the hierarchy, its mount point.
std::optional<std::pair<std::string, std::string>> mount_of(std::string_view mountinfo, std::string_view controller,
                                                            bool v1) {
  for (const auto line : split_list(mountinfo, '\n')) {
    const auto dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    const auto fields = words_of(line.substr(0, dash)), tail = words_of(line.substr(dash + 3));
    if (fields.size() < 5 || tail.size() < 3) continue;
    const bool match = v1 ? tail[0] == "cgroup" && lists(tail[2], controller) : tail[0] == "cgroup2";
    if (match) return std::make_pair(std::string(fields[3]), std::string(fields[4]));
  }
  return std::nullopt;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::optional<CgroupDir> dir_of(pid_t pid, std::string_view controller) {
  const std::string self = "/proc/" + std::to_string(pid) + "/cgroup";
  return cgroup_dir(read_file(self), read_file("/proc/self/mountinfo"), controller);
}

}  // namespace

std::optional<CgroupDir> cgroup_dir(std::string_view proc_cgroup, std::string_view mountinfo,
                                    std::string_view controller) {
  for (const bool v1 : {true, false}) {
    const auto path = process_path(proc_cgroup, controller, v1);
    const auto mount = path ? mount_of(mountinfo, controller, v1) : std::nullopt;
    if (!mount) continue;
    const auto& [root, point] = *mount;
    std::string inside = *path;
    if (root != "/" && inside.rfind(root, 0) == 0) inside = inside.substr(root.size());
    if (inside == "/") inside.clear();
    return CgroupDir{point, point + inside};
  }
  return std::nullopt;
}

std::optional<std::uint64_t> cgroup_counter(std::string_view text, std::string_view key) {
  for (const auto line : split_list(text, '\n')) {
    const auto words = words_of(line);
    if (words.size() == 2 && words[0] == key)
      if (const auto n = parse_uint(words[1], 0, ~0ull, key)) return *n;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> throttled_ns(std::string_view cpu_stat) {
  if (const auto ns = cgroup_counter(cpu_stat, "throttled_time")) return ns;
  if (const auto us = cgroup_counter(cpu_stat, "throttled_usec")) return *us * 1000;
  return std::nullopt;
}

std::vector<std::string> cgroup_chain(const CgroupDir& at) {
  std::vector<std::string> chain;
  for (std::string dir = at.dir; dir.size() > at.mount.size() && dir.rfind(at.mount + "/", 0) == 0;
       dir = dir.substr(0, dir.rfind('/')))
    chain.push_back(dir);
  return chain;
}

std::optional<std::uint64_t> oom_kills(pid_t pid) {
  const auto dir = dir_of(pid, "memory");
  if (!dir) return std::nullopt;
  std::optional<std::uint64_t> total;
  for (const auto& d : cgroup_chain(*dir)) {
    auto count = cgroup_counter(read_file(d + "/memory.oom_control"), "oom_kill");
    if (!count) count = cgroup_counter(read_file(d + "/memory.events"), "oom_kill");
    if (count) total = total.value_or(0) + *count;
  }
  return total;
}

std::optional<std::uint64_t> cpu_throttled_ns(pid_t pid) {
  const auto dir = dir_of(pid, "cpu");
  return dir ? throttled_ns(read_file(dir->dir + "/cpu.stat")) : std::nullopt;
}

}  // namespace ddp
