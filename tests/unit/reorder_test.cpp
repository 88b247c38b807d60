// Orders of orders.hpp: every permutation applied to a whole data set and undone gives the data
// set back; PBR packs shuffled clustered graphs into fewer tiles, never more than RCM or METIS,
// the same for any thread count; space-filling curves restore grid locality; quality measures on
// hand-checked cases; spec errors name the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>

#include "support/testing.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/io/graph_io.hpp"
#include "tessera/reorder/orders.hpp"

namespace tessera {
namespace {
using reorder::Permutation;

Permutation random_permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> o(static_cast<size_t>(n));
  std::iota(o.begin(), o.end(), int64_t(0));
  std::mt19937_64 rng(seed);
  std::shuffle(o.begin(), o.end(), rng);
  return Permutation::from_order(std::move(o));
}

NodeDataset random_dataset(int64_t n, uint64_t seed) {
  testing::NastyOptions o;
  o.rows = o.cols = n;
  o.avg_degree = 6;
  o.huge_row_degree = n / 3;
  NodeDataset ds;
  ds.name = "nasty";
  ds.graph = build_csr(testing::nasty_coo<int64_t>(o, seed));
  std::mt19937_64 rng(seed + 1);
  std::normal_distribution<float> x;
  ds.features = Dense<float>(n, 5);
  for (auto& v : ds.features.data) v = x(rng);
  ds.num_classes = 4;
  ds.labels.resize(size_t(n));
  for (auto& y : ds.labels) y = int32_t(rng() % 5) - 1;  // -1 = unlabeled
  for (int64_t i = 0; i < n; ++i) (i % 10 < 2 ? ds.train : i % 10 < 4 ? ds.val : ds.test).push_back(i);
  return ds;
}

void expect_same(const NodeDataset& a, const NodeDataset& b) {
  EXPECT_EQ(a.graph.rowptr, b.graph.rowptr);
  EXPECT_EQ(a.graph.col, b.graph.col);
  EXPECT_EQ(a.graph.values, b.graph.values);
  EXPECT_EQ(a.features.data, b.features.data);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_EQ(a.train, b.train);
  EXPECT_EQ(a.val, b.val);
  EXPECT_EQ(a.test, b.test);
}

std::vector<std::string> specs_to_try() {
  std::vector<std::string> s = {"none", "degree", "rcm", "pbr:size=64,tile=16x8", "hilbert", "morton"};
  if (reorder::metis_available()) s.push_back("metis:parts=9");
  return s;
}

TEST(Reorder, EveryOrderMovesGraphFeaturesLabelsSplitsTogetherAndUndoes) {
  const uint64_t seed = testing::seed();
  const int64_t n = 517;  // not a multiple of any tile
  const NodeDataset ds = random_dataset(n, seed);
  reorder::Coords coords;
  std::mt19937_64 rng(seed + 2);
  std::uniform_real_distribution<double> u(-5, 5);
  for (int64_t i = 0; i < n; ++i) coords.x.push_back(u(rng)), coords.y.push_back(u(rng));
  for (const auto& spec : specs_to_try()) {
    SCOPED_TRACE(spec + " seed " + std::to_string(seed));
    const Permutation p = reorder::compute_order(ds.graph.view(), reorder::parse_order_spec(spec), &coords);
    const NodeDataset r = reorder::apply(p, ds);
    // The relabeled data agree entry by entry with the original under new_of_old.
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ni = p.new_of_old(i);
      ASSERT_EQ(r.labels[size_t(ni)], ds.labels[size_t(i)]);
      for (int64_t f = 0; f < 5; ++f) ASSERT_EQ(r.features(ni, f), ds.features(i, f));
      ASSERT_EQ(r.graph.rowptr[size_t(ni + 1)] - r.graph.rowptr[size_t(ni)],
                ds.graph.rowptr[size_t(i + 1)] - ds.graph.rowptr[size_t(i)]);
      double w_old = 0, w_new = 0;  // weight-weighted sum of new neighbour ids, both ways
      for (int64_t k = ds.graph.rowptr[size_t(i)]; k < ds.graph.rowptr[size_t(i + 1)]; ++k)
        w_old += ds.graph.values[size_t(k)] * double(p.new_of_old(ds.graph.col[size_t(k)]));
      for (int64_t k = r.graph.rowptr[size_t(ni)]; k < r.graph.rowptr[size_t(ni + 1)]; ++k)
        w_new += r.graph.values[size_t(k)] * double(r.graph.col[size_t(k)]);
      ASSERT_NEAR(w_old, w_new, 1e-6 * (1 + std::abs(w_old)));
    }
    for (int64_t t : ds.train) EXPECT_TRUE(std::binary_search(r.train.begin(), r.train.end(), p.new_of_old(t)));
    EXPECT_NE(r.graph.id, ds.graph.id);
    expect_same(reorder::apply(p.inverse(), r), ds);
    // Outputs computed in the new order come back in the caller's order.
    const Dense<float> back = reorder::undo_rows(p, r.features);
    EXPECT_EQ(back.data, ds.features.data);
  }
}

