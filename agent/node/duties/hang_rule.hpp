// --ddp-hang-timeout: a worker that makes no progress for the timeout is a
// hang. The progress signal is a file per worker (DDP_PROGRESS_FILE) whose
// modification time is its last progress, as torchelastic's file timer does:
// one line in any script, no import of ours; ddp-train touches it each step.
// A worker may also write its step number into the file (ddp-train does):
// then the rank that is behind is the suspect, whatever the clock says (file
// times come from a coarse clock, a few ms, and fast steps tie).
//
// Who hung? In a collective that one rank never joins, every rank stalls
// within a step of the others, so the silence alone rarely tells. The stack
// does: SIGABRT makes each stalled Python worker print it (PYTHONFAULTHANDLER,
// set by the agent), and a rank waiting inside torch.distributed is waiting
// for the one that is somewhere else. So the culprit is a stalled rank that
// is not in a collective, the stalest of them; without stacks (ddp-train, a
// script with its own SIGABRT handler), the stalest rank. Each node picks its
// own; the coordinator compares the nodes' picks the same way (their clocks
// must agree to better than a step: NTP does).
//
// Pure decisions here; the agent does the effects (SIGABRT, the report).
// A rank that never touches its file is never a hang by itself: the agent
// says once, at the timeout, that the watch waits for a first touch.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ddp/wire/failure.hpp"
#include "ddp/wire/progress_file.hpp"

namespace ddp::agent {

using WallClock = std::chrono::system_clock;

struct Hang {
  struct Rank {
    std::uint32_t local = 0;
    WallClock::time_point last;  // its last progress (at least the attempt's start)
    bool never = false;          // no progress signalled since it started
    std::optional<std::uint64_t> step;
  };
  std::vector<Rank> stalled;               // silent for the timeout, behind or stalest first
  std::vector<std::uint32_t> progressing;  // local ranks still watched and not stalled
};

// `last_progress[i]`: local rank i's last progress (its file's mtime; the
// agent creates each file with the epoch as its time, so the epoch means
// "never touched"; a time before the attempt's start counts from the start),
// or nullopt for a rank no longer watched (it has ended well).
//
// A hang when a rank that has signalled progress at least once has been
// silent for more than `timeout` before `now`: the watch of each rank starts
// at its first touch, so that a long start (loading a checkpoint, building a
// model, a slow rendezvous, each with its own timeouts) is no hang. Once there
// is one, a rank that never signalled since the start is stalled as well (and
// the likeliest culprit: the others made progress, it did not).
std::optional<Hang> find_hang(const std::vector<std::optional<Progress>>& last_progress,
                              WallClock::time_point attempt_started, WallClock::time_point now,
                              std::chrono::milliseconds timeout);

// Where a stalled worker was when SIGABRT came (StalledIn, wire/failure.hpp),
// read from the last lines of its stderr (the faulthandler's "Fatal Python
// error: Aborted" and the frames after it).
StalledIn where_stalled(const std::vector<std::string>& stderr_tail);
// Where the last dump begins in the tail ("Fatal Python error: Aborted"), or
// stderr_tail.size() when there is none.
std::size_t dump_start(const std::vector<std::string>& stderr_tail);

// The culprit: the stalest of the stalled ranks that are least likely to be
// waiting for another (`where[i]` belongs to hang.stalled[i]). An index into
// hang.stalled.
std::size_t pick_culprit(const Hang& hang, const std::vector<StalledIn>& where);

// The hang as the culprit's failure reports it (wire/failure.hpp: the
// rendering is there). `culprit` indexes hang.stalled; `survived`: it was
// still running when the report went.
HangFacts hang_facts(const Hang& hang, std::size_t culprit, StalledIn where, std::uint32_t rank_base,
                     std::chrono::milliseconds timeout, bool survived);

// The stalled ranks as global ranks, in order of suspicion.
std::vector<std::uint32_t> stalled_ranks(const Hang& hang, std::uint32_t rank_base);

// Who is more suspect of two stalled ranks: one that never signalled over one
// that did, the one behind when both wrote their step, else the one silent
// longer.
bool more_suspect(const Hang::Rank& a, const Hang::Rank& b);

// What node 0 says when an attempt's workers have ended and none ever touched
// its file: the watch never started, and how a script signals.
std::string untouched_warning(std::uint32_t node_rank, std::chrono::milliseconds timeout);

// Milliseconds since the epoch: how the time travels in the FAIL report
// (HangFacts::since_ms).
std::uint64_t epoch_ms(WallClock::time_point t);

}  // namespace ddp::agent
