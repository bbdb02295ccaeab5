// The descriptors a process passes on when it execs: only 0, 1, 2 and those
// it means to. Whatever else is open (slurmstepd's own descriptors in a task's
// process, a library's socket opened without O_CLOEXEC) is marked
// close-on-exec first.
#pragma once

namespace ddp {

// Marks every descriptor from `first` up close-on-exec. close_range() where
// the kernel has it (Linux 5.11+; a seccomp filter may refuse it), else a walk
// of /proc/self/fd. Async-signal-safe (no allocation, no lock): for a child
// after fork() of a threaded process, such as slurmstepd's task. False when
// neither way worked.
bool cloexec_from(int first);

// The walk alone: every descriptor /proc/self/fd lists from `first` up (read
// with getdents64 on a stack buffer). False when /proc/self/fd cannot be
// opened or read. Used by cloexec_from(); public for its test, as
// close_range() works where the tests run.
bool cloexec_by_walk(int first);

}  // namespace ddp
