// Graph statistics: degree moments, density, self-loops, symmetry and tile occupancy.
#include "tessera/graph/stats.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "bucket.hpp"
#include "tessera/core/error.hpp"

namespace tessera {
namespace {

// Sorted copy of a row's columns (views need not have sorted rows).
template <class I>
void sorted_row(const CsrView<I>& g, int64_t r, std::vector<I>& out) {
  out.assign(g.col + g.rowptr[r], g.col + g.rowptr[r + 1]);
  std::sort(out.begin(), out.end());
}

template <class I>
bool rows_sorted(const CsrView<I>& g, bool par) {
  int unsorted = 0;
#pragma omp parallel for schedule(dynamic, 1024) reduction(| : unsorted) if (par)
  for (int64_t r = 0; r < g.rows; ++r)
    unsorted |= !std::is_sorted(g.col + g.rowptr[r], g.col + g.rowptr[r + 1]);
  return unsorted == 0;
}

// Pattern symmetry. With sorted rows (every built graph): look each (r, c) up in row c by binary
// search: no extra memory and it stops early on the first asymmetric entry (usual for directed
// graphs). Otherwise compare sorted rows against the transpose.
template <class I>
bool pattern_symmetric(const CsrView<I>& g) {
  if (g.rows != g.cols) return false;
  const bool par = detail::parallel_worth(g.rows + g.nnz);
  std::atomic<bool> asym{false};
  if (rows_sorted(g, par)) {
#pragma omp parallel for schedule(dynamic, 1024) if (par)
    for (int64_t r = 0; r < g.rows; ++r) {
      if (asym.load(std::memory_order_relaxed)) continue;
      for (int64_t p = int64_t(g.rowptr[r]); p < int64_t(g.rowptr[r + 1]); ++p) {
        const int64_t c = int64_t(g.col[p]);
        if (!std::binary_search(g.col + g.rowptr[c], g.col + g.rowptr[c + 1], I(r))) {
          asym.store(true, std::memory_order_relaxed);
          break;
        }
      }
    }
    return !asym.load();
  }
  const Csr<I> t = transpose(g);  // rows sorted by construction
#pragma omp parallel if (par)
  {
    std::vector<I> a;
#pragma omp for schedule(dynamic, 1024)
    for (int64_t r = 0; r < g.rows; ++r) {
      if (asym.load(std::memory_order_relaxed)) continue;
      sorted_row(g, r, a);
      const auto b = t.col.begin() + t.rowptr[size_t(r)], e = t.col.begin() + t.rowptr[size_t(r) + 1];
      if (!std::equal(a.begin(), a.end(), b, e)) asym.store(true, std::memory_order_relaxed);
    }
  }
  return !asym.load();
}

}  // namespace

template <class I>
TileStats tile_stats(const CsrView<I>& g, int tile_rows, int tile_cols) {
  TESSERA_CHECK(tile_rows > 0 && tile_cols > 0, "tile_stats: tile size ", tile_rows, "x", tile_cols,
                " must be positive");
  TileStats s;
  s.tile_rows = tile_rows;
  s.tile_cols = tile_cols;
  const int64_t bands = (g.rows + tile_rows - 1) / tile_rows;
  const int64_t blocks = (g.cols + tile_cols - 1) / tile_cols;
  int64_t nonempty = 0;
  const bool par = detail::parallel_worth(g.rows + g.nnz);
#pragma omp parallel reduction(+ : nonempty) if (par)
  {
    std::vector<int64_t> ids;
#pragma omp for schedule(dynamic, 64)
    for (int64_t band = 0; band < bands; ++band) {
      const int64_t r0 = band * tile_rows, r1 = std::min(g.rows, r0 + tile_rows);
      ids.assign(size_t(0), 0);
      for (int64_t p = int64_t(g.rowptr[r0]); p < int64_t(g.rowptr[r1]); ++p) ids.push_back(int64_t(g.col[p]) / tile_cols);
      std::sort(ids.begin(), ids.end());
      nonempty += int64_t(std::unique(ids.begin(), ids.end()) - ids.begin());
    }
  }
  s.nonempty = nonempty;
  const double total = double(bands) * double(blocks);
  s.share_nonempty = total > 0 ? double(nonempty) / total : 0.0;
  s.mean_fill = nonempty > 0 ? double(g.nnz) / (double(nonempty) * tile_rows * tile_cols) : 0.0;
  return s;
}

template <class I>
GraphStats graph_stats(const CsrView<I>& g, const StatsOptions& opt) {
  validate(g);
  GraphStats s;
  s.nodes = g.rows;
  s.cols = g.cols;
  s.edges = g.nnz;
  s.weighted = g.values != nullptr;
  const double n = double(g.rows);
  int64_t dmin = g.rows > 0 ? std::numeric_limits<int64_t>::max() : 0, dmax = 0, empty = 0, loops = 0;
  double sum_d = 0;
  const bool par = detail::parallel_worth(g.rows + g.nnz);
#pragma omp parallel for schedule(dynamic, 1024) reduction(min : dmin) reduction(max : dmax) \
    reduction(+ : empty, loops, sum_d) if (par)
  for (int64_t r = 0; r < g.rows; ++r) {
    const int64_t d = int64_t(g.rowptr[r + 1]) - int64_t(g.rowptr[r]);
    dmin = std::min(dmin, d);
    dmax = std::max(dmax, d);
    empty += d == 0;
    sum_d += double(d);
    for (int64_t p = int64_t(g.rowptr[r]); p < int64_t(g.rowptr[r + 1]); ++p) loops += int64_t(g.col[p]) == r;
  }
  s.degree_min = dmin;
  s.degree_max = dmax;
  s.empty_rows = empty;
  s.self_loops = loops;
  if (g.rows > 0) {
    const double mean = sum_d / n;
    double m2 = 0, m3 = 0;  // central moments (second pass: numerically stable)
#pragma omp parallel for schedule(static) reduction(+ : m2, m3) if (par)
    for (int64_t r = 0; r < g.rows; ++r) {
      const double x = double(int64_t(g.rowptr[r + 1]) - int64_t(g.rowptr[r])) - mean;
      m2 += x * x;
      m3 += x * x * x;
    }
    m2 /= n;
    m3 /= n;
    s.degree_mean = mean;
    s.degree_std = std::sqrt(m2);
    // Population skewness; 0 for regular graphs (no spread, no asymmetry).
    s.degree_skewness = m2 > 0 ? m3 / std::pow(m2, 1.5) : 0.0;
  }
  const double cells = double(g.rows) * double(g.cols);
  s.density = cells > 0 ? double(g.nnz) / cells : 0.0;
  if (opt.symmetry) s.symmetric = pattern_symmetric(g);
  if (opt.tiles) {
    s.tiles_16x8 = tile_stats(g, 16, 8);
    s.tiles_8x8 = tile_stats(g, 8, 8);
  }
  return s;
}

template <class I>
GraphStats graph_stats(const CsrView<I>& g) {
  return graph_stats(g, StatsOptions{});
}

std::string to_text(const GraphStats& s) {
  std::ostringstream os;
  char buf[256];
  os << "nodes:        " << s.nodes << "\n";
  if (s.cols != s.nodes) os << "columns:      " << s.cols << "\n";
  os << "edges:        " << s.edges << (s.weighted ? " (weighted)" : "") << "\n";
  std::snprintf(buf, sizeof buf, "degree:       min %lld, mean %.3f, max %lld, std %.3f, skewness %.3f\n",
                static_cast<long long>(s.degree_min), s.degree_mean, static_cast<long long>(s.degree_max),
                s.degree_std, s.degree_skewness);
  os << buf;
  std::snprintf(buf, sizeof buf, "density:      %.3e\n", s.density);
  os << buf;
  os << "self-loops:   " << s.self_loops << "\n";
  os << "empty rows:   " << s.empty_rows << "\n";
  os << "symmetric:    " << (s.symmetric ? "yes" : "no") << "\n";
  for (const TileStats* t : {&s.tiles_16x8, &s.tiles_8x8}) {
    if (t->tile_rows == 0) continue;
    const std::string label = "tiles " + std::to_string(t->tile_rows) + "x" + std::to_string(t->tile_cols) + ":";
    std::snprintf(buf, sizeof buf, "%-14s%lld non-empty (%.4f%% of grid), mean fill %.4f\n", label.c_str(), static_cast<long long>(t->nonempty), 100.0 * t->share_nonempty,
                  t->mean_fill);
    os << buf;
  }
  return os.str();
}

std::string to_json(const GraphStats& s) {
  nlohmann::json j;
  j["nodes"] = s.nodes;
  j["cols"] = s.cols;
  j["edges"] = s.edges;
  j["weighted"] = s.weighted;
  j["degree"] = {{"min", s.degree_min}, {"mean", s.degree_mean}, {"max", s.degree_max},
                 {"std", s.degree_std}, {"skewness", s.degree_skewness}};
  j["density"] = s.density;
  j["self_loops"] = s.self_loops;
  j["empty_rows"] = s.empty_rows;
  j["symmetric"] = s.symmetric;
  for (const TileStats* t : {&s.tiles_16x8, &s.tiles_8x8}) {
    if (t->tile_rows == 0) continue;
    j["tiles_" + std::to_string(t->tile_rows) + "x" + std::to_string(t->tile_cols)] = {
        {"nonempty", t->nonempty}, {"share_nonempty", t->share_nonempty}, {"mean_fill", t->mean_fill}};
  }
  return j.dump(2);
}

#define TESSERA_INSTANTIATE(I)                                                  \
  template GraphStats graph_stats(const CsrView<I>&);                           \
  template GraphStats graph_stats(const CsrView<I>&, const StatsOptions&);      \
  template TileStats tile_stats(const CsrView<I>&, int, int);
TESSERA_INSTANTIATE(int32_t)
TESSERA_INSTANTIATE(int64_t)
#undef TESSERA_INSTANTIATE

}  // namespace tessera
