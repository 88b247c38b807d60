// Marginalized graph kernel (CPU) and node reordering: closed forms, hand-solved cases, the dense
// oracle on random labeled weighted graphs, Gram symmetry / PSD, invariance under node
// permutation and reordering, gradients against central differences, errors, MUTAG end to end.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

#include "support/testing.hpp"
#include "tessera/io/graph_io.hpp"
#include "tessera/kernels/marginalized.hpp"
#include "tessera/reorder/permutation.hpp"
#include "unit/graph_kernel_support.hpp"

namespace tessera::kernels {
namespace {

using testing::LabeledGraphOptions;
using testing::random_labeled_graph;

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

Options labeled_options(double q = 0.1) {
  Options o;
  o.q = q;
  o.node_kernel = BaseKernel::TensorProduct(
      {BaseKernel::KroneckerDelta(0.4, Feature::label), BaseKernel::SquareExponential(1.3, Feature::attributes)});
  o.edge_kernel = BaseKernel::KroneckerDelta(0.3, Feature::label);
  return o;
}

TEST(GraphKernel, ClosedFormForConstantKernels) {
  std::mt19937_64 rng(testing::seed());
  for (int trial = 0; trial < 12; ++trial) {
    LabeledGraphOptions go;
    go.n = 2 + int(rng() % 40);
    go.isolated_ok = false;
    go.edge_prob = 0.15;
    go.weighted = false;  // the closed form needs unit weights (W 1 = d d')
    const auto g1 = random_labeled_graph(go, rng);
    go.n = 2 + int(rng() % 40);
    const auto g2 = random_labeled_graph(go, rng);
    const double v = 0.2 + 0.8 * std::uniform_real_distribution<double>(0, 1)(rng);
    const double e = std::uniform_real_distribution<double>(0, 1)(rng);
    const double q = trial == 0 ? 5e-4 : std::uniform_real_distribution<double>(0.01, 0.9)(rng);
    for (DType dt : {DType::f64, DType::f32}) {
      Options o;
      o.q = q;
      o.dtype = dt;
      o.node_kernel = BaseKernel::Constant(v);
      o.edge_kernel = BaseKernel::Constant(e);
      const auto r = MarginalizedGraphKernel(o).pair(g1, g2);
      const double expect =
          double(g1.num_nodes() * g2.num_nodes()) * v / (1 - v * e * (1 - q) * (1 - q));
      EXPECT_LE(rel(r.value, expect), dt == DType::f64 ? 1e-10 : 1e-5)
          << "trial " << trial << " n=" << g1.num_nodes() << "," << g2.num_nodes() << " v=" << v << " e=" << e
          << " q=" << q << " dtype=" << dtype_name(dt) << " seed " << testing::seed();
      EXPECT_TRUE(r.stats.converged);
    }
  }
}

TEST(GraphKernel, HandSolvedSingleEdgeWithLabels) {
  // G = G' = one edge 0-1 with node labels (0, 1). Product nodes split into two 2x2 systems:
  // equal labels give x = s / (s - 1), unequal ones x = s h / (s - h), s = 1 / (1-q)^2.
  std::map<std::pair<int, int>, std::pair<float, int>> e{{{0, 1}, {1.0f, 0}}};
  const auto g = testing::make_labeled_graph(2, e, {0, 1}, Dense<float>(2, 0), false, false);
  for (double q : {0.05, 0.5}) {
    for (double h : {0.1, 0.7}) {
      Options o;
      o.q = q;
      o.node_kernel = BaseKernel::KroneckerDelta(h);
      const double s = 1 / ((1 - q) * (1 - q));
      const double expect = 2 * s / (s - 1) + 2 * s * h / (s - h);
      EXPECT_LE(rel(MarginalizedGraphKernel(o).pair(g, g).value, expect), 1e-12);
      EXPECT_LE(rel(reference_pair(g, g, o).value, expect), 1e-12);
    }
  }
  // Two isolated nodes: d = 1, W = 0, so x = k_v and K = k_v(l, l').
  const auto a = testing::make_labeled_graph(1, {}, {3}, Dense<float>(1, 0), false, false);
  const auto b = testing::make_labeled_graph(1, {}, {5}, Dense<float>(1, 0), false, false);
  Options o;
  o.node_kernel = BaseKernel::KroneckerDelta(0.25);
  EXPECT_NEAR(MarginalizedGraphKernel(o).pair(a, b).value, 0.25, 1e-14);
  o.lmin = 1;
  EXPECT_NEAR(MarginalizedGraphKernel(o).pair(a, b).value, 0.0, 1e-14);
}

TEST(GraphKernel, MatchesDenseReferenceOnRandomLabeledWeightedGraphs) {
  std::mt19937_64 rng(testing::seed());
  for (int trial = 0; trial < 16; ++trial) {
    LabeledGraphOptions go;
    go.n = 1 + int(rng() % 24);
    go.edge_prob = 0.05 + 0.6 * double(rng() % 100) / 100.0;  // sparse to near-dense tiles
    const auto g1 = random_labeled_graph(go, rng);
    go.n = 1 + int(rng() % 24);
    const auto g2 = random_labeled_graph(go, rng);
    Options o = labeled_options(trial % 4 == 0 ? 0.01 : 0.2);
    o.lmin = trial % 3 == 0 ? 1 : 0;
    const auto ref = reference_pair(g1, g2, o);
    // lmin = 1 subtracts the single-vertex term and can cancel to ~0 (graphs without edges):
    // errors are measured against the size of the unsubtracted kernel.
    Options o0 = o;
    o0.lmin = 0;
    const double scale = std::max(std::abs(ref.value), reference_pair(g1, g2, o0).value);
    for (DType dt : {DType::f64, DType::f32})
      for (TilePath path : {TilePath::automatic, TilePath::sparse, TilePath::dense})
        for (auto m : {reorder::Method::none, reorder::Method::rcm}) {
          o.dtype = dt;
          o.path = path;
          o.reorder = m;
          PairRequest req;
          req.nodal = true;
          const auto r = MarginalizedGraphKernel(o).pair(g1, g2, req);
          const double tol = dt == DType::f64 ? 1e-10 : 1e-5;
          EXPECT_LE(std::abs(r.value - ref.value), tol * scale)
              << "trial " << trial << " dtype " << dtype_name(dt) << " path " << int(path) << " reorder "
              << reorder::method_name(m) << " seed " << testing::seed();
          double maxn = 0, err = 0;
          for (size_t k = 0; k < ref.nodal.data.size(); ++k) {
            maxn = std::max(maxn, std::abs(ref.nodal.data[k]));
            err = std::max(err, std::abs(ref.nodal.data[k] - r.nodal.data[k]));
          }
          // The nodal similarities are the PCG solution itself (before the weighted sum that
          // averages its errors): its error is the stopping residual times the condition number,
          // so the fp32 check allows 2x the kernel value's 1e-5 (seen: 1.1e-5 on a q = 0.2 pair).
          const double ntol = dt == DType::f64 ? tol : 2 * tol;
          EXPECT_LE(err, ntol * maxn) << "nodal, trial " << trial << " dtype " << dtype_name(dt) << " seed "
                                      << testing::seed();
        }
  }
}

TEST(GraphKernel, SmallStoppingProbabilityConverges) {
  std::mt19937_64 rng(testing::seed());
  LabeledGraphOptions go;
  go.n = 60;
  go.edge_prob = 0.08;
  const auto g1 = random_labeled_graph(go, rng), g2 = random_labeled_graph(go, rng);
  Options o = labeled_options(5e-4);
  const auto r = MarginalizedGraphKernel(o).pair(g1, g2);
  EXPECT_TRUE(r.stats.converged) << r.stats.iterations << " iterations, residual " << r.stats.residual;
  EXPECT_GT(r.value, 0);
}

TEST(GraphKernel, GramIsSymmetricPositiveSemidefiniteAndMatchesPairs) {
  std::mt19937_64 rng(testing::seed());
  std::vector<LabeledGraph> gs;
  for (int i = 0; i < 14; ++i) {
    LabeledGraphOptions go;
    go.n = 1 + int(rng() % 30);
    go.edge_prob = 0.2;
    gs.push_back(random_labeled_graph(go, rng));
  }
  for (bool normalize : {false, true}) {
    Options o = labeled_options(0.1);
    o.normalize = normalize;
    const MarginalizedGraphKernel mgk(o);
    const auto g = mgk.gram(gs);
    const int N = int(gs.size());
    EXPECT_EQ(g.stats.pairs, N * (N + 1) / 2);
    EXPECT_EQ(g.stats.converged, g.stats.pairs);
    EXPECT_TRUE(g.stats.failed.empty());
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) EXPECT_EQ(g.K(i, j), g.K(j, i));
    if (!normalize) {
      EXPECT_LE(rel(g.K(2, 5), mgk.pair(gs[5], gs[2]).value), 1e-10);  // K(G,G') = K(G',G)
      EXPECT_LE(rel(g.K(3, 7), reference_pair(gs[3], gs[7], o).value), 1e-10);
      const auto d = mgk.diag(gs);
      for (int i = 0; i < N; ++i) EXPECT_LE(rel(d[size_t(i)], g.K(i, i)), 1e-12);
    } else {
      for (int i = 0; i < N; ++i) EXPECT_NEAR(g.K(i, i), 1.0, 1e-12);
    }
    const auto ev = testing::symmetric_eigenvalues(g.K.data, N);
    const double top = *std::max_element(ev.begin(), ev.end());
    for (double e : ev) EXPECT_GE(e, -1e-9 * top) << "Gram matrix not PSD, seed " << testing::seed();
    // The cross Gram of the same collection agrees with the symmetric one.
    const std::vector<LabeledGraph> head(gs.begin(), gs.begin() + 4);
    const auto cross = mgk.gram(head, gs);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < N; ++j) EXPECT_LE(std::abs(cross.K(i, j) - g.K(i, j)), 1e-10 * std::abs(g.K(i, j)));
  }
}

