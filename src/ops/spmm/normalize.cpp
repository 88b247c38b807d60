// GCN normalizations on the host (once per graph; the result is cached by the caller).
//
// `both` follows PyG's gcn_norm (torch_geometric/nn/conv/gcn_conv.py) exactly:
//   1. add_remaining_self_loops(fill = improved ? 2 : 1): every existing self-loop is removed and
//      each node gets exactly one loop; a node that had a loop keeps that loop's weight (PyG's
//      `loop_attr[row[inv_mask]] = edge_attr[inv_mask]`, so with several loops on one node the
//      last one in edge order wins - here: the last one in the row), the others get `fill`.
//   2. deg[i] = sum of the weights of the edges whose TARGET is i (our row i).
//   3. w'[k] = deg[i]^-1/2 * w[k] * deg[col k]^-1/2, with deg^-1/2 = inf (deg 0) replaced by 0.
//      Negative degrees give NaN, as in PyG.
// `left`  (D^-1 A): w' = w / rowsum(i); `right` (A D^-1): w' = w / colsum(col k); 1/0 -> 0.
// Self-loops are added for `both` only (NormOptions::add_self_loops), as GCNConv does.
// The new loop is placed in column order within its row, so sorted rows stay sorted.
#include <cmath>
#include <cstdint>
#include <vector>

#include "tessera/ops/spmm.hpp"

namespace tessera::ops {

namespace {
template <class I>
Csr<I> with_remaining_self_loops(const CsrView<I>& g, float fill) {
  Csr<I> out;
  out.rows = g.rows;
  out.cols = g.cols;
  out.rowptr.assign(size_t(g.rows) + 1, I(0));
  out.col.reserve(size_t(g.nnz + g.rows));
  out.values.reserve(size_t(g.nnz + g.rows));
  for (int64_t i = 0; i < g.rows; ++i) {
    float loop_w = fill;
    for (int64_t k = int64_t(g.rowptr[i]); k < int64_t(g.rowptr[i + 1]); ++k)
      if (int64_t(g.col[k]) == i) loop_w = g.values ? g.values[k] : 1.0f;
    bool placed = false;
    for (int64_t k = int64_t(g.rowptr[i]); k < int64_t(g.rowptr[i + 1]); ++k) {
      const int64_t c = int64_t(g.col[k]);
      if (c == i) continue;
      if (!placed && c > i) {
        out.col.push_back(I(i));
        out.values.push_back(loop_w);
        placed = true;
      }
      out.col.push_back(g.col[k]);
      out.values.push_back(g.values ? g.values[k] : 1.0f);
    }
    if (!placed) {
      out.col.push_back(I(i));
      out.values.push_back(loop_w);
    }
    out.rowptr[size_t(i) + 1] = I(out.col.size());
  }
  return out;
}

template <class I>
Csr<I> copy_weighted(const CsrView<I>& g) {
  Csr<I> out;
  out.rows = g.rows;
  out.cols = g.cols;
  out.rowptr.assign(g.rowptr, g.rowptr + g.rows + 1);
  out.col.assign(g.col, g.col + g.nnz);
  if (g.values)
    out.values.assign(g.values, g.values + g.nnz);
  else
    out.values.assign(size_t(g.nnz), 1.0f);
  return out;
}

double inv_or_zero(double d) { return d == 0 ? 0.0 : 1.0 / d; }
double inv_sqrt_or_zero(double d) { return d == 0 ? 0.0 : std::pow(d, -0.5); }  // NaN for d < 0
}  // namespace

template <class I>
Csr<I> normalize(const CsrView<I>& g, const NormOptions& opt) {
  TESSERA_CHECK(!g.device.is_cuda(), "normalize: the graph must be on the host (got ", g.device.str(), ")");
  validate(g);
  const bool loops = opt.norm == Norm::both && opt.add_self_loops;
  if (opt.norm == Norm::both)
    TESSERA_CHECK(g.rows == g.cols, "normalize: symmetric normalization needs a square graph, got ",
                  g.rows, " x ", g.cols);
  Csr<I> out = loops ? with_remaining_self_loops(g, opt.improved ? 2.0f : 1.0f) : copy_weighted(g);
  out.touch();  // a new graph: caches keyed by the input's id must not serve it

  const int64_t n = out.rows;
  auto row_of = [&](auto&& fn) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = int64_t(out.rowptr[size_t(i)]); k < int64_t(out.rowptr[size_t(i) + 1]); ++k) fn(i, k);
  };
  switch (opt.norm) {
    case Norm::none:
      break;
    case Norm::left: {
      std::vector<double> deg(size_t(n), 0.0);
      row_of([&](int64_t i, int64_t k) { deg[size_t(i)] += out.values[size_t(k)]; });
      row_of([&](int64_t i, int64_t k) {
        out.values[size_t(k)] = float(out.values[size_t(k)] * inv_or_zero(deg[size_t(i)]));
      });
      break;
    }
    case Norm::right: {
      std::vector<double> deg(size_t(out.cols), 0.0);
      row_of([&](int64_t, int64_t k) { deg[size_t(out.col[size_t(k)])] += out.values[size_t(k)]; });
      row_of([&](int64_t, int64_t k) {
        out.values[size_t(k)] = float(out.values[size_t(k)] * inv_or_zero(deg[size_t(out.col[size_t(k)])]));
      });
      break;
    }
    case Norm::both: {
      std::vector<double> dinv(size_t(n), 0.0);
      row_of([&](int64_t i, int64_t k) { dinv[size_t(i)] += out.values[size_t(k)]; });
      for (auto& d : dinv) d = inv_sqrt_or_zero(d);
      row_of([&](int64_t i, int64_t k) {
        out.values[size_t(k)] =
            float(dinv[size_t(i)] * out.values[size_t(k)] * dinv[size_t(out.col[size_t(k)])]);
      });
      break;
    }
  }
  return out;
}

template Csr<int32_t> normalize<int32_t>(const CsrView<int32_t>&, const NormOptions&);
template Csr<int64_t> normalize<int64_t>(const CsrView<int64_t>&, const NormOptions&);

}  // namespace tessera::ops
