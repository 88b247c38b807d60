#pragma once
// Software prefetch for the CPU walks that gather whole neighbour rows in random order: each
// gather stalls on its first cache miss, and the hardware prefetchers cannot guess the next
// row. Asking for the row of the entry a few positions on (into the next rows at a row's end)
// hides most of that latency.
#include <cstdint>

namespace tessera::ops::cpu {

inline void prefetch_row(const void* p, int64_t bytes) {
  for (int64_t o = 0; o < bytes; o += 64) __builtin_prefetch(static_cast<const char*>(p) + o);
}

}  // namespace tessera::ops::cpu
