#pragma once
// Output for every writer: bytes go to "<path>.tmp.<pid>" (gzip-compressed when path ends in
// .gz) and are renamed onto path only by commit(). If the writer throws, or commit() fails, the
// destructor removes the temporary file, so readers never see a half-written file.
#include <zlib.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tessera::io::detail {

class AtomicOutput {
 public:
  explicit AtomicOutput(std::string path);
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  void write(const void* data, size_t bytes);
  void put(std::string_view s) {
    if (buf_.size() + s.size() > kFlushAt) flush_buffer();
    buf_.append(s);
  }
  void put(char c) {
    if (buf_.size() + 1 > kFlushAt) flush_buffer();
    buf_.push_back(c);
  }
  void put_int(int64_t v) {
    char tmp[24];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    put(std::string_view(tmp, size_t(r.ptr - tmp)));
  }
  // Shortest text that reads back as the same float (or double).
  template <class Real>
  void put_float(Real v) {
    static_assert(std::is_floating_point_v<Real>);
    char tmp[32];
    auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
    put(std::string_view(tmp, size_t(r.ptr - tmp)));
  }
  // Flushes, closes (checking for errors) and renames onto the final path.
  void commit();
  const std::string& path() const { return path_; }

 private:
  static constexpr size_t kFlushAt = size_t(1) << 20;
  void flush_buffer();
  [[noreturn]] void fail_io(const char* what);

  std::string path_, tmp_;
  std::string buf_;
  FILE* file_ = nullptr;
  gzFile gz_ = nullptr;
  bool done_ = false;
};

}  // namespace tessera::io::detail