TEST(Reorder, ApplyRejectsMismatchedSizes) {
  const NodeDataset ds = random_dataset(40, testing::seed());
  try {
    (void)reorder::apply(Permutation::identity(41), ds);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("41"), std::string::npos) << e.what();
  }
  NodeDataset bad = ds;
  bad.train.push_back(40);
  EXPECT_THROW((void)reorder::apply(Permutation::identity(40), bad), Error);
}

// Communities hidden by a random relabeling: PBR must recover dense tiles.
TEST(Reorder, PbrTilesBelowShuffledAndMetisOnClusteredGraph) {
  const uint64_t seed = testing::seed();
  const Csr<int64_t> g0 = build_csr(gen::clustered(3000, 40, 14, 0.9, seed));
  const Csr<int64_t> g = random_permutation(g0.rows, seed + 1).apply(g0.view());
  for (auto [tr, tc] : {std::pair{8, 8}, std::pair{16, 8}}) {
    SCOPED_TRACE(std::to_string(tr) + "x" + std::to_string(tc) + " seed " + std::to_string(seed));
    const int64_t shuffled = reorder::count_tiles(g.view(), tr, tc);
    const Permutation p = reorder::pbr(g.view(), {128, tr, tc, 2});
    const int64_t packed = reorder::count_tiles(p.apply(g.view()).view(), tr, tc);
    EXPECT_LT(packed, shuffled / 2) << "shuffled " << shuffled << " pbr " << packed;
    if (reorder::metis_available()) {
      const int64_t metis = reorder::count_tiles(reorder::partition_order(g.view(), 128).apply(g.view()).view(), tr, tc);
      EXPECT_LE(packed, metis);
    }
    const int64_t rcm = reorder::count_tiles(reorder::rcm(g.view()).apply(g.view()).view(), tr, tc);
    EXPECT_LT(packed, shuffled) << "rcm " << rcm;
  }
}

int64_t tiles_after(const Permutation& p, const Csr<int64_t>& g, int tr, int tc) {
  return reorder::count_tiles(p.apply(g.view()).view(), tr, tc);
}

// The graphs of the tile study, small: a lattice (RCM's best case), scrambled R-MAT (power law,
// no id locality) and shuffled communities (METIS's best case).
std::vector<std::pair<std::string, Csr<int64_t>>> pbr_study_graphs(uint64_t seed) {
  std::vector<std::pair<std::string, Csr<int64_t>>> out;
  out.emplace_back("grid 40x56", build_csr(gen::grid2d(40, 56)));
  gen::RmatOptions r;
  r.scale = 11;
  r.avg_degree = 8;
  r.seed = seed;
  r.scramble = true;
  BuildOptions sym;
  sym.symmetrize = true;
  out.emplace_back("rmat 2^11 scrambled", build_csr(gen::rmat(r), sym));
  const Csr<int64_t> c = build_csr(gen::clustered(2500, 30, 12, 0.85, seed));
  out.emplace_back("clustered shuffled", random_permutation(c.rows, seed + 3).apply(c.view()));
  return out;
}