TEST(GraphKernel, InvariantUnderNodePermutationAndReordering) {
  std::mt19937_64 rng(testing::seed());
  for (int trial = 0; trial < 6; ++trial) {
    LabeledGraphOptions go;
    go.n = 5 + int(rng() % 60);
    go.edge_prob = 0.1;
    const auto g1 = random_labeled_graph(go, rng);
    go.n = 5 + int(rng() % 60);
    const auto g2 = random_labeled_graph(go, rng);
    std::vector<int> perm(static_cast<size_t>(g1.num_nodes()));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    const auto g1p = testing::permute_graph(g1, perm);
    Options o = labeled_options(0.1);
    PairRequest req;
    req.nodal = true;
    o.reorder = reorder::Method::none;
    const auto base = MarginalizedGraphKernel(o).pair(g1, g2, req);
    const auto permuted = MarginalizedGraphKernel(o).pair(g1p, g2, req);
    EXPECT_LE(rel(permuted.value, base.value), 1e-10);
    for (int64_t i = 0; i < g1.num_nodes(); ++i)
      for (int64_t j = 0; j < g2.num_nodes(); ++j)
        EXPECT_NEAR(permuted.nodal(perm[size_t(i)], j), base.nodal(i, j), 1e-10 * std::abs(base.value));
    for (auto m : {reorder::Method::rcm, reorder::Method::partition}) {
      if (m == reorder::Method::partition && !reorder::metis_available()) continue;
      o.reorder = m;
      const auto r = MarginalizedGraphKernel(o).pair(g1, g2, req);
      EXPECT_LE(rel(r.value, base.value), 1e-10) << reorder::method_name(m);
      for (size_t k = 0; k < r.nodal.data.size(); ++k)
        EXPECT_NEAR(r.nodal.data[k], base.nodal.data[k], 1e-10 * std::abs(base.value)) << reorder::method_name(m);
    }
  }
}

