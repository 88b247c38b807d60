#pragma once
// Fast line-oriented input for the text loaders: large gzread() chunks (zlib reads plain files
// transparently, so one path serves .txt and .txt.gz), lines handed out as string_views into the
// buffer, and number parsing with std::from_chars. Every error names "<file>:<line>: ...".
#include <zlib.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::io::detail {

class LineReader {
 public:
  explicit LineReader(std::string path);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Next line without its '\n' (and without a trailing '\r'); false at end of input. Throws on
  // read errors and on a truncated or corrupt gzip stream.
  bool next(std::string_view& line);
  int64_t line_number() const { return line_no_; }
  const std::string& path() const { return path_; }
  // Bytes of the file on disk (the compressed size for .gz).
  uint64_t file_bytes() const { return file_bytes_; }
  bool gzipped() const { return gzipped_; }

  // "<path>:<line>: <parts>"
  template <class... Parts>
  [[noreturn]] void fail_here(Parts&&... parts) const {
    fail(path_, ":", line_no_, ": ", std::forward<Parts>(parts)...);
  }

 private:
  bool refill();

  std::string path_;
  gzFile gz_ = nullptr;
  std::vector<char> buf_;
  size_t begin_ = 0, end_ = 0;  // unread bytes are buf_[begin_, end_)
  bool eof_ = false;
  int64_t line_no_ = 0;
  uint64_t file_bytes_ = 0;
  bool gzipped_ = false;
};

struct SeparatorTable {
  bool v[256] = {};
  constexpr SeparatorTable() {
    for (unsigned char c : {' ', '\t', '\r', '\v', '\f', ','}) v[c] = true;
  }
};
inline constexpr SeparatorTable kFieldSeparators{};

// Splits a line into fields separated by blanks (space, tab) and, when delim is 0, also commas
// (TU files use ", "); with delim set, fields are separated by it and surrounding blanks.
class Fields {
 public:
  Fields(std::string_view line, char delim = 0) : s_(line), delim_(delim) {}
  // Next field; false when the line is exhausted.
  bool next(std::string_view& field);
  // Counts the remaining fields (consumes them).
  int count_rest() {
    int n = 0;
    std::string_view f;
    while (next(f)) ++n;
    return n;
  }

 private:
  // Separator test by table: this runs for every byte of every data file.
  bool is_sep(char c) const { return kFieldSeparators.v[static_cast<unsigned char>(c)]; }
  std::string_view s_;
  size_t pos_ = 0;
  char delim_;
};

// A field echoed in an error message, cut to 40 characters: a hostile file's "number" can be a
// gigabyte long.
struct Shown {
  std::string_view s;
};
inline Shown shown(std::string_view s) { return {s}; }
inline std::ostream& operator<<(std::ostream& os, Shown v) {
  constexpr size_t kMax = 40;
  if (v.s.size() <= kMax) return os << v.s;
  return os << v.s.substr(0, kMax) << "...(" << v.s.size() << " bytes)";
}

// Integer field. Accepts an optional leading '+'; rejects trailing characters ("12x") and
// overflow. Returns false (never throws) so callers can phrase the error.
inline bool parse_int(std::string_view f, int64_t& out) {
  if (!f.empty() && f.front() == '+') f.remove_prefix(1);
  if (f.empty()) return false;
  auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), out);
  return ec == std::errc() && p == f.data() + f.size();
}
// Real field (decimal or scientific, "nan"/"inf" parse but callers reject non-finite values).
inline bool parse_real(std::string_view f, double& out) {
  if (!f.empty() && f.front() == '+') f.remove_prefix(1);
  if (f.empty()) return false;
  auto [p, ec] = std::from_chars(f.data(), f.data() + f.size(), out);
  return ec == std::errc() && p == f.data() + f.size();
}

// Parses an integer field or fails naming what it is ("source id").
inline int64_t int_field(const LineReader& in, std::string_view f, const char* what) {
  int64_t v;
  if (!parse_int(f, v)) in.fail_here(what, " '", detail::shown(f), "' is not an integer");
  return v;
}
// Node id: an integer >= 0.
inline int64_t id_field(const LineReader& in, std::string_view f, const char* what) {
  const int64_t v = int_field(in, f, what);
  if (v < 0) in.fail_here(what, " ", v, " is negative");
  return v;
}
// A finite value that fits a float.
inline float float_field(const LineReader& in, std::string_view f, const char* what) {
  double v;
  if (!parse_real(f, v)) in.fail_here(what, " '", detail::shown(f), "' is not a number");
  if (!std::isfinite(v)) in.fail_here(what, " '", detail::shown(f), "' is not finite");
  if (std::fabs(v) > 3.4028234663852886e38) in.fail_here(what, " ", detail::shown(f), " overflows float");
  return float(v);
}

// True for lines that carry no data: blank, or starting with the comment character or '%'.
inline bool is_comment_or_blank(std::string_view line, char comment = '#') {
  for (char c : line) {
    if (c == ' ' || c == '\t' || c == '\r') continue;
    return c == comment || c == '%' || c == '#';
  }
  return true;
}

// Largest node count a file of this size may claim. A CSR allocates rows + 1 offsets whatever
// the number of edges, so a hostile header ("1e12 nodes") or a single huge id must be refused
// before allocating. Allows 2^26 nodes for any file, more in proportion to its (uncompressed,
// for .gz at most ~1032x) size.
uint64_t plausible_node_limit(uint64_t file_bytes, bool gzipped);
void check_node_count(const std::string& path, int64_t nodes, uint64_t file_bytes, bool gzipped,
                      const char* what);

// A file with exactly one integer per line (labels, split ids, TU indicator files). Blank and
// comment lines are not allowed: line i must be record i.
std::vector<int64_t> read_int_lines(const std::string& path, const char* what);

bool ends_with(std::string_view s, std::string_view suffix);
// Extension without a trailing ".gz" ("a/b.txt.gz" -> ".txt").
std::string graph_extension(const std::string& path);

}  // namespace tessera::io::detail
