// Host builder of the WSB tensor-core format (see include/tessera/format/wsb.hpp) and the host
// SpMM over its blocks that tests the format without a GPU.
#include "tessera/format/wsb.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include "tessera/core/error.hpp"

namespace tessera::format {

namespace {

constexpr int R = kWsbWindowRows;
constexpr int C = kWsbBlockCols;

// Sorted distinct source columns of window w (rows [16w, 16w+16) clipped to the graph).
template <class I>
void window_columns(const CsrView<I>& g, int64_t w, std::vector<I>& out) {
  out.clear();
  const int64_t r0 = w * R, r1 = std::min<int64_t>(r0 + R, g.rows);
  out.insert(out.end(), g.col + g.rowptr[r0], g.col + g.rowptr[r1]);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

int64_t padded_blocks(int64_t distinct) {
  const int64_t b = (distinct + C - 1) / C;
  return b + (b & 1);
}

template <class T> T to_tile(float v) { return T(v); }

template <class T> double as_double(T v) { return double(float(v)); }

// Reads X[i, j] of a host DenseView as double.
double read(const DenseView& X, int64_t i, int64_t j) {
  const size_t at = size_t(i) * size_t(X.ld) + size_t(j);
  switch (X.dtype) {
    case DType::f32: return X.as<float>()[at];
    case DType::f64: return X.as<double>()[at];
    case DType::f16: return float(X.as<half_t>()[at]);
    case DType::bf16: return float(X.as<bf16_t>()[at]);
  }
  return 0;
}
void write(const DenseView& Y, int64_t i, int64_t j, double v) {
  const size_t at = size_t(i) * size_t(Y.ld) + size_t(j);
  switch (Y.dtype) {
    case DType::f32: Y.as<float>()[at] = float(v); break;
    case DType::f64: Y.as<double>()[at] = v; break;
    case DType::f16: Y.as<half_t>()[at] = half_t(float(v)); break;
    case DType::bf16: Y.as<bf16_t>()[at] = bf16_t(float(v)); break;
  }
}

}  // namespace

std::string WsbStats::to_json() const {
  std::ostringstream os;
  os << "{\"rows\":" << rows << ",\"cols\":" << cols << ",\"entries\":" << entries
     << ",\"windows\":" << windows << ",\"empty_windows\":" << empty_windows
     << ",\"blocks\":" << blocks << ",\"pad_blocks\":" << pad_blocks
     << ",\"distinct_cols\":" << distinct_cols << ",\"cells\":" << cells << ",\"fill\":" << fill
     << ",\"column_reuse\":" << column_reuse << ",\"bytes_offsets\":" << bytes_offsets
     << ",\"bytes_cols\":" << bytes_cols << ",\"bytes_bitmaps\":" << bytes_bitmaps
     << ",\"bytes_tiles\":" << bytes_tiles << ",\"bytes_slots\":" << bytes_slots
     << ",\"device_bytes\":" << device_bytes() << ",\"build_ms\":" << build_ms << "}";
  return os.str();
}

template <class I>
WsbPattern<I> build_wsb_pattern(const CsrView<I>& g, WsbStats* stats) {
  TESSERA_CHECK(!g.device.is_cuda(), "wsb: build_wsb_pattern needs a host CSR (got ", g.device.str(), ")");
  TESSERA_CHECK(g.rows >= 0 && g.cols >= 0, "wsb: negative shape ", g.rows, " x ", g.cols);
  TESSERA_CHECK(g.rows == 0 || g.rowptr, "wsb: CSR without row offsets");
  // Offsets first (serially, cheap): the parallel passes index through them.
  if (g.rows > 0) {
    TESSERA_CHECK(g.rowptr[0] == 0, "wsb: rowptr[0] = ", int64_t(g.rowptr[0]), ", expected 0");
    for (int64_t i = 0; i < g.rows; ++i)
      TESSERA_CHECK(g.rowptr[i + 1] >= g.rowptr[i], "wsb: non-monotone offsets at row ", i);
    TESSERA_CHECK(int64_t(g.rowptr[g.rows]) == g.nnz, "wsb: rowptr[rows] = ", int64_t(g.rowptr[g.rows]),
                  " but nnz = ", g.nnz);
  }
  // Column ids in range; report the first bad entry.
  std::atomic<int64_t> bad{std::numeric_limits<int64_t>::max()};
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < g.nnz; ++k)
    if (g.col[k] < 0 || int64_t(g.col[k]) >= g.cols) {
      int64_t cur = bad.load();
      while (k < cur && !bad.compare_exchange_weak(cur, k)) {}
    }
  if (bad.load() != std::numeric_limits<int64_t>::max()) {
    const int64_t k = bad.load();
    const int64_t row = int64_t(std::upper_bound(g.rowptr, g.rowptr + g.rows + 1, I(k)) - g.rowptr) - 1;
    fail("wsb: entry ", k, " (row ", row, "): column ", int64_t(g.col[k]), " out of range [0, ", g.cols, ")");
  }

