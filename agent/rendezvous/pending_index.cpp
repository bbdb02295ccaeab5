#include "rendezvous/pending_index.hpp"

namespace ddp::agent {

void PendingIndex::add(std::uint64_t id, const std::string& address) {
  if (!by_age_.emplace(id, address).second) return;
  if (++per_address_[address] == 2) ++crowded_;
}

void PendingIndex::remove(std::uint64_t id) {
  const auto it = by_age_.find(id);
  if (it == by_age_.end()) return;
  const auto count = per_address_.find(it->second);
  if (--count->second == 1) --crowded_;
  if (count->second == 0) per_address_.erase(count);
  by_age_.erase(it);
}

std::size_t PendingIndex::count(const std::string& address) const {
  const auto it = per_address_.find(address);
  return it == per_address_.end() ? 0 : it->second;
}

std::optional<std::uint64_t> PendingIndex::oldest() const {
  if (by_age_.empty()) return std::nullopt;
  return by_age_.begin()->first;
}

std::optional<std::uint64_t> PendingIndex::oldest_of_busiest() const {
  std::optional<std::uint64_t> victim;
  std::size_t most = 0;
  for (const auto& [id, address] : by_age_)  // oldest first: the first of the busiest wins
    if (const std::size_t n = count(address); n > most) most = n, victim = id;
  return victim;
}

}  // namespace ddp::agent
