#pragma once
// Graph statistics that drive tile formats and variant choice.
#include <cstdint>
#include <iosfwd>
#include <string>

#include "tessera/graph/csr.hpp"

namespace tessera {

struct TileStats {
  int tile_rows = 0, tile_cols = 0;
  int64_t nonempty = 0;           // tiles with at least one nonzero
  double share_nonempty = 0;      // nonempty / total tiles of the padded grid
  double mean_fill = 0;           // nnz per non-empty tile / (tile_rows * tile_cols)
};

struct GraphStats {
  int64_t nodes = 0, cols = 0, edges = 0;
  int64_t self_loops = 0, empty_rows = 0;
  int64_t degree_min = 0, degree_max = 0;
  double degree_mean = 0, degree_std = 0, degree_skewness = 0;
  double density = 0;             // edges / (nodes * cols)
  bool symmetric = false;
  bool weighted = false;
  TileStats tiles_16x8, tiles_8x8;
};

// What to compute beyond the O(V) degree statistics: the symmetry check costs a transpose,
// the tile shares a sort of each tile row's column blocks.
struct StatsOptions {
  bool symmetry = true;
  bool tiles = true;              // false: tiles_16x8 / tiles_8x8 stay zero (tile_rows = 0)
};

// Degrees are row lengths (in-degrees); symmetric means the pattern equals its transpose
// (weights are not compared); density = edges / (nodes * cols).
template <class I> GraphStats graph_stats(const CsrView<I>& g);
template <class I> GraphStats graph_stats(const CsrView<I>& g, const StatsOptions& opt);
template <class I> TileStats tile_stats(const CsrView<I>& g, int tile_rows, int tile_cols);

// Human-readable block and a JSON object (for --json and benchmark records). Tile lines and keys
// appear only for computed tile statistics (tile_rows > 0).
std::string to_text(const GraphStats& s);
std::string to_json(const GraphStats& s);

}  // namespace tessera
