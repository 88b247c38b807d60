// CPU backend of the marginalized graph kernel: PCG (Jacobi) per pair with the octile mat-vec,
// OpenMP over pairs (and over output blocks inside one large pair).
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>

#include "kernels/batch.hpp"
#include "tessera/core/error.hpp"

namespace tessera::kernels::detail {
namespace {

constexpr int kTile = kOctile * kOctile;

// Whether a tile enters tile_pair in dense form (the factored products) on this path.
inline bool dense_form(TilePath path, uint64_t mask) {
  return path == TilePath::dense || (path == TilePath::automatic && dense_tile(mask));
}

// acc[r*8+r'] += sum over nonzeros (r,c) of tile ta and (r',c') of tile tb of
//   a_rc b_r'c' tab[l, l'] x[c*8+c'].
template <class T>
void tile_pair(const OctileGraph& A, int64_t ta, const OctileGraph& B, int64_t tb, const T* tab, int L,
               TilePath path, const T* x, T* acc) {
  const bool da = dense_form(path, A.mask[size_t(ta)]), db = dense_form(path, B.mask[size_t(tb)]);
  if (!da && !db) {  // sparse x sparse: nnz * nnz' multiply-adds
    uint64_t ma = A.mask[size_t(ta)];
    for (int32_t k = A.nz_ptr[size_t(ta)]; ma; ma &= ma - 1, ++k) {
      const int bit = std::countr_zero(ma), r = bit >> 3, c = bit & 7;
      const T aw = T(A.weight[size_t(k)]);
      const T* trow = tab + size_t(A.label[size_t(k)]) * size_t(L);
      const T* xr = x + c * kOctile;
      T* accr = acc + r * kOctile;
      uint64_t mb = B.mask[size_t(tb)];
      for (int32_t k2 = B.nz_ptr[size_t(tb)]; mb; mb &= mb - 1, ++k2) {
        const int bit2 = std::countr_zero(mb);
        accr[bit2 >> 3] += aw * T(B.weight[size_t(k2)]) * trow[B.label[size_t(k2)]] * xr[bit2 & 7];
      }
    }
    return;
  }
  // Dense forms: for each label l' of B, Tl[r][c] = sum_{l} a_rc(l) tab[l, l'] (A weighted by the
  // edge kernel against label l'), then acc[r][r'] += sum_c Tl[r][c] (X Bl'^T)[c][r'].
  uint16_t lb[64];
  const int nlb = tile_labels(B, tb, lb);
  for (int s = 0; s < nlb; ++s) {
    const uint16_t l2 = lb[s];
    T Tl[kTile] = {};
    {
      uint64_t ma = A.mask[size_t(ta)];
      for (int32_t k = A.nz_ptr[size_t(ta)]; ma; ma &= ma - 1, ++k)
        Tl[std::countr_zero(ma)] = T(A.weight[size_t(k)]) * tab[size_t(A.label[size_t(k)]) * size_t(L) + l2];
    }
    if (db) {  // dense x dense: Z = X Bl^T (512), acc += Tl Z (512)
      T Bl[kTile] = {};
      uint64_t mb = B.mask[size_t(tb)];
      for (int32_t k2 = B.nz_ptr[size_t(tb)]; mb; mb &= mb - 1, ++k2)
        if (B.label[size_t(k2)] == l2) Bl[std::countr_zero(mb)] = T(B.weight[size_t(k2)]);
      T Z[kTile];
      for (int c = 0; c < kOctile; ++c)
        for (int r2 = 0; r2 < kOctile; ++r2) {
          T s2 = 0;
          for (int c2 = 0; c2 < kOctile; ++c2) s2 += x[c * kOctile + c2] * Bl[r2 * kOctile + c2];
          Z[c * kOctile + r2] = s2;
        }
      for (int r = 0; r < kOctile; ++r)
        for (int c = 0; c < kOctile; ++c) {
          const T t = Tl[r * kOctile + c];
          if (t == T(0)) continue;
          for (int r2 = 0; r2 < kOctile; ++r2) acc[r * kOctile + r2] += t * Z[c * kOctile + r2];
        }
    } else {  // dense x sparse: per nonzero (r',c') of B with label l': acc[:, r'] += b Tl X[:, c']
      uint64_t mb = B.mask[size_t(tb)];
      for (int32_t k2 = B.nz_ptr[size_t(tb)]; mb; mb &= mb - 1, ++k2) {
        const int bit2 = std::countr_zero(mb);
        if (B.label[size_t(k2)] != l2) continue;
        const int r2 = bit2 >> 3, c2 = bit2 & 7;
        const T bw = T(B.weight[size_t(k2)]);
        for (int r = 0; r < kOctile; ++r) {
          T s2 = 0;
          for (int c = 0; c < kOctile; ++c) s2 += Tl[r * kOctile + c] * x[c * kOctile + c2];
          acc[r * kOctile + r2] += bw * s2;
        }
      }
    }
  }
}

template <class T>
struct System {
  const PreparedGraph& g1;
  const PreparedGraph& g2;
  int L;
  TilePath path;
  bool parallel;
  int64_t B1, B2, size;
  std::vector<T> D, V, diag;   // tiled layout; pads: D = 0, V = 1, diag = 1

