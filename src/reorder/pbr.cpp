// Partition-based reordering (PBR): a few start orders, each refined by greedy column-signature
// clustering inside windows, judged by the quantity PBR minimizes (non-empty tile_rows x
// tile_cols tiles); the best order seen is returned, so PBR is never worse than any start.
//
// Starts (one METIS call serves the two partition starts):
//  * the METIS order (parts by id, global RCM positions inside), as partition_order;
//  * the quotient order: parts sequenced by RCM on the quotient graph (part A next to part B when
//    an edge joins them), so the off-diagonal tiles of a part fall near the diagonal, and rows
//    inside a part by RCM on the subgraph the part induces (bandwidth locality within the part);
//  * the global RCM order, windows of part_size consecutive rows: on meshes and on scrambled
//    power-law graphs its level structure already packs tiles better than any partition.
//
// Refinement (cluster_window): the order is cut into windows of part_size positions (about one
// METIS part; rounded up to whole tile rows so groups stay aligned with the tile grid), and the
// rows of a window are regrouped into runs of tile_rows whose column blocks overlap. A group
// starts at the first unplaced row (current order, which keeps the start's locality as
// tie-breaker) and repeatedly takes the unplaced row with the highest score: 2 per edge into the
// group plus 1 per column block shared with the group's union so far. An inverted index (column
// block -> rows of the window) limits candidates to rows sharing a block. A window keeps the
// regrouping only if its own tile cost drops (window_cost), so a start that already packs well
// (RCM on a mesh) is not undone. Moving rows also moves column blocks (the permutation is
// symmetric), so the pass is repeated on the new order; every pass is counted.
//
// Windows are independent, so they run in parallel; each window's result depends only on the
// order it starts from, hence the permutation is the same for any thread count.
#include <algorithm>
#include <numeric>

#include <omp.h>

#include "reorder/detail.hpp"
#include "tessera/reorder/orders.hpp"

