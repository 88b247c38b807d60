// Space-filling-curve orders for nodes with coordinates (road networks, grids): nodes close in
// the plane get close ids, so a planar graph's edges land near the diagonal.
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>

#include "tessera/reorder/orders.hpp"

namespace tessera::reorder {

Coords grid_coords(int64_t rows, int64_t cols) {
  TESSERA_CHECK(rows >= 1 && cols >= 1, "grid_coords: ", rows, " x ", cols, " is empty");
  Coords c;
  c.x.resize(size_t(rows * cols));
  c.y.resize(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < cols; ++k) {
      c.x[size_t(r * cols + k)] = double(k);
      c.y[size_t(r * cols + k)] = double(r);
    }
  return c;
}

Coords read_coords(const std::string& path, int64_t nodes) {
  TESSERA_CHECK(nodes >= 0, "read_coords: negative node count ", nodes);
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  TESSERA_CHECK(f, "read_coords: cannot open ", path);
  Coords c;
  c.x.assign(size_t(nodes), NAN);
  c.y.assign(size_t(nodes), NAN);
  char line[4096];
  int64_t lineno = 0;
  while (gzgets(f.get(), line, sizeof line)) {
    ++lineno;
    if (line[0] == '#' || line[0] == '\n' || line[0] == '\r' || line[0] == '\0') continue;
    long long id = 0;
    double x = 0, y = 0;
    TESSERA_CHECK(std::sscanf(line, "%lld %lf %lf", &id, &x, &y) == 3, path, ":", lineno,
                  ": expected 'node x y'");
    TESSERA_CHECK(id >= 0 && id < nodes, path, ":", lineno, ": node ", id, " outside [0, ", nodes, ")");
    TESSERA_CHECK(std::isfinite(x) && std::isfinite(y), path, ":", lineno, ": non-finite coordinate");
    c.x[size_t(id)] = x;
    c.y[size_t(id)] = y;
  }
  double sx = 0, sy = 0;
  int64_t have = 0;
  for (int64_t i = 0; i < nodes; ++i)
    if (!std::isnan(c.x[size_t(i)])) sx += c.x[size_t(i)], sy += c.y[size_t(i)], ++have;
  for (int64_t i = 0; i < nodes; ++i)
    if (std::isnan(c.x[size_t(i)])) {
      c.x[size_t(i)] = have ? sx / double(have) : 0.0;
      c.y[size_t(i)] = have ? sy / double(have) : 0.0;
    }
  return c;
}

uint64_t morton_index(uint32_t x, uint32_t y) {
  auto spread = [](uint64_t v) {
    v &= 0xffffffffULL;
    v = (v | (v << 16)) & 0x0000ffff0000ffffULL;
    v = (v | (v << 8)) & 0x00ff00ff00ff00ffULL;
    v = (v | (v << 4)) & 0x0f0f0f0f0f0f0f0fULL;
    v = (v | (v << 2)) & 0x3333333333333333ULL;
    v = (v | (v << 1)) & 0x5555555555555555ULL;
    return v;
  };
  return spread(x) | (spread(y) << 1);
}

// The classic quadrant-rotation walk (Hilbert 1891; as in Warren, "Hacker's Delight" 16-2).
uint64_t hilbert_index(uint32_t x, uint32_t y, int order) {
  TESSERA_CHECK(order >= 1 && order <= 32, "hilbert_index: order ", order, " outside [1, 32]");
  uint64_t d = 0;
  uint64_t X = x, Y = y;
  for (uint64_t s = uint64_t(1) << (order - 1); s > 0; s >>= 1) {
    const uint64_t rx = (X & s) ? 1 : 0, ry = (Y & s) ? 1 : 0;
    d += s * s * ((3 * rx) ^ ry);
    if (ry == 0) {  // rotate the quadrant so the curve stays continuous
      if (rx == 1) {
        X = s - 1 - (X & (s - 1));
        Y = s - 1 - (Y & (s - 1));
      }
      std::swap(X, Y);
    }
    X &= s - 1;
    Y &= s - 1;
  }
  return d;
}

namespace {
constexpr int kOrder = 16;

template <class Curve>
Permutation curve_order(const Coords& c, Curve curve) {
  TESSERA_CHECK(c.x.size() == c.y.size(), "curve order: ", c.x.size(), " x but ", c.y.size(), " y coordinates");
  const int64_t n = c.size();
  if (n == 0) return Permutation::identity(0);
  const auto [xmin, xmax] = std::minmax_element(c.x.begin(), c.x.end());
  const auto [ymin, ymax] = std::minmax_element(c.y.begin(), c.y.end());
  // One scale for both axes keeps distances isotropic (a long thin region is not stretched).
  const double span = std::max({*xmax - *xmin, *ymax - *ymin, 1e-300});
  const double cells = double((1u << kOrder) - 1);
  std::vector<uint64_t> key(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const auto qx = uint32_t(std::lround((c.x[size_t(i)] - *xmin) / span * cells));
    const auto qy = uint32_t(std::lround((c.y[size_t(i)] - *ymin) / span * cells));
    key[size_t(i)] = curve(qx, qy);
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return key[size_t(a)] < key[size_t(b)]; });
  return Permutation::from_order(std::move(order));
}
}  // namespace

Permutation morton_order(const Coords& c) { return curve_order(c, morton_index); }
Permutation hilbert_order(const Coords& c) {
  return curve_order(c, [](uint32_t x, uint32_t y) { return hilbert_index(x, y, kOrder); });
}

}  // namespace tessera::reorder
