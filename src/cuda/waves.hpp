#pragma once
// The machine's waves of CTAs: how full a grid's waves are, and how to cut a reduction over rows
// into slices so that they come out full. Plain host functions (no CUDA), so
// tests/conformance/linear_test.cpp checks them on the CPU.
#include <algorithm>
#include <cstdint>

namespace tessera::cuda {

// Waves in which `ctas` CTAs run when `slots` of them are resident at once.
inline int64_t waves_of(int64_t ctas, int64_t slots) { return (ctas + slots - 1) / slots; }

// How full those waves are on average (1: every wave full; a short last wave lowers it).
inline double wave_fill(int64_t ctas, int64_t slots) {
  return double(ctas) / double(waves_of(ctas, slots) * slots);
}

// The number of row slices for `tiles` output tiles, each CTA (slice, tile) summing its slice,
// with `slots` CTAs resident at once and at most `max_splits` slices (each must stay long enough
// to pay for its partial tile). splits x tiles CTAs run in ceil(splits x tiles / slots) waves of
// rows / splits rows each, so the time goes as waves / splits. The candidates are the largest
// split counts that fill 1, 2 or 3 waves; a later one must be 5% cheaper to win, since more
// slices mean more partial tiles to write and sum.
//
// Why not ceil(slots / tiles): one CTA past a full wave costs a whole second wave. On the H200
// (132 SMs), 24 tiles x 6 slices ran 144 CTAs in two waves and the PubMed q/k/v weight gradient
// (19717 x 3072 <- 128) took 398 us, the same as cuBLAS (bench/results/h200_20261203g); 11 slices
// fill two waves exactly: 226 us (bench/results/h200_20261204).
inline int64_t full_wave_splits(int64_t tiles, int64_t slots, int64_t max_splits) {
  tiles = std::max<int64_t>(tiles, 1);
  slots = std::max<int64_t>(slots, 1);
  max_splits = std::max<int64_t>(max_splits, 1);
  int64_t best = 0;
  double best_cost = 0;
  for (int64_t waves = 1; waves <= 3; ++waves) {
    const int64_t s = std::min(max_splits, std::max<int64_t>(1, waves * slots / tiles));
    const double cost = double(waves_of(s * tiles, slots)) / double(s);
    if (best == 0 || cost < 0.95 * best_cost) {
      best = s;
      best_cost = cost;
    }
  }
  return best;
}

}  // namespace tessera::cuda
