// The bounded LRU behind the CUDA backend's per-graph caches (tessera/core/lru_cache.hpp), checked on
// the CPU: which entry goes at capacity, that a held entry outlives its eviction, and that concurrent
// first calls for one key make one entry. Entries log their key when freed, so eviction order and
// lifetime are observed rather than inferred from size().
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tessera/core/lru_cache.hpp"

using namespace tessera;

namespace {

struct Logged {
  int key;
  std::vector<int>* freed;
  Logged(int k, std::vector<int>* f) : key(k), freed(f) {}
  Logged(const Logged&) = delete;
  Logged& operator=(const Logged&) = delete;
  ~Logged() { freed->push_back(key); }
};

using Cache = LruCache<int, Logged>;

// Makes `key`'s entry through get_or_make; returns whether it was made.
bool touch(Cache& c, int key, std::vector<int>& freed) {
  bool made = false;
  auto e = c.get_or_make(key, [&] { return std::make_shared<Logged>(key, &freed); }, &made);
  EXPECT_EQ(e->key, key);
  return made;
}

}  // namespace

TEST(LruCache, EvictsLeastRecentlyMadeAtCapacity) {
  std::vector<int> freed;
  Cache c(3);
  for (int k = 1; k <= 5; ++k) EXPECT_TRUE(touch(c, k, freed));
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(freed, (std::vector<int>{1, 2}));
  EXPECT_EQ(c.find(1), nullptr);
  EXPECT_EQ(c.find(2), nullptr);
  for (int k = 3; k <= 5; ++k) EXPECT_NE(c.find(k), nullptr) << k;
}

TEST(LruCache, HitMovesToFront) {
  std::vector<int> freed;
  Cache c(3);
  for (int k = 1; k <= 3; ++k) touch(c, k, freed);
  EXPECT_FALSE(touch(c, 1, freed));  // 1, 3, 2
  touch(c, 4, freed);                // evicts 2, not 1
  EXPECT_EQ(freed, (std::vector<int>{2}));
  ASSERT_NE(c.find(3), nullptr);     // 3, 4, 1
  touch(c, 5, freed);                // evicts 1: find() counts as a use too
  EXPECT_EQ(freed, (std::vector<int>{2, 1}));
}

TEST(LruCache, ShrinkingCapacityEvictsLeastRecentlyUsed) {
  std::vector<int> freed;
  Cache c(4);
  for (int k = 1; k <= 4; ++k) touch(c, k, freed);
  ASSERT_NE(c.find(1), nullptr);  // 1, 4, 3, 2
  c.set_capacity(2);
  EXPECT_EQ(c.capacity(), 2u);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(freed, (std::vector<int>{2, 3}));
  EXPECT_NE(c.find(1), nullptr);
  EXPECT_NE(c.find(4), nullptr);
  c.set_capacity(3);  // growing evicts nothing and keeps room for one more
  touch(c, 5, freed);
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(freed.size(), 2u);
}

TEST(LruCache, ClearFreesEntriesAndForgetsKeys) {
  std::vector<int> freed;
  Cache c(8);
  for (int k = 1; k <= 3; ++k) touch(c, k, freed);
  c.clear();
  EXPECT_EQ(c.size(), 0u);
  EXPECT_EQ(freed.size(), 3u);
  EXPECT_EQ(c.find(2), nullptr);
  EXPECT_TRUE(touch(c, 2, freed));
  EXPECT_EQ(c.size(), 1u);
}

TEST(LruCache, HeldEntryOutlivesEvictionAndClear) {
  std::vector<int> freed;
  Cache c(1);
  auto held = c.get_or_make(1, [&] { return std::make_shared<Logged>(1, &freed); });
  touch(c, 2, freed);  // evicts 1 from the cache, not from its holder
  EXPECT_EQ(c.find(1), nullptr);
  EXPECT_TRUE(freed.empty());
  EXPECT_EQ(held->key, 1);
  auto held2 = c.find(2);
  c.clear();
  EXPECT_TRUE(freed.empty());
  EXPECT_EQ(held2->key, 2);
  held.reset();
  EXPECT_EQ(freed, (std::vector<int>{1}));
  held2.reset();
  EXPECT_EQ(freed, (std::vector<int>{1, 2}));
}

TEST(LruCache, FactoryRunsOncePerMissingKey) {
  std::vector<int> freed;
  Cache c(4);
  int calls = 0;
  auto get = [&](int k) {
    return c.get_or_make(k, [&] {
      ++calls;
      return std::make_shared<Logged>(k, &freed);
    });
  };
  auto a = get(1);
  EXPECT_EQ(get(1), a);
  EXPECT_EQ(get(1), a);
  auto b = get(2);
  EXPECT_EQ(get(2), b);
  EXPECT_NE(a, b);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(c.size(), 2u);
}

TEST(LruCache, ThrowingFactoryKeepsNothing) {
  std::vector<int> freed;
  Cache c(4);
  EXPECT_THROW(c.get_or_make(1, []() -> std::shared_ptr<Logged> { throw std::runtime_error("no memory"); }),
               std::runtime_error);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_TRUE(touch(c, 1, freed));
}

TEST(LruCache, PutReplacesTheKeysEntryAndCountsAsAUse) {
  std::vector<int> freed;
  Cache c(2);
  touch(c, 1, freed);
  touch(c, 2, freed);
  c.put(1, std::make_shared<Logged>(10, &freed));  // the old entry of 1 is freed, 1 is now the newest
  EXPECT_EQ(freed, (std::vector<int>{1}));
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.find(1)->key, 10);
  c.put(3, std::make_shared<Logged>(3, &freed));  // evicts 2
  EXPECT_EQ(freed, (std::vector<int>{1, 2}));
  EXPECT_EQ(c.find(3)->key, 3);
}

TEST(LruCache, ConcurrentFirstCallsMakeOneEntry) {
  constexpr int kThreads = 8;
  LruCache<int, int> c(4);
  std::atomic<int> calls{0}, ready{0};
  std::vector<std::shared_ptr<int>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();  // all ask at once
      got[size_t(t)] = c.get_or_make(7, [&] {
        calls.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a slow make widens the race
        return std::make_shared<int>(42);
      });
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(c.size(), 1u);
  for (const auto& g : got) {
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g, got[0]);
  }
}

TEST(LruCache, CapacityFromTheEnvironmentWhenPositive) {
  const char* var = "TESSERA_TEST_LRU_CAPACITY";
  unsetenv(var);
  EXPECT_EQ(env_capacity(var, 16), 16u);
  setenv(var, "5", 1);
  EXPECT_EQ(env_capacity(var, 16), 5u);
  for (const char* bad : {"0", "-3", "many", ""}) {
    setenv(var, bad, 1);
    EXPECT_EQ(env_capacity(var, 16), 16u) << "'" << bad << "'";
  }
  unsetenv(var);
}
