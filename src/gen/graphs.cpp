// Graph generators: Erdős–Rényi G(n,m), Barabási–Albert, R-MAT, Newman–Watts–Strogatz, 2-D grid,
// clustered communities. Each edge is a pure function of (seed, edge index) via the counter-based
// streams of rng.hpp, so the loops are parallel and the output does not depend on thread count.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "rng.hpp"
#include "tessera/core/error.hpp"
#include "tessera/gen/generators.hpp"

namespace tessera::gen {
namespace {
using detail::Stream;

// Largest edge list a generator will allocate (2^36 edges = 1 TiB of int64 pairs): beyond this
// a typo in a spec would just exhaust memory.
constexpr double kMaxEdges = double(int64_t(1) << 36);

int64_t edge_count(double nodes, double degree, double factor, const char* who) {
  const double m = std::round(nodes * degree * factor);
  TESSERA_CHECK(std::isfinite(m) && m <= kMaxEdges, who, ": ", nodes, " nodes x degree ", degree,
                " gives too many edges (limit 2^36)");
  return int64_t(m);
}

// An undirected edge list of m pairs stored both ways: pair j at k = j and its reverse at m + j.
struct Undirected {
  Coo<int64_t> coo;
  int64_t m;
  Undirected(int64_t n, int64_t pairs) : m(pairs) {
    coo.rows = coo.cols = n;
    coo.src.resize(size_t(2 * m));
    coo.dst.resize(size_t(2 * m));
  }
  void set(int64_t j, int64_t u, int64_t v) {
    coo.src[size_t(j)] = u;
    coo.dst[size_t(j)] = v;
    coo.src[size_t(m + j)] = v;
    coo.dst[size_t(m + j)] = u;
  }
};

// Uniform node in [0, n) other than u (n >= 2).
int64_t other_node(const Stream& s, uint64_t i, int64_t n, int64_t u) {
  const int64_t v = s.below(i, n - 1);
  return v >= u ? v + 1 : v;
}

}  // namespace

Coo<int64_t> erdos_renyi(int64_t n, double avg_degree, uint64_t seed) {
  TESSERA_CHECK(n >= 2, "er: nodes must be at least 2, got ", n);
  TESSERA_CHECK(avg_degree >= 0 && avg_degree <= double(n - 1), "er: degree ", avg_degree,
                " must be in [0, nodes - 1 = ", n - 1, "]");
  const int64_t m = edge_count(double(n), avg_degree, 0.5, "er");
  Undirected g(n, m);
  const Stream s(seed, detail::kEdges);
#pragma omp parallel for schedule(static) if (detail::parallel_worth(m))
  for (int64_t j = 0; j < m; ++j) {
    const int64_t u = s.below(uint64_t(2 * j), n);
    g.set(j, u, other_node(s, uint64_t(2 * j + 1), n, u));
  }
  return std::move(g.coo);
}

// Batagelj-Brandes preferential attachment, resolved per edge in parallel (Sanders & Schulz
// 2016): the endpoint list M holds, for edge j, M[2j] = its new node and M[2j+1] = its target.
// A target copies a uniformly random earlier entry of M, so a node is chosen proportionally to
// its degree; an odd (target) entry is resolved by repeating the draw for that earlier edge,
// which gives the same answer as computing it directly. Expected depth 2.
Coo<int64_t> barabasi_albert(int64_t n, int m, uint64_t seed) {
  TESSERA_CHECK(n >= 2, "ba: nodes must be at least 2, got ", n);
  TESSERA_CHECK(m >= 1, "ba: m must be at least 1, got ", m);
  const int64_t pairs = edge_count(double(n - 1), double(m), 1.0, "ba");
  Undirected g(n, pairs);
  const Stream s(seed, detail::kEdges);
  // Node v >= 1 brings edges (v-1)*m .. v*m-1 and attaches only to nodes present before it.
  auto source = [m](int64_t j) { return j / m + 1; };
#pragma omp parallel for schedule(static) if (detail::parallel_worth(pairs))
  for (int64_t j = 0; j < pairs; ++j) {
    int64_t e = j, target = 0;
    for (;;) {
      const int64_t v = source(e);
      if (v == 1) { target = 0; break; }
      const int64_t r = s.below(uint64_t(e), 2 * (v - 1) * int64_t(m));
      if (r % 2 == 0) { target = source(r / 2); break; }
      e = (r - 1) / 2;
    }
    g.set(j, source(j), target);
  }
  return std::move(g.coo);
}

Coo<int64_t> rmat(const RmatOptions& o) {
  TESSERA_CHECK(o.scale >= 1 && o.scale <= 40, "rmat: scale ", o.scale, " must be in [1, 40]");
  const double d = 1.0 - o.a - o.b - o.c;
  TESSERA_CHECK(o.a > 0 && o.b >= 0 && o.c >= 0 && d >= 0, "rmat: probabilities a=", o.a, " b=", o.b,
                " c=", o.c, " must be positive and sum to at most 1");
  TESSERA_CHECK(o.avg_degree >= 0, "rmat: degree ", o.avg_degree, " must be non-negative");
  // Noise mu shifts b and c by +mu and a, d by -2 mu a/(a+d), -2 mu d/(a+d): all must stay >= 0.
  const double max_noise = std::min({(o.a + d) / 2, o.b, o.c});
  TESSERA_CHECK(o.noise >= 0 && o.noise <= max_noise, "rmat: noise ", o.noise, " must be in [0, ",
                max_noise, "] for these a, b, c");
  const int64_t n = int64_t(1) << o.scale;
  const int64_t m = edge_count(double(n), o.avg_degree, 1.0, "rmat");
  // Cumulative quadrant thresholds per level, as 32-bit fixed point so that the quadrant choice is
  // branch-free integer compares (random branches would mispredict half the time).
  std::vector<uint64_t> ta(size_t(o.scale)), tab(size_t(o.scale)), tabc(size_t(o.scale));
  const Stream noise(o.seed, detail::kNoise);
  for (int l = 0; l < o.scale; ++l) {
    const double mu = o.noise * (2 * noise.uniform(uint64_t(l)) - 1);
    const double a = o.a - 2 * mu * o.a / (o.a + d), b = o.b + mu, c = o.c + mu, dd = d - 2 * mu * d / (o.a + d);
    const double sum = a + b + c + dd;
    auto fixed = [](double p) { return uint64_t(std::llround(std::clamp(p, 0.0, 1.0) * 0x1.0p32)); };
    ta[size_t(l)] = fixed(a / sum);
    tab[size_t(l)] = fixed((a + b) / sum);
    tabc[size_t(l)] = fixed((a + b + c) / sum);
  }
  // Scrambling: a bijection of [0, 2^scale) (odd multiply and xorshift, both invertible mod 2^scale).
  const uint64_t mask = uint64_t(n) - 1;
  const Stream sc(o.seed, detail::kScramble);
  const uint64_t mul1 = sc.bits(0) | 1, mul2 = sc.bits(1) | 1, add = sc.bits(2);
  const int shift = std::max(1, o.scale / 2);
  auto scramble = [&](uint64_t x) {
    x = (x * mul1 + add) & mask;
    x ^= x >> shift;
    x = (x * mul2) & mask;
    return x ^ (x >> shift);
  };
  Coo<int64_t> coo;
  coo.rows = coo.cols = n;
  coo.src.resize(size_t(m));
  coo.dst.resize(size_t(m));
  const Stream s(o.seed, detail::kEdges);
  const int draws = (o.scale + 1) / 2;  // two 32-bit uniforms per 64-bit draw
#pragma omp parallel for schedule(static) if (detail::parallel_worth(m))
  for (int64_t k = 0; k < m; ++k) {
    uint64_t row = 0, col = 0, bits = 0;
    for (int l = 0; l < o.scale; ++l) {
      // Level l uses one 32-bit half of draw l / 2. Quadrants by u: [0, a) -> (0,0), [a, a+b) -> (0,1),
      // [a+b, a+b+c) -> (1,0), rest -> (1,1); so row bit = u >= a+b, column bit = parity of thresholds passed.
      if ((l & 1) == 0) bits = s.bits(uint64_t(k) * uint64_t(draws) + uint64_t(l / 2));
      const uint64_t u = (l & 1) ? bits >> 32 : bits & 0xffffffffull;
      const uint64_t pa = u >= ta[size_t(l)], pab = u >= tab[size_t(l)], pabc = u >= tabc[size_t(l)];
      row = (row << 1) | pab;
      col = (col << 1) | (pa ^ pab ^ pabc);
    }
    if (o.scramble) { row = scramble(row); col = scramble(col); }
    coo.src[size_t(k)] = int64_t(row);
    coo.dst[size_t(k)] = int64_t(col);
  }
  return coo;
}

Coo<int64_t> rmat(int scale, double avg_degree, uint64_t seed, double a, double b, double c) {
  RmatOptions o;
  o.scale = scale;
  o.avg_degree = avg_degree;
  o.seed = seed;
  o.a = a;
  o.b = b;
  o.c = c;
  return rmat(o);
}

// Newman-Watts: ring lattice (each node linked to k/2 successors) plus, for every lattice edge
// with probability p, a shortcut from its first node to a uniform other node. Shortcuts are
// counted per fixed-size chunk first, so their positions do not depend on the thread count.
Coo<int64_t> watts_strogatz(int64_t n, int k, double p, uint64_t seed) {
  TESSERA_CHECK(k >= 2 && k % 2 == 0, "ws: k must be even and at least 2, got ", k);
  TESSERA_CHECK(n > k, "ws: nodes (", n, ") must exceed k (", k, ")");
  TESSERA_CHECK(p >= 0 && p <= 1, "ws: p ", p, " must be in [0, 1]");
  const int64_t half = k / 2;
  const int64_t lattice = edge_count(double(n), double(half), 1.0, "ws");
  const Stream s(seed, detail::kShortcuts);
  constexpr int64_t kChunk = int64_t(1) << 16;
  const int64_t chunks = (lattice + kChunk - 1) / kChunk;
  std::vector<int64_t> offset(size_t(chunks) + 1, 0);
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t cnt = 0;
    for (int64_t j = c * kChunk; j < std::min(lattice, (c + 1) * kChunk); ++j) cnt += s.uniform(uint64_t(2 * j)) < p;
    offset[size_t(c) + 1] = cnt;
  }
  for (int64_t c = 0; c < chunks; ++c) offset[size_t(c) + 1] += offset[size_t(c)];
  Undirected g(n, lattice + offset[size_t(chunks)]);
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t next = lattice + offset[size_t(c)];
    for (int64_t j = c * kChunk; j < std::min(lattice, (c + 1) * kChunk); ++j) {
      const int64_t u = j / half, v = (u + j % half + 1) % n;
      g.set(j, u, v);
      if (s.uniform(uint64_t(2 * j)) < p) g.set(next++, u, other_node(s, uint64_t(2 * j + 1), n, u));
    }
  }
  return std::move(g.coo);
}

