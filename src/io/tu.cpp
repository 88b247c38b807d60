// TU graph collections (NAME_A.txt, NAME_graph_indicator.txt, ...; 1-based global node ids)
// split into per-graph LabeledGraphs with local ids and edge labels aligned with CSR entries.
#include <exception>
#include <filesystem>

#include "io/loaders.hpp"
#include "io/text_input.hpp"
#include "tessera/io/graph_io.hpp"

namespace tessera::io {

namespace fs = std::filesystem;

namespace detail {

std::string tu_file(const std::string& dir, const std::string& name, const std::string& suffix) {
  const std::string base = dir + "/" + name + "_" + suffix + ".txt";
  if (fs::exists(base)) return base;
  if (fs::exists(base + ".gz")) return base + ".gz";
  return "";
}

std::string tu_name(const std::string& dir) {
  std::error_code ec;
  std::string found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    for (const char* suffix : {"_A.txt", "_A.txt.gz"})
      if (ends_with(f, suffix)) {
        const std::string name = f.substr(0, f.size() - std::string(suffix).size());
        if (!found.empty() && found != name) fail(dir, ": two TU collections (", found, ", ", name, ")");
        found = name;
      }
  }
  if (ec) fail(dir, ": cannot list directory: ", ec.message());
  if (found.empty()) fail(dir, ": not a TU collection (no NAME_A.txt or NAME_A.txt.gz)");
  return found;
}

namespace {
// NAME_A: `row, col` 1-based global ids -> 0-based, checked against the node count.
void read_tu_edges(const std::string& path, int64_t n, std::vector<int64_t>& rows, std::vector<int64_t>& cols,
                   std::vector<int64_t>& line_of) {
  LineReader in(path);
  std::string_view line, f;
  while (in.next(line)) {
    if (is_comment_or_blank(line)) in.fail_here("blank or comment line (line k must be edge k)");
    Fields fields(line);
    int64_t v[2];
    for (int i = 0; i < 2; ++i) {
      if (!fields.next(f)) in.fail_here("expected 2 columns 'row, col', got ", i);
      v[i] = int_field(in, f, i == 0 ? "row id" : "column id");
      if (v[i] < 1 || v[i] > n) in.fail_here("node id ", v[i], " out of range [1, ", n, "]");
    }
    if (fields.next(f)) in.fail_here("expected 2 columns 'row, col', trailing '", detail::shown(f), "'");
    rows.push_back(v[0] - 1);
    cols.push_back(v[1] - 1);
    line_of.push_back(in.line_number());
  }
  if (rows.empty()) fail(path, ":", in.line_number(), ": no edges in the file (empty file)");
}

// One row of values per line, the same count on every line (comma and/or blank separated).
Dense<float> read_tu_attributes(const std::string& path, int64_t expect_rows) {
  LineReader in(path);
  Dense<float> out;
  std::string_view line, f;
  int64_t width = -1;
  while (in.next(line)) {
    if (out.rows == expect_rows) in.fail_here("more lines than the ", expect_rows, " expected");
    Fields fields(line);
    int64_t k = 0;
    while (fields.next(f)) {
      out.data.push_back(float_field(in, f, "attribute"));
      ++k;
    }
    if (k == 0) in.fail_here("empty attribute line");
    if (width < 0) width = k;
    if (k != width) in.fail_here("expected ", width, " attributes like the first line, got ", k);
    ++out.rows;
  }
  if (out.rows != expect_rows)
    fail(path, ":", in.line_number(), ": ", out.rows, " lines, expected ", expect_rows, " (truncated?)");
  out.cols = width;
  return out;
}

std::vector<int32_t> read_tu_labels(const std::string& path, int64_t expect, const char* per) {
  const auto v = read_int_lines(path, "label");
  if (int64_t(v.size()) != expect)
    fail(path, ": ", v.size(), " labels, expected one per ", per, " (", expect, ")");
  std::vector<int32_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < INT32_MIN || v[i] > INT32_MAX) fail(path, ":", i + 1, ": label ", v[i], " does not fit int32");
    out[i] = int32_t(v[i]);
  }
  return out;
}
}  // namespace

