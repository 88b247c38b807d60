// Generators: determinism (seed, thread count), sanity of the degree distributions, and a printed
// timing for 10^7 edges.
#include <omp.h>

#include <chrono>
#include <ctime>
#include <string>
#include <cstdio>
#include <functional>
#include <set>

#include "support/testing.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/graph/stats.hpp"

namespace tessera {
namespace {

GraphStats stats_of(const Coo<int64_t>& c) {
  StatsOptions o;
  o.tiles = false;
  return graph_stats(build_csr(c).view(), o);
}

bool same(const Coo<int64_t>& a, const Coo<int64_t>& b) { return a.src == b.src && a.dst == b.dst && a.rows == b.rows; }

// Runs f with 1 thread and with the default count; both must give the same edge list.
template <class F>
void expect_thread_independent(F f) {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const Coo<int64_t> one = f();
  omp_set_num_threads(std::max(2, threads));
  const Coo<int64_t> many = f();
  omp_set_num_threads(threads);
  EXPECT_TRUE(same(one, many));
}

// Sizes are above the parallel threshold (2^15 items) so the OpenMP paths run.
TEST(Generators, DeterministicPerSeedAndThreadCount) {
  const uint64_t s = testing::seed();
  const std::vector<std::function<Coo<int64_t>(uint64_t)>> gens = {
      [](uint64_t seed) { return gen::erdos_renyi(50000, 8, seed); },
      [](uint64_t seed) { return gen::barabasi_albert(50000, 3, seed); },
      [](uint64_t seed) { return gen::rmat(14, 8, seed); },
      [](uint64_t seed) {
        gen::RmatOptions o;
        o.scale = 14;
        o.avg_degree = 8;
        o.noise = 0.1;
        o.scramble = true;
        o.seed = seed;
        return gen::rmat(o);
      },
      [](uint64_t seed) { return gen::watts_strogatz(70000, 6, 0.2, seed); },  // > one 2^16 chunk
      [](uint64_t seed) { return gen::clustered(50000, 7, 10, 0.9, seed); },
  };
  for (size_t i = 0; i < gens.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "generator " << i << " seed " << s);
    const Coo<int64_t> a = gens[i](s), b = gens[i](s), c = gens[i](s + 1);
    EXPECT_TRUE(same(a, b));
    EXPECT_FALSE(same(a, c)) << "another seed gave the same graph";
    expect_thread_independent([&] { return gens[i](s); });
  }
}

TEST(Generators, GridIsExactLattice) {
  const auto c = gen::grid2d(7, 5);
  const Csr<int64_t> g = build_csr(c);
  const GraphStats s = graph_stats(g.view());
  EXPECT_EQ(s.nodes, 35);
  EXPECT_EQ(s.edges, 2 * (7 * 4 + 6 * 5));
  EXPECT_EQ(s.degree_max, 4);
  EXPECT_EQ(s.degree_min, 2);  // corners
  EXPECT_TRUE(s.symmetric);
  EXPECT_EQ(s.self_loops, 0);
  EXPECT_EQ(c.nnz(), g.nnz());  // no duplicates generated
  // Node (r, c) = r * cols + c: node 6 = (1, 1) has neighbours 1, 5, 7, 11.
  EXPECT_EQ(std::vector<int64_t>(g.col.begin() + g.rowptr[6], g.col.begin() + g.rowptr[7]),
            (std::vector<int64_t>{1, 5, 7, 11}));
  EXPECT_EQ(build_csr(gen::grid2d(1, 1)).nnz(), 0);
}

TEST(Generators, DegreeDistributionsAreSane) {
  const uint64_t s = testing::seed();
  SCOPED_TRACE(::testing::Message() << "seed " << s);
  const GraphStats er = stats_of(gen::erdos_renyi(20000, 10, s));
  EXPECT_NEAR(er.degree_mean, 10, 0.1);  // few duplicates at this density
  EXPECT_TRUE(er.symmetric);
  EXPECT_EQ(er.self_loops, 0);
  EXPECT_LT(std::abs(er.degree_skewness), 1.0);  // Poisson(10): skewness ~0.32
  EXPECT_LT(er.degree_max, 40);

  const GraphStats rm = stats_of(gen::rmat(14, 16, s));
  EXPECT_GT(rm.degree_skewness, 3.0) << "R-MAT should be heavy-tailed";
  EXPECT_GT(double(rm.degree_max), 20 * rm.degree_mean);
  EXPECT_GT(rm.empty_rows, 0);

  const GraphStats ba = stats_of(gen::barabasi_albert(20000, 4, s));
  EXPECT_GT(ba.degree_skewness, 3.0) << "BA should be heavy-tailed";
  EXPECT_GE(ba.degree_min, 1);
  EXPECT_EQ(ba.empty_rows, 0);
  EXPECT_TRUE(ba.symmetric);
  EXPECT_NEAR(ba.degree_mean, 8, 0.5);

  const GraphStats ws = stats_of(gen::watts_strogatz(10000, 8, 0.1, s));
  EXPECT_GE(ws.degree_min, 8);  // the ring lattice is kept
  EXPECT_NEAR(ws.degree_mean, 8 * 1.1, 0.2);
  EXPECT_TRUE(ws.symmetric);
}

TEST(Generators, ClusteredKeepsEdgesInsideCommunities) {
  const uint64_t s = testing::seed();
  const int64_t n = 10000, k = 10;
  const auto c = gen::clustered(n, k, 12, 0.85, s);
  int64_t inside = 0;
  for (int64_t e = 0; e < c.nnz(); ++e) inside += (c.src[size_t(e)] * k / n) == (c.dst[size_t(e)] * k / n);
  // p_in of the edges are drawn inside; of the rest, 1/k fall inside by chance.
  EXPECT_NEAR(double(inside) / double(c.nnz()), 0.85 + 0.15 / k, 0.01) << "seed " << s;
}

TEST(Generators, BadParametersAreErrors) {
  EXPECT_THROW(gen::erdos_renyi(1, 1, 1), Error);
  EXPECT_THROW(gen::erdos_renyi(100, 200, 1), Error);
  EXPECT_THROW(gen::watts_strogatz(100, 3, 0.1, 1), Error);
  EXPECT_THROW(gen::watts_strogatz(100, 4, 1.5, 1), Error);
  EXPECT_THROW(gen::rmat(0, 4, 1), Error);
  EXPECT_THROW(gen::rmat(10, 4, 1, 0.5, 0.3, 0.3), Error);
  EXPECT_THROW(gen::grid2d(0, 4), Error);
  EXPECT_THROW(gen::clustered(100, 200, 4, 0.5, 1), Error);
  EXPECT_THROW(gen::barabasi_albert(100, 0, 1), Error);
}

// Prints wall and process CPU time (the machine may be shared, so wall time alone says little).
TEST(Generators, TimingTenMillionEdges) {
  using clock = std::chrono::steady_clock;
  struct Timer {
    clock::time_point wall = clock::now();
    std::clock_t cpu = std::clock();
    std::string lap() {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.3f s (cpu %.3f s)", std::chrono::duration<double>(clock::now() - wall).count(),
                    double(std::clock() - cpu) / CLOCKS_PER_SEC);
      wall = clock::now();
      cpu = std::clock();
      return buf;
    }
  } t;
  const auto c = gen::rmat(20, 10, 1);  // 2^20 nodes, ~10^7 edges
  const std::string gen_t = t.lap();
  const Csr<int64_t> g = build_csr(c);
  const std::string build_t = t.lap();
  ASSERT_EQ(c.nnz(), 10485760);
  EXPECT_GT(g.nnz(), 9000000);
  StatsOptions so;
  so.tiles = false;
  graph_stats(g.view(), so);
  const std::string stats_t = t.lap();
  const auto e = gen::erdos_renyi(1000000, 20, 1);
  const std::string er_t = t.lap();
  EXPECT_EQ(e.nnz(), 20000000);
  std::printf("[ timing ] %d threads: rmat 2^20 x 10 (%lld edges) generate %s, build_csr %s, stats %s; "
              "er 2 x 10^7 edges generate %s\n",
              omp_get_max_threads(), static_cast<long long>(c.nnz()), gen_t.c_str(), build_t.c_str(), stats_t.c_str(),
              er_t.c_str());
}

}  // namespace
}  // namespace tessera
