// Partition-based reordering (PBR): start from the METIS partition order (RCM inside parts), then
// inside each window of part_size consecutive positions (one METIS part, about) regroup rows into
// runs of tile_rows whose column blocks overlap, so each tile row touches few tile columns.
//
// Greedy column-signature clustering: a group starts at the first unplaced row (in the current
// order, which keeps RCM locality as the tie-breaker) and repeatedly takes the unplaced row with
// the highest score: 2 per edge into the group plus 1 per column block shared with the group's
// union so far. An inverted index (column block ->
// rows of the window) limits the candidates to rows that share at least one block. Moving rows
// also moves column blocks (the permutation is symmetric), so the clustering is repeated on the
// relabeled graph; every pass is scored by its tile count and the best order is kept.
#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "tessera/reorder/orders.hpp"

namespace tessera::reorder {
namespace detail {
template <class I> int64_t nonempty_tiles(const CsrView<I>& g, int tr, int tc);
}

namespace {
// Column blocks shared by more rows than this are skipped as candidates sources (a hub column
// would make every row a candidate and the step quadratic); they still count in the union.
constexpr size_t kMaxPostings = 512;

// New in-window order of rows [w0, w1) of B (positions in B's numbering).
template <class I>
void cluster_window(const CsrView<I>& B, int64_t w0, int64_t w1, int tr, int tc, std::vector<int64_t>& out) {
  const int64_t m = w1 - w0;
  std::vector<std::vector<int64_t>> sig(static_cast<size_t>(m));
  std::unordered_map<int64_t, std::vector<int32_t>> postings;
  for (int64_t r = w0; r < w1; ++r) {
    auto& s = sig[size_t(r - w0)];
    for (int64_t k = int64_t(B.rowptr[r]); k < int64_t(B.rowptr[r + 1]); ++k) s.push_back(int64_t(B.col[k]) / tc);
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    for (int64_t b : s) postings[b].push_back(int32_t(r - w0));
  }
  std::vector<char> placed(size_t(m), 0);
  std::vector<int32_t> score(size_t(m), 0), touched;
  std::unordered_map<int64_t, char> in_union;
  int64_t next_seed = 0;
  for (int64_t done = 0; done < m;) {
    while (placed[size_t(next_seed)]) ++next_seed;
    int64_t pick = next_seed;
    in_union.clear();
    for (int g = 0; g < tr && done < m; ++g) {
      placed[size_t(pick)] = 1;
      out.push_back(w0 + pick);
      ++done;
      // Direct neighbours inside the window weigh double: a node group of tile_rows becomes a row
      // block and (the permutation being symmetric) a column block, so edges kept inside a group
      // fill the diagonal tile instead of opening new ones.
      for (int64_t k = int64_t(B.rowptr[w0 + pick]); k < int64_t(B.rowptr[w0 + pick + 1]); ++k) {
        const int64_t c = int64_t(B.col[k]) - w0;
        if (c < 0 || c >= m || placed[size_t(c)]) continue;
        if (score[size_t(c)] == 0) touched.push_back(int32_t(c));
        score[size_t(c)] += 2;
      }
      for (int64_t b : sig[size_t(pick)]) {
        if (!in_union.emplace(b, 1).second) continue;
        const auto& post = postings[b];
        if (post.size() > kMaxPostings) continue;
        for (int32_t r : post)
          if (!placed[size_t(r)]) {
            if (score[size_t(r)] == 0) touched.push_back(r);
            ++score[size_t(r)];
          }
      }
      // Best candidate: most shared blocks, then fewest new blocks, then earliest position.
      int64_t best = -1;
      int64_t best_shared = 0, best_new = 0;
      for (int32_t r : touched) {
        if (placed[size_t(r)]) continue;
        const int64_t shared = score[size_t(r)], fresh = int64_t(sig[size_t(r)].size()) - shared;  // fresh: a heuristic tie-break
        if (best < 0 || shared > best_shared || (shared == best_shared && (fresh < best_new || (fresh == best_new && r < best)))) {
          best = r;
          best_shared = shared;
          best_new = fresh;
        }
      }
      if (best < 0) {  // nothing shares a block: continue in the current order
        best = next_seed;
        while (best < m && placed[size_t(best)]) ++best;
        if (best >= m) break;
      }
      pick = best;
    }
    for (int32_t r : touched) score[size_t(r)] = 0;
    touched.clear();
  }
}
}  // namespace

template <class I>
Permutation pbr(const CsrView<I>& g, const PbrOptions& opt) {
  TESSERA_CHECK(opt.tile_rows >= 1 && opt.tile_cols >= 1, "pbr: tile ", opt.tile_rows, " x ", opt.tile_cols,
                " must be positive");
  TESSERA_CHECK(opt.part_size >= opt.tile_rows, "pbr: part_size ", opt.part_size, " is smaller than a tile row (",
                opt.tile_rows, ")");
  Permutation current = metis_available() ? partition_order(g, opt.part_size) : rcm(g);
  Csr<I> B = current.apply(g);
  Permutation best = current;
  int64_t best_tiles = detail::nonempty_tiles(B.view(), opt.tile_rows, opt.tile_cols);
  std::vector<int64_t> local;
  for (int pass = 0; pass < opt.passes; ++pass) {
    std::vector<int64_t> order;  // old ids in the new order
    order.reserve(size_t(g.rows));
    for (int64_t w0 = 0; w0 < g.rows; w0 += opt.part_size) {
      local.clear();
      cluster_window(B.view(), w0, std::min<int64_t>(g.rows, w0 + opt.part_size), opt.tile_rows, opt.tile_cols,
                     local);
      for (int64_t pos : local) order.push_back(current.old_of_new(pos));
    }
    current = Permutation::from_order(std::move(order));
    B = current.apply(g);
    const int64_t tiles = detail::nonempty_tiles(B.view(), opt.tile_rows, opt.tile_cols);
    if (tiles < best_tiles) {
      best_tiles = tiles;
      best = current;
    }
  }
  return best;
}
template Permutation pbr(const CsrView<int32_t>&, const PbrOptions&);
template Permutation pbr(const CsrView<int64_t>&, const PbrOptions&);

}  // namespace tessera::reorder
