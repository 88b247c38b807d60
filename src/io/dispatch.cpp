// read_graph / write_graph: pick the format from the extension or the directory's contents.
#include <filesystem>

#include "io/loaders.hpp"
#include "io/text_input.hpp"
#include "tessera/io/graph_io.hpp"

namespace tessera::io {

namespace {
namespace fs = std::filesystem;

bool is_edge_list_ext(const std::string& ext) {
  return ext == ".txt" || ext == ".el" || ext == ".edges" || ext == ".edgelist" || ext == ".csv" || ext == ".tsv";
}

std::string existing(const std::string& a) {
  if (fs::exists(a)) return a;
  if (fs::exists(a + ".gz")) return a + ".gz";
  return "";
}

// The node count a converted data set's meta.txt names (num_nodes / nodes / meta_nodes), or -1.
int64_t meta_nodes(const std::string& dir) {
  const std::string path = dir + "/meta.txt";
  if (!fs::exists(path)) return -1;
  detail::LineReader in(path);
  std::string_view line, key, value;
  while (in.next(line)) {
    detail::Fields f(line);
    if (!f.next(key) || !f.next(value)) continue;
    if (key == "num_nodes" || key == "nodes" || key == "meta_nodes") {
      int64_t n;
      if (!detail::parse_int(value, n) || n < 0) in.fail_here("node count '", detail::shown(value), "' is not a non-negative integer");
      return n;
    }
  }
  return -1;
}

bool plain_rebuild(const BuildOptions& b) { return !b.symmetrize && b.self_loops == SelfLoops::keep; }

Csr<int64_t> read_directory(const std::string& dir, const BuildOptions& build) {
  if (fs::exists(dir + "/meta.txt") && fs::exists(dir + "/labels.txt") &&
      (fs::exists(dir + "/features.txt") || fs::exists(dir + "/features_partial.txt"))) {
    NodeDataset ds = read_planetoid(dir);
    if (plain_rebuild(build)) return std::move(ds.graph);
    return build_csr(to_coo(ds.graph.view()), build);
  }
  bool tu = false;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (detail::ends_with(f, "_A.txt") || detail::ends_with(f, "_A.txt.gz")) tu = true;
  }
  if (tu) return build_csr(detail::read_tu_adjacency(dir), build);
  if (const std::string edges = existing(dir + "/edges.txt"); !edges.empty()) {
    EdgeListOptions eo;
    eo.base = IdBase::zero;
    eo.extra_columns = true;
    eo.num_nodes = meta_nodes(dir);
    return build_csr(read_edge_list(edges, eo), build);
  }
  fail(dir, ": directory is neither a Planetoid data set (meta.txt, labels.txt, features*.txt), a TU "
            "collection (NAME_A.txt) nor a converted graph (edges.txt)");
}
}  // namespace

Csr<int64_t> read_graph(const std::string& path, const BuildOptions& build) {
  return read_graph(path, build, EdgeListOptions{});
}

Csr<int64_t> read_graph(const std::string& path, const BuildOptions& build, const EdgeListOptions& edge_list) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) return read_directory(path, build);
  if (!fs::exists(path, ec)) fail(path, ": no such file or directory");
  const std::string ext = detail::graph_extension(path);
  if (is_edge_list_ext(ext)) return build_csr(read_edge_list(path, edge_list), build);
  if (ext == ".mtx") return build_csr(detail::read_matrix_market_coo(path), build);
  if (ext == ".tsr") {
    if (detail::ends_with(path, ".gz")) fail(path, ": .tsr files are not compressed");
    Csr<int64_t> g = read_binary(path);
    if (plain_rebuild(build)) return g;
    return build_csr(to_coo(g.view()), build);
  }
  fail(path, ": unknown graph file type '", ext,
       "' (edge list .txt/.el/.edges/.csv[.gz], Matrix Market .mtx[.gz], binary .tsr, or a data-set directory)");
}

namespace {
enum class GraphFile { edge_list, matrix_market, binary };

// The writer a path's extension picks, or an error naming the types there are.
GraphFile graph_file_to_write(const std::string& path) {
  const std::string ext = detail::graph_extension(path);
  if (is_edge_list_ext(ext) && ext != ".csv" && ext != ".tsv") return GraphFile::edge_list;
  if (ext == ".mtx") return GraphFile::matrix_market;
  if (ext == ".tsr") {
    if (detail::ends_with(path, ".gz")) fail(path, ": .tsr files are not compressed");
    return GraphFile::binary;
  }
  fail(path, ": cannot write graph file type '", ext, "' (.txt/.el/.edges[.gz], .mtx[.gz], .tsr)");
}
}  // namespace

void check_graph_path(const std::string& path) { graph_file_to_write(path); }

void write_graph(const std::string& path, const CsrView<int64_t>& g) {
  TESSERA_CHECK(!g.device.is_cuda(), path, ": write_graph needs a host graph");
  switch (graph_file_to_write(path)) {
    case GraphFile::edge_list: return write_edge_list(path, g);
    case GraphFile::matrix_market: return write_matrix_market(path, g);
    case GraphFile::binary: return write_binary(path, g);
  }
}

}  // namespace tessera::io
