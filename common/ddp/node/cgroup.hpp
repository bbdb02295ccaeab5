// This node's cgroups as the kernel shows them, v1 and v2 alike: where a
// process's memory and cpu cgroups are, how many times the OOM killer struck
// there, how long the cpu controller throttled it. The parsers are pure (the
// unit tests feed them both versions' files); the readers below them open
// /proc and /sys/fs/cgroup.
//
// Folklore: v1 mounts each controller (or a few together, "cpu,cpuacct") on
// its own hierarchy, v2 has one ("0::/path"); a hybrid machine has both, and
// a controller lives in one of them. In a container the mount's root may be a
// sub-directory of the hierarchy (mountinfo's 4th field). The OOM count is
// memory.oom_control's `oom_kill` on v1 (kernel 4.13 on) and memory.events'
// on v2; throttling is cpu.stat's `throttled_time` (ns) on v1 and
// `throttled_usec` on v2.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddp {

// A process's cgroup directory for one controller, and the mount point of
// its hierarchy.
struct CgroupDir {
  std::string mount, dir;
  bool operator==(const CgroupDir&) const = default;
};

// The directory of `controller` ("memory", "cpu") for a process, from its
// /proc/PID/cgroup and this mount namespace's /proc/self/mountinfo: the v1
// hierarchy that has it, else the v2 one; nullopt when neither is mounted.
std::optional<CgroupDir> cgroup_dir(std::string_view proc_cgroup, std::string_view mountinfo,
                                    std::string_view controller);

// The named counter of a flat-keyed cgroup file ("oom_kill 3\n..."): the
// OOM count of memory.oom_control (v1) or memory.events (v2).
std::optional<std::uint64_t> cgroup_counter(std::string_view text, std::string_view key);
// cpu.stat's throttled time in ns: `throttled_time` (v1), `throttled_usec` (v2).
std::optional<std::uint64_t> throttled_ns(std::string_view cpu_stat);

// A directory and its ancestors up to (not including) its mount point (the
// root's counters are the machine's), deepest first: a limit set on the job's
// or step's cgroup kills in a task's.
std::vector<std::string> cgroup_chain(const CgroupDir& at);

// The OOM kills so far in a process's memory cgroup and its ancestors; nullopt
// where the machine has no memory controller or no such counter.
std::optional<std::uint64_t> oom_kills(pid_t pid);
// The cpu controller's throttled time of a process's cgroup, in ns; nullopt
// where it has none.
std::optional<std::uint64_t> cpu_throttled_ns(pid_t pid);

}  // namespace ddp
