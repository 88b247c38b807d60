// The .tsr binary cache: header, arrays, per-section checksums (layout in graph_io.hpp).
#include <sys/stat.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "io/atomic_output.hpp"
#include "tessera/io/graph_io.hpp"

namespace tessera::io {

static_assert(std::endian::native == std::endian::little, "the .tsr format is little endian");

namespace {
constexpr char kMagic[8] = {'T', 'S', 'R', 'G', 'R', 'A', 'P', 'H'};
constexpr uint32_t kVersion = 1;
constexpr uint8_t kWeighted = 1;

struct Header {
  char magic[8];
  uint32_t version;
  uint8_t index_width;
  uint8_t flags;
  uint16_t reserved0;
  int64_t rows, cols, nnz;
  uint64_t reserved1;
};
static_assert(sizeof(Header) == 48);
constexpr size_t kTrailer = 4 * sizeof(uint64_t);

// 64-bit checksum: four independent multiply-rotate lanes over 8-byte words (xxHash64's round)
// so it runs at memory speed, then a byte tail and an avalanche. Any flipped bit changes it.
constexpr uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full,
                   P3 = 0x165667B19E3779F9ull, P4 = 0x85EBCA77C2B2AE63ull;
inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t round64(uint64_t acc, uint64_t in) { return rotl(acc + in * P2, 31) * P1; }
uint64_t checksum(const void* data, size_t bytes, uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t v[4] = {seed + P1 + P2, seed + P2, seed, seed - P1};
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    uint64_t w[4];
    std::memcpy(w, p + i, 32);
    for (int l = 0; l < 4; ++l) v[l] = round64(v[l], w[l]);
  }
  uint64_t h = rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18) + uint64_t(bytes);
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = rotl(h ^ round64(0, w), 27) * P1 + P4;
  }
  for (; i < bytes; ++i) h = rotl(h ^ (uint64_t(p[i]) * P4), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

template <class T>
void write_indices(detail::AtomicOutput& out, const int64_t* src, int64_t n, uint64_t& sum, uint64_t seed) {
  std::vector<T> tmp(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) tmp[size_t(i)] = T(src[i]);
  sum = checksum(tmp.data(), tmp.size() * sizeof(T), seed);
  out.write(tmp.data(), tmp.size() * sizeof(T));
}

// Reads exactly `bytes` or fails naming the section.
void read_exact(FILE* f, const std::string& path, void* dst, size_t bytes, const char* section) {
  if (bytes == 0) return;
  if (std::fread(dst, 1, bytes, f) != bytes)
    fail(path, ": truncated: cannot read the ", section, std::ferror(f) ? std::string(" (") + std::strerror(errno) + ")" : "");
}

template <class T>
std::vector<int64_t> read_indices(FILE* f, const std::string& path, int64_t n, const char* section,
                                  uint64_t expect, uint64_t seed) {
  std::vector<T> tmp(static_cast<size_t>(n));
  read_exact(f, path, tmp.data(), tmp.size() * sizeof(T), section);
  if (checksum(tmp.data(), tmp.size() * sizeof(T), seed) != expect)
    fail(path, ": checksum mismatch in the ", section, " (file corrupt)");
  if constexpr (std::is_same_v<T, int64_t>) return tmp;
  return std::vector<int64_t>(tmp.begin(), tmp.end());
}

struct FileCloser {
  FILE* f;
  ~FileCloser() { if (f) std::fclose(f); }
};
}  // namespace

void write_binary(const std::string& path, const CsrView<int64_t>& g, const BinaryOptions& opt) {
  TESSERA_CHECK(!g.device.is_cuda(), path, ": write_binary needs a host graph");
  TESSERA_CHECK(opt.index_width == 0 || opt.index_width == 4 || opt.index_width == 8, path,
                ": index width must be 0, 4 or 8, got ", opt.index_width);
  validate(g);
  const bool fits32 = g.rows < std::numeric_limits<int32_t>::max() && g.cols <= std::numeric_limits<int32_t>::max() &&
                      g.nnz <= std::numeric_limits<int32_t>::max();
  int width = opt.index_width ? opt.index_width : (fits32 ? 4 : 8);
  TESSERA_CHECK(width == 8 || fits32, path, ": graph does not fit 4-byte indices");

  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  h.version = kVersion;
  h.index_width = uint8_t(width);
  h.flags = g.values ? kWeighted : 0;
  h.rows = g.rows;
  h.cols = g.cols;
  h.nnz = g.nnz;
  uint64_t sums[4] = {checksum(&h, sizeof h, 0), 0, 0, 0};

  detail::AtomicOutput out(path);
  out.write(&h, sizeof h);
  if (width == 4) {
    write_indices<int32_t>(out, g.rowptr, g.rows + 1, sums[1], 1);
    write_indices<int32_t>(out, g.col, g.nnz, sums[2], 2);
  } else {
    write_indices<int64_t>(out, g.rowptr, g.rows + 1, sums[1], 1);
    write_indices<int64_t>(out, g.col, g.nnz, sums[2], 2);
  }
  if (g.values) {
    sums[3] = checksum(g.values, size_t(g.nnz) * sizeof(float), 3);
    out.write(g.values, size_t(g.nnz) * sizeof(float));
  }
  out.write(sums, sizeof sums);
  out.commit();
}

