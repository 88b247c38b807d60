#include "io/text_input.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace tessera::io::detail {

namespace {
constexpr size_t kChunk = size_t(4) << 20;  // bytes per gzread: amortizes calls, fits in L2/L3
constexpr size_t kMaxLine = size_t(256) << 20;

bool has_gzip_magic(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  unsigned char m[2] = {0, 0};
  const size_t n = std::fread(m, 1, 2, f);
  std::fclose(f);
  return n == 2 && m[0] == 0x1f && m[1] == 0x8b;
}
}  // namespace

LineReader::LineReader(std::string path) : path_(std::move(path)) {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) fail(path_, ": cannot open: ", std::strerror(errno));
  if (S_ISDIR(st.st_mode)) fail(path_, ": is a directory, expected a file");
  file_bytes_ = uint64_t(st.st_size);
  gzipped_ = has_gzip_magic(path_);
  if (ends_with(path_, ".gz") && !gzipped_ && file_bytes_ > 0)
    fail(path_, ": name ends in .gz but the file is not gzip data");
  gz_ = gzopen(path_.c_str(), "rb");
  if (!gz_) fail(path_, ": cannot open: ", std::strerror(errno));
  gzbuffer(gz_, 1u << 20);
  buf_.resize(kChunk);
}

LineReader::~LineReader() {
  if (gz_) gzclose(gz_);
}

bool LineReader::refill() {
  if (eof_) return false;
  // Keep the unread tail (a partial line) at the front, then append a chunk after it.
  const size_t tail = end_ - begin_;
  if (begin_ > 0 && tail > 0) std::memmove(buf_.data(), buf_.data() + begin_, tail);
  begin_ = 0;
  end_ = tail;
  if (buf_.size() - end_ < kChunk / 2) {
    // Only a line longer than the buffer gets here; cap it so a gzip bomb without newlines
    // cannot exhaust memory.
    if (end_ >= kMaxLine) fail(path_, ":", line_no_ + 1, ": line longer than ", kMaxLine >> 20, " MiB");
    buf_.resize(std::max(buf_.size() * 2, end_ + kChunk));
  }
  const int n = gzread(gz_, buf_.data() + end_, unsigned(buf_.size() - end_));
  if (n < 0) {
    int err = 0;
    const char* msg = gzerror(gz_, &err);
    fail(path_, ":", line_no_ + 1, ": read error (", msg ? msg : "?",
         err == Z_BUF_ERROR ? ": truncated gzip stream" : "", ")");
  }
  if (n == 0) {
    // zlib reports a stream cut short at the end only through gzerror.
    int err = 0;
    const char* msg = gzerror(gz_, &err);
    if (err != Z_OK && err != Z_STREAM_END)
      fail(path_, ":", line_no_ + 1, ": read error (", msg ? msg : "?",
           err == Z_BUF_ERROR ? ": truncated gzip stream" : "", ")");
    eof_ = true;
    return false;
  }
  end_ += size_t(n);
  return true;
}

bool LineReader::next(std::string_view& line) {
  for (;;) {
    const char* b = buf_.data() + begin_;
    const char* nl = static_cast<const char*>(std::memchr(b, '\n', end_ - begin_));
    if (nl) {
      size_t len = size_t(nl - b);
      begin_ += len + 1;
      if (len > 0 && b[len - 1] == '\r') --len;
      line = std::string_view(b, len);
      ++line_no_;
      return true;
    }
    if (!refill()) {
      if (begin_ == end_) return false;
      // Last line without a final newline.
      const char* s = buf_.data() + begin_;
      size_t len = end_ - begin_;
      begin_ = end_;
      if (len > 0 && s[len - 1] == '\r') --len;
      line = std::string_view(s, len);
      ++line_no_;
      return true;
    }
  }
}

bool Fields::next(std::string_view& field) {
  const size_t n = s_.size();
  if (delim_ == 0) {
    while (pos_ < n && is_sep(s_[pos_])) ++pos_;
    if (pos_ >= n) return false;
    const size_t start = pos_;
    while (pos_ < n && !is_sep(s_[pos_])) ++pos_;
    field = s_.substr(start, pos_ - start);
    return true;
  }
  // Explicit delimiter: "a,,b" has an empty middle field, which callers reject as a number.
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  if (pos_ > n) return false;
  if (pos_ == 0) {
    size_t i = 0;
    while (i < n && blank(s_[i])) ++i;
    if (i == n) {  // blank line: no fields at all
      pos_ = n + 1;
      return false;
    }
  }
  size_t stop = s_.find(delim_, pos_);
  if (stop == std::string_view::npos) stop = n;
  size_t b = pos_, e = stop;
  while (b < e && blank(s_[b])) ++b;
  while (e > b && blank(s_[e - 1])) --e;
  field = s_.substr(b, e - b);
  pos_ = stop + 1;  // past the delimiter; n + 1 after the last field
  return true;
}

uint64_t plausible_node_limit(uint64_t file_bytes, bool gzipped) {
  const uint64_t text_bytes = gzipped ? file_bytes * 1032 : file_bytes;
  return std::max<uint64_t>(uint64_t(1) << 26, text_bytes * 4);
}

void check_node_count(const std::string& path, int64_t nodes, uint64_t file_bytes, bool gzipped,
                      const char* what) {
  if (nodes < 0) fail(path, ": ", what, " ", nodes, " is negative");
  const uint64_t limit = plausible_node_limit(file_bytes, gzipped);
  if (uint64_t(nodes) > limit)
    fail(path, ": ", what, " ", nodes, " is implausible for a file of ", file_bytes,
         " bytes (limit ", limit, "); refusing to allocate offsets for that many nodes");
}

std::vector<int64_t> read_int_lines(const std::string& path, const char* what) {
  LineReader in(path);
  std::vector<int64_t> out;
  std::string_view line, f;
  while (in.next(line)) {
    Fields fields(line);
    if (!fields.next(f)) in.fail_here("expected one ", what, ", got an empty line");
    out.push_back(int_field(in, f, what));
    if (fields.next(f)) in.fail_here("expected one ", what, ", trailing '", detail::shown(f), "'");
  }
  if (out.empty()) fail(path, ":", in.line_number(), ": no ", what, " in the file (empty file)");
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string graph_extension(const std::string& path) {
  std::string_view s = path;
  if (ends_with(s, ".gz")) s.remove_suffix(3);
  const size_t slash = s.find_last_of('/');
  const size_t dot = s.find_last_of('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return "";
  std::string ext(s.substr(dot));
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

}  // namespace tessera::io::detail