namespace tessera::reorder {
namespace {
// Column blocks shared by more rows than this are skipped as candidate sources (a hub column
// would make every row a candidate and the step quadratic); they still count in the union.
constexpr size_t kMaxPostings = 512;

// An order being refined: old id per position, position per old id, and window boundaries
// (window w is positions [bounds[w], bounds[w + 1])).
struct Layout {
  std::vector<int64_t> order, pos, bounds;
};

// Below this many entries a pass takes about a millisecond and OpenMP fork/join on a busy host
// costs more than it saves (cora: 0.29 s with 2 threads vs 0.07 s with 1), so small graphs run
// on one thread. Results do not depend on it.
constexpr int64_t kParallelEntries = int64_t(1) << 19;

int thread_count(int requested, int64_t entries) {
  if (requested > 0) return requested;
  return entries >= kParallelEntries ? omp_get_max_threads() : 1;
}

// Non-empty tiles of g relabeled by L, without building the relabeled graph.
template <class I>
int64_t tiles_of(const CsrView<I>& g, const Layout& L, int tr, int tc, int threads) {
  const int64_t blocks = (g.rows + tr - 1) / tr;
  int64_t total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    std::vector<int64_t> cb;
#pragma omp for schedule(dynamic, 64)
    for (int64_t b = 0; b < blocks; ++b) {
      cb.clear();
      for (int64_t r = b * tr; r < std::min<int64_t>(g.rows, (b + 1) * tr); ++r) {
        const int64_t o = L.order[size_t(r)];
        for (int64_t k = int64_t(g.rowptr[o]); k < int64_t(g.rowptr[o + 1]); ++k)
          cb.push_back(L.pos[size_t(g.col[k])] / tc);
      }
      std::sort(cb.begin(), cb.end());
      total += std::unique(cb.begin(), cb.end()) - cb.begin();
    }
  }
  return total;
}

// Per-thread buffers of cluster_window, sized once: indexed by column block (n / tc + 1 entries)
// and reset through the lists of touched entries, so a window costs O(its entries), not O(n).
struct Scratch {
  std::vector<int64_t> sig_ptr, sig;            // column blocks of each window row (CSR)
  std::vector<int32_t> post_head, post_len;     // per block: start / length in `post`
  std::vector<int32_t> post;                    // rows of the window by block
  std::vector<int64_t> used_blocks;             // blocks with a posting list in this window
  std::vector<char> in_union, placed;
  std::vector<int32_t> score, touched;
  std::vector<int64_t> union_blocks;
};

// New order of the rows at positions [w0, w1) of L (positions, appended to out).
template <class I>
void cluster_window(const CsrView<I>& g, const Layout& L, int64_t w0, int64_t w1, int tr, int tc,
                    Scratch& S, std::vector<int64_t>& out) {
  const int64_t m = w1 - w0;
  const size_t nb = size_t(g.rows / tc + 1);
  if (S.post_head.size() < nb) {
    S.post_head.assign(nb, 0);
    S.post_len.assign(nb, 0);
    S.in_union.assign(nb, 0);
  }
  auto row_begin = [&](int64_t r) { return int64_t(g.rowptr[L.order[size_t(w0 + r)]]); };
  auto row_end = [&](int64_t r) { return int64_t(g.rowptr[L.order[size_t(w0 + r)] + 1]); };
  // Signatures: sorted unique column blocks per row; counting sort into posting lists.
  S.sig_ptr.assign(size_t(m + 1), 0);
  S.sig.clear();
  S.used_blocks.clear();
  for (int64_t r = 0; r < m; ++r) {
    const size_t s0 = S.sig.size();
    for (int64_t k = row_begin(r); k < row_end(r); ++k) S.sig.push_back(L.pos[size_t(g.col[k])] / tc);
    std::sort(S.sig.begin() + long(s0), S.sig.end());
    S.sig.erase(std::unique(S.sig.begin() + long(s0), S.sig.end()), S.sig.end());
    S.sig_ptr[size_t(r + 1)] = int64_t(S.sig.size());
    for (size_t q = s0; q < S.sig.size(); ++q)
      if (S.post_len[size_t(S.sig[q])]++ == 0) S.used_blocks.push_back(S.sig[q]);
  }
  int32_t at = 0;
  for (int64_t b : S.used_blocks) {
    S.post_head[size_t(b)] = at;
    at += S.post_len[size_t(b)];
  }
  S.post.assign(size_t(at), 0);
  for (int64_t b : S.used_blocks) S.post_len[size_t(b)] = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t q = S.sig_ptr[size_t(r)]; q < S.sig_ptr[size_t(r + 1)]; ++q) {
      const int64_t b = S.sig[size_t(q)];
      S.post[size_t(S.post_head[size_t(b)] + S.post_len[size_t(b)]++)] = int32_t(r);
    }
  S.placed.assign(size_t(m), 0);
  S.score.assign(size_t(m), 0);
  S.touched.clear();
  int64_t next_seed = 0;
  for (int64_t done = 0; done < m;) {
    while (S.placed[size_t(next_seed)]) ++next_seed;
    int64_t pick = next_seed;
    for (int grp = 0; grp < tr && done < m; ++grp) {
      S.placed[size_t(pick)] = 1;
      out.push_back(w0 + pick);
      ++done;
      // Direct neighbours inside the window weigh double: a node group of tile_rows becomes a row
      // block and (the permutation being symmetric) a column block, so edges kept inside a group
      // fill the diagonal tile instead of opening new ones.
      for (int64_t k = row_begin(pick); k < row_end(pick); ++k) {
        const int64_t c = L.pos[size_t(g.col[k])] - w0;
        if (c < 0 || c >= m || S.placed[size_t(c)]) continue;
        if (S.score[size_t(c)] == 0) S.touched.push_back(int32_t(c));
        S.score[size_t(c)] += 2;
      }
      for (int64_t q = S.sig_ptr[size_t(pick)]; q < S.sig_ptr[size_t(pick + 1)]; ++q) {
        const int64_t b = S.sig[size_t(q)];
        if (S.in_union[size_t(b)]) continue;
        S.in_union[size_t(b)] = 1;
        S.union_blocks.push_back(b);
        if (size_t(S.post_len[size_t(b)]) > kMaxPostings) continue;
        for (int32_t e = 0; e < S.post_len[size_t(b)]; ++e) {
          const int32_t r = S.post[size_t(S.post_head[size_t(b)] + e)];
          if (!S.placed[size_t(r)]) {
            if (S.score[size_t(r)] == 0) S.touched.push_back(r);
            ++S.score[size_t(r)];
          }
        }
      }
      // Best candidate: highest score, then fewest new blocks, then earliest position.
      int64_t best = -1, best_shared = 0, best_new = 0;
      for (int32_t r : S.touched) {
        if (S.placed[size_t(r)]) continue;
        const int64_t shared = S.score[size_t(r)];
        const int64_t fresh = S.sig_ptr[size_t(r + 1)] - S.sig_ptr[size_t(r)] - shared;
        if (best < 0 || shared > best_shared ||
            (shared == best_shared && (fresh < best_new || (fresh == best_new && r < best)))) {
          best = r;
          best_shared = shared;
          best_new = fresh;
        }
      }
      if (best < 0) {  // nothing shares a block: continue in the current order
        best = next_seed;
        while (best < m && S.placed[size_t(best)]) ++best;
        if (best >= m) break;
      }
      pick = best;
    }
    for (int32_t r : S.touched) S.score[size_t(r)] = 0;
    S.touched.clear();
    for (int64_t b : S.union_blocks) S.in_union[size_t(b)] = 0;
    S.union_blocks.clear();
  }
  for (int64_t b : S.used_blocks) S.post_len[size_t(b)] = 0;
}

