// Matrix Market coordinate files (real / integer / pattern; general / symmetric / skew-symmetric).
#include <algorithm>
#include <cctype>
#include <string>

#include "io/atomic_output.hpp"
#include "io/loaders.hpp"
#include "io/text_input.hpp"
#include "tessera/io/graph_io.hpp"

namespace tessera::io {

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

enum class Field { real, integer, pattern };
enum class Symmetry { general, symmetric, skew };
}  // namespace

namespace detail {

Coo<int64_t> read_matrix_market_coo(const std::string& path) {
  LineReader in(path);
  std::string_view line, f;
  if (!in.next(line)) fail(path, ":1: empty file (expected a %%MatrixMarket header)");

  // Banner: %%MatrixMarket matrix coordinate <field> <symmetry>
  Fields banner(line);
  std::string tok[5];
  int n_tok = 0;
  while (n_tok < 5 && banner.next(f)) tok[n_tok++] = lower(f);
  if (n_tok == 0 || tok[0] != "%%matrixmarket")
    in.fail_here("not a Matrix Market file (the first line must start with %%MatrixMarket)");
  if (n_tok < 5 || banner.next(f))
    in.fail_here("banner must be '%%MatrixMarket matrix coordinate <field> <symmetry>'");
  if (tok[1] != "matrix") in.fail_here("object '", detail::shown(tok[1]), "' is not supported (only 'matrix')");
  if (tok[2] != "coordinate")
    in.fail_here("format '", detail::shown(tok[2]), "' is not supported (only 'coordinate'; dense 'array' is not a graph)");
  Field field;
  if (tok[3] == "real" || tok[3] == "double") field = Field::real;
  else if (tok[3] == "integer") field = Field::integer;
  else if (tok[3] == "pattern") field = Field::pattern;
  else in.fail_here("field '", detail::shown(tok[3]), "' is not supported (real, integer or pattern)");
  Symmetry sym;
  if (tok[4] == "general") sym = Symmetry::general;
  else if (tok[4] == "symmetric") sym = Symmetry::symmetric;
  else if (tok[4] == "skew-symmetric") sym = Symmetry::skew;
  else in.fail_here("symmetry '", detail::shown(tok[4]), "' is not supported (general, symmetric or skew-symmetric)");
  if (sym == Symmetry::skew && field == Field::pattern)
    in.fail_here("a pattern matrix cannot be skew-symmetric");

  // Size line after any comments.
  bool have_size = false;
  while (in.next(line)) {
    if (is_comment_or_blank(line, '%')) continue;
    have_size = true;
    break;
  }
  if (!have_size) fail(path, ":", in.line_number(), ": missing size line 'rows cols entries' (truncated?)");
  Fields size_fields(line);
  int64_t dims[3];
  for (int i = 0; i < 3; ++i) {
    if (!size_fields.next(f)) in.fail_here("size line needs 3 integers 'rows cols entries', got ", i);
    dims[i] = int_field(in, f, i == 0 ? "row count" : i == 1 ? "column count" : "entry count");
    if (dims[i] < 0) in.fail_here("negative ", i == 0 ? "row" : i == 1 ? "column" : "entry", " count ", dims[i]);
  }
  if (size_fields.next(f)) in.fail_here("size line has trailing '", detail::shown(f), "' (dense 'array' sizes are not supported)");
  const int64_t rows = dims[0], cols = dims[1], nnz = dims[2];
  if (sym != Symmetry::general && rows != cols)
    in.fail_here("a ", tok[4], " matrix must be square, got ", rows, " x ", cols);
  // Validate the declared counts before allocating anything from them.
  for (int i = 0; i < 2; ++i) {
    const uint64_t limit = plausible_node_limit(in.file_bytes(), in.gzipped());
    if (uint64_t(dims[i]) > limit)
      in.fail_here("declared ", i == 0 ? "row" : "column", " count ", dims[i],
                   " is implausible for a file of ", in.file_bytes(), " bytes (limit ", limit, ")");
  }
  if (nnz > 0 && (rows == 0 || cols == 0 || nnz / rows > cols || (nnz / rows == cols && nnz % rows)))
    in.fail_here("declared ", nnz, " entries exceed the ", rows, " x ", cols, " matrix");
  const uint64_t text_bytes = in.gzipped() ? in.file_bytes() * 1032 : in.file_bytes();
  if (uint64_t(nnz) > text_bytes / 4)  // every entry line takes at least 4 bytes ("1 1\n")
    in.fail_here("declared ", nnz, " entries cannot fit in a file of ", in.file_bytes(), " bytes");

  Coo<int64_t> coo;
  coo.rows = rows;
  coo.cols = cols;
  const bool weighted = field != Field::pattern;
  const bool mirror = sym != Symmetry::general;
  // Reserve no more than the bytes on disk can hold; compressed files grow as they are read.
  const size_t reserve = size_t(std::min<uint64_t>(
      uint64_t(nnz) * (mirror ? 2 : 1), in.gzipped() ? (uint64_t(1) << 20) : in.file_bytes() / 2));
  coo.src.reserve(reserve);
  coo.dst.reserve(reserve);
  if (weighted) coo.w.reserve(reserve);

  const int want = weighted ? 3 : 2;
  int64_t count = 0;
  while (in.next(line)) {
    if (is_comment_or_blank(line, '%')) continue;
    if (count == nnz) in.fail_here("more entries than the ", nnz, " declared in the size line");
    Fields fields(line);
    int got = 0;
    int64_t r = 0, c = 0;
    float v = 1.0f;
    if (fields.next(f)) { r = int_field(in, f, "row index"); ++got; }
    if (fields.next(f)) { c = int_field(in, f, "column index"); ++got; }
    if (weighted && fields.next(f)) {
      if (field == Field::integer) {
        const int64_t iv = int_field(in, f, "integer value");
        v = float(iv);
      } else {
        v = float_field(in, f, "value");
      }
      ++got;
    }
    if (got < want) in.fail_here("expected ", want, " columns, got ", got);
    if (fields.next(f)) in.fail_here("expected ", want, " columns, trailing '", detail::shown(f), "'");
    if (r < 1 || r > rows) in.fail_here("row index ", r, " out of range [1, ", rows, "]");
    if (c < 1 || c > cols) in.fail_here("column index ", c, " out of range [1, ", cols, "]");
    if (sym == Symmetry::skew && r == c) in.fail_here("skew-symmetric matrix has a diagonal entry (", r, ", ", c, ")");
    // Entry (r, c) is the edge c -> r.
    coo.dst.push_back(r - 1);
    coo.src.push_back(c - 1);
    if (weighted) coo.w.push_back(v);
    if (mirror && r != c) {
      coo.dst.push_back(c - 1);
      coo.src.push_back(r - 1);
      if (weighted) coo.w.push_back(sym == Symmetry::skew ? -v : v);
    }
    ++count;
  }
  if (count < nnz)
    fail(path, ":", in.line_number(), ": expected ", nnz, " entries, found ", count, " (truncated?)");
  return coo;
}

}  // namespace detail

Csr<int64_t> read_matrix_market(const std::string& path) {
  return build_csr(detail::read_matrix_market_coo(path), BuildOptions{});
}

void write_matrix_market(const std::string& path, const CsrView<int64_t>& g) {
  detail::AtomicOutput out(path);
  const bool weighted = g.values != nullptr;
  out.put(weighted ? "%%MatrixMarket matrix coordinate real general\n"
                   : "%%MatrixMarket matrix coordinate pattern general\n");
  out.put("% written by tessera: entry (i, j) is the edge j -> i (row i = in-neighbours of i)\n");
  out.put_int(g.rows);
  out.put(' ');
  out.put_int(g.cols);
  out.put(' ');
  out.put_int(g.nnz);
  out.put('\n');
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t k = g.rowptr[i]; k < g.rowptr[i + 1]; ++k) {
      out.put_int(i + 1);
      out.put(' ');
      out.put_int(g.col[k] + 1);
      if (weighted) {
        out.put(' ');
        out.put_float(g.values[k]);
      }
      out.put('\n');
    }
  out.commit();
}

}  // namespace tessera::io
