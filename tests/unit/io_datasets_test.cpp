// Loaders against the counts in ../shared/data/*/README.md (skipped when the data is absent).
#include <map>
#include <set>

#include "tessera/io/graph_io.hpp"
#include "unit/io_test_support.hpp"

namespace tessera {
namespace {

using testing::shared_data;

int64_t dense_nonzeros(const Dense<float>& x) {
  int64_t n = 0;
  for (float v : x.data) n += v != 0.0f;
  return n;
}
int64_t nonzero_rows(const Dense<float>& x) {
  int64_t n = 0;
  for (int64_t i = 0; i < x.rows; ++i) {
    bool any = false;
    for (int64_t j = 0; j < x.cols; ++j) any = any || x(i, j) != 0.0f;
    n += any;
  }
  return n;
}
std::vector<int64_t> class_sizes(const NodeDataset& ds) {
  std::vector<int64_t> c(size_t(ds.num_classes), 0);
  for (int32_t l : ds.labels)
    if (l >= 0) ++c[size_t(l)];
  return c;
}

TEST(IoDatasets, Cora) {
  TESSERA_REQUIRE_SHARED("cora");
  const auto ds = io::read_planetoid(shared_data("cora"));
  EXPECT_EQ(ds.name, "cora");
  EXPECT_EQ(ds.graph.rows, 2708);
  EXPECT_EQ(ds.graph.nnz(), 10556);
  EXPECT_EQ(ds.features.rows, 2708);
  EXPECT_EQ(ds.features.cols, 1433);
  EXPECT_EQ(dense_nonzeros(ds.features), 49216);
  EXPECT_EQ(ds.num_classes, 7);
  EXPECT_EQ(class_sizes(ds), (std::vector<int64_t>{351, 217, 418, 818, 426, 298, 180}));
  EXPECT_EQ(ds.train.size(), 140u);
  EXPECT_EQ(ds.val.size(), 500u);
  EXPECT_EQ(ds.test.size(), 1000u);
  EXPECT_EQ(ds.train.front(), 0);
  EXPECT_EQ(ds.val.front(), 140);
  // read_graph on the directory gives the same graph.
  const auto g = io::read_graph(shared_data("cora"));
  testing::expect_same_csr(g, ds.graph);
}

TEST(IoDatasets, Citeseer) {
  TESSERA_REQUIRE_SHARED("citeseer");
  const auto ds = io::read_planetoid(shared_data("citeseer"));
  EXPECT_EQ(ds.graph.rows, 3327);
  EXPECT_EQ(ds.graph.nnz(), 9104);
  EXPECT_EQ(ds.features.cols, 3703);
  EXPECT_EQ(dense_nonzeros(ds.features), 105165);
  EXPECT_EQ(nonzero_rows(ds.features), 3327 - 15);
  EXPECT_EQ(ds.num_classes, 6);
  EXPECT_EQ(std::count(ds.labels.begin(), ds.labels.end(), -1), 15);
  EXPECT_EQ(class_sizes(ds), (std::vector<int64_t>{249, 590, 668, 701, 596, 508}));
  EXPECT_EQ(ds.train.size(), 120u);
  EXPECT_EQ(ds.val.size(), 500u);
  EXPECT_EQ(ds.test.size(), 1000u);
}

TEST(IoDatasets, PubmedPartialFeatures) {
  TESSERA_REQUIRE_SHARED("pubmed");
  const auto ds = io::read_planetoid(shared_data("pubmed"));
  EXPECT_EQ(ds.graph.rows, 19717);
  EXPECT_EQ(ds.graph.nnz(), 88648);
  EXPECT_EQ(ds.features.rows, 19717);
  EXPECT_EQ(ds.features.cols, 500);
  EXPECT_EQ(nonzero_rows(ds.features), 1060);
  EXPECT_EQ(dense_nonzeros(ds.features), 52959);
  EXPECT_EQ(class_sizes(ds), (std::vector<int64_t>{4103, 7739, 7875}));
  EXPECT_EQ(ds.train.size(), 60u);
  EXPECT_EQ(ds.val.size(), 500u);
  EXPECT_EQ(ds.test.size(), 1000u);
  // Val nodes have no features here (README).
  EXPECT_EQ(ds.features(ds.val.front(), 0), 0.0f);
}

TEST(IoDatasets, EgoFacebookSnap) {
  TESSERA_REQUIRE_SHARED("ego-facebook");
  const std::string path = shared_data("ego-facebook/facebook_combined.txt.gz");
  const auto coo = io::read_edge_list(path);
  EXPECT_EQ(coo.rows, 4039);
  EXPECT_EQ(coo.nnz(), 88234);
  BuildOptions sym;
  sym.symmetrize = true;
  const auto g = io::read_graph(path, sym);
  EXPECT_EQ(g.rows, 4039);
  EXPECT_EQ(g.nnz(), 2 * 88234);  // each undirected edge once in the file, no self loops
}

TEST(IoDatasets, WikiVoteRemapsSparseSnapIds) {
  TESSERA_REQUIRE_SHARED("wiki-vote");
  io::EdgeListOptions opt;
  opt.remap = true;
  const auto coo = io::read_edge_list(shared_data("wiki-vote/Wiki-Vote.txt.gz"), opt);
  EXPECT_EQ(coo.rows, 7115);
  EXPECT_EQ(coo.nnz(), 103689);
}

TEST(IoDatasets, CollegeMsgTemporal) {
  TESSERA_REQUIRE_SHARED("college-msg");
  const std::string path = shared_data("college-msg/CollegeMsg.txt.gz");
  const auto te = io::read_temporal_edges(path, "sdt");
  EXPECT_EQ(te.size(), 59835);
  EXPECT_EQ(te.num_nodes, 1899);
  EXPECT_TRUE(std::is_sorted(te.t.begin(), te.t.end()));
  EXPECT_EQ(te.t.front(), 1082040961);
  EXPECT_EQ(te.t.back(), 1098777142);
  // As a static graph: 20296 distinct directed pairs.
  io::EdgeListOptions eo;
  eo.extra_columns = true;
  EXPECT_EQ(io::read_graph(path, BuildOptions{}, eo).nnz(), 20296);
}

TEST(IoDatasets, EnglandCovidTemporalAndSignal) {
  TESSERA_REQUIRE_SHARED("england-covid");
  const auto te = io::read_temporal_edges(shared_data("england-covid/edges_temporal.txt.gz"));
  EXPECT_EQ(te.size(), 82529);
  EXPECT_EQ(te.num_nodes, 129);
  EXPECT_EQ(te.w.size(), 82529u);
  EXPECT_EQ(std::set<int64_t>(te.t.begin(), te.t.end()).size(), 61u);
  EXPECT_EQ(*std::min_element(te.t.begin(), te.t.end()), 0);
  EXPECT_EQ(*std::max_element(te.t.begin(), te.t.end()), 60);
  const auto s = io::read_node_signal(shared_data("england-covid/signal.txt"));
  EXPECT_EQ(s.steps(), 61);
  EXPECT_EQ(s.nodes(), 129);
}

TEST(IoDatasets, StaticGraphsWithSignals) {
  TESSERA_REQUIRE_SHARED("chickenpox-hungary");
  const auto s = io::read_node_signal(shared_data("chickenpox-hungary/signal.txt"));
  EXPECT_EQ(s.steps(), 521);
  EXPECT_EQ(s.nodes(), 20);
  const auto g = io::read_graph(shared_data("chickenpox-hungary"));
  EXPECT_EQ(g.rows, 20);
  EXPECT_EQ(g.nnz(), 102);
  if (std::filesystem::exists(shared_data("montevideo-bus"))) {
    const auto m = io::read_node_signal(shared_data("montevideo-bus/signal.txt.gz"));
    EXPECT_EQ(m.steps(), 744);
    EXPECT_EQ(m.nodes(), 675);
    EXPECT_EQ(io::read_graph(shared_data("montevideo-bus")).rows, 675);
  }
  if (std::filesystem::exists(shared_data("pedalme-london"))) {
    const auto p = io::read_graph(shared_data("pedalme-london"));
    EXPECT_EQ(p.rows, 15);
    EXPECT_EQ(p.nnz(), 225);
    EXPECT_EQ(p.values.size(), 0u);  // directory reads are structural; weights via read_edge_list
    io::EdgeListOptions w;
    w.weighted = true;
    EXPECT_EQ(io::read_edge_list(shared_data("pedalme-london/edges.txt"), w).w.size(), 225u);
  }
}

TEST(IoDatasets, RoadChicagoDirectory) {
  TESSERA_REQUIRE_SHARED("road-chicago-regional");
  const auto g = io::read_graph(shared_data("road-chicago-regional"));
  EXPECT_EQ(g.rows, 12982);  // meta_nodes: 3 isolated nodes kept
  EXPECT_EQ(g.nnz(), 39018);
}

struct TuExpect {
  const char* dir;
  size_t graphs;
  int64_t nodes, a_lines;
  std::map<int32_t, int> label_counts;
  int node_label_values, edge_label_values, attr_dim;
};

void check_tu(const TuExpect& e) {
  const auto c = io::read_tu(shared_data(e.dir));
  ASSERT_EQ(c.graphs.size(), e.graphs);
  int64_t nodes = 0, entries = 0;
  std::map<int32_t, int> labels;
  std::set<int32_t> node_labels, edge_labels;
  for (const auto& g : c.graphs) {
    nodes += g.num_nodes();
    entries += g.adj.nnz();
    ++labels[g.graph_label];
    node_labels.insert(g.node_labels.begin(), g.node_labels.end());
    edge_labels.insert(g.edge_labels.begin(), g.edge_labels.end());
    if (e.edge_label_values) {
      EXPECT_EQ(g.edge_labels.size(), g.adj.col.size());
    }
    if (e.node_label_values) {
      EXPECT_EQ(g.node_labels.size(), size_t(g.num_nodes()));
    }
    EXPECT_EQ(g.node_attrs.rows, g.num_nodes());
    EXPECT_EQ(g.node_attrs.cols, e.attr_dim);
    validate(g.adj.view());
  }
  EXPECT_EQ(nodes, e.nodes);
  EXPECT_EQ(entries, e.a_lines);
  EXPECT_EQ(labels, e.label_counts);
  EXPECT_EQ(int(node_labels.size()), e.node_label_values);
  EXPECT_EQ(int(edge_labels.size()), e.edge_label_values);
  // The whole collection as one block-diagonal graph.
  const auto whole = io::read_graph(shared_data(e.dir));
  EXPECT_EQ(whole.rows, e.nodes);
  EXPECT_EQ(whole.nnz(), e.a_lines);
}

TEST(IoDatasets, Mutag) {
  TESSERA_REQUIRE_SHARED("mutag");
  check_tu({"mutag", 188, 3371, 7442, {{-1, 63}, {1, 125}}, 7, 4, 0});
}
TEST(IoDatasets, Enzymes) {
  TESSERA_REQUIRE_SHARED("enzymes");
  check_tu({"enzymes", 600, 19580, 74564, {{1, 100}, {2, 100}, {3, 100}, {4, 100}, {5, 100}, {6, 100}}, 3, 0, 18});
}
TEST(IoDatasets, Nci1) {
  TESSERA_REQUIRE_SHARED("nci1");
  check_tu({"nci1", 4110, 122747, 265506, {{0, 2053}, {1, 2057}}, 37, 0, 0});
}
TEST(IoDatasets, ProteinsAndPtcMr) {
  TESSERA_REQUIRE_SHARED("proteins");
  check_tu({"proteins", 1113, 43471, 162088, {{1, 663}, {2, 450}}, 3, 0, 1});
  TESSERA_REQUIRE_SHARED("ptc_mr");
  check_tu({"ptc_mr", 344, 4915, 10108, {{-1, 192}, {1, 152}}, 18, 4, 0});
}

// Edge labels must follow their CSR entries: in MUTAG the label of (u, v) equals that of (v, u).
TEST(IoDatasets, MutagEdgeLabelsAlignedWithEntries) {
  TESSERA_REQUIRE_SHARED("mutag");
  const auto c = io::read_tu(shared_data("mutag"));
  for (const auto& g : c.graphs) {
    for (int64_t r = 0; r < g.adj.rows; ++r)
      for (int32_t k = g.adj.rowptr[size_t(r)]; k < g.adj.rowptr[size_t(r) + 1]; ++k) {
        const int32_t c2 = g.adj.col[size_t(k)];
        const auto b = g.adj.col.begin() + g.adj.rowptr[size_t(c2)], e = g.adj.col.begin() + g.adj.rowptr[size_t(c2) + 1];
        const auto it = std::lower_bound(b, e, int32_t(r));
        ASSERT_TRUE(it != e && *it == r) << "A is not symmetric";
        EXPECT_EQ(g.edge_labels[size_t(k)], g.edge_labels[size_t(it - g.adj.col.begin())]);
      }
  }
}

}  // namespace
}  // namespace tessera