Csr<int64_t> read_binary(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(path, ": cannot open: ", std::strerror(errno));
  FileCloser fc{std::fopen(path.c_str(), "rb")};
  if (!fc.f) fail(path, ": cannot open: ", std::strerror(errno));
  const uint64_t size = uint64_t(st.st_size);

  Header h{};
  if (size < sizeof h) fail(path, ": truncated: ", size, " bytes, shorter than the ", sizeof h, "-byte header");
  read_exact(fc.f, path, &h, sizeof h, "header");
  if (std::memcmp(h.magic, kMagic, 8) != 0) fail(path, ": bad magic: not a tessera .tsr graph file");
  if (h.version != kVersion)
    fail(path, ": unsupported version ", h.version, " (this build reads version ", kVersion, ")");
  if (h.index_width != 4 && h.index_width != 8) fail(path, ": bad index width ", int(h.index_width), " (4 or 8)");
  if (h.flags & ~kWeighted) fail(path, ": unknown flags 0x", std::hex, int(h.flags));
  if (h.reserved0 != 0 || h.reserved1 != 0) fail(path, ": reserved header fields are not zero");
  if (h.rows < 0 || h.cols < 0 || h.nnz < 0)
    fail(path, ": negative sizes in header (rows ", h.rows, ", cols ", h.cols, ", nnz ", h.nnz, ")");

  // The sizes must account for the file's length exactly before anything is allocated.
  const uint64_t w = h.index_width;
  const bool weighted = h.flags & kWeighted;
  const uint64_t limit = size / w + 1;  // no array can hold more elements than the file has bytes
  if (uint64_t(h.rows) >= limit || uint64_t(h.nnz) >= limit)
    fail(path, ": size mismatch: header claims ", h.rows, " rows and ", h.nnz, " entries, file has ", size, " bytes");
  const uint64_t expect = sizeof h + (uint64_t(h.rows) + 1) * w + uint64_t(h.nnz) * w +
                          (weighted ? uint64_t(h.nnz) * 4 : 0) + kTrailer;
  if (expect != size)
    fail(path, size < expect ? ": truncated: " : ": size mismatch (trailing bytes): ", "header implies ",
         expect, " bytes, file has ", size);

  // Checksums sit at the end; read them first so each section is verified as it arrives.
  uint64_t sums[4];
  if (::fseeko(fc.f, off_t(size - kTrailer), SEEK_SET) != 0) fail(path, ": seek failed");
  read_exact(fc.f, path, sums, sizeof sums, "checksums");
  if (checksum(&h, sizeof h, 0) != sums[0]) fail(path, ": checksum mismatch in the header (file corrupt)");
  if (::fseeko(fc.f, off_t(sizeof h), SEEK_SET) != 0) fail(path, ": seek failed");

  Csr<int64_t> g;
  g.rows = h.rows;
  g.cols = h.cols;
  if (w == 4) {
    g.rowptr = read_indices<int32_t>(fc.f, path, h.rows + 1, "row offsets", sums[1], 1);
    g.col = read_indices<int32_t>(fc.f, path, h.nnz, "column indices", sums[2], 2);
  } else {
    g.rowptr = read_indices<int64_t>(fc.f, path, h.rows + 1, "row offsets", sums[1], 1);
    g.col = read_indices<int64_t>(fc.f, path, h.nnz, "column indices", sums[2], 2);
  }
  if (weighted) {
    g.values.resize(size_t(h.nnz));
    read_exact(fc.f, path, g.values.data(), g.values.size() * 4, "values");
    if (checksum(g.values.data(), g.values.size() * 4, 3) != sums[3])
      fail(path, ": checksum mismatch in the values (file corrupt)");
  } else if (sums[3] != 0) {
    fail(path, ": checksum of absent values is not zero (file corrupt)");
  }
  // A valid checksum proves the bytes are the ones written, not that the writer was right.
  try {
    validate(g.view());
  } catch (const Error& e) {
    fail(path, ": invalid graph: ", e.what());
  }
  g.touch();
  return g;
}

}  // namespace tessera::io