// Tile cost of the rows of window [w0, w0 + arr.size()) laid out as `arr` (positions of L, in
// their new order) while every other row stays put. A block inside the window counts once; a
// block outside counts twice, because on a symmetric pattern the tile (J, I) mirrors (I, J) and
// belongs to the other window's rows, which this window's move changes just the same.
template <class I>
int64_t window_cost(const CsrView<I>& g, const Layout& L, int64_t w0, const std::vector<int64_t>& arr, int tr,
                    int tc, std::vector<int64_t>& slot, std::vector<int64_t>& cb) {
  const int64_t m = int64_t(arr.size());
  for (int64_t i = 0; i < m; ++i) slot[size_t(arr[size_t(i)] - w0)] = w0 + i;
  int64_t cost = 0;
  for (int64_t r0 = 0; r0 < m; r0 += tr) {
    cb.clear();
    for (int64_t i = r0; i < std::min(m, r0 + tr); ++i) {
      const int64_t o = L.order[size_t(arr[size_t(i)])];
      for (int64_t k = int64_t(g.rowptr[o]); k < int64_t(g.rowptr[o + 1]); ++k) {
        const int64_t p = L.pos[size_t(g.col[k])];
        cb.push_back((p >= w0 && p < w0 + m ? slot[size_t(p - w0)] : p) / tc);
      }
    }
    std::sort(cb.begin(), cb.end());
    cb.erase(std::unique(cb.begin(), cb.end()), cb.end());
    for (int64_t b : cb) cost += (b * tc >= w0 + m || (b + 1) * tc <= w0) ? 2 : 1;
  }
  return cost;
}

// One refinement pass over every window of L; a window keeps its old order unless the regrouped
// one costs less (window_cost), so a start that already packs well (RCM on a mesh) is not undone.
// Returns the new layout (same windows).
template <class I>
Layout refine(const CsrView<I>& g, const Layout& L, int tr, int tc, int threads) {
  const int64_t windows = int64_t(L.bounds.size()) - 1;
  std::vector<std::vector<int64_t>> local(static_cast<size_t>(windows));
#pragma omp parallel num_threads(threads)
  {
    std::vector<int64_t> slot, cb, keep;
    Scratch scratch;
#pragma omp for schedule(dynamic, 1)
    for (int64_t w = 0; w < windows; ++w) {
      const int64_t w0 = L.bounds[size_t(w)], w1 = L.bounds[size_t(w + 1)];
      auto& arr = local[size_t(w)];
      cluster_window(g, L, w0, w1, tr, tc, scratch, arr);
      slot.resize(size_t(w1 - w0));
      keep.resize(size_t(w1 - w0));
      std::iota(keep.begin(), keep.end(), w0);
      if (window_cost(g, L, w0, arr, tr, tc, slot, cb) >= window_cost(g, L, w0, keep, tr, tc, slot, cb)) arr = keep;
    }
  }
  Layout out;
  out.bounds = L.bounds;
  out.order.reserve(L.order.size());
  for (const auto& v : local)
    for (int64_t p : v) out.order.push_back(L.order[size_t(p)]);
  out.pos.assign(out.order.size(), 0);
  for (size_t k = 0; k < out.order.size(); ++k) out.pos[size_t(out.order[k])] = int64_t(k);
  return out;
}

Layout make_layout(std::vector<int64_t> order, std::vector<int64_t> bounds) {
  Layout L;
  L.order = std::move(order);
  L.bounds = std::move(bounds);
  L.pos.assign(L.order.size(), 0);
  for (size_t k = 0; k < L.order.size(); ++k) L.pos[size_t(L.order[k])] = int64_t(k);
  return L;
}

std::vector<int64_t> fixed_windows(int64_t n, int64_t size) {
  std::vector<int64_t> b;
  for (int64_t w = 0; w < n; w += size) b.push_back(w);
  b.push_back(n);
  return b;
}

