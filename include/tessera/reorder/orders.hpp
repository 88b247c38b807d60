#pragma once
// More node orderings on top of permutation.hpp (RCM, METIS partition order): degree sort, the
// partition-based order PBR that packs nonzeros into few t x t tiles, Morton and Hilbert orders
// for nodes with coordinates; the quality measures each order is judged by (non-empty tiles, tile
// fill, bandwidth, profile); and applying one permutation consistently to a whole NodeDataset.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph/dataset.hpp"
#include "tessera/reorder/permutation.hpp"

namespace tessera::reorder {

// Nodes by decreasing row length (in-degree); ties keep the original order (stable), so hubs
// share the first rows and their gathered features share cache lines.
template <class I> Permutation degree_sort(const CsrView<I>& g, bool descending = true);

// METIS k-way order with `parts` parts (k from 1 to the node count; 128..65536 in the study).
template <class I> Permutation partition_order_k(const CsrView<I>& g, int64_t parts);

// Partition-based reordering: minimizes the non-empty tile_rows x tile_cols tiles. Start orders:
// the METIS order (parts of about `part_size` nodes, RCM inside, as partition_order), the quotient
// order (parts sequenced by RCM on the graph of parts, RCM inside each part) and global RCM; each
// is refined `passes` times by regrouping the rows of every window (part_size positions) into
// runs of tile_rows whose neighbour column blocks overlap most (column-signature clustering).
// Every start and pass is scored by its tile count and the best is returned, so PBR never has
// more tiles than RCM or (with METIS) the METIS order. Deterministic for any `threads` (0 =
// OpenMP's default from 2^19 entries, one thread below): windows are refined independently.
struct PbrOptions {
  int64_t part_size = 256;
  int tile_rows = 8, tile_cols = 8;
  int passes = 2;
  int threads = 0;
};
template <class I> Permutation pbr(const CsrView<I>& g, const PbrOptions& opt = {});

// Node positions in the plane (x[i], y[i]); used by the space-filling-curve orders.
struct Coords {
  std::vector<double> x, y;
  int64_t size() const { return int64_t(x.size()); }
};
// The grid generator's layout: node r * cols + c sits at (c, r).
Coords grid_coords(int64_t rows, int64_t cols);
// `node x y` lines (optionally gzip), node ids 0-based in [0, nodes); nodes absent from the file
// get the centroid of the present ones. Throws naming the line on malformed input.
Coords read_coords(const std::string& path, int64_t nodes);
// Positions quantized to a 2^16 x 2^16 lattice over the bounding box, then sorted by curve index
// (ties by node id).
Permutation morton_order(const Coords& c);
Permutation hilbert_order(const Coords& c);
// Curve indices on a 2^order x 2^order lattice (exposed for tests).
uint64_t morton_index(uint32_t x, uint32_t y);
uint64_t hilbert_index(uint32_t x, uint32_t y, int order);

// What an order does to the matrix layout.
struct OrderQuality {
  int64_t tiles_8x8 = 0, tiles_16x8 = 0;  // non-empty tiles
  double fill_8x8 = 0, fill_16x8 = 0;     // nnz / (non-empty tiles * tile area)
  int64_t bandwidth = 0;                  // max |row - col| over entries
  double profile = 0;                     // mean over rows of (row - min col in the row), >= 0
};
template <class I> OrderQuality order_quality(const CsrView<I>& g);

// Method specs: "none", "degree", "rcm", "metis:parts=K" or "metis:size=S" (default size=256),
// "pbr[:size=S,tile=8x8|16x8,passes=P]", "morton", "hilbert" (these two need coordinates).
struct OrderSpec {
  std::string method = "none";
  int64_t part_size = 256, parts = 0;     // metis: parts > 0 wins over part_size
  int tile_rows = 8, tile_cols = 8, passes = 2;
  std::string str() const;
};
OrderSpec parse_order_spec(const std::string& spec);
// Computes the order; coords may be null unless the method is morton/hilbert (then it throws
// naming the method).
template <class I> Permutation compute_order(const CsrView<I>& g, const OrderSpec& spec, const Coords* coords);

// The whole data set in the new order: graph relabeled (P A P^T), feature rows and labels moved,
// split node ids mapped (and kept sorted, as loaders write them). undo = apply(p.inverse(), ...).
NodeDataset apply(const Permutation& p, const NodeDataset& ds);
// Rows of a node-major output (e.g. logits) computed on the reordered data back in caller order.
template <class T> Dense<T> undo_rows(const Permutation& p, const Dense<T>& reordered) {
  Dense<T> out(reordered.rows, reordered.cols);
  out.data = p.scatter(reordered.data, reordered.cols);
  return out;
}

}  // namespace tessera::reorder
