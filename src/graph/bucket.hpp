#pragma once
// Bucketing of an edge stream into CSR rows, shared by build_csr and transpose.
// Counting sort by row (O(E), parallel: atomic per-row counters), then every row is sorted by
// (column, weight bits). Sorting by the weight too makes the result independent of the order in
// which threads scattered the edges, so floating-point sums of duplicates are bit-reproducible
// for any thread count and any input order.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera::detail {

// Total order on floats by bit pattern (NaN is rejected before we get here).
inline uint32_t float_key(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// Below this much work an OpenMP region costs more than it saves (a barrier on a busy machine
// can take milliseconds, and loaders build thousands of tiny graphs).
inline bool parallel_worth(int64_t work) { return work >= (int64_t(1) << 15); }

template <class I>
void check_fits_index(int64_t n, const char* what) {
  if (n > int64_t(std::numeric_limits<I>::max()))
    fail(what, " ", n, " does not fit the ", sizeof(I) * 8, "-bit index type");
}

// Edge source: count() edges; for edge k, row(k) in [0, rows) or -1 to skip, col(k), weight(k).
// Produces rowptr (rows + 1), col and (if weighted) values, each row sorted by (col, weight).
template <class I, class RowFn, class ColFn, class WFn>
void bucket_rows(int64_t rows, int64_t count, bool weighted, RowFn row, ColFn col, WFn weight,
                 std::vector<I>& rowptr, std::vector<I>& out_col, std::vector<float>& out_w) {
  std::vector<int64_t> fill(size_t(rows) + 1, 0);
  const bool par = parallel_worth(count + rows);
  // Pass 1: per-row counts. Relaxed atomics: contention only on hub rows.
#pragma omp parallel for schedule(static) if (par)
  for (int64_t k = 0; k < count; ++k) {
    const int64_t r = row(k);
    if (r >= 0) std::atomic_ref<int64_t>(fill[size_t(r) + 1]).fetch_add(1, std::memory_order_relaxed);
  }
  for (int64_t r = 0; r < rows; ++r) fill[size_t(r) + 1] += fill[size_t(r)];
  const int64_t total = fill[size_t(rows)];
  check_fits_index<I>(total, "edge count");
  rowptr.assign(size_t(rows) + 1, I(0));
#pragma omp parallel for schedule(static) if (par)
  for (int64_t r = 0; r <= rows; ++r) rowptr[size_t(r)] = I(fill[size_t(r)]);
  out_col.resize(size_t(total));
  out_w.resize(weighted ? size_t(total) : 0);
  // Pass 2: scatter (fill[r] is the next free slot of row r).
#pragma omp parallel for schedule(static) if (par)
  for (int64_t k = 0; k < count; ++k) {
    const int64_t r = row(k);
    if (r < 0) continue;
    const int64_t p = std::atomic_ref<int64_t>(fill[size_t(r)]).fetch_add(1, std::memory_order_relaxed);
    out_col[size_t(p)] = I(col(k));
    if (weighted) out_w[size_t(p)] = weight(k);
  }
  fill = {};
  // Pass 3: sort each row. Dynamic schedule: one huge row must not stall a whole static chunk.
#pragma omp parallel if (par)
  {
    std::vector<std::pair<uint64_t, float>> buf;
#pragma omp for schedule(dynamic, 256)
    for (int64_t r = 0; r < rows; ++r) {
      const size_t b = size_t(rowptr[size_t(r)]), e = size_t(rowptr[size_t(r) + 1]);
      if (e - b < 2) continue;
      if (!weighted) {
        std::sort(out_col.begin() + b, out_col.begin() + e);
        continue;
      }
      buf.resize(e - b);
      for (size_t p = b; p < e; ++p)
        buf[p - b] = {(uint64_t(out_col[p]) << 32) | float_key(out_w[p]), out_w[p]};
      // Column ids are < 2^63; pack (col, weight-key) only when col fits 32 bits, else compare pairs.
      const bool packed = std::all_of(out_col.begin() + b, out_col.begin() + e,
                                      [](I c) { return uint64_t(c) < (uint64_t(1) << 32); });
      if (packed) {
        std::sort(buf.begin(), buf.end(), [](auto& x, auto& y) { return x.first < y.first; });
        for (size_t p = b; p < e; ++p) {
          out_col[p] = I(buf[p - b].first >> 32);
          out_w[p] = buf[p - b].second;
        }
      } else {
        std::vector<std::pair<I, float>> wide(e - b);
        for (size_t p = b; p < e; ++p) wide[p - b] = {out_col[p], out_w[p]};
        std::sort(wide.begin(), wide.end(), [](auto& x, auto& y) {
          return x.first != y.first ? x.first < y.first : float_key(x.second) < float_key(y.second);
        });
        for (size_t p = b; p < e; ++p) std::tie(out_col[p], out_w[p]) = wide[p - b];
      }
    }
  }
}

}  // namespace tessera::detail
