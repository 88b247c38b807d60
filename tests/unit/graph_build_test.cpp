// build_csr: hand-checked tiny cases, error messages, and randomized properties against a naive
// map-based oracle (sort, merge, symmetrize, self-loops).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <tuple>
#include <random>

#include "support/testing.hpp"
#include "tessera/core/error.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera {
namespace {

template <class I>
Coo<I> make_coo(int64_t n, std::vector<std::pair<int, int>> edges, std::vector<float> w = {}) {
  Coo<I> c;
  c.rows = c.cols = n;
  for (auto [s, d] : edges) {
    c.src.push_back(I(s));
    c.dst.push_back(I(d));
  }
  c.w = std::move(w);
  return c;
}

// Oracle: (row, col) -> summed weight (double) and multiplicity.
template <class I>
std::map<std::pair<int64_t, int64_t>, std::pair<double, int>> oracle(const Coo<I>& c, const BuildOptions& o) {
  std::map<std::pair<int64_t, int64_t>, std::pair<double, int>> m;
  auto add = [&](int64_t r, int64_t col, double w) {
    auto& e = m[{r, col}];
    e.first += w;
    e.second += 1;
  };
  for (int64_t k = 0; k < c.nnz(); ++k) {
    const int64_t s = c.src[size_t(k)], d = c.dst[size_t(k)];
    const double w = c.w.empty() ? 1.0 : c.w[size_t(k)];
    if (s == d && o.self_loops != SelfLoops::keep) continue;
    add(d, s, w);
    if (o.symmetrize && s != d) add(s, d, w);
  }
  if (o.self_loops == SelfLoops::add)
    for (int64_t i = 0; i < c.rows; ++i) add(i, i, o.self_loop_weight);
  return m;
}

template <class I>
void expect_matches_oracle(const Coo<I>& c, const BuildOptions& o, uint64_t seed) {
  const Csr<I> g = build_csr(c, o);
  validate(g.view());
  const auto want = oracle(c, o);
  int64_t expected_nnz = 0;
  for (auto& [key, v] : want) expected_nnz += o.deduplicate ? 1 : v.second;
  ASSERT_EQ(g.nnz(), expected_nnz) << "seed " << seed;
  auto it = want.begin();
  for (int64_t r = 0; r < g.rows; ++r) {
    for (int64_t p = g.rowptr[size_t(r)]; p < g.rowptr[size_t(r) + 1]; ++p) {
      if (p > g.rowptr[size_t(r)]) {
        ASSERT_LE(g.col[size_t(p - 1)], g.col[size_t(p)]) << "row " << r << " unsorted";
      }
      ASSERT_NE(it, want.end());
      ASSERT_EQ(it->first, std::make_pair(r, int64_t(g.col[size_t(p)]))) << "seed " << seed;
      if (o.deduplicate) {
        if (g.weighted()) {
          EXPECT_NEAR(g.values[size_t(p)], it->second.first, 1e-4 * (1 + std::abs(it->second.first)));
        }
        ++it;
      } else if (p + 1 == g.rowptr[size_t(r) + 1] || g.col[size_t(p + 1)] != g.col[size_t(p)]) {
        ++it;
      }
    }
  }
  EXPECT_EQ(it, want.end());
}

template <class I>
class BuildCsrTest : public ::testing::Test {};
using IndexTypes = ::testing::Types<int32_t, int64_t>;
TYPED_TEST_SUITE(BuildCsrTest, IndexTypes);

TYPED_TEST(BuildCsrTest, TinyHandChecked) {
  using I = TypeParam;
  // Edges 2->0, 1->0, 0->1, 2->0 (duplicate), 3 nodes: row 0 = {1, 2}, row 1 = {0}, row 2 = {}.
  const auto c = make_coo<I>(3, {{2, 0}, {1, 0}, {0, 1}, {2, 0}}, {1.f, 2.f, 3.f, 4.f});
  const Csr<I> g = build_csr(c);
  EXPECT_EQ(g.rowptr, (std::vector<I>{0, 2, 3, 3}));
  EXPECT_EQ(g.col, (std::vector<I>{1, 2, 0}));
  EXPECT_EQ(g.values, (std::vector<float>{2.f, 5.f, 3.f}));  // 1 + 4 merged
  BuildOptions keep_dups;
  keep_dups.deduplicate = false;
  const Csr<I> d = build_csr(c, keep_dups);
  EXPECT_EQ(d.col, (std::vector<I>{1, 2, 2, 0}));
  EXPECT_EQ(d.values, (std::vector<float>{2.f, 1.f, 4.f, 3.f}));  // duplicates ordered by weight
}

TYPED_TEST(BuildCsrTest, SymmetrizeAndSelfLoops) {
  using I = TypeParam;
  const auto c = make_coo<I>(3, {{0, 1}, {1, 1}, {1, 2}});
  BuildOptions o;
  o.symmetrize = true;
  Csr<I> g = build_csr(c, o);
  EXPECT_EQ(g.rowptr, (std::vector<I>{0, 1, 4, 5}));
  EXPECT_EQ(g.col, (std::vector<I>{1, 0, 1, 2, 1}));  // the loop 1->1 is not doubled
  EXPECT_FALSE(g.weighted());
  o.self_loops = SelfLoops::remove;
  g = build_csr(c, o);
  EXPECT_EQ(g.col, (std::vector<I>{1, 0, 2, 1}));
  o.self_loops = SelfLoops::add;
  o.self_loop_weight = 0.5f;
  g = build_csr(c, o);
  EXPECT_EQ(g.col, (std::vector<I>{0, 1, 0, 1, 2, 1, 2}));
  EXPECT_EQ(g.values, (std::vector<float>{0.5f, 1, 1, 0.5f, 1, 1, 0.5f}));
}

TYPED_TEST(BuildCsrTest, ErrorsNameTheEdge) {
  using I = TypeParam;
  auto c = make_coo<I>(4, {{0, 1}, {2, 3}, {5, 1}, {1, 9}});
  try {
    build_csr(c);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "edge 2: source 5 out of range [0, 4)");
  }
  c.src[2] = 0;
  EXPECT_THROW(
      try { build_csr(c); } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "edge 3: target 9 out of range [0, 4)");
        throw;
      },
      Error);
  c.dst[3] = 0;
  c.src[1] = I(-1);
  EXPECT_THROW(build_csr(c), Error);
  c.src[1] = 2;
  c.w = {1, 1, std::nanf(""), 1};
  try {
    build_csr(c);
    FAIL() << "NaN accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("edge 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("NaN"), std::string::npos) << e.what();
  }
  c.w = {1, 2};
  EXPECT_THROW(build_csr(c), Error);  // weight count mismatch
  Coo<I> rect = make_coo<I>(4, {{0, 1}});
  rect.cols = 5;
  BuildOptions sym;
  sym.symmetrize = true;
  EXPECT_THROW(build_csr(rect, sym), Error);
}

