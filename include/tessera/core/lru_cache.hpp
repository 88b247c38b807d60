#pragma once
// A bounded, thread-safe LRU of shared entries: the per-graph caches of the CUDA backend (attention
// schedules, SpMM row plans, cuSPARSE descriptors, WSB uploads) are each this with their own key
// and capacity.
//
// Entries are held as std::shared_ptr<Value>: an entry in use (a launch in flight, its own lock held)
// may be evicted or cleared by another thread and lives on through its holder, freed with the last
// one. Evicted entries are released under the cache's lock; clear() releases its entries after
// letting go of it (freeing a cache's device memory synchronizes, and other callers need not wait
// for that). Keys are compared with == and found by a linear scan: a few dozen entries at most, and
// the keys (streams, enums) need no hash or order.
#include <cstddef>
#include <cstdlib>
#include <list>
#include <memory>
#include <mutex>
#include <utility>

namespace tessera {

// A cache's capacity from the environment variable `var` when it holds a positive integer, else
// `fallback` (TESSERA_CUSPARSE_CACHE_ENTRIES, TESSERA_WSB_CACHE).
inline size_t env_capacity(const char* var, size_t fallback) {
  const char* e = std::getenv(var);
  const long long v = e ? std::strtoll(e, nullptr, 10) : 0;
  return v > 0 ? size_t(v) : fallback;
}

template <class Key, class Value>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity) {}
  LruCache(const LruCache&) = delete;
  LruCache& operator=(const LruCache&) = delete;

  // The entry of `key`, now the most recently used; nullptr where there is none.
  std::shared_ptr<Value> find(const Key& key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = find_locked(key);
    return it == lru_.end() ? nullptr : it->second;
  }

  // The entry of `key`; where there is none, the std::shared_ptr<Value> that `make()` returns, kept
  // as the most recently used. `make` runs under the cache's lock, so concurrent first calls for one
  // key make one entry (and a throwing `make` keeps nothing). `made`, when given, says which it was.
  template <class Make>
  std::shared_ptr<Value> get_or_make(const Key& key, Make&& make, bool* made = nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = find_locked(key);
    if (made) *made = it == lru_.end();
    if (it != lru_.end()) return it->second;
    std::shared_ptr<Value> entry = std::forward<Make>(make)();
    lru_.emplace_front(key, entry);
    trim_locked();
    return entry;
  }

  // Keeps `value` as the entry of `key` (replacing the one it had), the most recently used: for
  // entries too slow to make under the lock, made after a find() missed.
  void put(const Key& key, std::shared_ptr<Value> value) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = find_locked(key);
    if (it != lru_.end()) {
      it->second = std::move(value);
      return;
    }
    lru_.emplace_front(key, std::move(value));
    trim_locked();
  }

  void clear() {
    Entries dead;
    {
      std::lock_guard<std::mutex> lock(mu_);
      dead.swap(lru_);
    }
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lru_.size();
  }
  size_t capacity() const {
    std::lock_guard<std::mutex> lock(mu_);
    return capacity_;
  }
  // Evicts the least recently used entries beyond `n` now.
  void set_capacity(size_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    capacity_ = n;
    trim_locked();
  }

 private:
  using Entries = std::list<std::pair<Key, std::shared_ptr<Value>>>;  // most recently used first

  // The entry of `key` moved to the front (splice keeps the iterator valid), or end().
  typename Entries::iterator find_locked(const Key& key) {
    for (auto it = lru_.begin(); it != lru_.end(); ++it)
      if (it->first == key) {
        lru_.splice(lru_.begin(), lru_, it);
        return it;
      }
    return lru_.end();
  }
  void trim_locked() {
    while (lru_.size() > capacity_) lru_.pop_back();
  }

  mutable std::mutex mu_;
  size_t capacity_;
  Entries lru_;
};

}  // namespace tessera
