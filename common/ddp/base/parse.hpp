// The small values users and admins type (whole numbers, port ranges) and the
// text helpers every part uses: trimming, splitting lists, quoting a value
// safely in a message, durations. Pure functions; every parse error names the
// value and the accepted range. (The worker mode is parsed in mode.hpp, CPU
// lists in cpu_list.hpp.)
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ddp/base/result.hpp"

namespace ddp {

// A decimal integer in [min, max]; `what` names it in the error ("--ddp-procs").
Result<std::uint64_t> parse_uint(std::string_view text, std::uint64_t min, std::uint64_t max, std::string_view what);

struct PortRange {
  std::uint16_t first = 0;
  std::uint16_t last = 0;  // inclusive
  std::uint32_t size() const { return std::uint32_t(last) - first + 1; }
  bool operator==(const PortRange&) const = default;
};

// "LO-HI", both in 1024..65535, LO <= HI.
Result<PortRange> parse_port_range(std::string_view text, std::string_view what);

// Leading/trailing blanks removed.
std::string_view trim(std::string_view text);

// `text` cut at every `separator`, the pieces as they are (not trimmed; empty
// pieces kept: "a,,b" gives 3, "" gives one empty piece). Every list the
// project reads (ranks, CPUs, Slurm's task counts, partitions, wire lists,
// placements) is split here and its pieces checked by its own parser.
std::vector<std::string_view> split_list(std::string_view text, char separator = ',');

// `text` made safe for one log line: control characters written as \n, \t,
// \r or \xNN (a backslash as \\), and cut to at most `max` characters with
// "..." appended. Messages quote values users choose (options, SDDP_*
// variables, node lists), and slurmd's log must not get lines a user forged.
std::string printable(std::string_view text, std::size_t max = 4096);

// A duration for a message: "5 s", "0.3 s", "12.5 s".
std::string seconds_text(std::chrono::milliseconds ms);

// A signal for a message: "SIGKILL" (the kernel's abbreviation), or
// "signal 77" for a number it has no name for.
std::string signal_name(int sig);

}  // namespace ddp
