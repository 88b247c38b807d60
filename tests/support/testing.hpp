#pragma once
// Shared test helpers: fresh seeded randomness, nasty graphs, data-set and GPU skips.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <algorithm>
#include <random>
#include <vector>
#include <string>

#include "tessera/core/device.hpp"
#include "tessera/core/error.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera::testing {

// Fresh per run (printed by test_main) unless TESSERA_TEST_SEED fixes it.
inline uint64_t seed_base() {
  static const uint64_t s = [] {
    if (const char* e = std::getenv("TESSERA_TEST_SEED")) return uint64_t(std::strtoull(e, nullptr, 10));
    return uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  return s;
}
// A seed per test case and salt; failing messages should print it.
inline uint64_t seed(uint64_t salt = 0) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  uint64_t h = seed_base() ^ (salt * 0x9E3779B97F4A7C15ull);
  if (info)
    for (const char* p = info->name(); *p; ++p) h = (h ^ uint64_t(*p)) * 0x100000001B3ull;
  return h;
}

// TESSERA_TEST_SMALL=1 (set by scripts/gpu_session.sh under compute-sanitizer, which runs kernels
// 10-100x slower): the big conformance sweeps cover fewer widths and dtypes, same graph cases.
inline bool small_run() {
  const char* e = std::getenv("TESSERA_TEST_SMALL");
  return e && *e && std::string(e) != "0";
}

inline std::string shared_data_dir() {
  if (const char* e = std::getenv("TESSERA_SHARED_DATA")) return e;
#ifdef TESSERA_SHARED_DATA
  return TESSERA_SHARED_DATA;
#else
  return "../shared/data";
#endif
}
inline std::string shared_data(const std::string& rel) { return shared_data_dir() + "/" + rel; }

// Random graph with the nasty cases the operators must survive: empty rows, one huge row,
// duplicate and unsorted edges, sizes that are not multiples of a warp or a tile.
struct NastyOptions {
  int64_t rows = 1000, cols = 1000;
  double avg_degree = 8;
  int64_t huge_row_degree = 0;    // > 0: row 1 gets this many in-edges
  double empty_row_share = 0.1;
  bool duplicates = true;
  bool weighted = true;
};
template <class I>
Coo<I> nasty_coo(const NastyOptions& o, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Coo<I> coo;
  coo.rows = o.rows;
  coo.cols = o.cols;
  std::uniform_int_distribution<int64_t> col(0, o.cols - 1);
  std::uniform_real_distribution<float> w(0.1f, 2.0f);
  std::bernoulli_distribution empty(o.empty_row_share);
  std::poisson_distribution<int> deg(o.avg_degree);
  auto add = [&](int64_t r, int64_t c) {
    coo.dst.push_back(I(r));
    coo.src.push_back(I(c));
    if (o.weighted) coo.w.push_back(w(rng));
  };
  for (int64_t r = 0; r < o.rows; ++r) {
    if (empty(rng)) continue;
    const int d = (r == 1 && o.huge_row_degree > 0) ? int(o.huge_row_degree) : deg(rng);
    for (int k = 0; k < d; ++k) {
      const int64_t c = col(rng);
      add(r, c);
      if (o.duplicates && k % 7 == 3) add(r, c);
    }
  }
  // Unsorted order: shuffle the edge list.
  std::vector<size_t> perm(coo.src.size());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  Coo<I> out = coo;
  for (size_t i = 0; i < perm.size(); ++i) {
    out.src[i] = coo.src[perm[i]];
    out.dst[i] = coo.dst[perm[i]];
    if (o.weighted) out.w[i] = coo.w[perm[i]];
  }
  return out;
}

// Runs call and expects a tessera::Error whose message contains `says` (the refusals' tests: the
// error must name what is wrong).
template <class F>
void expect_error_saying(F&& call, const std::string& says) {
  try {
    call();
    ADD_FAILURE() << "accepted; expected an error saying '" << says << "'";
  } catch (const ::tessera::Error& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
  }
}

}  // namespace tessera::testing

// Skips (with a message) when ../shared/data is absent.
#define TESSERA_REQUIRE_SHARED(rel)                                                      \
  do {                                                                                   \
    if (!std::filesystem::exists(::tessera::testing::shared_data(rel)))                  \
      GTEST_SKIP() << "shared data set " << (rel) << " not found under "                 \
                   << ::tessera::testing::shared_data_dir() << " (set TESSERA_SHARED_DATA)"; \
  } while (0)

// Skips (with a message) on machines without a CUDA device. GPU tests are named *Cuda* so the
// GPU script can select them with --gtest_filter.
#define TESSERA_REQUIRE_CUDA()                                                           \
  do {                                                                                   \
    if (!::tessera::cuda_available())                                                    \
      GTEST_SKIP() << "no CUDA device on this machine: GPU test skipped (run scripts/gpu_session.sh on the GPU machine)"; \
  } while (0)
