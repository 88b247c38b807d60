#pragma once
// Software prefetch for the CPU walks that gather whole neighbour rows in random order: each
// gather stalls on its first cache miss, and the hardware prefetchers cannot guess the next
// row. Asking for the row of the entry a few positions on (into the next rows at a row's end)
// hides most of that latency.
#include <cstdint>

namespace tessera::ops::cpu {

// Entries ahead for walks with little work per entry (one multiply-add or compare per feature:
// SpMM, segment reduce). R-MAT 2^16 x 128 f32, 2 threads, best SpMM of 40 for 0 / 2 / 4 / 8 ahead:
// 26.2 / 16.7 / 15.1 / 16.2 ms. The attention walks, with more work per entry, use their own.
constexpr int64_t kGatherAhead = 4;

inline void prefetch_row(const void* p, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(static_cast<const char*>(p) + o);
}

}  // namespace tessera::ops::cpu