  WsbPattern<I> p;
  p.rows = g.rows;
  p.cols = g.cols;
  const int64_t windows = (g.rows + R - 1) / R;
  p.window_ptr.assign(size_t(windows) + 1, 0);
  std::vector<int64_t> distinct(size_t(windows), 0);

  // Pass 1: block counts per window.
#pragma omp parallel
  {
    std::vector<I> cols;
#pragma omp for schedule(dynamic, 64)
    for (int64_t w = 0; w < windows; ++w) {
      window_columns(g, w, cols);
      distinct[size_t(w)] = int64_t(cols.size());
      p.window_ptr[size_t(w) + 1] = padded_blocks(int64_t(cols.size()));
    }
  }
  for (int64_t w = 0; w < windows; ++w) p.window_ptr[size_t(w) + 1] += p.window_ptr[size_t(w)];
  const int64_t blocks = p.blocks();
  p.block_cols.assign(size_t(blocks) * C, I(-1));
  p.bitmap.assign(size_t(blocks) * 2, 0);
  p.cell.assign(size_t(g.nnz), 0);

  // Pass 2: column ids, bitmaps and each entry's cell (one thread per window: no races).
#pragma omp parallel
  {
    std::vector<I> cols;
#pragma omp for schedule(dynamic, 64)
    for (int64_t w = 0; w < windows; ++w) {
      window_columns(g, w, cols);
      const int64_t b0 = p.window_ptr[size_t(w)];
      std::copy(cols.begin(), cols.end(), p.block_cols.begin() + b0 * C);
      const int64_t r0 = w * R, r1 = std::min<int64_t>(r0 + R, g.rows);
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t k = g.rowptr[r]; k < int64_t(g.rowptr[r + 1]); ++k) {
          const int64_t idx = std::lower_bound(cols.begin(), cols.end(), g.col[k]) - cols.begin();
          const int64_t block = b0 + idx / C;
          const int bit = int(r - r0) * C + int(idx % C);
          p.bitmap[size_t(block) * 2 + size_t(bit >> 6)] |= uint64_t(1) << (bit & 63);
          p.cell[size_t(k)] = block * kWsbTileElems + bit;
        }
    }
  }

  if (stats) {
    WsbStats& s = *stats;
    s = WsbStats{};
    s.rows = g.rows;
    s.cols = g.cols;
    s.entries = g.nnz;
    s.windows = windows;
    s.blocks = blocks;
    int64_t cells = 0, sum_distinct = 0, empty = 0, pads = 0;
#pragma omp parallel for reduction(+ : cells)
    for (int64_t i = 0; i < int64_t(p.bitmap.size()); ++i) cells += std::popcount(p.bitmap[size_t(i)]);
    for (int64_t w = 0; w < windows; ++w) {
      const int64_t d = distinct[size_t(w)];
      sum_distinct += d;
      empty += d == 0;
      pads += ((d + C - 1) / C) & 1;
    }
    s.cells = cells;
    s.distinct_cols = sum_distinct;
    s.empty_windows = empty;
    s.pad_blocks = pads;
    s.fill = blocks ? double(cells) / double(blocks * kWsbTileElems) : 0.0;
    s.column_reuse = sum_distinct ? double(g.nnz) / double(sum_distinct) : 0.0;
    s.bytes_offsets = p.window_ptr.size() * sizeof(int64_t);
    s.bytes_cols = p.block_cols.size() * sizeof(I);
    s.bytes_bitmaps = p.bitmap.size() * sizeof(uint64_t);
    s.bytes_slots = p.cell.size() * sizeof(int64_t);
  }
  return p;
}

template <class I, class T>
std::vector<T> fill_wsb_tiles(const WsbPattern<I>& p, const float* values, int64_t nnz) {
  TESSERA_CHECK(nnz == int64_t(p.cell.size()), "wsb: ", nnz, " weights for a pattern of ",
                p.cell.size(), " entries");
  if (values) {
    std::atomic<int64_t> nan_at{-1};
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < nnz; ++k)
      if (std::isnan(values[k])) nan_at.store(k);
    TESSERA_CHECK(nan_at.load() < 0, "wsb: weight of entry ", nan_at.load(), " is NaN");
  }
  // Sum per window in float: one thread owns a window's blocks. CSR entries are stored row by
  // row, so the window of entry k (read off its cell's block) is monotone in k and each window's
  // entries form one contiguous range.
  const int64_t windows = p.windows();
  std::vector<T> tiles(size_t(p.blocks()) * kWsbTileElems, to_tile<T>(0.0f));
  std::vector<int64_t> first_entry(size_t(windows) + 1, nnz);
  {
    int64_t w = 0;
    first_entry[0] = 0;
    for (int64_t k = 0; k < nnz; ++k) {
      const int64_t block = p.cell[size_t(k)] / kWsbTileElems;
      while (block >= p.window_ptr[size_t(w) + 1]) first_entry[size_t(++w)] = k;
    }
    while (w < windows) first_entry[size_t(++w)] = nnz;
  }
