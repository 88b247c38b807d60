#pragma once
// WSB, weighted sparse blocks: the tensor-core format of a sparse graph (used by the SpMM
// tensor-core variants and, through WsbPattern alone, by tensor-core attention).
//
// Layout
//   Destinations (CSR rows) are cut into windows of 16 rows. The distinct source columns of a
//   window are sorted and packed into blocks of 8 column slots; the number of blocks of every
//   window is padded to an even count so two blocks always form one 16x16 MMA operand
//   (k = 16 source columns) against a gathered 16 x F feature tile.
//   Per block:  8 column ids (ascending; -1 marks an unused slot at the end of a window),
//               a 128-bit occupancy bitmap (bit r*8+c: window row r, slot c; word = bit / 64),
//               a dense 16x8 weight tile, row-major [r][c] (zeros where the bitmap is clear).
//   Duplicate edges share their cell and their weights are summed (in float, then rounded once
//   to the tile type). Rows past `rows` in the last window, unused slots and padding blocks
//   carry zero weights and clear bits. A window without edges has no blocks.
//
// Cost: the build is O(nnz log) on the host (OpenMP over windows) and is reported in WsbStats,
// together with the bytes of every array, so a caller can compute the break-even number of
// epochs against a CSR kernel.
//
// Non-finite features: the tile product multiplies every gathered feature row by the whole
// weight column, so an Inf/NaN feature of source j reaches every row of a window that holds j
// in one of its blocks (0 * Inf = NaN), not only j's true neighbours. Finite inputs are exact
// up to operand rounding.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/dense.hpp"
#include "tessera/core/device.hpp"
#include "tessera/core/dtype.hpp"
#include "tessera/graph/csr.hpp"

namespace tessera::format {

inline constexpr int kWsbWindowRows = 16;                       // MMA m
inline constexpr int kWsbBlockCols = 8;                         // half of the fp16 MMA k
inline constexpr int kWsbTileElems = kWsbWindowRows * kWsbBlockCols;  // 128 cells

struct WsbStats {
  int64_t rows = 0, cols = 0;
  int64_t entries = 0;            // CSR entries (duplicates counted)
  int64_t windows = 0, empty_windows = 0;
  int64_t blocks = 0;             // including padding blocks
  int64_t pad_blocks = 0;         // blocks added to make a window's count even
  int64_t distinct_cols = 0;      // sum over windows of distinct sources = feature rows gathered
  int64_t cells = 0;              // occupied tile cells (distinct (row, source) pairs)
  double fill = 0;                // cells / (blocks * 128)
  double column_reuse = 0;        // entries / distinct_cols: feature rows read by CSR per WSB read
  size_t bytes_offsets = 0, bytes_cols = 0, bytes_bitmaps = 0, bytes_tiles = 0;
  size_t bytes_slots = 0;         // host-side entry -> cell map (not uploaded for SpMM)
  double build_ms = 0;            // host build (pattern + tiles)
  size_t device_bytes() const { return bytes_offsets + bytes_cols + bytes_bitmaps + bytes_tiles; }
  std::string to_json() const;
};

// The structure: which source columns each window gathers and which cells are occupied.
template <class I>
struct WsbPattern {
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> window_ptr;  // windows + 1 block offsets; every window's count is even
  std::vector<I> block_cols;        // blocks * 8 source ids, -1 = unused slot
  std::vector<uint64_t> bitmap;     // blocks * 2 words
  std::vector<int64_t> cell;        // per CSR entry k: block * 128 + r * 8 + c (its tile cell)

  int64_t windows() const { return int64_t(window_ptr.size()) - 1; }
  int64_t blocks() const { return window_ptr.empty() ? 0 : window_ptr.back(); }
  bool occupied(int64_t block, int r, int c) const {
    const int bit = r * kWsbBlockCols + c;
    return (bitmap[size_t(block) * 2 + size_t(bit >> 6)] >> (bit & 63)) & 1u;
  }
};

// Pattern plus weight tiles of type T (half_t, bf16_t or float; float feeds the tf32 path).
template <class I, class T>
struct Wsb {
  WsbPattern<I> pattern;
  std::vector<T> tiles;             // blocks * 128, block-major, each tile row-major [16][8]
  WsbStats stats;
};

// Builds the pattern of a host CSR. Validates offsets and column ids (tessera::Error naming the
// row / entry). Fills stats except the tile bytes and build time (build_wsb adds those).
template <class I> WsbPattern<I> build_wsb_pattern(const CsrView<I>& g, WsbStats* stats = nullptr);

// Tiles of a pattern from per-entry weights (nullptr = all ones); duplicates are summed in
// float and rounded once to T. NaN weights throw.
template <class I, class T>
std::vector<T> fill_wsb_tiles(const WsbPattern<I>& p, const float* values, int64_t nnz);

// Pattern + tiles of g with weights `values` (nullptr: g.values, else ones), timed.
template <class I, class T> Wsb<I, T> build_wsb(const CsrView<I>& g, const float* values = nullptr);

// Y = A X computed from the blocks on the host (double accumulation of the T-rounded tiles
// times X): the oracle that checks the format independently of any GPU. X: host, f32/f16/bf16,
// cols x F; Y: host, same dtype as X, rows x F.
template <class I, class T> void wsb_spmm_host(const Wsb<I, T>& w, const DenseView& X, const DenseView& Y);

// ---- Device copies (CUDA builds; src/cuda/format/wsb_device.cu) -------------------------------
// Built from A's CSR (host or device) on first use and cached per (graph id, device, index type,
// tile dtype, weighted); the cache is bounded (LRU, TESSERA_WSB_CACHE entries, default 8).
struct WsbDeviceInfo {
  WsbStats stats;                 // of the build that produced the cached copy
  double upload_ms = 0;           // CSR download (if on device) + host build + upload, wall time
  bool cache_hit = false;
};
// Makes sure A's WSB copy with tiles of `tile_dtype` (f16, bf16 or f32) is resident; A.id != 0.
template <class I> WsbDeviceInfo wsb_prepare_device(const CsrView<I>& A, DType tile_dtype, const Exec& exec);
void wsb_device_cache_clear();
size_t wsb_device_cache_size();

}  // namespace tessera::format
