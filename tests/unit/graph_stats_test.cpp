// graph_stats and tile_stats on tiny graphs computed by hand, plus JSON/text output.
#include <cmath>
#include <nlohmann/json.hpp>

#include "support/testing.hpp"
#include "tessera/graph/stats.hpp"

namespace tessera {
namespace {

Csr<int32_t> from_edges(int64_t n, std::vector<std::pair<int, int>> e, bool symmetrize = false) {
  Coo<int32_t> c;
  c.rows = c.cols = n;
  for (auto [s, d] : e) {
    c.src.push_back(s);
    c.dst.push_back(d);
  }
  BuildOptions o;
  o.symmetrize = symmetrize;
  return build_csr(c, o);
}

TEST(GraphStats, StarByHand) {
  // Star: centre 0 with leaves 1, 2, 3, and an isolated node 4.
  const Csr<int32_t> g = from_edges(5, {{0, 1}, {0, 2}, {0, 3}}, true);
  const GraphStats s = graph_stats(g.view());
  EXPECT_EQ(s.nodes, 5);
  EXPECT_EQ(s.edges, 6);
  EXPECT_EQ(s.degree_min, 0);
  EXPECT_EQ(s.degree_max, 3);
  EXPECT_EQ(s.empty_rows, 1);
  EXPECT_EQ(s.self_loops, 0);
  EXPECT_TRUE(s.symmetric);
  EXPECT_FALSE(s.weighted);
  // Degrees 3,1,1,1,0: mean 1.2; deviations 1.8,-.2,-.2,-.2,-1.2
  // m2 = (3.24 + 3*0.04 + 1.44)/5 = 0.96; m3 = (5.832 - 3*0.008 - 1.728)/5 = 0.816.
  EXPECT_DOUBLE_EQ(s.degree_mean, 1.2);
  EXPECT_NEAR(s.degree_std, std::sqrt(0.96), 1e-12);
  EXPECT_NEAR(s.degree_skewness, 0.816 / std::pow(0.96, 1.5), 1e-12);
  EXPECT_DOUBLE_EQ(s.density, 6.0 / 25.0);
}

TEST(GraphStats, DirectedLoopsAndRegular) {
  const Csr<int32_t> g = from_edges(3, {{0, 1}, {1, 2}, {2, 0}, {1, 1}});
  const GraphStats s = graph_stats(g.view());
  EXPECT_FALSE(s.symmetric);
  EXPECT_EQ(s.self_loops, 1);
  const Csr<int32_t> cycle = from_edges(4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}}, true);
  const GraphStats c = graph_stats(cycle.view());
  EXPECT_TRUE(c.symmetric);
  EXPECT_EQ(c.degree_std, 0.0);
  EXPECT_EQ(c.degree_skewness, 0.0);  // regular: no spread, skewness defined as 0
}