// PBR scores RCM and the METIS order among its candidates, so it is never worse than either; on
// every study graph, for both tile shapes, it must also be a valid, thread-count-independent order.
TEST(Reorder, PbrNoWorseThanRcmAndMetisAndDeterministic) {
  const uint64_t seed = testing::seed();
  for (const auto& [name, g] : pbr_study_graphs(seed)) {
    for (auto [tr, tc] : {std::pair{8, 8}, std::pair{16, 8}}) {
      SCOPED_TRACE(name + " " + std::to_string(tr) + "x" + std::to_string(tc) + " seed " + std::to_string(seed));
      reorder::PbrOptions o{64, tr, tc, 2, 1};
      const Permutation p = reorder::pbr(g.view(), o);
      ASSERT_EQ(p.size(), g.rows);
      std::vector<int64_t> sorted = p.order();
      std::sort(sorted.begin(), sorted.end());
      for (int64_t k = 0; k < g.rows; ++k) ASSERT_EQ(sorted[size_t(k)], k);
      const int64_t packed = tiles_after(p, g, tr, tc);
      const int64_t rcm = tiles_after(reorder::rcm(g.view()), g, tr, tc);
      EXPECT_LE(packed, rcm);
      if (reorder::metis_available()) {
        EXPECT_LE(packed, tiles_after(reorder::partition_order(g.view(), 64), g, tr, tc));
      }
      EXPECT_LE(packed, tiles_after(Permutation::identity(g.rows), g, tr, tc));
      o.threads = 3;  // more threads than this host's cores: windows finish in another order
      EXPECT_EQ(reorder::pbr(g.view(), o).order(), p.order()) << "3 threads differ from 1";
    }
  }
}

// Refinement must earn its keep: on scrambled R-MAT and on shuffled communities the regrouped
// rows need fewer tiles than every plain start order PBR considers (RCM and the METIS order).
TEST(Reorder, PbrRefinementBeatsItsStarts) {
  const uint64_t seed = testing::seed();
  const auto graphs = pbr_study_graphs(seed);
  for (size_t i : {size_t(1), size_t(2)}) {
    const Csr<int64_t>& g = graphs[i].second;
    SCOPED_TRACE(graphs[i].first + " seed " + std::to_string(seed));
    const int64_t packed = tiles_after(reorder::pbr(g.view(), {64, 8, 8, 2}), g, 8, 8);
    int64_t start = tiles_after(reorder::rcm(g.view()), g, 8, 8);
    if (reorder::metis_available())
      start = std::min(start, tiles_after(reorder::partition_order(g.view(), 64), g, 8, 8));
    EXPECT_LT(packed, start);
  }
}

TEST(Reorder, PbrRejectsBadOptions) {
  const Csr<int64_t> g = build_csr(gen::grid2d(6, 6));
  try {
    (void)reorder::pbr(g.view(), {4, 8, 8, 2});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("part_size 4"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)reorder::pbr(g.view(), {64, 0, 8, 2}), Error);
  EXPECT_THROW((void)reorder::pbr(g.view(), {64, 8, 8, -1}), Error);
}

TEST(Reorder, OrderQualityOnHandCheckedMatrix) {
  // 16 x 16: diagonal plus entry (15, 0). Tiles 8x8: (0,0), (1,1), (1,0) -> 3; 16x8: (0,0), (0,1) -> 2.
  Coo<int32_t> c;
  c.rows = c.cols = 16;
  for (int i = 0; i < 16; ++i) c.src.push_back(i), c.dst.push_back(i);
  c.dst.push_back(15), c.src.push_back(0);
  const Csr<int32_t> g = build_csr(c);
  const auto q = reorder::order_quality(g.view());
  EXPECT_EQ(q.tiles_8x8, 3);
  EXPECT_EQ(q.tiles_16x8, 2);
  EXPECT_DOUBLE_EQ(q.fill_8x8, 17.0 / (3 * 64));
  EXPECT_DOUBLE_EQ(q.fill_16x8, 17.0 / (2 * 128));
  EXPECT_EQ(q.bandwidth, 15);
  EXPECT_DOUBLE_EQ(q.profile, 15.0 / 16);
  EXPECT_EQ(q.tiles_8x8, reorder::count_tiles(g.view(), 8, 8));
}

TEST(Reorder, DegreeSortIsStableAndDescending) {
  const Csr<int64_t> g = build_csr(testing::nasty_coo<int64_t>({}, testing::seed()));
  const Permutation p = reorder::degree_sort(g.view());
  const auto deg = row_degrees(g.view());
  for (int64_t k = 1; k < p.size(); ++k) {
    const int64_t a = p.old_of_new(k - 1), b = p.old_of_new(k);
    ASSERT_TRUE(deg[size_t(a)] > deg[size_t(b)] || (deg[size_t(a)] == deg[size_t(b)] && a < b)) << k;
  }
}

