// Failures in words (ddp/wire/failure.hpp holds them as data): the one place
// that turns a Failure or a RootCause into the lines a user reads. Node 0's
// agent prints the verdict's root cause with describe(); every agent names
// its own failure to the site's HealthCheck with what_happened().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ddp/wire/failure.hpp"

namespace ddp::agent {

// "2 (host, addr)", "2 (host)" or "2": a node as messages name it.
std::string node_name(std::uint32_t node, const std::string& host, const std::string& addr);

// What a worker did, in a few words: "exited with code 3", "was killed by
// SIGSEGV", "could not be started: ...", "hung: ..." (DDP_HEALTH_FAILURE).
std::string what_happened(const Failure& failure);

// "2,3", or "none".
std::string rank_list(const std::vector<std::uint32_t>& ranks);

// The failure in one line: "worker rank 5 (local rank 1) on node 2 (n2) was
// killed by SIGKILL at 12:00:01 in attempt 2 of 3". `attempts` as in RootCause.
std::string first_line(const Failure& failure, std::uint32_t attempts);

// The root cause as node 0 prints it: the first line, the stderr tail and the
// error file, the other stalled nodes, the related failure, why the run could
// not restart, and the failure's class with what it meant (job.hpp's policy).
std::string describe(const RootCause& cause);

}  // namespace ddp::agent
