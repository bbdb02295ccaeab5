// Who holds a port a step could not have on this node: the holder of its
// claim (port_claim.hpp), or of the TCP port itself. Only what an
// unprivileged process can learn for sure is said: a claim's name is open to
// anyone, so a holder is called a slurm-ddp step only when the kernel's facts
// show one; any other holder is named as a process that is not.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <cstdint>
#include <optional>
#include <string>

#include "ddp/plan/ports.hpp"

namespace ddp {

// The abstract Unix socket name that claims `port`: "slurm-ddp/port/29500"
// (after the leading NUL of the abstract namespace).
std::string claim_name(std::uint16_t port);
// Its address for bind() and connect(), `length` bytes long.
sockaddr_un claim_address(std::uint16_t port, socklen_t& length);

// What /proc/PID/status tells anyone about a process (nothing when /proc is
// mounted with hidepid): its name, which its owner may set, and its real uid,
// which only root can make 0.
struct ProcessFacts {
  std::string name;
  uid_t real_uid = 0;
  pid_t parent = 0;
};
std::optional<ProcessFacts> process_facts(pid_t pid);

// Whether a claim's holder is a slurm-ddp step: slurmstepd itself (a task-shape
// step's claim on MASTER_PORT, made in user_init) or a process slurmstepd
// started (node 0's agent). Judged by slurmstepd's real uid 0, which no user's
// process can have, and its name. A user's own program run as a Slurm step's
// task and binding a claim's name passes too: named by pid and user all the same.
bool is_step_process(const ProcessFacts& holder, const std::optional<ProcessFacts>& parent);

// The holder of port `port`'s claim name, as PortRefusal names it: this step,
// a slurm-ddp step (pid and user, from SO_PEERCRED on a connection to the claim),
// or a process that is not one: pid and user when it listens; its user (the
// kernel's sock_diag) and, where /proc lets this process see it, its pid when
// it holds the name without listening. `name`: find out who (else only
// which kind, with `who` empty, and without the look-ups that cost).
PortRefusal claim_holder(std::uint16_t port, bool name);

// Who has TCP `port` bound on this node ("pid 42, user bob (uid 1001),
// listening"), from /proc/net/tcp and tcp6 (the pid where /proc lets this
// process see it); empty when not found.
std::string tcp_port_holder(std::uint16_t port);

// "user bob (uid 1001)", or "uid 1001" when it has no name.
std::string user_text(uid_t uid);

}  // namespace ddp