TEST(Reorder, HilbertCurveStepsToANeighbourCell) {
  for (int order : {1, 3, 5}) {
    const uint32_t side = 1u << order;
    std::vector<std::pair<uint32_t, uint32_t>> cell(size_t(side) * side);
    std::vector<char> seen(cell.size(), 0);
    for (uint32_t x = 0; x < side; ++x)
      for (uint32_t y = 0; y < side; ++y) {
        const uint64_t d = reorder::hilbert_index(x, y, order);
        ASSERT_LT(d, cell.size());
        ASSERT_FALSE(seen[d]) << "index " << d << " twice";
        seen[d] = 1;
        cell[d] = {x, y};
      }
    for (size_t d = 1; d < cell.size(); ++d) {
      const int64_t dx = int64_t(cell[d].first) - int64_t(cell[d - 1].first);
      const int64_t dy = int64_t(cell[d].second) - int64_t(cell[d - 1].second);
      ASSERT_EQ(std::abs(dx) + std::abs(dy), 1) << "order " << order << " step " << d;
    }
  }
  EXPECT_EQ(reorder::morton_index(3, 0), 5u);  // x bits at even positions
  EXPECT_EQ(reorder::morton_index(0, 1), 2u);
}

TEST(Reorder, HilbertAndMortonRestoreGridLocality) {
  const uint64_t seed = testing::seed();
  const int64_t rows = 48, cols = 80;  // not powers of two
  const Csr<int64_t> grid = build_csr(gen::grid2d(rows, cols));
  const Permutation shuffle = random_permutation(grid.rows, seed);
  const Csr<int64_t> g = shuffle.apply(grid.view());
  // Coordinates travel with the nodes: node shuffle.new_of_old(i) sits where grid node i sat.
  const reorder::Coords c0 = reorder::grid_coords(rows, cols);
  reorder::Coords c;
  c.x = shuffle.gather(c0.x);
  c.y = shuffle.gather(c0.y);
  const auto shuffled = reorder::order_quality(g.view());
  for (const char* m : {"hilbert", "morton"}) {
    const auto q = reorder::order_quality(
        reorder::compute_order(g.view(), reorder::parse_order_spec(m), &c).apply(g.view()).view());
    SCOPED_TRACE(std::string(m) + " seed " + std::to_string(seed));
    // The mean distance to the furthest earlier neighbour (profile) collapses; the maximum
    // (bandwidth) drops less, because neighbours across the curve's top-level quadrant seams stay
    // far apart in any space-filling-curve order (RCM is the bandwidth reducer).
    EXPECT_LT(q.profile, shuffled.profile / 8) << q.profile << " vs " << shuffled.profile;
    EXPECT_LT(q.bandwidth, shuffled.bandwidth) << q.bandwidth << " vs " << shuffled.bandwidth;
    EXPECT_LT(q.tiles_8x8, shuffled.tiles_8x8 / 2);
  }
}

TEST(Reorder, RoadNetworkCoordinatesGiveLocalOrder) {
  TESSERA_REQUIRE_SHARED("road-chicago-regional");
  const Csr<int64_t> g = io::read_graph(testing::shared_data("road-chicago-regional"), {true});
  const reorder::Coords c = reorder::read_coords(testing::shared_data("road-chicago-regional/coords.txt.gz"), g.rows);
  const auto shuffled = reorder::order_quality(random_permutation(g.rows, testing::seed()).apply(g.view()).view());
  const auto h = reorder::order_quality(reorder::hilbert_order(c).apply(g.view()).view());
  EXPECT_LT(h.profile, shuffled.profile / 5);
  EXPECT_LT(h.tiles_8x8, shuffled.tiles_8x8);
}

TEST(Reorder, SpecParsingNamesTheProblem) {
  auto msg = [](const std::string& spec) {
    try {
      (void)reorder::parse_order_spec(spec);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(msg("sideways").find("unknown reordering 'sideways'"), std::string::npos);
  EXPECT_NE(msg("metis:parts=0").find("parts=0"), std::string::npos);
  EXPECT_NE(msg("pbr:tile=8").find("tile=8"), std::string::npos);
  EXPECT_NE(msg("rcm:size=4").find("unknown key 'size'"), std::string::npos);
  const auto s = reorder::parse_order_spec("pbr:size=512,tile=16x8,passes=3");
  EXPECT_EQ(s.part_size, 512);
  EXPECT_EQ(s.tile_rows, 16);
  EXPECT_EQ(s.passes, 3);
  EXPECT_EQ(reorder::parse_order_spec("metis:parts=128").parts, 128);
  const Csr<int64_t> g = build_csr(gen::grid2d(4, 4));
  EXPECT_THROW((void)reorder::compute_order(g.view(), reorder::parse_order_spec("hilbert"), nullptr), Error);
}

}  // namespace
}  // namespace tessera
