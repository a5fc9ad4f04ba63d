#pragma once
// The library's device memory, bounded. Each stream the library has seen owns one workspace (like a
// cuBLAS handle's), shared by every plan of that stream: calls on one stream run one after the
// other, so one buffer serves them all, and a call's launches (a pre-pass, the kernel, a reduce)
// are enqueued under the stream's lock so that no other call's launches come between them.
// The ledger below is the bookkeeping alone (no CUDA call, CPU-tested): what each stream holds, the
// limit over all of them, and which idle streams give theirs back, least recently used first, when a
// stream needs more.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace gemmlab {

// The default limit: an eighth of the device's memory (10 GiB on an 80 GB H100), enough for the
// tensor-core path's packed operands up to 16384³ (4 GiB) beside split-K's partial sums.
constexpr size_t kDefaultWorkspaceDivisor = 8;

class WorkspaceLedger {
 public:
  using Key = uint64_t;
  explicit WorkspaceLedger(size_t limit = 0) : limit_(limit) {}
  size_t limit() const { return limit_; }
  void set_limit(size_t bytes) { limit_ = bytes; }
  size_t held() const;
  size_t held_by(Key k) const;
  // `who` asks to hold `bytes` in place of what it holds. The streams to take workspace from first
  // (least recently used first, only those `evictable` says are idle), or nothing when even all of
  // them would not make room: then the caller takes a plan that needs no workspace.
  std::optional<std::vector<Key>> request(Key who, size_t bytes, const std::function<bool(Key)>& evictable) const;
  // Records what a stream holds now (0 removes it), and marks it most recently used.
  void set(Key who, size_t bytes);
  void touch(Key who);

 private:
  size_t limit_;
  uint64_t clock_ = 0;
  struct Entry {
    size_t bytes = 0;
    uint64_t used = 0;
  };
  std::map<Key, Entry> entries_;
};

}  // namespace gemmlab