Coo<int64_t> read_tu_adjacency(const std::string& dir) {
  const std::string name = tu_name(dir);
  const std::string ind_path = tu_file(dir, name, "graph_indicator");
  if (ind_path.empty()) fail(dir, ": missing ", name, "_graph_indicator.txt");
  const int64_t n = int64_t(read_int_lines(ind_path, "graph id").size());
  Coo<int64_t> coo;
  coo.rows = coo.cols = n;
  std::vector<int64_t> line_of;
  // A line `r, c` is the edge r -> c.
  read_tu_edges(tu_file(dir, name, "A"), n, coo.src, coo.dst, line_of);
  return coo;
}

}  // namespace detail

GraphCollection read_tu(const std::string& dir) {
  using namespace detail;
  GraphCollection out;
  out.name = tu_name(dir);
  const std::string& name = out.name;
  auto file = [&](const char* suffix) { return tu_file(dir, name, suffix); };

  const std::string ind_path = file("graph_indicator");
  if (ind_path.empty()) fail(dir, ": missing ", name, "_graph_indicator.txt");
  const auto indicator = read_int_lines(ind_path, "graph id");
  const int64_t n = int64_t(indicator.size());

  std::vector<int32_t> graph_labels;
  int64_t g_count = 0;
  if (const std::string p = file("graph_labels"); !p.empty()) {
    const auto v = read_int_lines(p, "graph label");
    graph_labels.resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] < INT32_MIN || v[i] > INT32_MAX) fail(p, ":", i + 1, ": label ", v[i], " does not fit int32");
      graph_labels[i] = int32_t(v[i]);
    }
    g_count = int64_t(v.size());
  } else {
    // Without a labels file the largest graph id is the count; a hostile id must not size
    // the per-graph arrays beyond one graph per node.
    for (size_t i = 0; i < indicator.size(); ++i) {
      if (indicator[i] > n)
        fail(ind_path, ":", i + 1, ": graph id ", indicator[i], " exceeds the number of nodes (", n, ")");
      g_count = std::max(g_count, indicator[i]);
    }
  }
  // Node -> (graph, local id). Local ids follow node order within each graph.
  std::vector<int64_t> graph_of(static_cast<size_t>(n)), local(static_cast<size_t>(n));
  std::vector<int64_t> sizes(static_cast<size_t>(g_count), 0);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t g = indicator[size_t(i)];
    if (g < 1 || g > g_count)
      fail(ind_path, ":", i + 1, ": graph id ", g, " out of range [1, ", g_count, "]");
    graph_of[size_t(i)] = g - 1;
    local[size_t(i)] = sizes[size_t(g - 1)]++;
  }
  for (int64_t g = 0; g < g_count; ++g)
    if (sizes[size_t(g)] > INT32_MAX) fail(ind_path, ": graph ", g + 1, " has too many nodes for int32 ids");

  std::vector<int64_t> er, ec, line_of;
  const std::string a_path = file("A");
  read_tu_edges(a_path, n, er, ec, line_of);
  const int64_t m = int64_t(er.size());

  // Bucket the edges by graph (both endpoints must be in the same one).
  std::vector<int64_t> eoff(static_cast<size_t>(g_count) + 1, 0);
  for (int64_t k = 0; k < m; ++k) {
    const int64_t g = graph_of[size_t(er[size_t(k)])];
    if (graph_of[size_t(ec[size_t(k)])] != g)
      fail(a_path, ":", line_of[size_t(k)], ": edge joins graph ", g + 1, " and graph ",
           graph_of[size_t(ec[size_t(k)])] + 1);
    ++eoff[size_t(g) + 1];
  }
  for (int64_t g = 0; g < g_count; ++g) eoff[size_t(g) + 1] += eoff[size_t(g)];

  std::vector<int32_t> node_labels, edge_labels;
  if (const std::string p = file("node_labels"); !p.empty()) node_labels = read_tu_labels(p, n, "node");
  if (const std::string p = file("edge_labels"); !p.empty()) edge_labels = read_tu_labels(p, m, "line of A");
  Dense<float> node_attrs, edge_attrs;
  if (const std::string p = file("node_attributes"); !p.empty()) node_attrs = read_tu_attributes(p, n);
  if (const std::string p = file("edge_attributes"); !p.empty()) {
    edge_attrs = read_tu_attributes(p, m);
    if (edge_attrs.cols != 1)
      fail(p, ": ", edge_attrs.cols, " edge attributes per edge; only one (the edge weight) is supported");
  }

  std::vector<int64_t> edges_by_graph(static_cast<size_t>(m)), fill(eoff.begin(), eoff.end() - 1);
  for (int64_t k = 0; k < m; ++k) edges_by_graph[size_t(fill[size_t(graph_of[size_t(er[size_t(k)])])]++)] = k;
  std::vector<int64_t> node_off(static_cast<size_t>(g_count) + 1, 0), nodes_by_graph(static_cast<size_t>(n));
  for (int64_t g = 0; g < g_count; ++g) node_off[size_t(g) + 1] = node_off[size_t(g)] + sizes[size_t(g)];
  for (int64_t i = 0; i < n; ++i)
    nodes_by_graph[size_t(node_off[size_t(graph_of[size_t(i)])] + local[size_t(i)])] = i;

  for (int64_t g = 0; g < g_count; ++g)
    if (eoff[size_t(g) + 1] - eoff[size_t(g)] >= (int64_t(1) << 24))
      fail(a_path, ": graph ", g + 1, " has ", eoff[size_t(g) + 1] - eoff[size_t(g)],
           " edges; per-graph edge labels support at most 2^24");

  out.graphs.resize(size_t(g_count));
  // Collections hold thousands of small graphs: parallelize over graphs (build_csr's own
  // parallel regions then run serially inside, which is far cheaper for tiny graphs).
  auto build_graph = [&](int64_t g) {
    LabeledGraph& lg = out.graphs[size_t(g)];
    const int64_t e0 = eoff[size_t(g)], e1 = eoff[size_t(g) + 1];
    // Each edge carries its position in the graph's edge list as its value, so after build_csr
    // sorts the entries the labels and weights can follow them exactly (2^24 is exact in float).
    Coo<int32_t> coo;
    coo.rows = coo.cols = sizes[size_t(g)];
    coo.src.reserve(size_t(e1 - e0));
    coo.dst.reserve(size_t(e1 - e0));
    coo.w.reserve(size_t(e1 - e0));
    for (int64_t e = e0; e < e1; ++e) {
      const int64_t k = edges_by_graph[size_t(e)];
      coo.src.push_back(int32_t(local[size_t(er[size_t(k)])]));
      coo.dst.push_back(int32_t(local[size_t(ec[size_t(k)])]));
      coo.w.push_back(float(e - e0));
    }
    BuildOptions keep_all;
    keep_all.deduplicate = false;  // parallel edges keep their own labels
    lg.adj = build_csr(coo, keep_all);
    const size_t nnz = lg.adj.col.size();
    if (!edge_labels.empty()) lg.edge_labels.resize(nnz);
    std::vector<float> weights(edge_attrs.rows ? nnz : 0);
    for (size_t k = 0; k < nnz; ++k) {
      const int64_t orig = edges_by_graph[size_t(e0 + int64_t(lg.adj.values[k]))];
      if (!edge_labels.empty()) lg.edge_labels[k] = edge_labels[size_t(orig)];
      if (!weights.empty()) weights[k] = edge_attrs.data[size_t(orig)];
    }
    lg.adj.values = std::move(weights);
    lg.adj.touch();

    const int64_t ng = sizes[size_t(g)];
    if (!node_labels.empty()) {
      lg.node_labels.resize(size_t(ng));
      for (int64_t v = 0; v < ng; ++v)
        lg.node_labels[size_t(v)] = node_labels[size_t(nodes_by_graph[size_t(node_off[size_t(g)] + v)])];
    }
    lg.node_attrs = Dense<float>(ng, node_attrs.cols);
    for (int64_t v = 0; v < ng; ++v) {
      const int64_t gi = nodes_by_graph[size_t(node_off[size_t(g)] + v)];
      for (int64_t c = 0; c < node_attrs.cols; ++c) lg.node_attrs(v, c) = node_attrs(gi, c);
    }
    if (!graph_labels.empty()) lg.graph_label = graph_labels[size_t(g)];
  };
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t g = 0; g < g_count; ++g) {
    try {
      build_graph(g);
    } catch (...) {  // exceptions must not leave an OpenMP region
#pragma omp critical(tessera_tu_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return out;
}

}  // namespace tessera::io
