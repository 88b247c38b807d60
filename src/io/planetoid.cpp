// The Planetoid text format of ../shared/data/{cora,citeseer,pubmed} (see cora/README.md).
#include <filesystem>
#include <map>

#include "io/text_input.hpp"
#include "tessera/io/graph_io.hpp"

namespace tessera::io {

namespace {
namespace fs = std::filesystem;

// meta.txt: `key value` lines.
std::map<std::string, std::string> read_meta(const std::string& path) {
  detail::LineReader in(path);
  std::map<std::string, std::string> meta;
  std::string_view line;
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  while (in.next(line)) {
    if (detail::is_comment_or_blank(line)) continue;
    // `key value`: the value is the rest of the line (class_counts holds "351,217,...").
    size_t b = 0;
    while (b < line.size() && blank(line[b])) ++b;
    size_t e = b;
    while (e < line.size() && !blank(line[e])) ++e;
    const std::string_view key = line.substr(b, e - b);
    size_t vb = e, ve = line.size();
    while (vb < ve && blank(line[vb])) ++vb;
    while (ve > vb && blank(line[ve - 1])) --ve;
    const std::string_view value = line.substr(vb, ve - vb);
    if (value.empty()) in.fail_here("expected 'key value', got only '", detail::shown(key), "'");
    if (!meta.emplace(std::string(key), std::string(value)).second) in.fail_here("duplicate key '", detail::shown(key), "'");
  }
  return meta;
}

// An integer meta value, or -1 when the key is absent.
int64_t meta_int(const std::map<std::string, std::string>& meta, const std::string& path, const std::string& key,
                 bool required) {
  auto it = meta.find(key);
  if (it == meta.end()) {
    if (required) fail(path, ": missing key '", detail::shown(key), "'");
    return -1;
  }
  int64_t v;
  if (!detail::parse_int(it->second, v) || v < 0)
    fail(path, ": value of '", detail::shown(key), "' is not a non-negative integer: '", detail::shown(it->second), "'");
  return v;
}

// `k j1:v1 ... jk:vk` into row `node` of x; returns k. Columns strictly ascending, below F.
int64_t parse_feature_pairs(const detail::LineReader& in, detail::Fields& fields, Dense<float>& x, int64_t node) {
  std::string_view f;
  if (!fields.next(f)) in.fail_here("missing the nonzero count");
  const int64_t k = detail::int_field(in, f, "nonzero count");
  if (k < 0 || k > x.cols) in.fail_here("nonzero count ", k, " out of range [0, ", x.cols, "]");
  int64_t got = 0, prev = -1;
  while (fields.next(f)) {
    const size_t colon = f.find(':');
    if (colon == std::string_view::npos) in.fail_here("feature '", detail::shown(f), "' is not 'column:value'");
    const int64_t j = detail::int_field(in, f.substr(0, colon), "feature column");
    if (j < 0 || j >= x.cols) in.fail_here("feature column ", j, " out of range [0, ", x.cols, ")");
    if (j <= prev) in.fail_here("feature columns not strictly ascending (", prev, " then ", j, ")");
    x(node, j) = detail::float_field(in, f.substr(colon + 1), "feature value");
    prev = j;
    ++got;
  }
  if (got != k) in.fail_here("declares ", k, " nonzeros but lists ", got);
  return k;
}
}  // namespace

NodeDataset read_planetoid(const std::string& dir) {
  const std::string meta_path = dir + "/meta.txt";
  const auto meta = read_meta(meta_path);
  NodeDataset ds;
  ds.name = meta.count("name") ? meta.at("name") : fs::path(dir).filename().string();
  const int64_t n = meta_int(meta, meta_path, "num_nodes", true);
  const int64_t nf = meta_int(meta, meta_path, "num_features", true);
  const int64_t nc = meta_int(meta, meta_path, "num_classes", true);

  // Labels first: their line count confirms num_nodes before anything is sized by it.
  const std::string labels_path = dir + "/labels.txt";
  const auto labels = detail::read_int_lines(labels_path, "label");
  if (int64_t(labels.size()) != n)
    fail(labels_path, ": ", labels.size(), " labels but ", meta_path, " declares num_nodes ", n);
  if (nc > (int64_t(1) << 24)) fail(meta_path, ": num_classes ", nc, " is implausible");
  ds.num_classes = int(nc);
  ds.labels.resize(size_t(n));
  std::vector<int64_t> class_counts(size_t(nc), 0);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < -1 || labels[i] >= nc)
      fail(labels_path, ":", i + 1, ": label ", labels[i], " out of range [-1, ", nc, ")");
    ds.labels[i] = int32_t(labels[i]);
    if (labels[i] >= 0) ++class_counts[size_t(labels[i])];
  }
  if (auto it = meta.find("class_counts"); it != meta.end()) {
    detail::Fields f(it->second, ',');
    std::string_view c;
    int64_t k = 0;
    while (f.next(c)) {
      int64_t v;
      if (!detail::parse_int(c, v)) fail(meta_path, ": class_counts entry '", detail::shown(c), "' is not an integer");
      if (k >= nc || class_counts[size_t(k)] != v)
        fail(labels_path, ": class ", k, " has ", k < nc ? class_counts[size_t(k)] : 0, " nodes but ", meta_path,
             " says ", v);
      ++k;
    }
    if (k != nc) fail(meta_path, ": class_counts lists ", k, " classes, num_classes is ", nc);
  }

  // Graph: symmetric `src dst` lines, 0-based.
  EdgeListOptions eo;
  eo.base = IdBase::zero;
  eo.num_nodes = n;
  const std::string edges_path = dir + "/edges.txt";
  Coo<int64_t> coo = read_edge_list(edges_path, eo);
  if (int64_t lines = meta_int(meta, meta_path, "num_edge_lines", false); lines >= 0 && lines != coo.nnz())
    fail(edges_path, ": ", coo.nnz(), " edge lines but ", meta_path, " declares num_edge_lines ", lines);
  ds.graph = build_csr(coo, BuildOptions{});

  // Features: dense nodes x F, zero rows where a node has none.
  const bool partial = meta_int(meta, meta_path, "features_partial", false) == 1;
  if (nf > (int64_t(1) << 24) || (nf > 0 && n > (int64_t(1) << 31) / nf))
    fail(meta_path, ": ", n, " nodes x ", nf, " features is too large for a dense feature matrix");
  ds.features = Dense<float>(n, nf);
  const std::string feat_path = dir + (partial ? "/features_partial.txt" : "/features.txt");
  {
    detail::LineReader in(feat_path);
    std::string_view line, f;
    int64_t rows = 0, nnz = 0;
    std::vector<char> seen(partial ? size_t(n) : 0, 0);
    while (in.next(line)) {
      detail::Fields fields(line);
      int64_t node = rows;
      if (partial) {
        if (!fields.next(f)) in.fail_here("empty line (expected 'node k j:v ...')");
        node = detail::id_field(in, f, "node id");
        if (node >= n) in.fail_here("node id ", node, " out of range [0, ", n, ")");
        if (seen[size_t(node)]) in.fail_here("node ", node, " listed twice");
        seen[size_t(node)] = 1;
      } else if (rows >= n) {
        in.fail_here("more feature lines than the ", n, " nodes");
      }
      nnz += parse_feature_pairs(in, fields, ds.features, node);
      ++rows;
    }
    if (!partial && rows != n) fail(feat_path, ":", in.line_number(), ": ", rows, " feature lines, expected ", n, " (truncated?)");
    if (partial) {
      const int64_t missing = meta_int(meta, meta_path, "nodes_without_features", false);
      if (missing >= 0 && rows != n - missing)
        fail(feat_path, ": ", rows, " feature rows but ", meta_path, " implies ", n - missing, " (truncated?)");
    }
    if (int64_t want = meta_int(meta, meta_path, "num_feature_nonzeros", false); want >= 0 && want != nnz)
      fail(feat_path, ": ", nnz, " feature nonzeros but ", meta_path, " declares ", want);
  }

  // Split: node ids, each labelled, counts as declared.
  auto read_split = [&](const char* which, std::vector<int64_t>& out) {
    const std::string path = dir + "/" + which + ".txt";
    out = detail::read_int_lines(path, "node id");
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] < 0 || out[i] >= n) fail(path, ":", i + 1, ": node id ", out[i], " out of range [0, ", n, ")");
      if (ds.labels[size_t(out[i])] < 0) fail(path, ":", i + 1, ": node ", out[i], " has no label");
    }
    const int64_t want = meta_int(meta, meta_path, std::string("num_") + which, false);
    if (want >= 0 && want != int64_t(out.size()))
      fail(path, ": ", out.size(), " ids but ", meta_path, " declares num_", which, " ", want);
  };
  read_split("train", ds.train);
  read_split("val", ds.val);
  read_split("test", ds.test);
  return ds;
}

}  // namespace tessera::io
