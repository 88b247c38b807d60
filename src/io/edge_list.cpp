// Edge lists: `src dst [weight]` per line, plain or gzip.
#include <algorithm>
#include <limits>

#include "io/atomic_output.hpp"
#include "io/id_mapping.hpp"
#include "io/text_input.hpp"
#include "tessera/io/graph_io.hpp"

namespace tessera::io {

namespace {
constexpr std::string_view kHeader = "# tessera edge list:";

// What a "# tessera edge list: nodes=N edges=E base=0 weighted=1" comment declares.
struct Declared {
  int64_t nodes = -1, edges = -1;
  int base = -1;
  bool weighted = false;
  bool present = false;
};

void parse_header(const detail::LineReader& in, std::string_view line, Declared& d) {
  const size_t at = line.find(kHeader);
  if (at == std::string_view::npos) return;
  if (d.present) in.fail_here("second tessera edge-list header");
  d.present = true;
  detail::Fields f(line.substr(at + kHeader.size()));
  std::string_view kv;
  while (f.next(kv)) {
    const size_t eq = kv.find('=');
    if (eq == std::string_view::npos) in.fail_here("header field '", detail::shown(kv), "' is not key=value");
    const std::string_view key = kv.substr(0, eq);
    const int64_t v = detail::int_field(in, kv.substr(eq + 1), "header value");
    if (v < 0) in.fail_here("header value ", detail::shown(key), "=", v, " is negative");
    if (key == "nodes") d.nodes = v;
    else if (key == "edges") d.edges = v;
    else if (key == "base") {
      if (v > 1) in.fail_here("header base=", v, " is not 0 or 1");
      d.base = int(v);
    } else if (key == "weighted") d.weighted = v != 0;
    else in.fail_here("unknown header field '", detail::shown(key), "'");
  }
}
}  // namespace

Coo<int64_t> read_edge_list(const std::string& path, const EdgeListOptions& opt) {
  detail::LineReader in(path);
  Coo<int64_t> coo;
  Declared decl;
  bool weighted = opt.weighted;
  int64_t min_id = std::numeric_limits<int64_t>::max(), max_id = -1;
  int64_t records = 0;
  std::string_view line, f;

  while (in.next(line)) {
    if (detail::is_comment_or_blank(line, opt.comment)) {
      // The header may only come before the first edge: it decides how edges are read.
      if (records == 0) {
        parse_header(in, line, decl);
        if (decl.weighted) weighted = true;
      }
      continue;
    }
    detail::Fields fields(line, opt.delimiter);
    const int want = weighted ? 3 : 2;
    int got = 0;
    int64_t s = 0, d = 0;
    float w = 1.0f;
    if (fields.next(f)) { s = detail::id_field(in, f, "source id"); ++got; }
    if (fields.next(f)) { d = detail::id_field(in, f, "target id"); ++got; }
    if (weighted && fields.next(f)) { w = detail::float_field(in, f, "weight"); ++got; }
    if (got < want) in.fail_here("expected ", want, " columns (src dst", weighted ? " weight" : "", "), got ", got);
    if (!opt.extra_columns && fields.next(f))
      in.fail_here("expected ", want, " columns (src dst", weighted ? " weight" : "", "), got ",
                   want + 1 + fields.count_rest(), " (trailing '", detail::shown(f), "')");
    coo.src.push_back(s);
    coo.dst.push_back(d);
    if (weighted) coo.w.push_back(w);
    min_id = std::min(min_id, std::min(s, d));
    max_id = std::max(max_id, std::max(s, d));
    ++records;
  }

  if (records == 0 && !decl.present)
    fail(path, ":", in.line_number(), ": no edges in the file",
         in.line_number() == 0 ? " (empty file)" : " (only comments or blank lines)");
  if (decl.edges >= 0 && decl.edges != records)
    fail(path, ":", in.line_number(), ": header declares ", decl.edges, " edges but the file has ",
         records, records < decl.edges ? " (truncated?)" : "");

  detail::IdResolution res;
  res.remap = opt.remap;
  res.base = opt.base;
  if (res.base == IdBase::auto_detect && decl.base >= 0) res.base = decl.base ? IdBase::one : IdBase::zero;
  res.num_nodes = opt.num_nodes >= 0 ? opt.num_nodes : decl.nodes;
  const int64_t n = detail::resolve_ids(path, opt.comment, {{&coo.src, "source"}, {&coo.dst, "target"}},
                                        res, min_id, max_id, in.file_bytes(), in.gzipped());
  coo.rows = coo.cols = n;
  return coo;
}

void write_edge_list(const std::string& path, const CsrView<int64_t>& g) {
  TESSERA_CHECK(g.rows == g.cols, path, ": an edge list needs a square graph, got ", g.rows, " x ", g.cols);
  detail::AtomicOutput out(path);
  const bool weighted = g.values != nullptr;
  out.put(kHeader);
  out.put(" nodes=");
  out.put_int(g.rows);
  out.put(" edges=");
  out.put_int(g.nnz);
  out.put(" base=0 weighted=");
  out.put(weighted ? "1\n" : "0\n");
  // Row i holds the in-neighbours j of i: each entry is the edge j -> i.
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t k = g.rowptr[i]; k < g.rowptr[i + 1]; ++k) {
      out.put_int(g.col[k]);
      out.put(' ');
      out.put_int(i);
      if (weighted) {
        out.put(' ');
        out.put_float(g.values[k]);
      }
      out.put('\n');
    }
  out.commit();
}

}  // namespace tessera::io