// Parts by RCM on the quotient graph, nodes inside each part by RCM on the induced subgraph.
std::vector<int64_t> quotient_order(const detail::Adjacency& adj, const std::vector<int64_t>& part) {
  const int64_t n = int64_t(adj.size());
  const int64_t parts = part.empty() ? 0 : *std::max_element(part.begin(), part.end()) + 1;
  detail::Adjacency q(static_cast<size_t>(parts));
  std::vector<std::vector<int64_t>> members(static_cast<size_t>(parts));
  for (int64_t u = 0; u < n; ++u) {
    members[size_t(part[size_t(u)])].push_back(u);
    for (int64_t v : adj[size_t(u)])
      if (part[size_t(v)] != part[size_t(u)]) q[size_t(part[size_t(u)])].push_back(part[size_t(v)]);
  }
  for (auto& a : q) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  std::vector<int64_t> local(static_cast<size_t>(n), -1), order;
  order.reserve(size_t(n));
  for (int64_t p : detail::rcm_order(q)) {
    const auto& mem = members[size_t(p)];
    for (size_t i = 0; i < mem.size(); ++i) local[size_t(mem[i])] = int64_t(i);
    detail::Adjacency sub(mem.size());
    for (size_t i = 0; i < mem.size(); ++i)
      for (int64_t v : adj[size_t(mem[i])])
        if (part[size_t(v)] == p) sub[i].push_back(local[size_t(v)]);
    for (int64_t i : detail::rcm_order(sub)) order.push_back(mem[size_t(i)]);
  }
  return order;
}
}  // namespace

template <class I>
Permutation pbr(const CsrView<I>& g, const PbrOptions& opt) {
  TESSERA_CHECK(opt.tile_rows >= 1 && opt.tile_cols >= 1, "pbr: tile ", opt.tile_rows, " x ", opt.tile_cols,
                " must be positive");
  TESSERA_CHECK(opt.part_size >= opt.tile_rows, "pbr: part_size ", opt.part_size, " is smaller than a tile row (",
                opt.tile_rows, ")");
  TESSERA_CHECK(opt.passes >= 0, "pbr: passes = ", opt.passes, " must be >= 0");
  const int threads = thread_count(opt.threads, int64_t(g.nnz));
  const detail::Adjacency adj = detail::undirected(g);
  const int64_t n = int64_t(adj.size());
  const std::vector<int64_t> rcm = detail::rcm_order(adj);
  std::vector<Layout> starts;
  // Windows of part_size positions rounded up to whole tile rows: windows at METIS part
  // boundaries would misalign every later group with the tile grid (measured: 5-10% more tiles).
  const int64_t window = (opt.part_size + opt.tile_rows - 1) / opt.tile_rows * opt.tile_rows;
  const int64_t parts = (n + opt.part_size - 1) / opt.part_size;
  if (metis_available() && parts > 1) {
    const std::vector<int64_t> part = detail::metis_parts(adj, parts);
    std::vector<int64_t> rpos(static_cast<size_t>(n)), order(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) rpos[size_t(rcm[size_t(k)])] = k;
    std::iota(order.begin(), order.end(), int64_t(0));
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return part[size_t(a)] != part[size_t(b)] ? part[size_t(a)] < part[size_t(b)] : rpos[size_t(a)] < rpos[size_t(b)];
    });
    starts.push_back(make_layout(std::move(order), fixed_windows(n, window)));
    starts.push_back(make_layout(quotient_order(adj, part), fixed_windows(n, window)));
  }
  starts.push_back(make_layout(rcm, fixed_windows(n, window)));

  const int tr = opt.tile_rows, tc = opt.tile_cols;
  Layout best;
  int64_t best_tiles = -1;
  auto consider = [&](const Layout& L) {
    const int64_t t = tiles_of(g, L, tr, tc, threads);
    if (best_tiles < 0 || t < best_tiles) {  // strict: earlier candidates win ties
      best_tiles = t;
      best = L;
    }
  };
  for (const Layout& s : starts) {
    consider(s);
    Layout cur = s;
    for (int pass = 0; pass < opt.passes; ++pass) {
      cur = refine(g, cur, tr, tc, threads);
      consider(cur);
    }
  }
  return Permutation::from_order(std::move(best.order));
}
template Permutation pbr(const CsrView<int32_t>&, const PbrOptions&);
template Permutation pbr(const CsrView<int64_t>&, const PbrOptions&);

}  // namespace tessera::reorder