Coo<int64_t> grid2d(int64_t rows, int64_t cols) {
  TESSERA_CHECK(rows >= 1 && cols >= 1, "grid: rows and cols must be positive, got ", rows, " x ", cols);
  TESSERA_CHECK(double(rows) * double(cols) * 4 <= kMaxEdges, "grid: ", rows, " x ", cols, " is too large");
  const int64_t horizontal = rows * (cols - 1), vertical = (rows - 1) * cols;
  Undirected g(rows * cols, horizontal + vertical);
#pragma omp parallel for schedule(static) if (detail::parallel_worth(horizontal))
  for (int64_t j = 0; j < horizontal; ++j) {
    const int64_t r = j / (cols - 1), c = j % (cols - 1);
    g.set(j, r * cols + c, r * cols + c + 1);
  }
#pragma omp parallel for schedule(static) if (detail::parallel_worth(vertical))
  for (int64_t j = 0; j < vertical; ++j) g.set(horizontal + j, j, j + cols);
  return std::move(g.coo);
}

// Communities are contiguous id ranges: node u is in community floor(u * clusters / n), so the
// adjacency is block-diagonal plus noise (a reordering can hide that if wanted).
Coo<int64_t> clustered(int64_t n, int64_t clusters, double degree, double p_in, uint64_t seed) {
  TESSERA_CHECK(n >= 2, "clustered: nodes must be at least 2, got ", n);
  TESSERA_CHECK(clusters >= 1 && clusters <= n, "clustered: clusters ", clusters, " must be in [1, ", n, "]");
  TESSERA_CHECK(degree >= 0 && degree <= double(n - 1), "clustered: degree ", degree, " must be in [0, ", n - 1, "]");
  TESSERA_CHECK(p_in >= 0 && p_in <= 1, "clustered: p_in ", p_in, " must be in [0, 1]");
  const int64_t m = edge_count(double(n), degree, 0.5, "clustered");
  Undirected g(n, m);
  const Stream s(seed, detail::kEdges);
  auto start = [&](int64_t c) {  // first node of community c: ceil(c * n / clusters)
    return int64_t(((__int128)c * n + clusters - 1) / clusters);
  };
#pragma omp parallel for schedule(static) if (detail::parallel_worth(m))
  for (int64_t j = 0; j < m; ++j) {
    const uint64_t i = uint64_t(3 * j);
    const int64_t u = s.below(i, n);
    const int64_t c = int64_t((__int128)u * clusters / n);
    const int64_t b = start(c), size = start(c + 1) - b;
    int64_t v;
    if (size >= 2 && s.uniform(i + 1) < p_in)
      v = b + other_node(s, i + 2, size, u - b);
    else
      v = other_node(s, i + 2, n, u);
    g.set(j, u, v);
  }
  return std::move(g.coo);
}

}  // namespace tessera::gen
