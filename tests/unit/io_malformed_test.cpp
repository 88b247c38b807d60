// Truncated, garbled and hostile files: every one must end in a tessera::Error that names the
// file and (for text formats) the line, never a crash, a hang, a huge allocation or a partial graph.
#include <cstring>
#include <random>

#include "tessera/io/graph_io.hpp"
#include "unit/io_test_support.hpp"

namespace tessera {
namespace {

using testing::expect_error;
using testing::TempDir;
using testing::write_gz;
using testing::write_text;

// Writes content to name and expects reading it as an edge list to fail with "name:line: what".
void expect_edge_list_error(const TempDir& dir, const std::string& name, const std::string& content,
                            const std::string& where, const std::string& what, io::EdgeListOptions opt = {}) {
  write_text(dir.file(name), content);
  expect_error([&] { (void)io::read_edge_list(dir.file(name), opt); }, {dir.file(name) + ":" + where + ": ", what});
}

TEST(IoMalformed, EdgeListColumnsAndNumbers) {
  TempDir dir;
  expect_edge_list_error(dir, "empty.txt", "", "0", "no edges in the file (empty file)");
  expect_edge_list_error(dir, "comments.txt", "# only\n% comments\n\n", "3", "only comments");
  expect_edge_list_error(dir, "missing.txt", "0 1\n1 2\n3\n", "3", "expected 2 columns (src dst), got 1");
  expect_edge_list_error(dir, "extra.txt", "0 1\n1 2 7\n", "2", "got 3 (trailing '7')");
  expect_edge_list_error(dir, "negative.txt", "0 1\n1 -3\n", "2", "target id -3 is negative");
  expect_edge_list_error(dir, "garbage.txt", "0 1\n1 2x\n", "2", "target id '2x' is not an integer");
  expect_edge_list_error(dir, "binary.txt", std::string("0 1\n\x01\xff\x00 2\n", 9), "2", "source id");
  expect_edge_list_error(dir, "overflow.txt", "0 99999999999999999999999\n", "1", "is not an integer");
  expect_edge_list_error(dir, "float_id.txt", "0 1.5\n", "1", "target id '1.5' is not an integer");
  io::EdgeListOptions w;
  w.weighted = true;
  expect_edge_list_error(dir, "noweight.txt", "0 1 1\n1 2\n", "2", "expected 3 columns", w);
  expect_edge_list_error(dir, "nan.txt", "0 1 1\n1 2 nan\n", "2", "weight 'nan' is not finite", w);
  expect_edge_list_error(dir, "inf.txt", "0 1 -inf\n", "1", "weight '-inf' is not finite", w);
  expect_edge_list_error(dir, "big.txt", "0 1 1e39\n", "1", "overflows float", w);
  expect_edge_list_error(dir, "word.txt", "0 1 heavy\n", "1", "weight 'heavy' is not a number", w);
}

TEST(IoMalformed, EdgeListIdsAgainstNodeCountAndBase) {
  TempDir dir;
  io::EdgeListOptions n3;
  n3.num_nodes = 3;
  expect_edge_list_error(dir, "range.txt", "# c\n0 1\n\n1 5\n2 0\n", "4", "target id 5 out of range: the graph has 3 nodes", n3);
  io::EdgeListOptions one;
  one.base = io::IdBase::one;
  expect_edge_list_error(dir, "zero.txt", "1 2\n2 3\n0 1\n", "3", "source id 0 is 0 in a 1-based file", one);
  // One huge id would make the node count (and the CSR offsets) enormous.
  expect_edge_list_error(dir, "huge.txt", "0 1\n1 900000000000000\n", "2", "implies 900000000000001 nodes");
  io::EdgeListOptions absurd;
  absurd.num_nodes = int64_t(1) << 50;
  write_text(dir.file("n.txt"), "0 1\n");
  expect_error([&] { (void)io::read_edge_list(dir.file("n.txt"), absurd); }, {dir.file("n.txt"), "implausible"});
  // A header's edge count exposes a truncated file; its node count bounds the ids.
  expect_edge_list_error(dir, "short.txt", "# tessera edge list: nodes=4 edges=3 base=0 weighted=0\n0 1\n1 2\n", "3",
                         "header declares 3 edges but the file has 2 (truncated?)");
  expect_edge_list_error(dir, "hdr.txt", "# tessera edge list: nodes=2 edges=1 base=0 weighted=0\n0 2\n", "2",
                         "target id 2 out of range");
  expect_edge_list_error(dir, "badhdr.txt", "# tessera edge list: nodes=x\n0 1\n", "1", "header value 'x' is not an integer");
  expect_error([&] { (void)io::read_edge_list(dir.file("does_not_exist.txt")); }, {"does_not_exist.txt", "cannot open"});
  expect_error([&] { (void)io::read_edge_list(dir.str()); }, {dir.str(), "is a directory"});
}

TEST(IoMalformed, TruncatedAndCorruptGzip) {
  TempDir dir;
  // Random content so deflate cannot squeeze it into a few bytes.
  std::mt19937_64 rng(testing::seed());
  std::string text;
  for (int i = 0; i < 200000; ++i) text += std::to_string(rng() % 100000) + " " + std::to_string(rng() % 100000) + "\n";
  write_gz(dir.file("full.txt.gz"), text);
  const std::string gz = testing::read_bytes(dir.file("full.txt.gz"));
  ASSERT_GT(gz.size(), 100000u);
  write_text(dir.file("cut.txt.gz"), gz.substr(0, gz.size() / 2));
  expect_error([&] { (void)io::read_edge_list(dir.file("cut.txt.gz")); }, {dir.file("cut.txt.gz") + ":", "truncated gzip stream"});
  write_text(dir.file("tail.txt.gz"), gz.substr(0, gz.size() - 6));  // only the trailer (CRC, length) lost
  expect_error([&] { (void)io::read_edge_list(dir.file("tail.txt.gz")); }, {dir.file("tail.txt.gz") + ":"});
  std::string flipped = gz;
  for (size_t i = gz.size() / 3; i < gz.size() / 3 + 64; ++i) flipped[i] = char(flipped[i] ^ 0x5a);
  write_text(dir.file("flip.txt.gz"), flipped);
  expect_error([&] { (void)io::read_edge_list(dir.file("flip.txt.gz")); }, {dir.file("flip.txt.gz") + ":"});
  write_text(dir.file("fake.txt.gz"), "0 1\n");
  expect_error([&] { (void)io::read_edge_list(dir.file("fake.txt.gz")); }, {"fake.txt.gz", "not gzip data"});
  write_gz(dir.file("empty.txt.gz"), "");
  expect_error([&] { (void)io::read_edge_list(dir.file("empty.txt.gz")); }, {"empty.txt.gz:0:", "empty file"});
  EXPECT_EQ(io::read_edge_list(dir.file("full.txt.gz")).nnz(), 200000);
}

void expect_mtx_error(const TempDir& dir, const std::string& content, const std::string& where, const std::string& what) {
  static int counter = 0;
  std::string name = "m";
  name += std::to_string(counter++);
  name += ".mtx";
  const std::string path = dir.file(name);
  write_text(path, content);
  expect_error([&] { (void)io::read_matrix_market(path); }, {path + ":" + where + ": ", what});
}

TEST(IoMalformed, MatrixMarket) {
  TempDir dir;
  const std::string real = "%%MatrixMarket matrix coordinate real general\n";
  const std::string pattern = "%%MatrixMarket matrix coordinate pattern general\n";
  expect_mtx_error(dir, "", "1", "empty file");
  expect_mtx_error(dir, "3 3 1\n1 1 1\n", "1", "not a Matrix Market file");
  expect_mtx_error(dir, "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "1", "'array' is not supported");
  expect_mtx_error(dir, "%%MatrixMarket matrix coordinate complex general\n", "1", "field 'complex'");
  expect_mtx_error(dir, "%%MatrixMarket matrix coordinate real hermitian\n", "1", "symmetry 'hermitian'");
  expect_mtx_error(dir, real + "% no size line\n", "2", "missing size line");
  expect_mtx_error(dir, real + "3 3\n", "2", "size line needs 3 integers");
  expect_mtx_error(dir, real + "3 -3 1\n", "2", "negative column count");
  expect_mtx_error(dir, real + "3 3 1 7\n1 1 1\n", "2", "trailing '7'");
  // Hostile sizes: rejected from the header, before anything is allocated.
  expect_mtx_error(dir, pattern + "1000000000000 1000000000000 1\n1 1\n", "2", "declared row count 1000000000000 is implausible");
  expect_mtx_error(dir, pattern + "10 10 101\n1 1\n", "2", "declared 101 entries exceed the 10 x 10 matrix");
  expect_mtx_error(dir, pattern + "100000 100000 4000000000\n1 1\n", "2", "cannot fit in a file of");
  expect_mtx_error(dir, "%%MatrixMarket matrix coordinate real general extra\n", "1", "banner must be");
  expect_mtx_error(dir, "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", "2", "must be square");
  // Entries.
  expect_mtx_error(dir, real + "3 3 3\n1 1 1\n2 2 2\n", "4", "expected 3 entries, found 2 (truncated?)");
  expect_mtx_error(dir, real + "3 3 1\n1 1 1\n2 2 2\n", "4", "more entries than the 1 declared");
  expect_mtx_error(dir, real + "3 3 1\n0 1 1\n", "3", "row index 0 out of range [1, 3]");
  expect_mtx_error(dir, real + "3 3 1\n1 4 1\n", "3", "column index 4 out of range [1, 3]");
  expect_mtx_error(dir, real + "3 3 1\n1 -1 1\n", "3", "column index -1 out of range");
  expect_mtx_error(dir, real + "3 3 1\n1 1 nan\n", "3", "value 'nan' is not finite");
  expect_mtx_error(dir, real + "3 3 1\n1 1 inf\n", "3", "value 'inf' is not finite");
  expect_mtx_error(dir, real + "3 3 1\n1 1\n", "3", "expected 3 columns, got 2");
  expect_mtx_error(dir, real + "3 3 1\n1 1 1 junk\n", "3", "trailing 'junk'");
  expect_mtx_error(dir, pattern + "3 3 1\n1 1 1\n", "3", "expected 2 columns, trailing '1'");
  expect_mtx_error(dir, "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n", "3", "integer value '1.5'");
  expect_mtx_error(dir, "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", "3", "diagonal entry");
}

TEST(IoMalformed, BinaryEveryCheck) {
  TempDir dir;
  const auto g = testing::random_graph(testing::seed(), true, 200);
  io::write_binary(dir.file("g.tsr"), g.view());
  const std::string good = testing::read_bytes(dir.file("g.tsr"));
  auto expect_bad = [&](const std::string& bytes, const std::string& what) {
    write_text(dir.file("bad.tsr"), bytes);
    expect_error([&] { (void)io::read_binary(dir.file("bad.tsr")); }, {dir.file("bad.tsr") + ": ", what});
  };
  auto patched = [&](size_t at, char v) {
    std::string s = good;
    s[at] = v;
    return s;
  };
  expect_bad("", "truncated: 0 bytes, shorter than the 48-byte header");
  expect_bad(good.substr(0, 30), "shorter than the 48-byte header");
  expect_bad(patched(0, 'X'), "bad magic");
  expect_bad(patched(8, 2), "unsupported version 2");
  expect_bad(patched(12, 5), "bad index width 5");
  expect_bad(patched(13, 6), "unknown flags");
  expect_bad(patched(14, 1), "reserved header fields are not zero");
  expect_bad(patched(23, char(0x80)), "negative sizes");                    // rows < 0
  expect_bad(patched(38, 0x7f), "size mismatch: header claims");            // nnz huge
  {
    std::string s = good;  // nnz + 1: the arrays no longer add up to the file's length
    int64_t nnz;
    std::memcpy(&nnz, s.data() + 32, 8);
    ++nnz;
    std::memcpy(s.data() + 32, &nnz, 8);
    expect_bad(s, "truncated: header implies");
  }
  expect_bad(good.substr(0, good.size() - 1), "truncated: header implies");
  expect_bad(good + "x", "size mismatch (trailing bytes)");
  expect_bad(patched(good.size() - 1, char(good.back() ^ 1)), "checksum mismatch in the values");
  expect_bad(patched(60, char(good[60] ^ 4)), "checksum mismatch in the row offsets");
  expect_bad(patched(48 + (g.rows + 1) * 4 + 3, char(good[48 + (g.rows + 1) * 4 + 3] ^ 1)),
             "checksum mismatch in the column indices");
  expect_bad(patched(good.size() - 32, char(good[good.size() - 32] ^ 1)), "checksum mismatch in the header");
  // The right answer still loads.
  testing::expect_same_csr(io::read_binary(dir.file("g.tsr")), g);
}

TEST(IoMalformed, TemporalAndSignal) {
  TempDir dir;
  auto temporal = [&](const std::string& content, const std::string& where, const std::string& what,
                      const std::string& order = "tsd") {
    write_text(dir.file("t.txt"), content);
    expect_error([&] { (void)io::read_temporal_edges(dir.file("t.txt"), order); }, {dir.file("t.txt") + ":" + where + ": ", what});
  };
  temporal("", "0", "empty file");
  temporal("0 1 2\n0 1\n", "2", "expected 3 or 4 columns");
  temporal("0 1 2\n0 1 2 3\n", "2", "expected 3 columns like the first record, got 4");
  temporal("0 1 2 1 9\n", "1", "more than 4");
  temporal("0 1 2 1\n1 1 2 nan\n", "2", "weight 'nan' is not finite");
  temporal("0 1 -2\n", "1", "target id -2 is negative");
  temporal("x 1 2\n", "1", "time 'x' is not an integer");
  temporal("1 2 3.5\n", "1", "time '3.5'", "sdt");
  expect_error([&] { (void)io::read_temporal_edges(dir.file("t.txt"), "dst"); }, {"must be \"tsd\" or \"sdt\""});

  auto signal = [&](const std::string& content, const std::string& where, const std::string& what) {
    write_text(dir.file("s.txt"), content);
    expect_error([&] { (void)io::read_node_signal(dir.file("s.txt")); }, {dir.file("s.txt") + ":" + where + ": ", what});
  };
  signal("", "0", "empty file");
  signal("1 2 3\n4 5\n", "2", "expected 3 values like the first step, got 2");
  signal("1 2 3\n4 5 6 7\n", "2", "got 4");
  signal("1 nan 3\n", "1", "value 'nan' is not finite");
  signal("1 2 3\n4 5 6x\n", "2", "value '6x' is not a number");
}

// A small valid TU collection in dir, with optional damage applied to one file.
void write_tu(const TempDir& dir, const std::string& file = "", const std::string& content = "") {
  auto put = [&](const std::string& name, const std::string& text) {
    write_text(dir.file(name), name == file ? content : text);
  };
  // Graph 1: nodes 1-3 (path 1-2-3), graph 2: nodes 4-5 (one edge).
  put("T_A.txt", "1, 2\n2, 1\n2, 3\n3, 2\n4, 5\n5, 4\n");
  put("T_graph_indicator.txt", "1\n1\n1\n2\n2\n");
  put("T_graph_labels.txt", "1\n-1\n");
  put("T_node_labels.txt", "0\n1\n2\n3\n4\n");
  put("T_edge_labels.txt", "10\n11\n12\n13\n14\n15\n");
  put("T_node_attributes.txt", "1.0, 2\n3, 4\n5, 6\n7, 8\n9, 10\n");
}

TEST(IoMalformed, TuCollections) {
  TempDir dir;
  auto expect_tu = [&](const std::string& file, const std::string& content, const std::string& where,
                       const std::string& what) {
    write_tu(dir, file, content);
    expect_error([&] { (void)io::read_tu(dir.str()); }, {dir.file(file) + where, what});
  };
  expect_tu("T_A.txt", "1, 2\n2, 4\n", ":2: ", "edge joins graph 1 and graph 2");
  expect_tu("T_A.txt", "1, 2\n2, 6\n", ":2: ", "node id 6 out of range [1, 5]");
  expect_tu("T_A.txt", "1, 2\n2\n", ":2: ", "expected 2 columns");
  expect_tu("T_A.txt", "", ":0: ", "empty file");
  expect_tu("T_graph_indicator.txt", "1\n1\n1\n3\n2\n", ":4: ", "graph id 3 out of range [1, 2]");
  expect_tu("T_graph_indicator.txt", "1\n1\n-1\n2\n2\n", ":3: ", "graph id -1 out of range");
  expect_tu("T_edge_labels.txt", "10\n11\n12\n", ": ", "3 labels, expected one per line of A (6)");
  expect_tu("T_node_labels.txt", "0\n1\nx\n3\n4\n", ":3: ", "label 'x' is not an integer");
  expect_tu("T_node_attributes.txt", "1, 2\n3\n5, 6\n7, 8\n9, 10\n", ":2: ", "expected 2 attributes like the first line, got 1");
  expect_tu("T_node_attributes.txt", "1, 2\n3, 4\n5, nan\n7, 8\n9, 10\n", ":3: ", "attribute 'nan' is not finite");
  expect_tu("T_node_attributes.txt", "1, 2\n3, 4\n", ":2: ", "2 lines, expected 5 (truncated?)");
  // And the undamaged collection reads back by hand.
  write_tu(dir);
  const auto c = io::read_tu(dir.str());
  ASSERT_EQ(c.graphs.size(), 2u);
  const auto& g0 = c.graphs[0];
  EXPECT_EQ(g0.num_nodes(), 3);
  EXPECT_EQ(g0.graph_label, 1);
  EXPECT_EQ(g0.adj.rowptr, (std::vector<int32_t>{0, 1, 3, 4}));
  EXPECT_EQ(g0.adj.col, (std::vector<int32_t>{1, 0, 2, 1}));
  // Entry (row r, col c) is A line `c, r`: row 0 col 1 is line "2, 1" (label 11), etc.
  EXPECT_EQ(g0.edge_labels, (std::vector<int32_t>{11, 10, 13, 12}));
  EXPECT_EQ(g0.node_labels, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(g0.node_attrs.cols, 2);
  EXPECT_EQ(g0.node_attrs(2, 1), 6.0f);
  const auto& g1 = c.graphs[1];
  EXPECT_EQ(g1.num_nodes(), 2);
  EXPECT_EQ(g1.graph_label, -1);
  EXPECT_EQ(g1.adj.col, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(g1.edge_labels, (std::vector<int32_t>{15, 14}));
  EXPECT_EQ(g1.node_labels, (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(g1.node_attrs(0, 0), 7.0f);
  EXPECT_TRUE(g1.adj.values.empty());
}

// A small valid Planetoid directory with optional damage to one file.
void write_planetoid(const TempDir& dir, const std::string& file = "", const std::string& content = "") {
  auto put = [&](const std::string& name, const std::string& text) {
    write_text(dir.file(name), name == file ? content : text);
  };
  put("meta.txt", "name tiny\nnum_nodes 4\nnum_features 3\nnum_classes 2\nnum_edge_lines 4\nnum_feature_nonzeros 4\n"
                  "num_train 2\nnum_val 1\nnum_test 1\nclass_counts 2,1\n");
  put("edges.txt", "0 1\n1 0\n2 3\n3 2\n");
  put("features.txt", "1 0:1\n2 0:0.5 2:1\n0\n1 1:2\n");
  put("labels.txt", "0\n1\n0\n-1\n");
  put("train.txt", "0\n1\n");
  put("val.txt", "2\n");
  put("test.txt", "0\n");
}

TEST(IoMalformed, Planetoid) {
  TempDir dir;
  auto expect_pl = [&](const std::string& file, const std::string& content, const std::string& where,
                       const std::string& what) {
    write_planetoid(dir, file, content);
    expect_error([&] { (void)io::read_planetoid(dir.str()); }, {dir.file(file) + where, what});
  };
  expect_pl("labels.txt", "0\n1\n0\n", ": ", "3 labels but");
  expect_pl("labels.txt", "0\n1\n2\n0\n", ":3: ", "label 2 out of range [-1, 2)");
  expect_pl("labels.txt", "0\n0\n0\n1\n", ": ", "class 0 has 3 nodes");
  expect_pl("edges.txt", "0 1\n1 4\n2 3\n3 2\n", ":2: ", "target id 4 out of range");
  expect_pl("edges.txt", "0 1\n1 0\n2 3\n", ": ", "3 edge lines but");
  expect_pl("features.txt", "1 0:1\n2 0:0.5 3:1\n0\n1 1:2\n", ":2: ", "feature column 3 out of range [0, 3)");
  expect_pl("features.txt", "1 0:1\n3 0:0.5 2:1\n0\n1 1:2\n", ":2: ", "declares 3 nonzeros but lists 2");
  expect_pl("features.txt", "1 0:1\n2 2:0.5 0:1\n0\n1 1:2\n", ":2: ", "not strictly ascending");
  expect_pl("features.txt", "1 0:1\n2 0:0.5 2:1\n0\n", ":3: ", "3 feature lines, expected 4 (truncated?)");
  expect_pl("features.txt", "1 0:1\n2 0:inf 2:1\n0\n1 1:2\n", ":2: ", "feature value 'inf' is not finite");
  expect_pl("train.txt", "0\n9\n", ":2: ", "node id 9 out of range [0, 4)");
  expect_pl("test.txt", "3\n", ":1: ", "node 3 has no label");
  expect_pl("val.txt", "2\n1\n", ": ", "2 ids but");
  expect_pl("meta.txt", "num_nodes 4\n", ": ", "missing key 'num_features'");
  // A hostile node count is refuted by the labels file before anything is sized by it.
  write_planetoid(dir, "meta.txt", "num_nodes 4000000000000\nnum_features 3\nnum_classes 2\n");
  expect_error([&] { (void)io::read_planetoid(dir.str()); },
               {dir.file("labels.txt") + ": 4 labels but " + dir.file("meta.txt") + " declares num_nodes 4000000000000"});
  // The undamaged set reads back by hand.
  write_planetoid(dir);
  const auto ds = io::read_planetoid(dir.str());
  EXPECT_EQ(ds.name, "tiny");
  EXPECT_EQ(ds.graph.rows, 4);
  EXPECT_EQ(ds.graph.nnz(), 4);
  EXPECT_EQ(ds.features(1, 0), 0.5f);
  EXPECT_EQ(ds.features(1, 2), 1.0f);
  EXPECT_EQ(ds.features(3, 1), 2.0f);
  EXPECT_EQ(ds.features(2, 0), 0.0f);
  EXPECT_EQ(ds.labels, (std::vector<int32_t>{0, 1, 0, -1}));
  EXPECT_EQ(ds.train, (std::vector<int64_t>{0, 1}));
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Random damage (flipped, deleted, inserted bytes; truncation) to valid files of every format:
// each read must either succeed or throw tessera::Error, never crash or throw anything else.
TEST(IoMalformed, RandomMutationsEndInErrorOrValidGraph) {
  TempDir dir;
  const uint64_t seed = testing::seed();
  std::mt19937_64 rng(seed);
  const auto g = testing::random_graph(seed, true, 60);
  io::write_graph(dir.file("g.txt"), g.view());
  io::write_graph(dir.file("g.mtx"), g.view());
  io::write_graph(dir.file("g.tsr"), g.view());
  io::write_graph(dir.file("g.txt.gz"), g.view());
  write_text(dir.file("t.txt"), "0 1 2 1.5\n0 2 1 2\n1 0 0 3\n2 1 1 1\n");
  write_text(dir.file("s.txt"), "1 2 3\n4 5 6\n7 8 9\n");
  struct Case {
    std::string file;
    std::function<void(const std::string&)> read;
  };
  const std::vector<Case> cases = {
      {"g.txt", [](const std::string& p) { (void)io::read_edge_list(p); }},
      {"g.mtx", [](const std::string& p) { (void)io::read_matrix_market(p); }},
      {"g.tsr", [](const std::string& p) { (void)io::read_binary(p); }},
      {"g.txt.gz", [](const std::string& p) { (void)io::read_graph(p); }},
      {"t.txt", [](const std::string& p) { (void)io::read_temporal_edges(p); }},
      {"s.txt", [](const std::string& p) { (void)io::read_node_signal(p); }},
  };
  const char alphabet[] = "0123456789 \n\t,.-+e%#:xnaif\r\x00\xff";
  int errors = 0, loads = 0;
  for (const auto& c : cases) {
    const std::string good = testing::read_bytes(dir.file(c.file));
    for (int trial = 0; trial < 60; ++trial) {
      std::string bad = good;
      const int edits = 1 + int(rng() % 4);
      for (int e = 0; e < edits && !bad.empty(); ++e) {
        const size_t at = rng() % bad.size();
        switch (rng() % 4) {
          case 0: bad[at] = char(bad[at] ^ (1 << (rng() % 8))); break;
          case 1: bad.erase(at, 1 + rng() % 8); break;
          case 2: bad.insert(at, 1, alphabet[rng() % (sizeof alphabet - 1)]); break;
          default: bad.resize(at); break;
        }
      }
      const std::string path = dir.file("bad_" + c.file);
      write_text(path, bad);
      try {
        c.read(path);
        ++loads;
      } catch (const Error& e) {
        ++errors;
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      } catch (const std::exception& e) {
        ADD_FAILURE() << c.file << " trial " << trial << " seed " << seed << ": non-tessera exception " << e.what();
      }
    }
  }
  EXPECT_GT(errors, 100);  // most damage must be detected
  std::printf("[ mutations ] %d rejected with tessera::Error, %d still valid\n", errors, loads);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(IoMalformed, TuHostileGraphIdWithoutLabelsFile) {
  TempDir dir;
  write_text(dir.file("H_A.txt"), "1, 2\n2, 1\n");
  write_text(dir.file("H_graph_indicator.txt"), "1\n1000000000000\n");
  expect_error([&] { (void)io::read_tu(dir.str()); },
               {dir.file("H_graph_indicator.txt") + ":2: ", "graph id 1000000000000 exceeds the number of nodes (2)"});
  std::filesystem::create_directory(dir.file("empty"));
  expect_error([&] { (void)io::read_tu(dir.file("empty")); }, {dir.file("empty"), "not a TU collection"});
  expect_error([&] { (void)io::read_tu(dir.file("nothing")); }, {dir.file("nothing"), "cannot list directory"});
}

// A gzip bomb: a few hundred KB that inflate to one 260 MB line. The reader must stop at its
// line-length cap instead of buffering it all.
TEST(IoMalformed, GzipBombWithoutNewlines) {
  TempDir dir;
  gzFile g = gzopen(dir.file("bomb.txt.gz").c_str(), "wb1");
  ASSERT_NE(g, nullptr);
  const std::string chunk(size_t(1) << 20, '1');
  for (int i = 0; i < 260; ++i) ASSERT_EQ(gzwrite(g, chunk.data(), unsigned(chunk.size())), int(chunk.size()));
  ASSERT_EQ(gzclose(g), Z_OK);
  expect_error([&] { (void)io::read_edge_list(dir.file("bomb.txt.gz")); },
               {dir.file("bomb.txt.gz") + ":1: ", "line longer than 256 MiB"});
}

}  // namespace
}  // namespace tessera