  System(const PreparedGraph& a, const PreparedGraph& b, const EdgeTable& et, const Options& opt, bool par)
      : g1(a), g2(b), L(et.size()), path(opt.path), parallel(par), B1(a.tiles.blocks), B2(b.tiles.blocks),
        size(B1 * B2 * kTile), D(static_cast<size_t>(size), T(0)), V(static_cast<size_t>(size), T(1)), diag(static_cast<size_t>(size), T(1)) {
    const BaseKernelView kv = opt.node_kernel.view();
    const double s = 1.0 / ((1 - opt.q) * (1 - opt.q));
    const int dim = a.attr_dim;
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t i = 0; i < a.n; ++i)
      for (int64_t j = 0; j < b.n; ++j) {
        const size_t k = index(i, j);
        const double v = kv.eval(a.node_label[size_t(i)], a.node_attr.data() + i * dim, b.node_label[size_t(j)],
                                 b.node_attr.data() + j * dim, dim);
        // k_v is in (0, 1]; a square exponential can underflow to 0 far from its centre, which
        // would make D/V infinite: clamp so that x_(i,i') -> 0 instead.
        const double vc = std::max(v, 1e-30);
        D[k] = T(a.degree[size_t(i)] * b.degree[size_t(j)] * s);
        V[k] = T(vc);
        diag[k] = T(a.degree[size_t(i)] * b.degree[size_t(j)] * s / vc);
      }
  }
  size_t index(int64_t i, int64_t j) const {
    return size_t(((i >> 3) * B2 + (j >> 3)) * kTile + (i & 7) * kOctile + (j & 7));
  }
  // y = W x with edge table tab (L x L).
  void matvec_w(const T* tab, const T* x, T* y) const {
    const OctileGraph& A = g1.tiles;
    const OctileGraph& B = g2.tiles;
#pragma omp parallel for schedule(dynamic, 4) if (parallel)
    for (int64_t blk = 0; blk < B1 * B2; ++blk) {
      const int64_t I = blk / B2, I2 = blk % B2;
      T acc[kTile] = {};
      for (int32_t ta = A.row_ptr[size_t(I)]; ta < A.row_ptr[size_t(I + 1)]; ++ta)
        for (int32_t tb = B.row_ptr[size_t(I2)]; tb < B.row_ptr[size_t(I2 + 1)]; ++tb) {
          const int64_t J = A.tile_col[size_t(ta)], J2 = B.tile_col[size_t(tb)];
          tile_pair(A, ta, B, tb, tab, L, path, x + (J * B2 + J2) * kTile, acc);
        }
      std::copy(acc, acc + kTile, y + blk * kTile);
    }
  }
  // y = (diag - W) x
  void matvec(const T* tab, const T* x, T* y) const {
    matvec_w(tab, x, y);
    for (int64_t k = 0; k < size; ++k) y[k] = diag[size_t(k)] * x[k] - y[k];
  }
  double flops_per_matvec() const { return 2.0 * double(g1.tiles.nnz()) * double(g2.tiles.nnz()) + 2.0 * double(size); }
  // The arithmetic tile_pair actually runs per mat-vec (its dense forms factor the product).
  double executed_flops_per_matvec() const {
    const OctileGraph& A = g1.tiles;
    const OctileGraph& B = g2.tiles;
    std::vector<int> labels_b(static_cast<size_t>(B.tiles()));
    uint16_t scratch[64];
    for (int64_t t = 0; t < B.tiles(); ++t) labels_b[size_t(t)] = tile_labels(B, t, scratch);
    double f = 2.0 * double(size);
    for (int64_t I = 0; I < B1; ++I)
      for (int32_t ta = A.row_ptr[size_t(I)]; ta < A.row_ptr[size_t(I + 1)]; ++ta) {
        const double na = double(std::popcount(A.mask[size_t(ta)]));
        const bool da = dense_form(path, A.mask[size_t(ta)]);
        for (int64_t I2 = 0; I2 < B2; ++I2)
          for (int32_t tb = B.row_ptr[size_t(I2)]; tb < B.row_ptr[size_t(I2 + 1)]; ++tb) {
            const double nb = double(std::popcount(B.mask[size_t(tb)]));
            const bool db = dense_form(path, B.mask[size_t(tb)]);
            if (!da && !db) f += 2.0 * na * nb;                                   // direct products
            else if (db) f += double(labels_b[size_t(tb)]) * (1024.0 + 16.0 * na);  // Z = X Bl^T, acc += Tl Z
            else f += 144.0 * nb;                                                 // 8 x (8 + 1) per nonzero of B
          }
      }
    return f;
  }
};

double dot(const auto& a, const auto& b) {
  double s = 0;
  for (size_t k = 0; k < a.size(); ++k) s += double(a[k]) * double(b[k]);
  return s;
}

// Jacobi-preconditioned CG on (diag - W) x = b. x starts at b / diag.
template <class T>
SolveStats pcg(const System<T>& sys, const T* tab, const std::vector<T>& b, std::vector<T>& x, double tol,
               int max_iter, double& flops) {
  const size_t n = size_t(sys.size);
  std::vector<T> r(n), z(n), p(n), Ap(n);
  x.resize(n);
  for (size_t k = 0; k < n; ++k) x[k] = b[k] / sys.diag[k];
  sys.matvec(tab, x.data(), Ap.data());
  flops += sys.flops_per_matvec();
  for (size_t k = 0; k < n; ++k) r[k] = b[k] - Ap[k];
  const double bnorm = std::sqrt(dot(b, b));
  SolveStats st;
  if (bnorm == 0) {
    std::fill(x.begin(), x.end(), T(0));
    st.converged = true;
    return st;
  }
  for (size_t k = 0; k < n; ++k) z[k] = r[k] / sys.diag[k];
  p = z;
  double rz = dot(r, z);
  st.residual = std::sqrt(dot(r, r)) / bnorm;
  while (st.residual > tol && st.iterations < max_iter) {
    sys.matvec(tab, p.data(), Ap.data());
    flops += sys.flops_per_matvec();
    const double pAp = dot(p, Ap);
    if (!(pAp > 0)) break;  // breakdown (cannot happen for an SPD system; guards NaN)
    const double alpha = rz / pAp;
    for (size_t k = 0; k < n; ++k) {
      x[k] += T(alpha) * p[k];
      r[k] -= T(alpha) * Ap[k];
      z[k] = r[k] / sys.diag[k];
    }
    const double rz_new = dot(r, z);
    const double beta = rz_new / rz;
    rz = rz_new;
    for (size_t k = 0; k < n; ++k) p[k] = z[k] + T(beta) * p[k];
    ++st.iterations;
    st.residual = std::sqrt(dot(r, r)) / bnorm;
  }
  st.converged = st.residual <= tol;
  return st;
}

template <class T>
CpuPairOutput solve_pair_t(const PreparedGraph& g1, const PreparedGraph& g2, const EdgeTable& et,
                           const Options& opt, const std::vector<double>& p1, const std::vector<double>& p2,
                           bool want_nodal, bool want_grad, bool parallel) {
  System<T> sys(g1, g2, et, opt, parallel);
  const int L = et.size();
  std::vector<T> tab(et.value.begin(), et.value.end());
  CpuPairOutput res;
  double flops = 0;
  std::vector<T> x;
  res.out.stats = pcg(sys, tab.data(), sys.D, x, opt.tolerance(), opt.max_iter, flops);
  const BaseKernelView kv = opt.node_kernel.view();
  const int dim = g1.attr_dim;
  double value = 0;
  if (want_nodal) res.nodal.assign(size_t(g1.n * g2.n), 0.0);
  for (int64_t i = 0; i < g1.n; ++i)
    for (int64_t j = 0; j < g2.n; ++j) {
      const double w = p1[size_t(i)] * p2[size_t(j)] * double(x[sys.index(i, j)]);
      value += w;
      if (want_nodal) res.nodal[size_t(i * g2.n + j)] = w;
    }
  if (opt.lmin == 1)
    for (int64_t i = 0; i < g1.n; ++i)
      for (int64_t j = 0; j < g2.n; ++j)
        value -= p1[size_t(i)] * p2[size_t(j)] *
                 kv.eval(g1.node_label[size_t(i)], g1.node_attr.data() + i * dim, g2.node_label[size_t(j)],
                         g2.node_attr.data() + j * dim, dim);
  res.out.value = value;
  if (want_grad) {
    // Adjoint: M y = p (x) p'. Then dK/dtheta = y^T (db/dtheta - dM/dtheta x).
    std::vector<T> rhs(size_t(sys.size), T(0)), y;
    for (int64_t i = 0; i < g1.n; ++i)
      for (int64_t j = 0; j < g2.n; ++j) rhs[sys.index(i, j)] = T(p1[size_t(i)] * p2[size_t(j)]);
    res.adjoint = pcg(sys, tab.data(), rhs, y, opt.tolerance(), opt.max_iter, flops);
    const int hv = opt.node_kernel.num_terms(), he = opt.edge_kernel.num_terms();
    std::vector<double>& g = res.out.gradient;
    g.assign(size_t(hv + he + 1), 0.0);
    // Node hypers: dM = -D V^-2 dV.
    for (int64_t i = 0; i < g1.n; ++i)
      for (int64_t j = 0; j < g2.n; ++j) {
        const size_t k = sys.index(i, j);
        const double Dk = double(sys.D[k]), Vk = double(sys.V[k]);
        for (int t = 0; t < hv; ++t) {
          const double dv = kv.grad(t, g1.node_label[size_t(i)], g1.node_attr.data() + i * dim,
                                    g2.node_label[size_t(j)], g2.node_attr.data() + j * dim, dim);
          g[size_t(t)] += double(y[k]) * Dk * dv / (Vk * Vk) * double(x[k]);
          if (opt.lmin == 1) g[size_t(t)] -= p1[size_t(i)] * p2[size_t(j)] * dv;
        }
        // q: D = d d' / (1-q)^2, dD/dq = 2 D / (1-q); b = D 1, M = D / V - W.
        g[size_t(hv + he)] += double(y[k]) * (2 * Dk / (1 - opt.q)) * (1 - double(x[k]) / Vk);
      }
    // Edge hypers: dM = -dW.
    std::vector<T> wx(size_t(sys.size));
    for (int t = 0; t < he; ++t) {
      std::vector<T> dtab(et.grad.begin() + ptrdiff_t(t) * L * L, et.grad.begin() + ptrdiff_t(t + 1) * L * L);
      sys.matvec_w(dtab.data(), x.data(), wx.data());
      flops += sys.flops_per_matvec();
      g[size_t(hv + t)] = dot(y, wx);
    }
    // Start weights: K = sum p p' x (- sum p p' k_v when lmin = 1).
    res.grad_p1.assign(size_t(g1.n), 0.0);
    res.grad_p2.assign(size_t(g2.n), 0.0);
    for (int64_t i = 0; i < g1.n; ++i)
      for (int64_t j = 0; j < g2.n; ++j) {
        double xv = double(x[sys.index(i, j)]);
        if (opt.lmin == 1)
          xv -= kv.eval(g1.node_label[size_t(i)], g1.node_attr.data() + i * dim, g2.node_label[size_t(j)],
                        g2.node_attr.data() + j * dim, dim);
        res.grad_p1[size_t(i)] += p2[size_t(j)] * xv;
        res.grad_p2[size_t(j)] += p1[size_t(i)] * xv;
      }
  }
  res.out.flops = flops;
  // Every mat-vec of the pair costs the same: scale the useful count by the executed share.
  res.out.exec_flops = flops * sys.executed_flops_per_matvec() / sys.flops_per_matvec();
  return res;
}
}  // namespace

