// The CPU output memory of the ops (src/torch/outputs.hpp): freed blocks are reused for outputs
// of the same size, bounded by the cache's cap, least recently freed evicted first.
#include <torch/torch.h>

#include <cstdlib>
#include <vector>

#include "support/testing.hpp"
#include "torch/outputs.hpp"

namespace tessera {
namespace {

constexpr size_t kMiB = size_t(1) << 20;

void* block(size_t len) { return std::aligned_alloc(2 * kMiB, len); }

TEST(OutputCache, ReusesExactLengthsMostRecentFirstAndEvictsTheOldestPastTheCap) {
  pt::OutputCache c(10 * kMiB);
  void* a = block(4 * kMiB);
  void* b = block(4 * kMiB);
  void* d = block(2 * kMiB);
  c.give(a, 4 * kMiB);
  c.give(b, 4 * kMiB);
  EXPECT_EQ(c.cached_bytes(), 8 * kMiB);
  EXPECT_EQ(c.take(6 * kMiB), nullptr);  // no block of that length
  EXPECT_EQ(c.take(4 * kMiB), b);        // the most recently freed
  c.give(b, 4 * kMiB);
  c.give(d, 2 * kMiB);                   // 10 MiB: at the cap
  EXPECT_EQ(c.cached_bytes(), 10 * kMiB);
  void* e = block(4 * kMiB);
  c.give(e, 4 * kMiB);                   // 14 > 10: the oldest (a) goes
  EXPECT_EQ(c.cached_bytes(), 10 * kMiB);
  EXPECT_EQ(c.take(4 * kMiB), e);
  EXPECT_EQ(c.take(4 * kMiB), b);
  EXPECT_EQ(c.take(4 * kMiB), nullptr);
  EXPECT_EQ(c.take(2 * kMiB), d);
  EXPECT_EQ(c.cached_bytes(), 0u);
  for (void* p : {b, d, e}) std::free(p);
  c.give(block(12 * kMiB), 12 * kMiB);  // larger than the cap: freed, not kept
  EXPECT_EQ(c.cached_bytes(), 0u);
  c.give(block(2 * kMiB), 2 * kMiB);
  EXPECT_EQ(c.release(), 2 * kMiB);
  EXPECT_EQ(c.cached_bytes(), 0u);
}

TEST(OutputCache, DisabledWithACapOfZero) {
  pt::OutputCache c(0);
  c.give(block(2 * kMiB), 2 * kMiB);
  EXPECT_EQ(c.cached_bytes(), 0u);
  EXPECT_EQ(c.take(2 * kMiB), nullptr);
}

// The ops' outputs: a large CPU output freed and asked for again (same size) comes back on the
// same block, 2 MB-aligned; another size gets another block; the values written are the caller's.
TEST(OutputCache, LargeOutputsReuseTheirBlocks) {
  if (pt::huge_output_min_bytes() > int64_t(4 * kMiB)) GTEST_SKIP() << "TESSERA_CPU_HUGE_OUTPUTS=0";
  if (pt::OutputCache::cap_from_env() == 0) GTEST_SKIP() << "TESSERA_CPU_OUTPUT_CACHE_MB=0";
  const auto opts = torch::TensorOptions().dtype(torch::kFloat32);
  void* first = nullptr;
  {
    auto t = pt::empty_output({1024, 2048}, opts);  // 8 MiB
    first = t.data_ptr();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % (2 * kMiB), 0u);
    t.fill_(3.0f);
  }
  auto u = pt::empty_output({2048, 1024}, opts);  // same bytes
  EXPECT_EQ(u.data_ptr(), first);
  auto v = pt::empty_output({1024, 2048}, opts);  // the block is taken: a new one
  EXPECT_NE(v.data_ptr(), first);
  auto w = pt::empty_output({3000, 1024}, opts);  // another length
  EXPECT_NE(w.data_ptr(), first);
  u.fill_(1.0f);
  EXPECT_EQ(u.sum().item<double>(), double(2048 * 1024));
  const size_t before = pt::output_cache().cached_bytes();
  u = torch::Tensor();
  EXPECT_EQ(pt::output_cache().cached_bytes(), before + 8 * kMiB);
  EXPECT_GE(pt::output_cache().release(), 8 * kMiB);
  EXPECT_EQ(pt::output_cache().cached_bytes(), 0u);
}

}  // namespace
}  // namespace tessera
