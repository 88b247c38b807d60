// The sbm task and generator specs.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "support/testing.hpp"
#include "tessera/gen/generators.hpp"
#include "tessera/graph/stats.hpp"

namespace tessera {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// Nearest-class-mean accuracy on the test nodes, with class means from the training nodes.
double nearest_mean_accuracy(const NodeDataset& ds, const Dense<float>& x) {
  const int C = ds.num_classes;
  const int64_t F = x.cols;
  std::vector<double> mean(size_t(C * F), 0.0);
  std::vector<int64_t> count(size_t(C), 0);
  for (int64_t i : ds.train) {
    const int y = ds.labels[size_t(i)];
    ++count[size_t(y)];
    for (int64_t f = 0; f < F; ++f) mean[size_t(y * F + f)] += x(i, f);
  }
  for (int c = 0; c < C; ++c)
    for (int64_t f = 0; f < F; ++f) mean[size_t(c * F + f)] /= double(std::max<int64_t>(1, count[size_t(c)]));
  int64_t right = 0;
  for (int64_t i : ds.test) {
    int best = 0;
    double best_d = 1e300;
    for (int c = 0; c < C; ++c) {
      double d = 0;
      for (int64_t f = 0; f < F; ++f) d += std::pow(x(i, f) - mean[size_t(c * F + f)], 2);
      if (d < best_d) best_d = d, best = c;
    }
    right += best == ds.labels[size_t(i)];
  }
  return double(right) / double(ds.test.size());
}

// One GCN-like propagation: mean over the node and its neighbours.
Dense<float> propagate(const NodeDataset& ds) {
  const auto& g = ds.graph;
  Dense<float> out(ds.features.rows, ds.features.cols);
  for (int64_t i = 0; i < g.rows; ++i) {
    const double deg = double(g.rowptr[size_t(i) + 1] - g.rowptr[size_t(i)]) + 1;
    for (int64_t f = 0; f < out.cols; ++f) {
      double s = ds.features(i, f);
      for (int64_t p = g.rowptr[size_t(i)]; p < g.rowptr[size_t(i) + 1]; ++p) s += ds.features(g.col[size_t(p)], f);
      out(i, f) = float(s / deg);
    }
  }
  return out;
}

TEST(SbmTask, DefaultIsLearnableButNotTrivial) {
  const NodeDataset ds = gen::generate_task("sbm");
  EXPECT_EQ(ds.name, "sbm");
  EXPECT_EQ(ds.graph.rows, 2000);
  EXPECT_EQ(ds.features.rows, 2000);
  EXPECT_EQ(ds.features.cols, 64);
  EXPECT_EQ(ds.num_classes, 5);
  const GraphStats s = graph_stats(ds.graph.view());
  EXPECT_TRUE(s.symmetric);
  EXPECT_EQ(s.self_loops, 0);
  EXPECT_NEAR(s.degree_mean, 10, 0.5);
  // Chance is 0.2. Features alone: informative, far from perfect; one round of neighbour
  // averaging (what a GCN layer does) must help clearly.
  const double feat = nearest_mean_accuracy(ds, ds.features);
  const double graph = nearest_mean_accuracy(ds, propagate(ds));
  std::printf("[ sbm ] nearest-class-mean test accuracy: features %.3f, after 1 propagation %.3f\n", feat, graph);
  EXPECT_GT(feat, 0.3);
  EXPECT_LT(feat, 0.85);
  EXPECT_GT(graph, feat + 0.1);
  EXPECT_GT(graph, 0.7);
}

TEST(SbmTask, SplitIsStratifiedDisjointAndCovering) {
  const uint64_t s = testing::seed();
  gen::SbmOptions o;
  o.nodes = 1000 + int64_t(s % 1000);
  o.classes = 3 + int(s % 5);
  o.seed = s;
  const NodeDataset ds = gen::sbm_task(o);
  std::vector<int> seen(size_t(o.nodes), 0);
  for (const auto* part : {&ds.train, &ds.val, &ds.test}) {
    EXPECT_TRUE(std::is_sorted(part->begin(), part->end()));
    for (int64_t i : *part) ++seen[size_t(i)];
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; })) << "seed " << s;
  std::vector<int64_t> per_class(size_t(o.classes), 0), train_class(size_t(o.classes), 0);
  for (int32_t y : ds.labels) ++per_class[size_t(y)];
  for (int64_t i : ds.train) ++train_class[size_t(ds.labels[size_t(i)])];
  for (int c = 0; c < o.classes; ++c) {
    EXPECT_LE(std::abs(per_class[size_t(c)] - o.nodes / o.classes), 1);  // balanced
    EXPECT_NEAR(double(train_class[size_t(c)]), o.train * double(per_class[size_t(c)]), 1.0);
  }
  EXPECT_NEAR(double(ds.val.size()), o.val * double(o.nodes), double(o.classes));
  // Intra-class share of edges ~ p_in.
  int64_t inside = 0;
  for (int64_t r = 0; r < ds.graph.rows; ++r)
    for (int64_t p = ds.graph.rowptr[size_t(r)]; p < ds.graph.rowptr[size_t(r) + 1]; ++p)
      inside += ds.labels[size_t(r)] == ds.labels[size_t(ds.graph.col[size_t(p)])];
  EXPECT_NEAR(double(inside) / double(ds.graph.nnz()), o.p_in_share, 0.04) << "seed " << s;
  // Same seed, same task; other seed, other task.
  const NodeDataset again = gen::sbm_task(o);
  EXPECT_EQ(again.graph.col, ds.graph.col);
  EXPECT_EQ(again.features.data, ds.features.data);
  EXPECT_EQ(again.train, ds.train);
  o.seed = s + 1;
  EXPECT_NE(gen::sbm_task(o).graph.col, ds.graph.col);
}