// Central differences of K against the adjoint gradient, for every hyperparameter and p.
TEST(GraphKernel, GradientsMatchCentralDifferences) {
  std::mt19937_64 rng(testing::seed());
  LabeledGraphOptions go;
  go.n = 9;
  go.edge_prob = 0.35;
  const auto g1 = random_labeled_graph(go, rng);
  go.n = 13;
  const auto g2 = random_labeled_graph(go, rng);
  for (int lmin : {0, 1}) {
    Options o = labeled_options(0.15);
    o.edge_kernel = BaseKernel::Additive({BaseKernel::KroneckerDelta(0.3), BaseKernel::Constant(0.6)}, {2.0, 1.0});
    o.lmin = lmin;
    std::vector<double> p1(9), p2(13);
    for (auto& v : p1) v = 0.5 + double(rng() % 100) / 100.0;
    for (auto& v : p2) v = 0.5 + double(rng() % 100) / 100.0;
    PairRequest req;
    req.gradient = true;
    req.p1 = &p1;
    req.p2 = &p2;
    const MarginalizedGraphKernel mgk(o);
    const auto r = mgk.pair(g1, g2, req);
    const auto names = mgk.hyperparameter_names();
    ASSERT_EQ(r.gradient.size(), names.size());
    auto value_with = [&](const Options& oo) {
      PairRequest rq;
      rq.p1 = &p1;
      rq.p2 = &p2;
      return MarginalizedGraphKernel(oo).pair(g1, g2, rq).value;
    };
    const int hv = o.node_kernel.num_terms(), he = o.edge_kernel.num_terms();
    for (size_t h = 0; h < names.size(); ++h) {
      const double eps = 1e-5;
      Options lo = o, hi = o;
      if (int(h) < hv) {
        lo.node_kernel = o.node_kernel.with_hyper(int(h), o.node_kernel.hyper(int(h)) - eps);
        hi.node_kernel = o.node_kernel.with_hyper(int(h), o.node_kernel.hyper(int(h)) + eps);
      } else if (int(h) < hv + he) {
        const int t = int(h) - hv;
        lo.edge_kernel = o.edge_kernel.with_hyper(t, o.edge_kernel.hyper(t) - eps);
        hi.edge_kernel = o.edge_kernel.with_hyper(t, o.edge_kernel.hyper(t) + eps);
      } else {
        lo.q = o.q - eps;
        hi.q = o.q + eps;
      }
      const double fd = (value_with(hi) - value_with(lo)) / (2 * eps);
      EXPECT_NEAR(r.gradient[h], fd, 1e-6 * std::max(1.0, std::abs(fd))) << names[h] << " lmin " << lmin;
    }
    for (int side = 0; side < 2; ++side) {
      auto& p = side == 0 ? p1 : p2;
      const auto& g = side == 0 ? r.grad_p1 : r.grad_p2;
      for (size_t i = 0; i < p.size(); i += 3) {
        const double keep = p[i], eps = 1e-5;
        p[i] = keep + eps;
        const double up = value_with(o);
        p[i] = keep - eps;
        const double dn = value_with(o);
        p[i] = keep;
        EXPECT_NEAR(g[i], (up - dn) / (2 * eps), 1e-6 * std::max(1.0, std::abs(g[i]))) << "p side " << side << " node " << i;
      }
    }
  }
}

