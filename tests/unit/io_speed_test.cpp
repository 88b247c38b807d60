// Loading a 10^7-edge text edge list must take seconds, not minutes: generate one in a temp dir,
// time read_edge_list (parse) and read_graph (parse + build), and print both.
#include <chrono>
#include <ctime>
#include <cstdio>
#include <random>

#include "io/atomic_output.hpp"
#include "tessera/io/graph_io.hpp"
#include "unit/io_test_support.hpp"

namespace tessera {
namespace {

TEST(IoSpeed, TenMillionEdgeTextEdgeList) {
  constexpr int64_t kEdges = 10'000'000, kNodes = 1'000'000;
  testing::TempDir dir;
  const std::string path = dir.file("big.txt");
  std::mt19937_64 rng(testing::seed());
  {
    io::detail::AtomicOutput out(path);
    out.put("# generated: 10^7 random edges over 10^6 nodes\n");
    for (int64_t k = 0; k < kEdges; ++k) {
      out.put_int(int64_t(rng() % kNodes));
      out.put(' ');
      out.put_int(int64_t(rng() % kNodes));
      out.put('\n');
    }
    out.commit();
  }
  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  const std::clock_t c0 = std::clock();  // CPU time: the wall time depends on the machine's load
  const auto coo = io::read_edge_list(path);
  const double parse_s = std::chrono::duration<double>(clock::now() - t0).count();
  const double parse_cpu_s = double(std::clock() - c0) / CLOCKS_PER_SEC;
  ASSERT_EQ(coo.nnz(), kEdges);
  t0 = clock::now();
  const auto g = io::read_graph(path);
  const double load_s = std::chrono::duration<double>(clock::now() - t0).count();
  EXPECT_LE(g.rows, kNodes);
  EXPECT_GE(g.rows, kNodes - 100);  // max id + 1
  const double mb = double(std::filesystem::file_size(path)) / 1e6;
  std::printf("[ io speed ] 10^7-edge text edge list (%.0f MB): read_edge_list %.2f s wall (%.2f s CPU, "
              "%.0f MB/s), read_graph (parse + build CSR) %.2f s wall\n", mb, parse_s, parse_cpu_s, mb / parse_s, load_s);
  RecordProperty("read_edge_list_s", std::to_string(parse_s));
  RecordProperty("read_graph_s", std::to_string(load_s));
  // "Seconds, not minutes": generous enough for sanitizer builds on a loaded 2-core machine.
  EXPECT_LT(parse_s, 60.0);
  EXPECT_LT(load_s, 120.0);
}

}  // namespace
}  // namespace tessera
