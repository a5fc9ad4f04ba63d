#include "library/workspace.hpp"

#include <algorithm>

namespace gemmlab {

size_t WorkspaceLedger::held() const {
  size_t total = 0;
  for (auto& [k, e] : entries_) total += e.bytes;
  return total;
}

size_t WorkspaceLedger::held_by(Key k) const {
  auto it = entries_.find(k);
  return it == entries_.end() ? 0 : it->second.bytes;
}

std::optional<std::vector<WorkspaceLedger::Key>> WorkspaceLedger::request(
    Key who, size_t bytes, const std::function<bool(Key)>& evictable) const {
  if (bytes > limit_) return std::nullopt;
  size_t others = held() - held_by(who);
  std::vector<std::pair<uint64_t, Key>> idle;
  for (auto& [k, e] : entries_)
    if (k != who && e.bytes && evictable(k)) idle.push_back({e.used, k});
  std::sort(idle.begin(), idle.end());
  std::vector<Key> evict;
  for (auto& [used, k] : idle) {
    if (others + bytes <= limit_) break;
    others -= entries_.at(k).bytes;
    evict.push_back(k);
  }
  if (others + bytes > limit_) return std::nullopt;
  return evict;
}

void WorkspaceLedger::set(Key who, size_t bytes) {
  if (!bytes) {
    entries_.erase(who);
    return;
  }
  entries_[who] = {bytes, ++clock_};
}

void WorkspaceLedger::touch(Key who) {
  if (auto it = entries_.find(who); it != entries_.end()) it->second.used = ++clock_;
}

}  // namespace gemmlab