TEST(GraphKernel, NormalizedGramGradientsMatchCentralDifferences) {
  std::mt19937_64 rng(testing::seed());
  std::vector<LabeledGraph> gs;
  for (int i = 0; i < 4; ++i) {
    LabeledGraphOptions go;
    go.n = 3 + int(rng() % 8);
    gs.push_back(random_labeled_graph(go, rng));
  }
  Options o = labeled_options(0.2);
  o.normalize = true;
  const auto g = MarginalizedGraphKernel(o).gram(gs, true);
  const double eps = 1e-5;
  Options lo = o, hi = o;
  lo.q -= eps;
  hi.q += eps;
  const auto kl = MarginalizedGraphKernel(lo).gram(gs).K, kh = MarginalizedGraphKernel(hi).gram(gs).K;
  const auto& gq = g.gradient.back();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(gq(i, j), (kh(i, j) - kl(i, j)) / (2 * eps), 1e-7);
  lo = hi = o;
  lo.node_kernel = o.node_kernel.with_hyper(1, o.node_kernel.hyper(1) - eps);
  hi.node_kernel = o.node_kernel.with_hyper(1, o.node_kernel.hyper(1) + eps);
  const auto ml = MarginalizedGraphKernel(lo).gram(gs).K, mh = MarginalizedGraphKernel(hi).gram(gs).K;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(g.gradient[1](i, j), (mh(i, j) - ml(i, j)) / (2 * eps), 1e-7);
}

