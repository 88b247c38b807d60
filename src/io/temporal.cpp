// Temporal formats: timestamped edges (`t src dst [w]` or `src dst t [w]`) and node signals.
#include <algorithm>
#include <limits>

#include "io/id_mapping.hpp"
#include "io/text_input.hpp"
#include "tessera/io/graph_io.hpp"

namespace tessera::io {

TemporalEdges read_temporal_edges(const std::string& path, const std::string& order) {
  TemporalOptions opt;
  opt.order = order;
  return read_temporal_edges(path, opt);
}

TemporalEdges read_temporal_edges(const std::string& path, const TemporalOptions& opt) {
  if (opt.order != "tsd" && opt.order != "sdt")
    fail(path, ": temporal column order must be \"tsd\" or \"sdt\", got \"", opt.order, "\"");
  const bool time_first = opt.order == "tsd";
  detail::LineReader in(path);
  TemporalEdges te;
  int columns = 0;  // 3 or 4, fixed by the first record
  int64_t min_id = std::numeric_limits<int64_t>::max(), max_id = -1;
  std::string_view line, f;
  while (in.next(line)) {
    if (detail::is_comment_or_blank(line)) continue;
    detail::Fields fields(line);
    std::string_view col[5];
    int got = 0;
    while (got < 5 && fields.next(f)) col[got++] = f;
    if (got < 3 || got > 4)
      in.fail_here("expected 3 or 4 columns (", time_first ? "t src dst [weight]" : "src dst t [weight]",
                   "), got ", got == 5 ? "more than 4" : std::to_string(got));
    if (columns == 0) columns = got;
    if (got != columns)
      in.fail_here("expected ", columns, " columns like the first record, got ", got);
    const int ti = time_first ? 0 : 2, si = time_first ? 1 : 0, di = time_first ? 2 : 1;
    const int64_t t = detail::int_field(in, col[ti], "time");
    const int64_t s = detail::id_field(in, col[si], "source id");
    const int64_t d = detail::id_field(in, col[di], "target id");
    te.t.push_back(t);
    te.src.push_back(s);
    te.dst.push_back(d);
    if (columns == 4) te.w.push_back(detail::float_field(in, col[3], "weight"));
    min_id = std::min(min_id, std::min(s, d));
    max_id = std::max(max_id, std::max(s, d));
  }
  if (te.t.empty())
    fail(path, ":", in.line_number(), ": no temporal edges in the file",
         in.line_number() == 0 ? " (empty file)" : "");

  detail::IdResolution res;
  res.remap = opt.remap;
  res.base = opt.base;
  if (res.base == IdBase::auto_detect && time_first) res.base = IdBase::zero;
  res.num_nodes = opt.num_nodes;
  te.num_nodes = detail::resolve_ids(path, '#', {{&te.src, "source"}, {&te.dst, "target"}}, res, min_id,
                                     max_id, in.file_bytes(), in.gzipped());
  return te;
}

NodeSignal read_node_signal(const std::string& path) {
  detail::LineReader in(path);
  NodeSignal sig;
  std::vector<float>& v = sig.values.data;
  int64_t width = -1, steps = 0;
  std::string_view line, f;
  while (in.next(line)) {
    if (detail::is_comment_or_blank(line)) continue;
    detail::Fields fields(line);
    int64_t n = 0;
    while (fields.next(f)) {
      v.push_back(detail::float_field(in, f, "value"));
      ++n;
    }
    if (width < 0) width = n;
    if (n != width) in.fail_here("expected ", width, " values like the first step, got ", n);
    ++steps;
  }
  if (steps == 0)
    fail(path, ":", in.line_number(), ": no signal steps in the file", in.line_number() == 0 ? " (empty file)" : "");
  sig.values.rows = steps;
  sig.values.cols = width;
  return sig;
}

}  // namespace tessera::io