TEST(GraphStats, TilesByHand) {
  // 20 x 20 with entries (row, col) = (0,0), (1,1), (0,9), (17,3), (19,19); edge src -> dst is (dst, src).
  const Csr<int64_t> g = [] {
    Coo<int64_t> c;
    c.rows = c.cols = 20;
    for (auto [r, col] : std::vector<std::pair<int, int>>{{0, 0}, {1, 1}, {0, 9}, {17, 3}, {19, 19}}) {
      c.dst.push_back(r);
      c.src.push_back(col);
    }
    return build_csr(c);
  }();
  // 16x8: 2 bands x 3 blocks = 6 tiles; occupied (0,0) (0,1) (1,0) (1,2).
  const TileStats t16 = tile_stats(g.view(), 16, 8);
  EXPECT_EQ(t16.nonempty, 4);
  EXPECT_DOUBLE_EQ(t16.share_nonempty, 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(t16.mean_fill, 5.0 / (4 * 128));
  // 8x8: 3 bands x 3 blocks = 9 tiles; occupied (0,0) (0,1) (2,0) (2,2).
  const GraphStats s = graph_stats(g.view());
  EXPECT_EQ(s.tiles_8x8.nonempty, 4);
  EXPECT_DOUBLE_EQ(s.tiles_8x8.share_nonempty, 4.0 / 9.0);
  EXPECT_DOUBLE_EQ(s.tiles_8x8.mean_fill, 5.0 / (4 * 64));
  EXPECT_EQ(s.tiles_16x8.nonempty, t16.nonempty);
  StatsOptions no_tiles;
  no_tiles.tiles = false;
  EXPECT_EQ(graph_stats(g.view(), no_tiles).tiles_8x8.tile_rows, 0);
  EXPECT_THROW(tile_stats(g.view(), 0, 8), Error);
}

TEST(GraphStats, RandomTileCountsMatchBruteForce) {
  const uint64_t seed = testing::seed();
  testing::NastyOptions no;
  no.rows = 301;
  no.cols = 157;
  no.huge_row_degree = 150;
  const Csr<int32_t> g = build_csr(testing::nasty_coo<int32_t>(no, seed));
  std::vector<char> occupied(size_t((301 + 15) / 16) * size_t((157 + 7) / 8), 0);
  for (int64_t r = 0; r < g.rows; ++r)
    for (int p = g.rowptr[size_t(r)]; p < g.rowptr[size_t(r) + 1]; ++p)
      occupied[size_t(r / 16) * size_t((157 + 7) / 8) + size_t(g.col[size_t(p)] / 8)] = 1;
  const int64_t want = std::count(occupied.begin(), occupied.end(), 1);
  const TileStats t = tile_stats(g.view(), 16, 8);
  EXPECT_EQ(t.nonempty, want) << "seed " << seed;
  EXPECT_DOUBLE_EQ(t.share_nonempty, double(want) / double(occupied.size()));
}

TEST(GraphStats, SymmetryWithUnsortedRowsAndRandomGraphs) {
  // Unsorted rows take the transpose path: 0 <-> 1, 0 <-> 2 with row 0 = {2, 1}.
  Csr<int32_t> g;
  g.rows = g.cols = 3;
  g.rowptr = {0, 2, 3, 4};
  g.col = {2, 1, 0, 0};
  EXPECT_TRUE(graph_stats(g.view()).symmetric);
  g.col = {2, 1, 0, 1};  // 2 -> 1 without 1 -> 2
  EXPECT_FALSE(graph_stats(g.view()).symmetric);
  // Random graphs: symmetrized is symmetric; removing one entry breaks it (sorted-row path).
  const uint64_t seed = testing::seed();
  testing::NastyOptions no;
  no.rows = no.cols = 5000;
  BuildOptions sym;
  sym.symmetrize = true;
  Csr<int32_t> s = build_csr(testing::nasty_coo<int32_t>(no, seed), sym);
  EXPECT_TRUE(graph_stats(s.view()).symmetric) << "seed " << seed;
  Coo<int32_t> c = to_coo(s.view());
  size_t k = size_t(seed % uint64_t(c.nnz()));
  while (c.src[k] == c.dst[k]) k = (k + 1) % c.src.size();
  c.src.erase(c.src.begin() + long(k));
  c.dst.erase(c.dst.begin() + long(k));
  c.w.erase(c.w.begin() + long(k));
  EXPECT_FALSE(graph_stats(build_csr(c).view()).symmetric) << "seed " << seed;
}

TEST(GraphStats, TextAndJson) {
  const Csr<int32_t> g = from_edges(5, {{0, 1}, {0, 2}, {0, 3}}, true);
  const GraphStats s = graph_stats(g.view());
  const auto j = nlohmann::json::parse(to_json(s));
  EXPECT_EQ(j["nodes"], 5);
  EXPECT_EQ(j["edges"], 6);
  EXPECT_EQ(j["degree"]["max"], 3);
  EXPECT_EQ(j["symmetric"], true);
  EXPECT_EQ(j["tiles_16x8"]["nonempty"], 1);
  const std::string text = to_text(s);
  EXPECT_NE(text.find("nodes:        5"), std::string::npos) << text;
  EXPECT_NE(text.find("tiles 16x8"), std::string::npos) << text;
}

TEST(GraphStats, EmptyGraph) {
  Csr<int64_t> g;
  const GraphStats s = graph_stats(g.view());
  EXPECT_EQ(s.nodes, 0);
  EXPECT_EQ(s.degree_mean, 0.0);
  EXPECT_EQ(s.density, 0.0);
}

}  // namespace
}  // namespace tessera
