#pragma once
// A graph's adjacency cut into 8x8 octiles: only non-empty tiles are kept, each with a 64-bit
// occupancy mask (bit r*8+c = entry (8I+r, 8J+c)) and its nonzeros stored compactly in mask-bit
// order. The product-graph mat-vec of the marginalized kernel walks pairs of octiles, so the
// work is (non-empty tiles of G) x (non-empty tiles of G') and every 8x8 block of the solution
// vector stays in registers / shared memory while it is used.
#include <bit>
#include <cstdint>
#include <vector>

#include "tessera/graph/csr.hpp"

namespace tessera::kernels {

constexpr int kOctile = 8;

struct OctileGraph {
  int64_t n = 0;                   // nodes
  int64_t blocks = 0;              // ceil(n / 8)
  std::vector<int32_t> row_ptr;    // blocks + 1: tiles of row block I are [row_ptr[I], row_ptr[I+1])
  std::vector<int32_t> tile_col;   // column block of each tile
  std::vector<uint64_t> mask;      // occupancy of each tile
  std::vector<int32_t> nz_ptr;     // tiles + 1: compact nonzeros of tile t are [nz_ptr[t], nz_ptr[t+1])
  std::vector<float> weight;       // A_ij of each nonzero
  std::vector<uint16_t> label;     // edge-label id of each nonzero (index into the edge table)

  int64_t tiles() const { return int64_t(tile_col.size()); }
  int64_t nnz() const { return int64_t(weight.size()); }
};

// Builds the octiles of a square CSR adjacency. `weights` (nnz, or nullptr = ones) and
// `label_ids` (nnz, or nullptr = 0) are aligned with adj.col.
OctileGraph build_octiles(const CsrView<int32_t>& adj, const float* weights, const uint16_t* label_ids);

// Distinct edge labels of tile t's nonzeros (at most 64) into out, in first-seen order; returns
// their count. The mat-vecs split a tile into one plane per label.
inline int tile_labels(const OctileGraph& g, int64_t t, uint16_t* out) {
  int n = 0;
  for (int32_t k = g.nz_ptr[size_t(t)]; k < g.nz_ptr[size_t(t + 1)]; ++k) {
    const uint16_t l = g.label[size_t(k)];
    bool seen = false;
    for (int s = 0; s < n && !seen; ++s) seen = out[s] == l;
    if (!seen) out[n++] = l;
  }
  return n;
}

// A tile holding at least this many nonzeros takes the dense path of the tile-pair product.
constexpr int kDenseTileThreshold = 24;
inline bool dense_tile(uint64_t mask) { return std::popcount(mask) >= kDenseTileThreshold; }

}  // namespace tessera::kernels