#pragma omp parallel
  {
    std::vector<float> acc;
#pragma omp for schedule(dynamic, 64)
    for (int64_t w = 0; w < windows; ++w) {
      const int64_t b0 = p.window_ptr[size_t(w)], b1 = p.window_ptr[size_t(w) + 1];
      acc.assign(size_t(b1 - b0) * kWsbTileElems, 0.0f);
      for (int64_t k = first_entry[size_t(w)]; k < first_entry[size_t(w) + 1]; ++k)
        acc[size_t(p.cell[size_t(k)] - b0 * kWsbTileElems)] += values ? values[k] : 1.0f;
      for (size_t i = 0; i < acc.size(); ++i)
        tiles[size_t(b0) * kWsbTileElems + i] = to_tile<T>(acc[i]);
    }
  }
  return tiles;
}

template <class I, class T>
Wsb<I, T> build_wsb(const CsrView<I>& g, const float* values) {
  const auto t0 = std::chrono::steady_clock::now();
  Wsb<I, T> w;
  w.pattern = build_wsb_pattern(g, &w.stats);
  w.tiles = fill_wsb_tiles<I, T>(w.pattern, values ? values : g.values, g.nnz);
  w.stats.bytes_tiles = w.tiles.size() * sizeof(T);
  w.stats.build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return w;
}

template <class I, class T>
void wsb_spmm_host(const Wsb<I, T>& w, const DenseView& X, const DenseView& Y) {
  const WsbPattern<I>& p = w.pattern;
  TESSERA_CHECK(!X.device.is_cuda() && !Y.device.is_cuda(), "wsb_spmm_host: X and Y must be host matrices");
  TESSERA_CHECK(X.rows == p.cols, "wsb_spmm_host: X has ", X.rows, " rows but A has ", p.cols, " columns");
  TESSERA_CHECK(Y.rows == p.rows, "wsb_spmm_host: Y has ", Y.rows, " rows but A has ", p.rows, " rows");
  TESSERA_CHECK(X.cols == Y.cols, "wsb_spmm_host: X has ", X.cols, " columns but Y has ", Y.cols);
  TESSERA_CHECK(X.ld >= X.cols && Y.ld >= Y.cols, "wsb_spmm_host: leading dimension below width");
  const int64_t F = X.cols;
#pragma omp parallel
  {
    std::vector<double> acc;
#pragma omp for schedule(dynamic, 16)
    for (int64_t win = 0; win < p.windows(); ++win) {
      acc.assign(size_t(R) * size_t(F), 0.0);
      for (int64_t b = p.window_ptr[size_t(win)]; b < p.window_ptr[size_t(win) + 1]; ++b)
        for (int c = 0; c < C; ++c) {
          const int64_t src = int64_t(p.block_cols[size_t(b) * C + size_t(c)]);
          if (src < 0) continue;
          for (int r = 0; r < R; ++r) {
            if (!p.occupied(b, r, c)) continue;
            const double wt = as_double(w.tiles[size_t(b) * kWsbTileElems + size_t(r * C + c)]);
            for (int64_t f = 0; f < F; ++f) acc[size_t(r) * size_t(F) + size_t(f)] += wt * read(X, src, f);
          }
        }
      for (int r = 0; r < R && win * R + r < p.rows; ++r)
        for (int64_t f = 0; f < F; ++f) write(Y, win * R + r, f, acc[size_t(r) * size_t(F) + size_t(f)]);
    }
  }
}

#ifndef TESSERA_WITH_CUDA
template <class I>
WsbDeviceInfo wsb_prepare_device(const CsrView<I>&, DType, const Exec&) {
  fail("wsb_prepare_device: tessera was built without CUDA");
}
void wsb_device_cache_clear() {}
size_t wsb_device_cache_size() { return 0; }
template WsbDeviceInfo wsb_prepare_device<int32_t>(const CsrView<int32_t>&, DType, const Exec&);
template WsbDeviceInfo wsb_prepare_device<int64_t>(const CsrView<int64_t>&, DType, const Exec&);
#endif

#define TESSERA_WSB_INSTANTIATE_T(I, T)                                                        \
  template std::vector<T> fill_wsb_tiles<I, T>(const WsbPattern<I>&, const float*, int64_t);    \
  template Wsb<I, T> build_wsb<I, T>(const CsrView<I>&, const float*);                         \
  template void wsb_spmm_host<I, T>(const Wsb<I, T>&, const DenseView&, const DenseView&);
#define TESSERA_WSB_INSTANTIATE(I)                                                             \
  template WsbPattern<I> build_wsb_pattern<I>(const CsrView<I>&, WsbStats*);                   \
  TESSERA_WSB_INSTANTIATE_T(I, float)                                                          \
  TESSERA_WSB_INSTANTIATE_T(I, half_t)                                                         \
  TESSERA_WSB_INSTANTIATE_T(I, bf16_t)
TESSERA_WSB_INSTANTIATE(int32_t)
TESSERA_WSB_INSTANTIATE(int64_t)

}  // namespace tessera::format