TEST(GeneratorSpec, ParsesAllGenerators) {
  EXPECT_EQ(gen::generate("grid:rows=3,cols=4").nnz(), 2 * (3 * 3 + 2 * 4));
  EXPECT_EQ(gen::generate("rmat:scale=8,degree=4,seed=3").rows, 256);
  EXPECT_EQ(gen::generate("er:nodes=1e3,degree=4").rows, 1000);
  EXPECT_EQ(gen::generate("ba:nodes=500,m=2").rows, 500);
  EXPECT_EQ(gen::generate("ws:nodes=300,k=4,p=0.05").rows, 300);
  EXPECT_EQ(gen::generate("clustered:nodes=400,clusters=4,degree=6,p_in=0.7").rows, 400);
  EXPECT_EQ(gen::generate("sbm:nodes=300,classes=3,features=8").rows, 300);
  EXPECT_EQ(gen::generate("rmat:scale=8,degree=4,noise=0.05,scramble=1").rows, 256);
  // Build options apply: R-MAT symmetrized is symmetric.
  BuildOptions sym;
  sym.symmetrize = true;
  EXPECT_TRUE(graph_stats(gen::generate("rmat:scale=9,degree=4", sym).view()).symmetric);
  EXPECT_EQ(gen::generate("rmat:scale=8,seed=5").col, gen::generate("rmat:scale=8,seed=5").col);
  EXPECT_TRUE(gen::is_generator_spec("sbm"));
  EXPECT_TRUE(gen::is_generator_spec("rmat:scale=3"));
  EXPECT_FALSE(gen::is_generator_spec("graph.txt"));
  EXPECT_FALSE(gen::is_generator_spec("/tmp/rmat:x"));
}

TEST(GeneratorSpec, ErrorsNameTheProblem) {
  EXPECT_NE(error_of([] { gen::generate("foo:n=1"); }).find("unknown generator 'foo'"), std::string::npos);
  EXPECT_NE(error_of([] { gen::generate("rmat:scale=8,nodes=3"); }).find("unknown key 'nodes'"), std::string::npos);
  EXPECT_NE(error_of([] { gen::generate("rmat:scale=eight"); }).find("bad value 'eight' for 'scale'"),
            std::string::npos);
  EXPECT_NE(error_of([] { gen::generate("er:nodes=10.5"); }).find("expected an integer"), std::string::npos);
  EXPECT_NE(error_of([] { gen::generate("rmat:scale=99"); }).find("out of range"), std::string::npos);
  EXPECT_NE(error_of([] { gen::generate("grid:rows"); }).find("expected key=value"), std::string::npos);
  EXPECT_NE(error_of([] { gen::generate("grid:rows=2,rows=3"); }).find("given twice"), std::string::npos);
  EXPECT_NE(error_of([] { gen::generate("ws:nodes=100,k=3"); }).find("k must be even"), std::string::npos);
  EXPECT_NE(error_of([] { gen::generate("sbm:train=0.9,val=0.2"); }).find("split shares"), std::string::npos);
  EXPECT_NE(error_of([] { gen::generate_task("grid"); }).find("not a node-classification task"), std::string::npos);
  EXPECT_NE(error_of([] { gen::generate("er:degree=nan"); }).find("bad value 'nan'"), std::string::npos);
}

}  // namespace
}  // namespace tessera
