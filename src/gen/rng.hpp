#pragma once
// Counter-based randomness for the generators: value i of a stream is a pure function of
// (seed, stream, i), so every edge can be drawn independently by any thread and the graph is the
// same for every thread count and machine. The mixer is splitmix64 (Steele, Lea & Flood 2014),
// whose output over consecutive counters passes BigCrush.
#include <cmath>
#include <cstdint>
#include <numbers>

namespace tessera::gen::detail {

// Below this many items an OpenMP region costs more than it saves.
inline bool parallel_worth(int64_t items) { return items >= (int64_t(1) << 15); }

inline uint64_t splitmix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class Stream {
 public:
  Stream(uint64_t seed, uint64_t stream) : key_(splitmix64(splitmix64(seed + 0x9E3779B97F4A7C15ull) ^ stream)) {}
  uint64_t bits(uint64_t i) const { return splitmix64(key_ + (i + 1) * 0x9E3779B97F4A7C15ull); }
  // Uniform in [0, 1) with 53 random bits.
  double uniform(uint64_t i) const { return double(bits(i) >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n) (Lemire's multiply-shift; bias < n / 2^64, negligible).
  int64_t below(uint64_t i, int64_t n) const {
    return int64_t((unsigned __int128)bits(i) * (unsigned __int128)uint64_t(n) >> 64);
  }
  // Standard normal from two counters (Box-Muller).
  double normal(uint64_t i) const {
    const double u1 = 1.0 - uniform(2 * i), u2 = uniform(2 * i + 1);  // u1 in (0, 1]
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  uint64_t key_;
};

// Streams used by the generators; distinct so that e.g. sources and targets are independent.
enum StreamId : uint64_t { kEdges = 1, kShortcuts, kNoise, kScramble, kClasses, kFeatures, kMeans, kSplit };

}  // namespace tessera::gen::detail