CpuPairOutput solve_pair_cpu(const PreparedGraph& g1, const PreparedGraph& g2, const EdgeTable& table,
                             const Options& opt, const std::vector<double>& p1, const std::vector<double>& p2,
                             bool nodal, bool gradient, bool parallel_inside) {
  TESSERA_CHECK(g1.attr_dim == g2.attr_dim, "graph kernel: node attribute dimensions differ (", g1.attr_dim,
                " vs ", g2.attr_dim, ")");
  TESSERA_CHECK(int64_t(p1.size()) == g1.n && int64_t(p2.size()) == g2.n, "graph kernel: start weights have ",
                p1.size(), " and ", p2.size(), " entries for graphs of ", g1.n, " and ", g2.n, " nodes");
  if (opt.dtype == DType::f32)
    return solve_pair_t<float>(g1, g2, table, opt, p1, p2, nodal, gradient, parallel_inside);
  TESSERA_CHECK(opt.dtype == DType::f64, "graph kernel: dtype ", dtype_name(opt.dtype),
                " is not supported (float32 or float64)");
  return solve_pair_t<double>(g1, g2, table, opt, p1, p2, nodal, gradient, parallel_inside);
}

void solve_batch_cpu(const BatchInput& in, const std::vector<PairJob>& jobs, std::vector<JobOutput>& out) {
  const Options& opt = *in.options;
  out.assign(jobs.size(), JobOutput{});
  std::atomic<int64_t> done{0};
  const int64_t total = int64_t(jobs.size());
  auto last = std::chrono::steady_clock::now();
  const int threads = opt.threads > 0 ? opt.threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (int64_t k = 0; k < total; ++k) {
    const PreparedGraph& a = (*in.left)[size_t(jobs[size_t(k)].a)];
    const PreparedGraph& b = (*in.right)[size_t(jobs[size_t(k)].b)];
    const std::vector<double> p1(size_t(a.n), opt.start), p2(size_t(b.n), opt.start);
    out[size_t(k)] = solve_pair_cpu(a, b, *in.table, opt, p1, p2, false, in.gradient, false).out;
    const int64_t d = ++done;
    if (opt.progress && omp_get_thread_num() == 0) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last > std::chrono::milliseconds(250)) {
        last = now;
        opt.progress(d, total);
      }
    }
  }
  if (opt.progress) opt.progress(total, total);
}

}  // namespace tessera::kernels::detail
