#pragma once
// Random labeled graphs for the marginalized-graph-kernel tests (unit and CUDA conformance).
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "tessera/graph/dataset.hpp"

namespace tessera::testing {

struct LabeledGraphOptions {
  int n = 10;
  double edge_prob = 0.3;
  bool weighted = true;
  bool self_loops = true;        // a few
  bool isolated_ok = true;       // false: every node gets at least one edge
  int node_labels = 3, edge_labels = 3;
  int attr_dim = 2;
};

// Undirected edges (i <= j) with weight and label -> symmetric LabeledGraph.
inline LabeledGraph make_labeled_graph(int n, const std::map<std::pair<int, int>, std::pair<float, int>>& edges,
                                       std::vector<int32_t> node_labels, Dense<float> attrs, bool weighted,
                                       bool edge_labels) {
  std::vector<std::vector<std::pair<int, std::pair<float, int>>>> rows(static_cast<size_t>(n));
  for (const auto& [e, wl] : edges) {
    rows[size_t(e.first)].push_back({e.second, wl});
    if (e.first != e.second) rows[size_t(e.second)].push_back({e.first, wl});
  }
  LabeledGraph g;
  g.adj.rows = g.adj.cols = n;
  g.adj.rowptr.assign(size_t(n + 1), 0);
  for (int r = 0; r < n; ++r) {
    std::sort(rows[size_t(r)].begin(), rows[size_t(r)].end());
    for (const auto& [c, wl] : rows[size_t(r)]) {
      g.adj.col.push_back(c);
      if (weighted) g.adj.values.push_back(wl.first);
      if (edge_labels) g.edge_labels.push_back(wl.second);
    }
    g.adj.rowptr[size_t(r + 1)] = int32_t(g.adj.col.size());
  }
  g.node_labels = std::move(node_labels);
  g.node_attrs = std::move(attrs);
  return g;
}

inline LabeledGraph random_labeled_graph(const LabeledGraphOptions& o, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_real_distribution<float> w(0.25f, 2.0f);
  std::map<std::pair<int, int>, std::pair<float, int>> edges;
  auto label = [&](int k) { return k > 0 ? int(rng() % uint64_t(k)) : 0; };
  for (int i = 0; i < o.n; ++i)
    for (int j = i; j < o.n; ++j) {
      const bool want = i == j ? (o.self_loops && u(rng) < 0.1) : u(rng) < o.edge_prob;
      if (want) edges[{i, j}] = {o.weighted ? w(rng) : 1.0f, label(o.edge_labels)};
    }
  if (!o.isolated_ok && o.n > 1)
    for (int i = 0; i < o.n; ++i) {
      bool has = false;
      for (const auto& [e, wl] : edges) has = has || ((e.first == i || e.second == i) && e.first != e.second);
      if (!has) {
        const int j = (i + 1 + int(rng() % uint64_t(o.n - 1))) % o.n;
        edges[{std::min(i, j), std::max(i, j)}] = {o.weighted ? w(rng) : 1.0f, label(o.edge_labels)};
      }
    }
  std::vector<int32_t> nl;
  if (o.node_labels > 0)
    for (int i = 0; i < o.n; ++i) nl.push_back(label(o.node_labels));
  Dense<float> attrs(o.n, o.attr_dim);
  std::normal_distribution<float> nd(0, 1);
  for (auto& a : attrs.data) a = nd(rng);
  return make_labeled_graph(o.n, edges, nl, attrs, o.weighted, o.edge_labels > 0);
}

// Relabels nodes: node i of g becomes node perm[i].
inline LabeledGraph permute_graph(const LabeledGraph& g, const std::vector<int>& perm) {
  const int n = int(g.num_nodes());
  std::map<std::pair<int, int>, std::pair<float, int>> edges;
  for (int r = 0; r < n; ++r)
    for (int32_t k = g.adj.rowptr[size_t(r)]; k < g.adj.rowptr[size_t(r + 1)]; ++k) {
      const int a = perm[size_t(r)], b = perm[size_t(g.adj.col[size_t(k)])];
      edges[{std::min(a, b), std::max(a, b)}] = {g.adj.values.empty() ? 1.0f : g.adj.values[size_t(k)],
                                                 g.edge_labels.empty() ? 0 : g.edge_labels[size_t(k)]};
    }
  std::vector<int32_t> nl(g.node_labels.size());
  for (int i = 0; i < n && !nl.empty(); ++i) nl[size_t(perm[size_t(i)])] = g.node_labels[size_t(i)];
  Dense<float> attrs(n, g.node_attrs.cols);
  for (int i = 0; i < n; ++i)
    for (int64_t c = 0; c < g.node_attrs.cols; ++c) attrs(perm[size_t(i)], c) = g.node_attrs(i, c);
  return make_labeled_graph(n, edges, nl, attrs, !g.adj.values.empty(), !g.edge_labels.empty());
}

// Eigenvalues of a small symmetric matrix (cyclic Jacobi), for PSD checks.
inline std::vector<double> symmetric_eigenvalues(std::vector<double> a, int n) {
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) off += a[size_t(i * n + j)] * a[size_t(i * n + j)];
    if (off < 1e-30) break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        const double apq = a[size_t(p * n + q)];
        if (std::abs(apq) < 1e-300) continue;
        const double theta = (a[size_t(q * n + q)] - a[size_t(p * n + p)]) / (2 * apq);
        const double t = (theta >= 0 ? 1 : -1) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < n; ++k) {
          const double akp = a[size_t(k * n + p)], akq = a[size_t(k * n + q)];
          a[size_t(k * n + p)] = c * akp - s * akq;
          a[size_t(k * n + q)] = s * akp + c * akq;
        }
        for (int k = 0; k < n; ++k) {
          const double apk = a[size_t(p * n + k)], aqk = a[size_t(q * n + k)];
          a[size_t(p * n + k)] = c * apk - s * aqk;
          a[size_t(q * n + k)] = s * apk + c * aqk;
        }
      }
  }
  std::vector<double> ev(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) ev[size_t(i)] = a[size_t(i * n + i)];
  return ev;
}

}  // namespace tessera::testing
