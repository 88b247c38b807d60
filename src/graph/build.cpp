// build_csr: edge list -> in-neighbour CSR (rows = targets), with validation, symmetrization,
// self-loop handling and duplicate merging. Everything is O(E) passes plus per-row sorts, parallel
// with OpenMP, and the result is identical for any thread count and any input edge order.
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

// Index of the first edge with a bad id or NaN weight, or -1.
template <class I>
int64_t first_bad_edge(const Coo<I>& coo) {
  const int64_t m = coo.nnz();
  const bool weighted = !coo.w.empty();
  int64_t bad = std::numeric_limits<int64_t>::max();
#pragma omp parallel for schedule(static) reduction(min : bad) if (detail::parallel_worth(m))
  for (int64_t k = 0; k < m; ++k) {
    const int64_t s = int64_t(coo.src[size_t(k)]), d = int64_t(coo.dst[size_t(k)]);
    const bool ok = s >= 0 && s < coo.cols && d >= 0 && d < coo.rows &&
                    !(weighted && std::isnan(coo.w[size_t(k)]));
    if (!ok && k < bad) bad = k;
  }
  return bad == std::numeric_limits<int64_t>::max() ? -1 : bad;
}

template <class I>
void check_coo(const Coo<I>& coo, const BuildOptions& opt) {
  TESSERA_CHECK(coo.rows >= 0 && coo.cols >= 0, "build_csr: negative size ", coo.rows, " x ", coo.cols);
  TESSERA_CHECK(coo.src.size() == coo.dst.size(), "build_csr: size mismatch: ", coo.src.size(),
                " sources but ", coo.dst.size(), " targets");
  TESSERA_CHECK(coo.w.empty() || coo.w.size() == coo.src.size(), "build_csr: size mismatch: ",
                coo.w.size(), " weights for ", coo.src.size(), " edges");
  detail::check_fits_index<I>(coo.rows, "row count");
  detail::check_fits_index<I>(coo.cols, "column count");
  if (opt.symmetrize || opt.self_loops == SelfLoops::add)
    TESSERA_CHECK(coo.rows == coo.cols, "build_csr: ",
                  opt.symmetrize ? "symmetrize" : "adding self-loops", " needs a square graph, got ",
                  coo.rows, " x ", coo.cols);
  TESSERA_CHECK(!(opt.self_loops == SelfLoops::add && std::isnan(opt.self_loop_weight)),
                "build_csr: self-loop weight is NaN");
  const int64_t k = first_bad_edge(coo);
  if (k < 0) return;
  const int64_t s = int64_t(coo.src[size_t(k)]), d = int64_t(coo.dst[size_t(k)]);
  if (s < 0 || s >= coo.cols) fail("edge ", k, ": source ", s, " out of range [0, ", coo.cols, ")");
  if (d < 0 || d >= coo.rows) fail("edge ", k, ": target ", d, " out of range [0, ", coo.rows, ")");
  fail("edge ", k, " (", s, " -> ", d, "): weight is NaN");
}

// Merges equal columns inside each row (summing weights) in place, then compacts.
template <class I>
void merge_duplicates(Csr<I>& g) {
  const int64_t rows = g.rows;
  const bool weighted = g.weighted();
  std::vector<int64_t> len(size_t(rows) + 1, 0);
  const bool par = detail::parallel_worth(rows + g.nnz());
#pragma omp parallel for schedule(dynamic, 1024) if (par)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = int64_t(g.rowptr[size_t(r)]), e = int64_t(g.rowptr[size_t(r) + 1]);
    int64_t out = b;
    for (int64_t p = b; p < e; ++p) {
      if (out > b && g.col[size_t(out - 1)] == g.col[size_t(p)]) {
        if (weighted) g.values[size_t(out - 1)] += g.values[size_t(p)];
        continue;
      }
      g.col[size_t(out)] = g.col[size_t(p)];
      if (weighted) g.values[size_t(out)] = g.values[size_t(p)];
      ++out;
    }
    len[size_t(r) + 1] = out - b;
  }
  for (int64_t r = 0; r < rows; ++r) len[size_t(r) + 1] += len[size_t(r)];
  if (len[size_t(rows)] == g.nnz()) return;  // nothing merged
  std::vector<I> col(static_cast<size_t>(len[size_t(rows)]));
  std::vector<float> val(weighted ? col.size() : 0);
#pragma omp parallel for schedule(dynamic, 1024) if (par)
  for (int64_t r = 0; r < rows; ++r) {
    const size_t from = size_t(g.rowptr[size_t(r)]), to = size_t(len[size_t(r)]);
    const size_t n = size_t(len[size_t(r) + 1] - len[size_t(r)]);
    std::copy_n(g.col.begin() + from, n, col.begin() + to);
    if (weighted) std::copy_n(g.values.begin() + from, n, val.begin() + to);
  }
#pragma omp parallel for schedule(static) if (par)
  for (int64_t r = 0; r <= rows; ++r) g.rowptr[size_t(r)] = I(len[size_t(r)]);
  g.col = std::move(col);
  g.values = std::move(val);
}

}  // namespace

template <class I>
Csr<I> build_csr(const Coo<I>& coo, const BuildOptions& opt) {
  check_coo(coo, opt);
  const int64_t m = coo.nnz();
  const bool add_loops = opt.self_loops == SelfLoops::add;
  const bool drop_loops = opt.self_loops != SelfLoops::keep;
  // Added loops with a weight other than 1 turn an unweighted graph into a weighted one.
  const bool weighted = !coo.w.empty() || (add_loops && opt.self_loop_weight != 1.0f);
  const int64_t loops = add_loops ? coo.rows : 0;
  // The virtual edge stream: [0, m) the edges, [m, 2m) their reverses (symmetrize; a self-loop
  // is its own reverse and is not doubled), then one loop per node (add).
  const int64_t reversed = opt.symmetrize ? m : 0;
  const I* src = coo.src.data();
  const I* dst = coo.dst.data();
  const float* w = coo.w.empty() ? nullptr : coo.w.data();
  auto row = [&](int64_t k) -> int64_t {
    if (k < m) return (drop_loops && src[k] == dst[k]) ? -1 : int64_t(dst[k]);
    if (k < m + reversed) {
      const int64_t e = k - m;
      return src[e] == dst[e] ? -1 : int64_t(src[e]);
    }
    return k - m - reversed;
  };
  auto col = [&](int64_t k) -> int64_t {
    if (k < m) return int64_t(src[k]);
    if (k < m + reversed) return int64_t(dst[k - m]);
    return k - m - reversed;
  };
  auto weight = [&](int64_t k) -> float {
    if (k < m + reversed) return w ? w[k < m ? k : k - m] : 1.0f;
    return opt.self_loop_weight;
  };
  Csr<I> g;
  g.rows = coo.rows;
  g.cols = coo.cols;
  detail::bucket_rows<I>(coo.rows, m + reversed + loops, weighted, row, col, weight, g.rowptr, g.col,
                         g.values);
  if (opt.deduplicate) merge_duplicates(g);
  g.touch();
  return g;
}

template Csr<int32_t> build_csr(const Coo<int32_t>&, const BuildOptions&);
template Csr<int64_t> build_csr(const Coo<int64_t>&, const BuildOptions&);

}  // namespace tessera
