// Order quality measures (tiles, fill, bandwidth, profile), method specs, and the dispatcher
// over every order of orders.hpp.
#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "reorder/detail.hpp"
#include "tessera/reorder/orders.hpp"

namespace tessera::reorder {
namespace detail {
// Non-empty tr x tc tiles: per row block, the sorted unique column blocks of its rows. Sorting a
// small vector per block beats a global hash set by a wide margin on 10^7 entries.
template <class I>
int64_t nonempty_tiles(const CsrView<I>& g, int tr, int tc) {
  int64_t tiles = 0;
  std::vector<int64_t> blocks;
  for (int64_t r0 = 0; r0 < g.rows; r0 += tr) {
    blocks.clear();
    const int64_t r1 = std::min<int64_t>(g.rows, r0 + tr);
    for (int64_t k = int64_t(g.rowptr[r0]); k < int64_t(g.rowptr[r1]); ++k) blocks.push_back(int64_t(g.col[k]) / tc);
    std::sort(blocks.begin(), blocks.end());
    tiles += std::unique(blocks.begin(), blocks.end()) - blocks.begin();
  }
  return tiles;
}
template int64_t nonempty_tiles(const CsrView<int32_t>&, int, int);
template int64_t nonempty_tiles(const CsrView<int64_t>&, int, int);
}  // namespace detail

template <class I>
OrderQuality order_quality(const CsrView<I>& g) {
  OrderQuality q;
  q.tiles_8x8 = detail::nonempty_tiles(g, 8, 8);
  q.tiles_16x8 = detail::nonempty_tiles(g, 16, 8);
  q.fill_8x8 = q.tiles_8x8 ? double(g.nnz) / (double(q.tiles_8x8) * 64.0) : 0.0;
  q.fill_16x8 = q.tiles_16x8 ? double(g.nnz) / (double(q.tiles_16x8) * 128.0) : 0.0;
  double profile = 0;
  for (int64_t r = 0; r < g.rows; ++r) {
    int64_t lo = r;
    for (int64_t k = int64_t(g.rowptr[r]); k < int64_t(g.rowptr[r + 1]); ++k) {
      const int64_t c = int64_t(g.col[k]);
      q.bandwidth = std::max<int64_t>(q.bandwidth, c > r ? c - r : r - c);
      lo = std::min(lo, c);
    }
    profile += double(r - lo);
  }
  q.profile = g.rows ? profile / double(g.rows) : 0.0;
  return q;
}
template OrderQuality order_quality(const CsrView<int32_t>&);
template OrderQuality order_quality(const CsrView<int64_t>&);

namespace {
int64_t parse_int(const std::string& spec, const std::string& key, const std::string& v, int64_t lo, int64_t hi) {
  char* end = nullptr;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  TESSERA_CHECK(!v.empty() && end && *end == '\0' && x >= lo && x <= hi, "reorder spec '", spec, "': ", key,
                "=", v, " is not an integer in [", lo, ", ", hi, "]");
  return int64_t(x);
}
}  // namespace

OrderSpec parse_order_spec(const std::string& spec) {
  OrderSpec s;
  const size_t colon = spec.find(':');
  s.method = spec.substr(0, colon);
  if (s.method == "identity") s.method = "none";
  if (s.method == "partition") s.method = "metis";
  if (s.method == "degree_sort") s.method = "degree";
  static const char* known[] = {"none", "degree", "rcm", "metis", "pbr", "morton", "hilbert"};
  TESSERA_CHECK(std::find_if(std::begin(known), std::end(known), [&](const char* k) { return s.method == k; }) !=
                    std::end(known),
                "unknown reordering '", s.method, "' in '", spec, "' (none, degree, rcm, metis, pbr, morton, hilbert)");
  if (colon == std::string::npos) return s;
  std::stringstream in(spec.substr(colon + 1));
  std::string kv;
  while (std::getline(in, kv, ',')) {
    const size_t eq = kv.find('=');
    TESSERA_CHECK(eq != std::string::npos, "reorder spec '", spec, "': '", kv, "' is not key=value");
    const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    const bool partitioned = s.method == "metis" || s.method == "pbr";
    if (k == "size" && partitioned) {
      s.part_size = parse_int(spec, k, v, 1, int64_t(1) << 40);
      s.parts = 0;
    } else if (k == "parts" && partitioned) {
      s.parts = parse_int(spec, k, v, 1, int64_t(1) << 40);
    } else if (k == "passes" && s.method == "pbr") {
      s.passes = int(parse_int(spec, k, v, 0, 16));
    } else if (k == "tile" && s.method == "pbr") {
      const size_t x = v.find('x');
      TESSERA_CHECK(x != std::string::npos, "reorder spec '", spec, "': tile=", v, " is not RxC");
      s.tile_rows = int(parse_int(spec, k, v.substr(0, x), 1, 1024));
      s.tile_cols = int(parse_int(spec, k, v.substr(x + 1), 1, 1024));
    } else {
      fail("reorder spec '", spec, "': unknown key '", k, "' for method ", s.method);
    }
  }
  return s;
}

std::string OrderSpec::str() const {
  std::string s = method;
  if (method == "metis") s += parts > 0 ? ":parts=" + std::to_string(parts) : ":size=" + std::to_string(part_size);
  if (method == "pbr")
    s += ":size=" + std::to_string(part_size) + ",tile=" + std::to_string(tile_rows) + "x" + std::to_string(tile_cols);
  return s;
}

template <class I>
Permutation compute_order(const CsrView<I>& g, const OrderSpec& s, const Coords* coords) {
  if (s.method == "none") return Permutation::identity(g.rows);
  if (s.method == "degree") return degree_sort(g);
  if (s.method == "rcm") return rcm(g);
  const int64_t part_size = s.parts > 0 ? std::max<int64_t>(1, (g.rows + s.parts - 1) / s.parts) : s.part_size;
  if (s.method == "metis") return partition_order(g, part_size);
  if (s.method == "pbr") return pbr(g, PbrOptions{part_size, s.tile_rows, s.tile_cols, s.passes});
  TESSERA_CHECK(coords && coords->size() == g.rows, "reorder ", s.method, ": needs node coordinates for all ",
                g.rows, " nodes (", coords ? coords->size() : 0, " given)");
  return s.method == "morton" ? morton_order(*coords) : hilbert_order(*coords);
}
template Permutation compute_order(const CsrView<int32_t>&, const OrderSpec&, const Coords*);
template Permutation compute_order(const CsrView<int64_t>&, const OrderSpec&, const Coords*);

}  // namespace tessera::reorder
