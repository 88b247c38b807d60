// Degree sort and the METIS order by part count.
#include <algorithm>
#include <numeric>

#include "tessera/reorder/orders.hpp"

namespace tessera::reorder {

template <class I>
Permutation degree_sort(const CsrView<I>& g, bool descending) {
  std::vector<int64_t> order(size_t(g.rows));
  std::iota(order.begin(), order.end(), int64_t(0));
  auto deg = [&](int64_t r) { return int64_t(g.rowptr[r + 1]) - int64_t(g.rowptr[r]); };
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return descending ? deg(a) > deg(b) : deg(a) < deg(b); });
  return Permutation::from_order(std::move(order));
}
template Permutation degree_sort(const CsrView<int32_t>&, bool);
template Permutation degree_sort(const CsrView<int64_t>&, bool);

template <class I>
Permutation partition_order_k(const CsrView<I>& g, int64_t parts) {
  TESSERA_CHECK(parts >= 1, "partition_order_k: parts = ", parts, " must be >= 1");
  return partition_order(g, std::max<int64_t>(1, (g.rows + parts - 1) / parts));
}
template Permutation partition_order_k(const CsrView<int32_t>&, int64_t);
template Permutation partition_order_k(const CsrView<int64_t>&, int64_t);

}  // namespace tessera::reorder
