// The oracle: the product system assembled densely from the caller's (unreordered) graphs and
// solved by Cholesky in double precision. Independent of octiles, reordering and PCG.
#include <cmath>

#include "tessera/core/error.hpp"
#include "tessera/kernels/marginalized.hpp"

namespace tessera::kernels {
namespace {
// Dense symmetric adjacency and edge labels of a labeled graph.
void densify(const LabeledGraph& g, std::vector<double>& A, std::vector<int32_t>& lab) {
  const int64_t n = g.num_nodes();
  A.assign(size_t(n * n), 0.0);
  lab.assign(size_t(n * n), 0);
  for (int64_t r = 0; r < n; ++r)
    for (int32_t k = g.adj.rowptr[size_t(r)]; k < g.adj.rowptr[size_t(r + 1)]; ++k) {
      const int64_t c = g.adj.col[size_t(k)];
      A[size_t(r * n + c)] = g.adj.values.empty() ? 1.0 : double(g.adj.values[size_t(k)]);
      lab[size_t(r * n + c)] = g.edge_labels.empty() ? 0 : g.edge_labels[size_t(k)];
    }
}
}  // namespace

PairResult reference_pair(const LabeledGraph& g1, const LabeledGraph& g2, const Options& opt,
                          const std::vector<double>* p1, const std::vector<double>* p2) {
  opt.validate();
  validate_graph(g1, 0);
  validate_graph(g2, 1);
  const int64_t n1 = g1.num_nodes(), n2 = g2.num_nodes(), N = n1 * n2;
  TESSERA_CHECK(N <= 4096, "reference_pair: product graph of ", N, " nodes is too large for the dense oracle (<= 4096)");
  TESSERA_CHECK(g1.node_attrs.cols == g2.node_attrs.cols, "reference_pair: attribute dimensions differ");
  const int dim = int(g1.node_attrs.cols);
  std::vector<double> A1, A2;
  std::vector<int32_t> L1, L2;
  densify(g1, A1, L1);
  densify(g2, A2, L2);
  auto degree = [](const std::vector<double>& A, int64_t n, int64_t i) {
    double d = 0;
    for (int64_t j = 0; j < n; ++j) d += A[size_t(i * n + j)];
    return d > 0 ? d : 1.0;
  };
  const BaseKernelView kv = opt.node_kernel.view(), ke = opt.edge_kernel.view();
  auto label1 = [&](int64_t i) { return g1.node_labels.empty() ? 0 : g1.node_labels[size_t(i)]; };
  auto label2 = [&](int64_t i) { return g2.node_labels.empty() ? 0 : g2.node_labels[size_t(i)]; };
  auto attr1 = [&](int64_t i) { return dim ? g1.node_attrs.row(i) : nullptr; };
  auto attr2 = [&](int64_t i) { return dim ? g2.node_attrs.row(i) : nullptr; };
  std::vector<double> M(size_t(N * N), 0.0), b(static_cast<size_t>(N));
  const double s = 1.0 / ((1 - opt.q) * (1 - opt.q));
  for (int64_t i = 0; i < n1; ++i)
    for (int64_t i2 = 0; i2 < n2; ++i2) {
      const int64_t r = i * n2 + i2;
      const double D = degree(A1, n1, i) * degree(A2, n2, i2) * s;
      const double v = kv.eval(label1(i), attr1(i), label2(i2), attr2(i2), dim);
      b[size_t(r)] = D;
      M[size_t(r * N + r)] += D / v;
      for (int64_t j = 0; j < n1; ++j) {
        const double a = A1[size_t(i * n1 + j)];
        if (a == 0) continue;
        for (int64_t j2 = 0; j2 < n2; ++j2) {
          const double a2 = A2[size_t(i2 * n2 + j2)];
          if (a2 == 0) continue;
          M[size_t(r * N + j * n2 + j2)] -=
              a * a2 * ke.eval(L1[size_t(i * n1 + j)], nullptr, L2[size_t(i2 * n2 + j2)], nullptr, 0);
        }
      }
    }
  // Cholesky M = L L^T (M is SPD: symmetric, strictly diagonally dominant, positive diagonal).
  for (int64_t j = 0; j < N; ++j) {
    double d = M[size_t(j * N + j)];
    for (int64_t k = 0; k < j; ++k) d -= M[size_t(j * N + k)] * M[size_t(j * N + k)];
    TESSERA_CHECK(d > 0, "reference_pair: product matrix not positive definite at row ", j);
    const double ljj = std::sqrt(d);
    M[size_t(j * N + j)] = ljj;
    for (int64_t i = j + 1; i < N; ++i) {
      double v = M[size_t(i * N + j)];
      for (int64_t k = 0; k < j; ++k) v -= M[size_t(i * N + k)] * M[size_t(j * N + k)];
      M[size_t(i * N + j)] = v / ljj;
    }
  }
  std::vector<double> x = b;
  for (int64_t i = 0; i < N; ++i) {  // L y = b
    for (int64_t k = 0; k < i; ++k) x[size_t(i)] -= M[size_t(i * N + k)] * x[size_t(k)];
    x[size_t(i)] /= M[size_t(i * N + i)];
  }
  for (int64_t i = N - 1; i >= 0; --i) {  // L^T x = y
    for (int64_t k = i + 1; k < N; ++k) x[size_t(i)] -= M[size_t(k * N + i)] * x[size_t(k)];
    x[size_t(i)] /= M[size_t(i * N + i)];
  }
  PairResult r;
  r.nodal = Dense<double>(n1, n2);
  r.stats.converged = true;
  for (int64_t i = 0; i < n1; ++i)
    for (int64_t i2 = 0; i2 < n2; ++i2) {
      const double pp = (p1 ? (*p1)[size_t(i)] : opt.start) * (p2 ? (*p2)[size_t(i2)] : opt.start);
      r.nodal(i, i2) = pp * x[size_t(i * n2 + i2)];
      r.value += r.nodal(i, i2);
      if (opt.lmin == 1) r.value -= pp * kv.eval(label1(i), attr1(i), label2(i2), attr2(i2), dim);
    }
  return r;
}

}  // namespace tessera::kernels
