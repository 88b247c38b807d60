// Writers round-trip through the loaders on random graphs (fresh seed per run), and read_graph
// dispatches by extension.
#include "tessera/io/graph_io.hpp"
#include "unit/io_test_support.hpp"

namespace tessera {
namespace {

using testing::TempDir;

class IoRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(IoRoundTrip, RandomGraphsReadBackEqual) {
  TempDir dir;
  const std::string name = std::string("g") + GetParam();
  for (int trial = 0; trial < 6; ++trial) {
    const uint64_t seed = testing::seed(uint64_t(trial));
    const bool weighted = trial % 2 == 0;
    const auto g = testing::random_graph(seed, weighted);
    SCOPED_TRACE(::testing::Message() << "seed " << seed << " rows " << g.rows << " nnz " << g.nnz());
    io::write_graph(dir.file(name), g.view());
    EXPECT_TRUE(dir.no_temp_files());
    testing::expect_same_csr(io::read_graph(dir.file(name)), g);
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, IoRoundTrip,
                         ::testing::Values(".txt", ".el", ".edges.gz", ".mtx", ".mtx.gz", ".tsr"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (c == '.') c = '_';
                           return "ext" + s;
                         });

TEST(IoRoundTrip, EmptyAndEdgelessGraphs) {
  TempDir dir;
  Csr<int64_t> empty;  // 0 nodes
  Csr<int64_t> edgeless;
  edgeless.rows = edgeless.cols = 7;
  edgeless.rowptr.assign(8, 0);
  for (const char* ext : {".txt", ".mtx", ".tsr"}) {
    for (const auto* g : {&empty, &edgeless}) {
      const std::string path = dir.file(std::string("e") + ext);
      io::write_graph(path, g->view());
      testing::expect_same_csr(io::read_graph(path), *g);
    }
  }
}

TEST(IoRoundTrip, BinaryBothIndexWidthsAndRectangular) {
  TempDir dir;
  const uint64_t seed = testing::seed();
  auto coo = testing::nasty_coo<int64_t>({.rows = 300, .cols = 170, .avg_degree = 5}, seed);
  const auto g = build_csr(coo);
  for (int width : {4, 8}) {
    io::BinaryOptions opt;
    opt.index_width = width;
    io::write_binary(dir.file("g.tsr"), g.view(), opt);
    const auto size = std::filesystem::file_size(dir.file("g.tsr"));
    EXPECT_EQ(size, 48 + (g.rows + 1 + g.nnz()) * width + g.nnz() * 4 + 32) << "seed " << seed;
    testing::expect_same_csr(io::read_binary(dir.file("g.tsr")), g);
  }
}

TEST(IoRoundTrip, ReadGraphAppliesBuildOptions) {
  TempDir dir;
  testing::write_text(dir.file("g.txt"), "0 1\n1 2\n2 2\n0 1\n");
  BuildOptions b;
  b.symmetrize = true;
  b.self_loops = SelfLoops::remove;
  const auto g = io::read_graph(dir.file("g.txt"), b);
  EXPECT_EQ(g.rowptr, (std::vector<int64_t>{0, 1, 3, 4}));
  EXPECT_EQ(g.col, (std::vector<int64_t>{1, 0, 2, 1}));
  // The binary cache returns the stored graph, and rebuilds only for structural options.
  io::write_graph(dir.file("g.tsr"), g.view());
  BuildOptions loops;
  loops.self_loops = SelfLoops::add;
  EXPECT_EQ(io::read_graph(dir.file("g.tsr"), loops).nnz(), g.nnz() + 3);
}

TEST(IoRoundTrip, WriterFailureLeavesNoFiles) {
  TempDir dir;
  const auto g = testing::random_graph(testing::seed(), true, 50);
  // The target is a directory: writing succeeds, the rename fails, the temp file is removed.
  std::filesystem::create_directory(dir.file("taken.txt"));
  testing::expect_error([&] { io::write_graph(dir.file("taken.txt"), g.view()); }, {"taken.txt", "rename"});
  EXPECT_TRUE(dir.no_temp_files());
  testing::expect_error([&] { io::write_graph(dir.file("missing/g.txt"), g.view()); }, {"missing/g.txt", "cannot create"});
  testing::expect_error([&] { io::write_graph(dir.file("g.unknown"), g.view()); }, {"g.unknown", "cannot write"});
  testing::expect_error([&] { (void)io::read_graph(dir.file("nope.txt")); }, {"nope.txt", "no such file"});
  testing::expect_error([&] { (void)io::read_graph(dir.str()); }, {dir.str(), "directory is neither"});
  EXPECT_TRUE(dir.no_temp_files());
}

}  // namespace
}  // namespace tessera
