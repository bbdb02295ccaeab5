// Process limits a launcher or a rank needs raised.
#pragma once

#include <sys/resource.h>

#include <optional>

namespace ddp {

// Raises the soft open-files limit to the hard one. A job's descriptors grow
// with its size (node 0's agent: one socket per node; a rank: one Gloo socket
// per peer, rank 0's store one per rank), and a soft limit of 1024 is common.
// Returns the limit before, when it was raised (a launcher gives that back to
// what it starts); nullopt when nothing changed.
std::optional<rlimit> raise_open_files_limit();

}  // namespace ddp
