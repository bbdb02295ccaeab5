// The rendezvous gate's unauthenticated connections, oldest first, counted by
// source address: what shedding and the handshake deadline look through. Kept
// apart from the gate's peers (16,384 of them in a large step, nearly all
// authenticated), so that a look at the pending ones costs what they number,
// not what the step does (a pass over every peer per batch of accepts would
// be most of node 0's CPU at 16,384 nodes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

namespace ddp::agent {

class PendingIndex {
 public:
  // Connection ids grow with time: the smallest is the oldest.
  void add(std::uint64_t id, const std::string& address);
  // Authenticated, closing or closed: no longer pending (no-op if it was not).
  void remove(std::uint64_t id);

  std::size_t size() const { return by_age_.size(); }
  bool empty() const { return by_age_.empty(); }
  // Every pending connection comes from an address of its own (a large
  // step's nodes connecting at once), none from a crowded one (a flood).
  bool one_per_address() const { return crowded_ == 0; }
  std::size_t count(const std::string& address) const;
  std::optional<std::uint64_t> oldest() const;
  // The oldest connection of the address with the most pending ones.
  std::optional<std::uint64_t> oldest_of_busiest() const;
  // id -> source address, oldest first.
  const std::map<std::uint64_t, std::string>& by_age() const { return by_age_; }

 private:
  std::map<std::uint64_t, std::string> by_age_;
  std::unordered_map<std::string, std::size_t> per_address_;
  std::size_t crowded_ = 0;  // addresses with more than one pending connection
};

}  // namespace ddp::agent
