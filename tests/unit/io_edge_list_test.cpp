// Edge lists and Matrix Market: hand-checked tiny files.
#include "tessera/io/graph_io.hpp"
#include "unit/io_test_support.hpp"

namespace tessera {
namespace {

using testing::TempDir;
using testing::write_gz;
using testing::write_text;

TEST(IoEdgeList, ZeroBasedWithCommentsAndBlankLines) {
  TempDir dir;
  write_text(dir.file("g.txt"), "# a comment\n% another\n\n0 1\n1\t2\r\n2 0\n  \n3 3");  // no final newline
  const auto coo = io::read_edge_list(dir.file("g.txt"));
  EXPECT_EQ(coo.rows, 4);
  EXPECT_EQ(coo.cols, 4);
  EXPECT_EQ(coo.src, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(coo.dst, (std::vector<int64_t>{1, 2, 0, 3}));
  EXPECT_TRUE(coo.w.empty());
}

TEST(IoEdgeList, AutoDetectsOneBasedAndExplicitBaseWins) {
  TempDir dir;
  write_text(dir.file("g.txt"), "1 2\n2 3\n");
  auto coo = io::read_edge_list(dir.file("g.txt"));
  EXPECT_EQ(coo.rows, 3);
  EXPECT_EQ(coo.src, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(coo.dst, (std::vector<int64_t>{1, 2}));
  io::EdgeListOptions zero;
  zero.base = io::IdBase::zero;
  coo = io::read_edge_list(dir.file("g.txt"), zero);
  EXPECT_EQ(coo.rows, 4);
  EXPECT_EQ(coo.src, (std::vector<int64_t>{1, 2}));
}

TEST(IoEdgeList, WeightsCommasAndGzip) {
  TempDir dir;
  write_gz(dir.file("g.csv.gz"), "0,1,0.5\n1, 2, -2e-3\n2,0,7\n");
  io::EdgeListOptions opt;
  opt.weighted = true;
  const auto coo = io::read_edge_list(dir.file("g.csv.gz"), opt);
  EXPECT_EQ(coo.nnz(), 3);
  EXPECT_EQ(coo.w, (std::vector<float>{0.5f, -2e-3f, 7.0f}));
  EXPECT_EQ(coo.dst, (std::vector<int64_t>{1, 2, 0}));
}

TEST(IoEdgeList, ExplicitDelimiterAndExtraColumns) {
  TempDir dir;
  write_text(dir.file("g.txt"), "0;1;x y\n2 ; 1;z\n");
  io::EdgeListOptions opt;
  opt.delimiter = ';';
  opt.extra_columns = true;
  const auto coo = io::read_edge_list(dir.file("g.txt"), opt);
  EXPECT_EQ(coo.src, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(coo.dst, (std::vector<int64_t>{1, 1}));
}

TEST(IoEdgeList, RemapsSparseIdsInOrderOfFirstAppearance) {
  TempDir dir;
  write_text(dir.file("g.txt"), "100 7\n7 900000000000\n100 900000000000\n");
  io::EdgeListOptions opt;
  opt.remap = true;
  const auto coo = io::read_edge_list(dir.file("g.txt"), opt);
  EXPECT_EQ(coo.rows, 3);
  EXPECT_EQ(coo.src, (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(coo.dst, (std::vector<int64_t>{1, 2, 2}));
}

TEST(IoEdgeList, NumNodesKeepsIsolatedNodes) {
  TempDir dir;
  write_text(dir.file("g.txt"), "0 1\n");
  io::EdgeListOptions opt;
  opt.num_nodes = 10;
  EXPECT_EQ(io::read_edge_list(dir.file("g.txt"), opt).rows, 10);
}

TEST(IoEdgeList, WriterHeaderKeepsNodeCountBaseAndWeights) {
  TempDir dir;
  // Node 0 has no edges: without the header, auto-detection would read the file as 1-based.
  Coo<int64_t> coo;
  coo.rows = coo.cols = 5;
  coo.src = {1, 2};
  coo.dst = {2, 1};
  coo.w = {0.25f, 3.0f};
  const auto g = build_csr(coo);
  io::write_edge_list(dir.file("g.el"), g.view());
  const std::string text = testing::read_bytes(dir.file("g.el"));
  EXPECT_EQ(text, "# tessera edge list: nodes=5 edges=2 base=0 weighted=1\n2 1 3\n1 2 0.25\n");
  const auto back = io::read_edge_list(dir.file("g.el"));
  EXPECT_EQ(back.rows, 5);
  testing::expect_same_csr(build_csr(back), g);
}

TEST(IoMatrixMarket, SymmetricRealIsMirroredAndEntryIsEdgeColToRow) {
  TempDir dir;
  write_text(dir.file("m.mtx"),
             "%%MatrixMarket matrix coordinate real symmetric\n% comment\n3 3 3\n2 1 0.5\n3 3 2\n3 2 -1\n");
  const auto g = io::read_matrix_market(dir.file("m.mtx"));
  EXPECT_EQ(g.rows, 3);
  EXPECT_EQ(g.rowptr, (std::vector<int64_t>{0, 1, 3, 5}));
  EXPECT_EQ(g.col, (std::vector<int64_t>{1, 0, 2, 1, 2}));
  EXPECT_EQ(g.values, (std::vector<float>{0.5f, 0.5f, -1.0f, -1.0f, 2.0f}));
}

TEST(IoMatrixMarket, PatternGeneralRectangularAndIntegerAndSkew) {
  TempDir dir;
  write_text(dir.file("p.mtx"), "%%MatrixMarket matrix coordinate pattern general\n2 4 2\n1 4\n2 1\n");
  auto g = io::read_matrix_market(dir.file("p.mtx"));
  EXPECT_EQ(g.rows, 2);
  EXPECT_EQ(g.cols, 4);
  EXPECT_EQ(g.col, (std::vector<int64_t>{3, 0}));
  EXPECT_FALSE(g.weighted());
  write_text(dir.file("i.mtx"), "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 3\n");
  g = io::read_matrix_market(dir.file("i.mtx"));
  EXPECT_EQ(g.col, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(g.values, (std::vector<float>{-3.0f, 3.0f}));
}

TEST(IoTemporal, TimeFirstAndSnapOrder) {
  TempDir dir;
  write_text(dir.file("t.txt"), "0 1 2 5.5\n0 2 1 1\n3 0 0 2\n");
  auto te = io::read_temporal_edges(dir.file("t.txt"));
  EXPECT_EQ(te.num_nodes, 3);
  EXPECT_EQ(te.t, (std::vector<int64_t>{0, 0, 3}));
  EXPECT_EQ(te.src, (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(te.w, (std::vector<float>{5.5f, 1.0f, 2.0f}));
  write_gz(dir.file("s.txt.gz"), "1 2 1082040961\n3 1 1082155839\n");
  te = io::read_temporal_edges(dir.file("s.txt.gz"), "sdt");
  EXPECT_EQ(te.num_nodes, 3);  // 1-based SNAP ids
  EXPECT_EQ(te.src, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(te.dst, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(te.t, (std::vector<int64_t>{1082040961, 1082155839}));
  EXPECT_TRUE(te.w.empty());
}

TEST(IoTemporal, NodeSignal) {
  TempDir dir;
  write_text(dir.file("s.txt"), "1 2 3\n-0.5 1e-3 4\n");
  const auto s = io::read_node_signal(dir.file("s.txt"));
  EXPECT_EQ(s.steps(), 2);
  EXPECT_EQ(s.nodes(), 3);
  EXPECT_EQ(s.values(1, 0), -0.5f);
  EXPECT_EQ(s.values(1, 1), 1e-3f);
}

}  // namespace
}  // namespace tessera
