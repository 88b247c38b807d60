// Reverse Cuthill-McKee and the METIS partition order.
#include <algorithm>
#include <numeric>
#include <queue>

#include "reorder/detail.hpp"
#include "tessera/reorder/permutation.hpp"

#ifdef TESSERA_WITH_METIS
#include <metis.h>
#endif

namespace tessera::reorder {
namespace detail {

template <class I>
Adjacency undirected(const CsrView<I>& g) {
  TESSERA_CHECK(g.rows == g.cols, "reordering needs a square graph, got ", g.rows, " x ", g.cols);
  std::vector<std::vector<int64_t>> adj(size_t(g.rows));
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t k = g.rowptr[r]; k < g.rowptr[r + 1]; ++k) {
      const int64_t c = int64_t(g.col[k]);
      TESSERA_CHECK(c >= 0 && c < g.cols, "reordering: entry ", k, " of row ", r, " has column ", c,
                    " outside [0, ", g.cols, ")");
      if (c == r) continue;
      adj[size_t(r)].push_back(c);
      adj[size_t(c)].push_back(r);
    }
  for (auto& a : adj) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  return adj;
}
template Adjacency undirected(const CsrView<int32_t>&);
template Adjacency undirected(const CsrView<int64_t>&);

namespace {
// BFS levels from `root` within unvisited nodes; returns the last level's nodes and the depth.
int bfs_depth(const std::vector<std::vector<int64_t>>& adj, int64_t root, std::vector<int>& mark,
              int stamp, std::vector<int64_t>& last_level) {
  std::vector<int64_t> level{root}, next;
  mark[size_t(root)] = stamp;
  int depth = 0;
  for (;;) {
    next.clear();
    for (int64_t u : level)
      for (int64_t v : adj[size_t(u)])
        if (mark[size_t(v)] != stamp) {
          mark[size_t(v)] = stamp;
          next.push_back(v);
        }
    if (next.empty()) break;
    level.swap(next);
    ++depth;
  }
  last_level = level;
  return depth;
}
}  // namespace

std::vector<int64_t> rcm_order(const std::vector<std::vector<int64_t>>& adj) {
  const int64_t n = int64_t(adj.size());
  std::vector<char> placed(static_cast<size_t>(n), 0);
  std::vector<int> mark(static_cast<size_t>(n), 0);
  int stamp = 0;
  std::vector<int64_t> order;
  order.reserve(static_cast<size_t>(n));
  std::vector<int64_t> by_degree(static_cast<size_t>(n));
  std::iota(by_degree.begin(), by_degree.end(), int64_t(0));
  std::stable_sort(by_degree.begin(), by_degree.end(),
                   [&](int64_t a, int64_t b) { return adj[size_t(a)].size() < adj[size_t(b)].size(); });
  for (int64_t seed : by_degree) {
    if (placed[size_t(seed)]) continue;
    // Pseudo-peripheral root (George-Liu): move to a min-degree node of the last BFS level while
    // the eccentricity grows.
    int64_t root = seed;
    std::vector<int64_t> last;
    int depth = bfs_depth(adj, root, mark, ++stamp, last);
    for (int it = 0; it < 8; ++it) {
      const int64_t cand = *std::min_element(last.begin(), last.end(), [&](int64_t a, int64_t b) {
        return adj[size_t(a)].size() != adj[size_t(b)].size() ? adj[size_t(a)].size() < adj[size_t(b)].size() : a < b;
      });
      std::vector<int64_t> last2;
      const int d2 = bfs_depth(adj, cand, mark, ++stamp, last2);
      if (d2 <= depth) break;
      root = cand;
      depth = d2;
      last = last2;
    }
    // Cuthill-McKee BFS, neighbours by increasing degree.
    const size_t start = order.size();
    order.push_back(root);
    placed[size_t(root)] = 1;
    std::vector<int64_t> nb;
    for (size_t head = start; head < order.size(); ++head) {
      nb.clear();
      for (int64_t v : adj[size_t(order[head])])
        if (!placed[size_t(v)]) {
          placed[size_t(v)] = 1;
          nb.push_back(v);
        }
      std::stable_sort(nb.begin(), nb.end(), [&](int64_t a, int64_t b) {
        return adj[size_t(a)].size() < adj[size_t(b)].size();
      });
      order.insert(order.end(), nb.begin(), nb.end());
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

std::vector<int64_t> metis_parts(const Adjacency& adj, int64_t parts) {
  const int64_t n = int64_t(adj.size());
  TESSERA_CHECK(parts >= 1, "metis_parts: ", parts, " parts must be >= 1");
#ifdef TESSERA_WITH_METIS
  std::vector<idx_t> part(static_cast<size_t>(n), 0);
  if (parts > 1) {
    std::vector<idx_t> xadj(size_t(n + 1), 0), adjncy;
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c : adj[size_t(r)]) adjncy.push_back(idx_t(c));
      xadj[size_t(r + 1)] = idx_t(adjncy.size());
    }
    idx_t nv = idx_t(n), ncon = 1, np = idx_t(parts), objval = 0;
    idx_t options[METIS_NOPTIONS];
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED] = 1;  // deterministic
    if (!adjncy.empty()) {
      const int rc = METIS_PartGraphKway(&nv, &ncon, xadj.data(), adjncy.data(), nullptr, nullptr, nullptr,
                                         &np, nullptr, nullptr, options, &objval, part.data());
      TESSERA_CHECK(rc == METIS_OK, "METIS_PartGraphKway failed with status ", rc, " on a graph of ", n,
                    " nodes into ", parts, " parts");
    }
  }
  return std::vector<int64_t>(part.begin(), part.end());
#else
  (void)n;
  fail("METIS partition: tessera was built without METIS (install libmetis-dev and reconfigure)");
#endif
}
}  // namespace detail

template <class I>
Permutation rcm(const CsrView<I>& g) {
  return Permutation::from_order(detail::rcm_order(detail::undirected(g)));
}
template Permutation rcm(const CsrView<int32_t>&);
template Permutation rcm(const CsrView<int64_t>&);

bool metis_available() {
#ifdef TESSERA_WITH_METIS
  return true;
#else
  return false;
#endif
}

template <class I>
Permutation partition_order(const CsrView<I>& g, int64_t part_size) {
  TESSERA_CHECK(part_size >= 1, "partition_order: part_size ", part_size, " must be >= 1");
  const auto adj = detail::undirected(g);
  const int64_t n = int64_t(adj.size());
  const std::vector<int64_t> rcm_pos_order = detail::rcm_order(adj);
  const int64_t parts = (n + part_size - 1) / part_size;
  if (metis_available() && parts <= 1) return Permutation::from_order(rcm_pos_order);
  const std::vector<int64_t> part = detail::metis_parts(adj, parts);
  // Parts one after another, RCM positions inside each part.
  std::vector<int64_t> pos(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) pos[size_t(rcm_pos_order[size_t(k)])] = k;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return part[size_t(a)] != part[size_t(b)] ? part[size_t(a)] < part[size_t(b)] : pos[size_t(a)] < pos[size_t(b)];
  });
  return Permutation::from_order(std::move(order));
}
template Permutation partition_order(const CsrView<int32_t>&, int64_t);
template Permutation partition_order(const CsrView<int64_t>&, int64_t);

}  // namespace tessera::reorder