TYPED_TEST(BuildCsrTest, RandomMatchesOracleForAllOptions) {
  using I = TypeParam;
  for (int trial = 0; trial < 12; ++trial) {
    const uint64_t s = testing::seed(uint64_t(trial));
    testing::NastyOptions no;
    no.rows = no.cols = 50 + int64_t(s % 300);
    no.huge_row_degree = trial % 3 == 0 ? 400 : 0;
    no.weighted = trial % 2 == 0;
    Coo<I> c = testing::nasty_coo<I>(no, s);
    for (int64_t k = 0; k < c.nnz(); k += 11) c.src[size_t(k)] = c.dst[size_t(k)];  // some self-loops
    BuildOptions o;
    o.symmetrize = trial % 4 >= 2;
    o.deduplicate = trial % 5 != 1;
    o.self_loops = SelfLoops(trial % 3);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " seed " << s);
    expect_matches_oracle(c, o, s);
  }
}

TYPED_TEST(BuildCsrTest, ShuffledInputAndThreadCountGiveIdenticalGraph) {
  using I = TypeParam;
  const uint64_t s = testing::seed();
  testing::NastyOptions no;
  no.rows = no.cols = 7777;  // ~10^5 edges: above the parallel threshold
  no.huge_row_degree = 3000;
  Coo<I> c = testing::nasty_coo<I>(no, s);
  BuildOptions o;
  o.symmetrize = true;
  const Csr<I> a = build_csr(c, o);
  // Sorted edge list (by target, then source, then weight).
  std::vector<size_t> perm(size_t(c.nnz()));
  std::iota(perm.begin(), perm.end(), size_t(0));
  std::sort(perm.begin(), perm.end(), [&](size_t x, size_t y) {
    return std::tie(c.dst[x], c.src[x], c.w[x]) < std::tie(c.dst[y], c.src[y], c.w[y]);
  });
  Coo<I> sorted = c;
  for (size_t i = 0; i < perm.size(); ++i) {
    sorted.src[i] = c.src[perm[i]];
    sorted.dst[i] = c.dst[perm[i]];
    sorted.w[i] = c.w[perm[i]];
  }
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const Csr<I> b = build_csr(sorted, o);
  omp_set_num_threads(threads);
  EXPECT_EQ(a.rowptr, b.rowptr) << "seed " << s;
  EXPECT_EQ(a.col, b.col) << "seed " << s;
  EXPECT_EQ(a.values, b.values) << "seed " << s << " (bitwise: sums must not depend on order)";
}

TEST(BuildCsr, EmptyAndNodeOnlyGraphs) {
  Coo<int32_t> c;
  c.rows = c.cols = 5;
  const Csr<int32_t> g = build_csr(c);
  EXPECT_EQ(g.rowptr, std::vector<int32_t>(6, 0));
  EXPECT_EQ(g.nnz(), 0);
  Coo<int64_t> none;
  EXPECT_EQ(build_csr(none).rowptr.size(), 1u);
}

TEST(BuildCsr, Int32SizeOverflowIsAnError) {
  // 2^31 nodes do not fit int32 indices: rejected before anything is allocated.
  Coo<int32_t> c;
  c.rows = c.cols = int64_t(std::numeric_limits<int32_t>::max()) + 1;
  EXPECT_THROW(build_csr(c), Error);
}

}  // namespace
}  // namespace tessera