TEST(GraphKernel, NonConvergedPairsAreReported) {
  std::mt19937_64 rng(testing::seed());
  std::vector<LabeledGraph> gs;
  LabeledGraphOptions go;
  go.n = 20;
  for (int i = 0; i < 3; ++i) gs.push_back(random_labeled_graph(go, rng));
  Options o = labeled_options(0.01);
  o.max_iter = 1;
  const MarginalizedGraphKernel mgk(o);
  const auto g = mgk.gram(gs);
  EXPECT_FALSE(g.stats.failed.empty());
  EXPECT_LT(g.stats.converged, g.stats.pairs);
  EXPECT_THROW(mgk.pair(gs[0], gs[1]), Error);
}

TEST(GraphKernel, RejectsBadHyperparametersAndGraphs) {
  Options o;
  o.q = 0;
  EXPECT_THROW(MarginalizedGraphKernel{o}, Error);
  o.q = 1;
  EXPECT_THROW(MarginalizedGraphKernel{o}, Error);
  o = Options{};
  o.node_kernel = BaseKernel::KroneckerDelta(0.0);  // node kernel must be positive
  EXPECT_THROW(MarginalizedGraphKernel{o}, Error);
  o.node_kernel = BaseKernel::SquareExponential(-1);
  EXPECT_THROW(MarginalizedGraphKernel{o}, Error);
  o.node_kernel = BaseKernel::Constant(1.5);
  EXPECT_THROW(MarginalizedGraphKernel{o}, Error);
  o = Options{};
  o.edge_kernel = BaseKernel::SquareExponential(1.0, Feature::attributes);  // edges have no attributes
  EXPECT_THROW(MarginalizedGraphKernel{o}, Error);
  EXPECT_NO_THROW(BaseKernel::KroneckerDelta(0.0).validate("edge kernel", false));
  EXPECT_THROW(parse_base_kernel("delta"), Error);
  EXPECT_THROW(parse_base_kernel("gauss:1"), Error);
  EXPECT_EQ(parse_base_kernel("product(delta:0.5,sqexp:2@attributes)").num_terms(), 2);
  // Asymmetric adjacency.
  LabeledGraph g;
  g.adj.rows = g.adj.cols = 2;
  g.adj.rowptr = {0, 1, 1};
  g.adj.col = {1};
  EXPECT_THROW(validate_graph(g, 7), Error);
  try {
    validate_graph(g, 7);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("graph 7"), std::string::npos) << e.what();
  }
  const MarginalizedGraphKernel mgk{Options{}};
  EXPECT_THROW(mgk.pair(g, g), Error);
}

// ---- reordering ----

TEST(ReorderPermutation, PermutationApplyAndUndoRoundTrip) {
  std::mt19937_64 rng(testing::seed());
  const auto coo = testing::nasty_coo<int32_t>({.rows = 300, .cols = 300, .avg_degree = 5}, testing::seed(1));
  BuildOptions bo;
  bo.symmetrize = true;
  const auto g = build_csr(coo, bo);
  for (auto m : {reorder::Method::none, reorder::Method::rcm, reorder::Method::partition}) {
    if (m == reorder::Method::partition && !reorder::metis_available()) {
      EXPECT_THROW(reorder::partition_order(g.view()), Error);
      continue;
    }
    const auto p = reorder::compute_order(g.view(), m);
    ASSERT_EQ(p.size(), g.rows);
    std::vector<int64_t> map;
    const auto h = p.apply(g.view(), &map);
    EXPECT_EQ(h.nnz(), g.nnz());
    for (int64_t r = 0; r < g.rows; ++r)
      for (int32_t k = g.rowptr[size_t(r)]; k < g.rowptr[size_t(r + 1)]; ++k) {
        const int64_t nr = p.new_of_old(r), nc = p.new_of_old(g.col[size_t(k)]);
        const auto b = h.col.begin() + h.rowptr[size_t(nr)], e = h.col.begin() + h.rowptr[size_t(nr + 1)];
        const auto it = std::lower_bound(b, e, int32_t(nc));
        ASSERT_TRUE(it != e && *it == nc);
        const size_t pos = size_t(it - h.col.begin());
        EXPECT_EQ(h.values[pos], g.values[size_t(map[pos])]);
        EXPECT_EQ(map[pos] >= g.rowptr[size_t(r)] && map[pos] < g.rowptr[size_t(r + 1)], true);
      }
    // Undo: applying the inverse gives back the original graph.
    const auto back = p.inverse().apply(h.view());
    EXPECT_EQ(back.rowptr, g.rowptr);
    EXPECT_EQ(back.col, g.col);
    std::vector<double> data(static_cast<size_t>(g.rows));
    for (auto& d : data) d = double(rng() % 1000);
    EXPECT_EQ(p.scatter(p.gather(data)), data);
  }
  EXPECT_THROW(reorder::Permutation::from_order({0, 0, 1}), Error);
  EXPECT_THROW(reorder::Permutation::from_order({0, 3}), Error);
}

