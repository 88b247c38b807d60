// CSR checks and conversions: validate, transpose, to_coo, convert_index, row_degrees.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "bucket.hpp"
#include "tessera/core/error.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera {
namespace {
constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
}

template <class I>
void validate(const CsrView<I>& g) {
  TESSERA_CHECK(!g.device.is_cuda(), "validate: graph is on ", g.device.str(), ", needs host memory");
  TESSERA_CHECK(g.rows >= 0 && g.cols >= 0 && g.nnz >= 0, "invalid CSR sizes: rows ", g.rows,
                ", cols ", g.cols, ", nnz ", g.nnz);
  TESSERA_CHECK(g.rowptr != nullptr, "CSR has no row offsets (rowptr is null)");
  TESSERA_CHECK(g.nnz == 0 || g.col != nullptr, "CSR has ", g.nnz, " entries but no column array");
  TESSERA_CHECK(int64_t(g.rowptr[0]) == 0, "row offsets must start at 0, got rowptr[0] = ",
                int64_t(g.rowptr[0]));
  const I* rp = g.rowptr;
  const bool par = detail::parallel_worth(g.rows + g.nnz);
  int64_t bad_row = kNone;
#pragma omp parallel for schedule(static) reduction(min : bad_row) if (par)
  for (int64_t r = 0; r < g.rows; ++r)
    if (rp[r + 1] < rp[r] && r < bad_row) bad_row = r;
  if (bad_row != kNone)
    fail("non-monotone offsets at row ", bad_row, ": rowptr[", bad_row, "] = ", int64_t(rp[bad_row]),
         " > rowptr[", bad_row + 1, "] = ", int64_t(rp[bad_row + 1]));
  TESSERA_CHECK(int64_t(rp[g.rows]) == g.nnz, "size mismatch: rowptr[", g.rows, "] = ",
                int64_t(rp[g.rows]), " but nnz = ", g.nnz);
  int64_t bad = kNone;
#pragma omp parallel for schedule(static) reduction(min : bad) if (par)
  for (int64_t k = 0; k < g.nnz; ++k) {
    const int64_t c = int64_t(g.col[k]);
    const bool ok = c >= 0 && c < g.cols && !(g.values && std::isnan(g.values[k]));
    if (!ok && k < bad) bad = k;
  }
  if (bad == kNone) return;
  // Offsets are valid now, so the row of entry `bad` can be found by binary search.
  const int64_t row = int64_t(std::upper_bound(rp, rp + g.rows + 1, I(bad)) - rp) - 1;
  const int64_t c = int64_t(g.col[bad]);
  if (c < 0 || c >= g.cols)
    fail("index out of range at entry ", bad, " (row ", row, "): column ", c, " not in [0, ", g.cols, ")");
  fail("NaN weight at entry ", bad, " (row ", row, ", column ", c, ")");
}

template <class I>
Csr<I> transpose(const CsrView<I>& g) {
  validate(g);
  // Entry k's row: expanded once so the bucketing passes stay O(1) per entry.
  std::vector<I> entry_row(size_t(g.nnz));
  const bool par = detail::parallel_worth(g.rows + g.nnz);
#pragma omp parallel for schedule(dynamic, 1024) if (par)
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t p = int64_t(g.rowptr[r]); p < int64_t(g.rowptr[r + 1]); ++p) entry_row[size_t(p)] = I(r);
  Csr<I> t;
  t.rows = g.cols;
  t.cols = g.rows;
  const I* col = g.col;
  const float* w = g.values;
  detail::bucket_rows<I>(
      g.cols, g.nnz, w != nullptr, [&](int64_t k) { return int64_t(col[k]); },
      [&](int64_t k) { return int64_t(entry_row[size_t(k)]); }, [&](int64_t k) { return w ? w[k] : 1.0f; },
      t.rowptr, t.col, t.values);
  t.touch();
  return t;
}

template <class I>
Coo<I> to_coo(const CsrView<I>& g) {
  validate(g);
  Coo<I> c;
  const bool par = detail::parallel_worth(g.rows + g.nnz);
  c.rows = g.rows;
  c.cols = g.cols;
  c.src.resize(size_t(g.nnz));
  c.dst.resize(size_t(g.nnz));
  if (g.values) c.w.assign(g.values, g.values + g.nnz);
#pragma omp parallel for schedule(dynamic, 1024) if (par)
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t p = int64_t(g.rowptr[r]); p < int64_t(g.rowptr[r + 1]); ++p) {
      c.dst[size_t(p)] = I(r);
      c.src[size_t(p)] = g.col[p];
    }
  return c;
}

template <class To, class From>
Csr<To> convert_index(const Csr<From>& g) {
  detail::check_fits_index<To>(g.rows, "row count");
  detail::check_fits_index<To>(g.cols, "column count");
  detail::check_fits_index<To>(g.nnz(), "edge count");
  Csr<To> out;
  const bool par = detail::parallel_worth(g.rows + g.nnz());
  out.rows = g.rows;
  out.cols = g.cols;
  out.rowptr.resize(g.rowptr.size());
  out.col.resize(g.col.size());
#pragma omp parallel for schedule(static) if (par)
  for (int64_t i = 0; i < int64_t(g.rowptr.size()); ++i) out.rowptr[size_t(i)] = To(g.rowptr[size_t(i)]);
#pragma omp parallel for schedule(static) if (par)
  for (int64_t i = 0; i < int64_t(g.col.size()); ++i) out.col[size_t(i)] = To(g.col[size_t(i)]);
  out.values = g.values;
  return out;
}

template <class I>
std::vector<int64_t> row_degrees(const CsrView<I>& g) {
  std::vector<int64_t> d(size_t(g.rows));
  const bool par = detail::parallel_worth(g.rows);
#pragma omp parallel for schedule(static) if (par)
  for (int64_t r = 0; r < g.rows; ++r) d[size_t(r)] = int64_t(g.rowptr[r + 1]) - int64_t(g.rowptr[r]);
  return d;
}

#define TESSERA_INSTANTIATE(I)                        \
  template void validate(const CsrView<I>&);          \
  template Csr<I> transpose(const CsrView<I>&);       \
  template Coo<I> to_coo(const CsrView<I>&);          \
  template std::vector<int64_t> row_degrees(const CsrView<I>&);
TESSERA_INSTANTIATE(int32_t)
TESSERA_INSTANTIATE(int64_t)
#undef TESSERA_INSTANTIATE
template Csr<int32_t> convert_index(const Csr<int32_t>&);
template Csr<int32_t> convert_index(const Csr<int64_t>&);
template Csr<int64_t> convert_index(const Csr<int32_t>&);
template Csr<int64_t> convert_index(const Csr<int64_t>&);

}  // namespace tessera
