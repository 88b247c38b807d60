// Permutation objects: construction, checking, and relabeling a CSR graph.
#include "tessera/reorder/permutation.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_set>

namespace tessera::reorder {

Permutation Permutation::identity(int64_t n) {
  std::vector<int64_t> o(static_cast<size_t>(n));
  std::iota(o.begin(), o.end(), int64_t(0));
  return from_order(std::move(o));
}

Permutation Permutation::from_order(std::vector<int64_t> old_of_new) {
  Permutation p;
  const int64_t n = int64_t(old_of_new.size());
  p.new_of_old_.assign(static_cast<size_t>(n), -1);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t o = old_of_new[size_t(k)];
    TESSERA_CHECK(o >= 0 && o < n, "Permutation: position ", k, " holds id ", o, " outside [0, ", n, ")");
    TESSERA_CHECK(p.new_of_old_[size_t(o)] < 0, "Permutation: id ", o, " appears twice (position ", k, ")");
    p.new_of_old_[size_t(o)] = k;
  }
  p.old_of_new_ = std::move(old_of_new);
  return p;
}

Permutation Permutation::inverse() const { return from_order(new_of_old_); }

bool Permutation::is_identity() const {
  for (int64_t k = 0; k < size(); ++k)
    if (old_of_new_[size_t(k)] != k) return false;
  return true;
}

template <class I>
Csr<I> Permutation::apply(const CsrView<I>& g, std::vector<int64_t>* entry_map) const {
  TESSERA_CHECK(g.rows == size() && g.cols == size(), "Permutation::apply: graph is ", g.rows, " x ",
                g.cols, " but the permutation has ", size(), " nodes (square graphs only)");
  Csr<I> out;
  out.rows = out.cols = g.rows;
  out.rowptr.assign(size_t(g.rows + 1), I(0));
  for (int64_t r = 0; r < g.rows; ++r)
    out.rowptr[size_t(new_of_old_[size_t(r)] + 1)] = I(g.rowptr[r + 1] - g.rowptr[r]);
  for (int64_t r = 0; r < g.rows; ++r) out.rowptr[size_t(r + 1)] += out.rowptr[size_t(r)];
  out.col.resize(size_t(g.nnz));
  if (g.values) out.values.resize(size_t(g.nnz));
  std::vector<int64_t> map(size_t(g.nnz));
  std::vector<std::pair<int64_t, int64_t>> row;  // (new column, old entry)
  for (int64_t r = 0; r < g.rows; ++r) {
    row.clear();
    for (int64_t k = g.rowptr[r]; k < g.rowptr[r + 1]; ++k)
      row.push_back({new_of_old_[size_t(g.col[k])], k});
    std::sort(row.begin(), row.end());
    int64_t pos = out.rowptr[size_t(new_of_old_[size_t(r)])];
    for (const auto& [c, k] : row) {
      out.col[size_t(pos)] = I(c);
      if (g.values) out.values[size_t(pos)] = g.values[k];
      map[size_t(pos)] = k;
      ++pos;
    }
  }
  if (entry_map) *entry_map = std::move(map);
  return out;
}

template Csr<int32_t> Permutation::apply(const CsrView<int32_t>&, std::vector<int64_t>*) const;
template Csr<int64_t> Permutation::apply(const CsrView<int64_t>&, std::vector<int64_t>*) const;

Method parse_method(const std::string& name) {
  if (name == "none" || name == "identity") return Method::none;
  if (name == "rcm") return Method::rcm;
  if (name == "partition" || name == "metis") return Method::partition;
  fail("unknown reordering '", name, "' (none, rcm, partition)");
}
const char* method_name(Method m) {
  switch (m) {
    case Method::none: return "none";
    case Method::rcm: return "rcm";
    case Method::partition: return "partition";
  }
  return "?";
}

template <class I>
int64_t count_tiles(const CsrView<I>& g, int tr, int tc) {
  std::unordered_set<int64_t> tiles;
  const int64_t tcols = (g.cols + tc - 1) / tc;
  for (int64_t r = 0; r < g.rows; ++r)
    for (int64_t k = g.rowptr[r]; k < g.rowptr[r + 1]; ++k)
      tiles.insert((r / tr) * tcols + int64_t(g.col[k]) / tc);
  return int64_t(tiles.size());
}
template int64_t count_tiles(const CsrView<int32_t>&, int, int);
template int64_t count_tiles(const CsrView<int64_t>&, int, int);

template <class I>
Permutation compute_order(const CsrView<I>& g, Method m) {
  switch (m) {
    case Method::none: return Permutation::identity(g.rows);
    case Method::rcm: return rcm(g);
    case Method::partition: return partition_order(g);
  }
  fail("unknown reordering method");
}
template Permutation compute_order(const CsrView<int32_t>&, Method);
template Permutation compute_order(const CsrView<int64_t>&, Method);

}  // namespace tessera::reorder