TEST(ReorderPermutation, RcmRecoversBandedStructureOfShuffledGraph) {
  std::mt19937_64 rng(testing::seed());
  // A 2D grid (spatial neighbours) with shuffled ids: RCM should bring back few non-empty octiles.
  const int side = 40, n = side * side;
  std::vector<int> shuffle(static_cast<size_t>(n));
  std::iota(shuffle.begin(), shuffle.end(), 0);
  std::shuffle(shuffle.begin(), shuffle.end(), rng);
  Coo<int32_t> coo;
  coo.rows = coo.cols = n;
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x) {
      const int u = shuffle[size_t(y * side + x)];
      if (x + 1 < side) coo.src.push_back(u), coo.dst.push_back(shuffle[size_t(y * side + x + 1)]);
      if (y + 1 < side) coo.src.push_back(u), coo.dst.push_back(shuffle[size_t((y + 1) * side + x)]);
    }
  BuildOptions bo;
  bo.symmetrize = true;
  const auto g = build_csr(coo, bo);
  const int64_t before = reorder::count_tiles(g.view());
  const auto h = reorder::rcm(g.view()).apply(g.view());
  const int64_t after = reorder::count_tiles(h.view());
  EXPECT_LT(after * 4, before) << "rcm: " << before << " -> " << after << " octiles";
  if (reorder::metis_available()) {
    const auto hp = reorder::partition_order(g.view()).apply(g.view());
    EXPECT_LT(reorder::count_tiles(hp.view()) * 4, before);
  }
}

TEST(GraphKernel, MutagEndToEnd) {
  TESSERA_REQUIRE_SHARED("mutag");
  const auto col = io::read_tu(testing::shared_data("mutag"));
  ASSERT_EQ(col.graphs.size(), 188u);
  std::vector<LabeledGraph> gs(col.graphs.begin(), col.graphs.begin() + 30);
  Options o;
  o.q = 0.05;
  o.node_kernel = BaseKernel::KroneckerDelta(0.5);
  o.edge_kernel = BaseKernel::KroneckerDelta(0.5);
  const MarginalizedGraphKernel mgk(o);
  const auto g = mgk.gram(gs);
  EXPECT_TRUE(g.stats.failed.empty());
  for (int k = 0; k < 4; ++k) {
    const int i = k * 7 % 30, j = (k * 11 + 3) % 30;
    if (gs[size_t(i)].num_nodes() * gs[size_t(j)].num_nodes() > 4096) continue;
    EXPECT_LE(rel(g.K(i, j), reference_pair(gs[size_t(i)], gs[size_t(j)], o).value), 1e-10) << i << "," << j;
  }
  o.normalize = true;
  const auto gn = MarginalizedGraphKernel(o).gram(gs);
  const auto ev = testing::symmetric_eigenvalues(gn.K.data, 30);
  for (double e : ev) EXPECT_GE(e, -1e-9);
  for (int i = 0; i < 30; ++i) EXPECT_NEAR(gn.K(i, i), 1.0, 1e-12);
}

}  // namespace
}  // namespace tessera::kernels
